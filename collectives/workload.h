// The TPS186 reference workload (docs/spec-notes.md §1): the collectives one
// forward pass of the model issues, per module, with their sizes and repeat
// counts.
#ifndef CCREPLAY_COLLECTIVES_WORKLOAD_H_
#define CCREPLAY_COLLECTIVES_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hw/config.h"
#include "proto/trace.pb.h"

namespace ccreplay {

// One row of the workload table.
struct WorkloadRow {
  std::string module;     // model module, e.g. "MLA"
  std::string op_name;    // the model's operator, e.g. "topk_allgather"
  std::string primitive;  // CollectiveOpName(op), e.g. "allgather"
  v1::CollectiveOp op = v1::COLLECTIVE_OP_UNSPECIFIED;
  uint32_t n = 0;  // chips in the group
  TopologyKind topology = TopologyKind::kRing;
  // M in bytes: the whole collective's size for AllReduce / AllGather /
  // ReduceScatter, each chip's total send volume for AllToAll.
  uint64_t bytes = 0;
  uint32_t repeat = 0;  // times the operator runs per forward pass
  std::string group;    // parallel dimension and size, e.g. "TP=2"
};

// Model parameters that fix the MoE (expert parallel) volume per chip.
// Defaults are TPS186's.
struct EpParams {
  uint32_t batch_tokens = 1024;
  uint32_t top_k = 8;      // experts each token is routed to
  uint32_t ep = 64;        // chips in the EP group, > 0
  uint32_t hidden = 7168;  // hidden dimension, elements
};

// Bytes each chip sends in MoE dispatch or combine:
//   ceil(batch_tokens * top_k / ep) * hidden * dtype_bytes.
// dtype_bytes is 1 for dispatch (int8), 2 for combine (bf16). TPS186:
// 128 * 7168 * 1 = 917504 and 128 * 7168 * 2 = 1835008.
// Errors: ep == 0 or dtype_bytes == 0 (InvalidArgument), a result that does
// not fit in 64 bits (OutOfRange).
absl::StatusOr<uint64_t> EpBytesPerChip(const EpParams& params,
                                        uint32_t dtype_bytes);

// Element sizes of the MoE payloads, bytes.
inline constexpr uint32_t kDispatchDtypeBytes = 1;  // int8 activations
inline constexpr uint32_t kCombineDtypeBytes = 2;   // bf16 outputs

// The 8 rows of docs/spec-notes.md §1 in order; the MoE sizes come from
// EpBytesPerChip(EpParams{}).
std::vector<WorkloadRow> Tps186Workload();

}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_WORKLOAD_H_
