// Names and NCCL-convention factors of the collectives, shared by the
// lowering, the Math baseline and the reports.
#ifndef CCREPLAY_COLLECTIVES_COLLECTIVE_H_
#define CCREPLAY_COLLECTIVES_COLLECTIVE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hw/config.h"
#include "proto/trace.pb.h"

namespace ccreplay {

// "allreduce", "allgather", "reducescatter", "alltoall", ...
absl::string_view CollectiveOpName(v1::CollectiveOp op);
absl::StatusOr<v1::CollectiveOp> ParseCollectiveOp(absl::string_view name);

// busbw = algbw * BusBwFactor(op, n) (SPEC.md §2, nccl-tests convention).
double BusBwFactor(v1::CollectiveOp op, uint32_t n);

// What to lower: the collective, its size and where it runs.
struct CollectiveSpec {
  v1::CollectiveOp op = v1::ALLREDUCE;
  uint32_t n = 2;      // participating chips, >= 2
  uint64_t bytes = 0;  // M of SPEC.md §2, > 0
  std::string algorithm = "ring";
  TopologyKind topology = TopologyKind::kRing;
  uint32_t cdma_engines = 0;  // engines to stripe over; 0 = all the config has
};

}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_COLLECTIVE_H_
