// Gives memory freed by the process back to the operating system, so that a
// large input freed after decoding does not stay resident during the replay.
// glibc keeps freed small blocks in its heap; malloc_trim returns every free
// page of it. Elsewhere a no-op.
#ifndef CCREPLAY_BASE_RELEASE_MEMORY_H_
#define CCREPLAY_BASE_RELEASE_MEMORY_H_

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ccreplay {

inline void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_RELEASE_MEMORY_H_
