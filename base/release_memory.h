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

// Gives the whole pages of a buffer's consumed prefix back to the operating
// system as the prefix grows, so that reading and decoding a large input do
// not hold both in full: what they held is lost (they read as zeros), the
// buffer stays valid. Each drop starts where the last stopped and covers at
// least `step` bytes: each madvise has the kernel flush the TLBs of the
// process, and a drop per chip of a 1024-chip trace, each from the buffer's
// start, made them 6% of its decode (docs/architecture.md, "Written in
// place"). Up to a step of the consumed prefix stays resident.
class PrefixDropper {
 public:
  PrefixDropper(char* data, size_t step)
      : data_(reinterpret_cast<uintptr_t>(data)),
        page_(static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE))),
        next_((data_ + page_ - 1) & ~(page_ - 1)),
        step_(step) {}
  // The first `prefix` bytes are read no more (prefixes only grow).
  void Consumed(size_t prefix) {
    // Ends on a 2 MiB boundary, so that a buffer on transparent huge pages
    // (base/huge_pages.h) gives them back whole rather than split.
    const uintptr_t end = (data_ + prefix) & ~(kHuge - 1);
    if (end < next_ || end - next_ < step_) return;
    if (::madvise(reinterpret_cast<void*>(next_), end - next_, MADV_DONTNEED) ==
        0) {
      dropped_ = true;
    }
    next_ = end;
  }
  // Whether any page was given back (it reads as zeros now).
  bool dropped() const { return dropped_; }

 private:
  static constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  uintptr_t data_;
  uintptr_t page_;
  uintptr_t next_;  // the first page not given back
  size_t step_;
  bool dropped_ = false;
};

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_RELEASE_MEMORY_H_
