// Names and NCCL-convention factors of the collectives, shared by the
// lowering, the Math baseline and the reports.
#ifndef CCREPLAY_COLLECTIVES_COLLECTIVE_H_
#define CCREPLAY_COLLECTIVES_COLLECTIVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hw/config.h"
#include "proto/trace.pb.h"

namespace ccreplay {

// "allreduce", "allgather", "reducescatter", "alltoall", ...
absl::string_view CollectiveOpName(v1::CollectiveOp op);
absl::StatusOr<v1::CollectiveOp> ParseCollectiveOp(absl::string_view name);

// busbw = algbw * BusBwFactor(op, n) (docs/spec-notes.md §2, nccl-tests
// convention).
double BusBwFactor(v1::CollectiveOp op, uint32_t n);

// What to lower: the collective, its size and where it runs.
struct CollectiveSpec {
  v1::CollectiveOp op = v1::ALLREDUCE;
  uint32_t n = 2;      // participating chips, >= 2
  uint64_t bytes = 0;  // M of docs/spec-notes.md §2, > 0
  std::string algorithm = "ring";
  TopologyKind topology = TopologyKind::kRing;
  uint32_t cdma_engines = 0;  // engines to stripe over; 0 = all the config has
  // Communicator groups: n is the system size, split into n / group_size
  // groups of group_size consecutive chips that each run the collective
  // (group g = chips [g*group_size, (g+1)*group_size)). 0 = one group of n.
  uint32_t group_size = 0;
  // Pipelining (ring, ring_2port, broadcast, reduce, p2p): each step's block
  // is sent as pieces of at most chunk_bytes bytes, each forwarded as soon as
  // it has landed. 0 = whole blocks.
  uint64_t chunk_bytes = 0;
  // BROADCAST / REDUCE / P2P: the source (root) rank inside each group.
  uint32_t root = 0;
  // P2P: the destination rank inside each group; kDefaultPeer = root + 1.
  static constexpr uint32_t kDefaultPeer = 0xffffffffu;
  uint32_t peer = kDefaultPeer;
  // ALLTOALLV: bytes rank i sends rank p of its group, row-major
  // (alltoallv_bytes[i * group + p]); every row sums to `bytes`. Built with
  // AllToAllvMatrix() (collectives/alltoallv.h). Empty = uniform split.
  std::vector<uint64_t> alltoallv_bytes;
  std::string distribution;  // recorded in the header, e.g. "zipf:1.2:7"
  // Ring and ring_2port AllReduce/AllGather/ReduceScatter: leave out the
  // rendezvous (the ready message each chip sends before the first write),
  // as persistent collectives with pre-registered buffers do
  // (docs/lowering.md).
  bool no_rendezvous = false;

  // Chips per group: group_size, or n when it is 0.
  uint32_t GroupSize() const { return group_size == 0 ? n : group_size; }
};

}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_COLLECTIVE_H_
