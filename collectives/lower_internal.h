// Chunking and striping arithmetic shared by the lowering
// (collectives/lower.cc) and its tests. Pure functions on byte counts; see
// docs/lowering.md.
#ifndef CCREPLAY_COLLECTIVES_LOWER_INTERNAL_H_
#define CCREPLAY_COLLECTIVES_LOWER_INTERNAL_H_

#include <algorithm>
#include <cstdint>

namespace ccreplay {
namespace lowering {

// Size in bytes of chunk c when m bytes are split into n chunks: the first
// m % n chunks carry one byte more. REQUIRES: n >= 1, c < n.
constexpr uint64_t ChunkSize(uint64_t m, uint32_t n, uint32_t c) {
  return m / n + (c < m % n ? 1 : 0);
}

// Byte offset of chunk c: the sum of the sizes of chunks 0..c-1.
// REQUIRES: n >= 1, c <= n. Never overflows: the result is <= m.
constexpr uint64_t ChunkOffset(uint64_t m, uint32_t n, uint32_t c) {
  return static_cast<uint64_t>(c) * (m / n) + std::min<uint64_t>(c, m % n);
}

// Number of stripes a block of b bytes is split into over k engines:
// S(b) = 1 for an empty block (it still carries its message), else min(k, b).
// REQUIRES: k >= 1.
constexpr uint32_t NumStripes(uint64_t b, uint32_t k) {
  return b == 0 ? 1 : static_cast<uint32_t>(std::min<uint64_t>(k, b));
}

// Size in bytes of stripe j of a block of b bytes over k engines.
// REQUIRES: j < NumStripes(b, k).
constexpr uint64_t StripeSize(uint64_t b, uint32_t k, uint32_t j) {
  return ChunkSize(b, NumStripes(b, k), j);
}

// Offset of stripe j inside its block.
// REQUIRES: j <= NumStripes(b, k).
constexpr uint64_t StripeOffset(uint64_t b, uint32_t k, uint32_t j) {
  return ChunkOffset(b, NumStripes(b, k), j);
}

// (a - b) mod n for chip and chunk indices. REQUIRES: a < n, b <= n.
constexpr uint32_t ModSub(uint32_t a, uint32_t b, uint32_t n) {
  return (a + n - b) % n;
}

}  // namespace lowering
}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_LOWER_INTERNAL_H_
