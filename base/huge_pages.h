// Asks the kernel to back a large array with transparent huge pages (2 MiB)
// instead of 4 KiB ones. The replay's per-instruction arrays of a
// 1024-chip trace are hundreds of MB, first touched while they are built;
// with 4 KiB pages that is one page fault per 4 KiB, a large part of the
// replay's CPU time on a virtual machine. The advice changes no result: it is
// ignored where transparent huge pages are off ("never"), and is needed
// where they are "madvise" (Debian's default). Elsewhere than Linux a no-op.
#ifndef CCREPLAY_BASE_HUGE_PAGES_H_
#define CCREPLAY_BASE_HUGE_PAGES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ccreplay {

// Advises the 2 MiB-aligned part of [p, p + bytes). Advice only: a kernel
// that refuses it leaves the pages as they were.
inline void AdviseHugePages(const void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (bytes < 2 * kHuge) return;
  const uintptr_t begin =
      (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin) {
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#else
  (void)p;
  (void)bytes;
#endif
}

// Reserves room for `n` elements in the empty vector `v` (so that none of
// its storage has been touched yet) and advises it.
template <typename T>
void ReserveOnHugePages(std::vector<T>& v, size_t n) {
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_HUGE_PAGES_H_
