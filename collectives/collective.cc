#include "collectives/collective.h"

#include "absl/strings/str_cat.h"

namespace ccreplay {

absl::string_view CollectiveOpName(v1::CollectiveOp op) {
  switch (op) {
    case v1::ALLREDUCE:
      return "allreduce";
    case v1::ALLGATHER:
      return "allgather";
    case v1::REDUCESCATTER:
      return "reducescatter";
    case v1::ALLTOALL:
      return "alltoall";
    case v1::ALLTOALLV:
      return "alltoallv";
    case v1::BROADCAST:
      return "broadcast";
    case v1::REDUCE:
      return "reduce";
    case v1::P2P:
      return "p2p";
    default:
      return "unspecified";
  }
}

absl::StatusOr<v1::CollectiveOp> ParseCollectiveOp(absl::string_view name) {
  for (int i = v1::CollectiveOp_MIN + 1; i <= v1::CollectiveOp_MAX; ++i) {
    const auto op = static_cast<v1::CollectiveOp>(i);
    if (name == CollectiveOpName(op)) return op;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown collective '", name,
      "' (known: allreduce, allgather, reducescatter, alltoall, alltoallv, "
      "broadcast, reduce, p2p)"));
}

double BusBwFactor(v1::CollectiveOp op, uint32_t n) {
  const double nd = static_cast<double>(n);
  switch (op) {
    case v1::ALLREDUCE:
      return 2.0 * (nd - 1.0) / nd;
    case v1::ALLGATHER:
    case v1::REDUCESCATTER:
    case v1::ALLTOALL:
    case v1::ALLTOALLV:
      return (nd - 1.0) / nd;
    default:
      return 1.0;
  }
}

}  // namespace ccreplay
