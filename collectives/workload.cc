#include "collectives/workload.h"

#include <cassert>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "collectives/collective.h"

namespace ccreplay {

absl::StatusOr<uint64_t> EpBytesPerChip(const EpParams& params,
                                        uint32_t dtype_bytes) {
  if (params.ep == 0) {
    return absl::InvalidArgumentError("EP volume: ep must be > 0");
  }
  if (dtype_bytes == 0) {
    return absl::InvalidArgumentError("EP volume: dtype_bytes must be > 0");
  }
  // Tokens each chip sends: ceil(batch_tokens * top_k / ep). The product of
  // two uint32 fits in uint64.
  const uint64_t routed = uint64_t{params.batch_tokens} * params.top_k;
  const uint64_t tokens = (routed + params.ep - 1) / params.ep;
  const unsigned __int128 bytes =
      static_cast<unsigned __int128>(tokens) * params.hidden * dtype_bytes;
  if (bytes > std::numeric_limits<uint64_t>::max()) {
    return absl::OutOfRangeError(
        absl::StrCat("EP volume: ", tokens, " tokens * ", params.hidden, " * ",
                     dtype_bytes, " bytes does not fit in 64 bits"));
  }
  return static_cast<uint64_t>(bytes);
}

namespace {

WorkloadRow Row(absl::string_view module, absl::string_view op_name,
                v1::CollectiveOp op, uint64_t bytes, uint32_t repeat,
                uint32_t n, TopologyKind topology, absl::string_view group) {
  WorkloadRow r;
  r.module = std::string(module);
  r.op_name = std::string(op_name);
  r.primitive = std::string(CollectiveOpName(op));
  r.op = op;
  r.n = n;
  r.topology = topology;
  r.bytes = bytes;
  r.repeat = repeat;
  r.group = std::string(group);
  return r;
}

}  // namespace

std::vector<WorkloadRow> Tps186Workload() {
  const EpParams ep;
  // The defaults are valid: these cannot fail.
  const absl::StatusOr<uint64_t> dispatch =
      EpBytesPerChip(ep, kDispatchDtypeBytes);
  const absl::StatusOr<uint64_t> combine =
      EpBytesPerChip(ep, kCombineDtypeBytes);
  assert(dispatch.ok() && combine.ok());

  // TP groups: 2 chips on a ring; the EP group: all 64 chips on one switch.
  constexpr uint32_t kTp = 2;
  constexpr auto kRing = TopologyKind::kRing;
  const std::string tp_group = absl::StrCat("TP=", kTp);
  const std::string ep_group = absl::StrCat("EP=", ep.ep);
  return {
      Row("Dense_MLP", "allreduce", v1::ALLREDUCE, 458752, 3, kTp, kRing,
          tp_group),
      Row("MLA", "allgather", v1::ALLGATHER, 1179648, 61, kTp, kRing, tp_group),
      Row("MLA", "reducescatter", v1::REDUCESCATTER, 1048576, 61, kTp, kRing,
          tp_group),
      Row("MLA", "allreduce", v1::ALLREDUCE, 458752, 61, kTp, kRing, tp_group),
      Row("DSA", "topk_allgather", v1::ALLGATHER, 32768, 61, kTp, kRing,
          tp_group),
      Row("MoE", "dispatch", v1::ALLTOALL, dispatch.value_or(0), 58, ep.ep,
          TopologyKind::kSwitch, ep_group),
      Row("MoE", "combine", v1::ALLTOALL, combine.value_or(0), 58, ep.ep,
          TopologyKind::kSwitch, ep_group),
      Row("LMHead", "allreduce", v1::ALLREDUCE, 458752, 1, kTp, kRing,
          tp_group),
  };
}

}  // namespace ccreplay
