// Gives memory freed by the process back to the operating system, so that a
// large input freed after decoding does not stay resident during the replay.
// glibc keeps freed small blocks in its heap; malloc_trim returns every free
// page of it. Elsewhere a no-op.
#ifndef CCREPLAY_BASE_RELEASE_MEMORY_H_
#define CCREPLAY_BASE_RELEASE_MEMORY_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ccreplay {

inline void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// Gives the whole pages inside [data, data + size) of a buffer back to the
// operating system: what they held is lost (they read as zeros), the buffer
// stays valid. For the part of a large input already consumed, so that
// reading and decoding it do not hold both in full. Returns true if any page
// was given back.
inline bool DropWholePages(char* data, size_t size) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin =
      (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(data) + size) & ~(page - 1);
  if (end <= begin) return false;
  return ::madvise(reinterpret_cast<void*>(begin), end - begin,
                   MADV_DONTNEED) == 0;
}

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_RELEASE_MEMORY_H_
