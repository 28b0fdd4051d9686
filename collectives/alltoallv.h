// Per-peer volumes of AllToAllv (MoE dispatch/combine): how each chip's fixed
// total send (docs/spec-notes.md §1, EpBytesPerChip) is split over its peers by
// top-K routing. docs/algorithms.md, "AllToAllv".
#ifndef CCREPLAY_COLLECTIVES_ALLTOALLV_H_
#define CCREPLAY_COLLECTIVES_ALLTOALLV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccreplay {

struct AllToAllvDist {
  enum Kind : uint8_t { kUniform, kZipf, kFile };
  Kind kind = kUniform;
  // kZipf: the exponent s > 0; peer at popularity rank k (1-based) gets a
  // weight 1/k^s. Each chip ranks its peers by its own permutation drawn
  // from `seed` (std::mt19937_64, so deterministic everywhere).
  double zipf_s = 1.0;
  uint64_t seed = 0;
  // kFile: a text file of n lines of n non-negative weights (whitespace
  // separated, '#' comments); line i splits chip i's send.
  std::string path;
};

// Parses "uniform", "zipf:S" or "zipf:S:SEED", or "file:PATH".
absl::StatusOr<AllToAllvDist> ParseAllToAllvDist(absl::string_view text);
// The canonical text of a distribution ("zipf:1.2:7").
std::string AllToAllvDistName(const AllToAllvDist& d);

// The n x n matrix (row-major: [i * n + p] = bytes chip i sends chip p) in
// which every row sums to exactly `per_chip_bytes`: row i is split in
// proportion to the weights, rounded down, and the leftover bytes go one each
// to the peers with the largest weights (lowest index first on ties).
// Uniform gives the pairwise AllToAll split ChunkSize(per_chip_bytes, n, p).
// Errors: n < 1, zipf_s <= 0, an unreadable or malformed file (naming
// file:line), a row of zero weights.
absl::StatusOr<std::vector<uint64_t>> AllToAllvMatrix(const AllToAllvDist& dist,
                                                      uint32_t n,
                                                      uint64_t per_chip_bytes);

}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_ALLTOALLV_H_
