#include "collectives/math.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "collectives/collective.h"
#include "base/units.h"

namespace ccreplay {

MathParams MathParamsFromHw(const HwConfig& hw) {
  MathParams p;
  p.beta_bytes_per_s = static_cast<double>(hw.link_bytes_per_s);
  const uint64_t wire_bytes =
      uint64_t{hw.packet_payload_bytes} + hw.packet_header_bytes;
  // A zero-sized packet would divide by zero; leave u = 0 for MathTimeUs()
  // to reject instead.
  p.u = wire_bytes == 0 ? 0.0
                        : static_cast<double>(hw.packet_payload_bytes) /
                              static_cast<double>(wire_bytes);
  // Sum in integer picoseconds first so that 290000 + 2 * 200000 ps becomes
  // exactly 0.69 us after the single conversion.
  p.alpha_start_us = (hw.cdma_startup + hw.link_latency * 2).us();
  p.alpha_switch_us = ((hw.switch_forwarding + hw.link_propagation) * 2).us();
  return p;
}

namespace {

absl::Status CheckArgs(v1::CollectiveOp op, uint32_t n, const MathParams& p) {
  switch (op) {
    case v1::ALLREDUCE:
    case v1::ALLGATHER:
    case v1::REDUCESCATTER:
    case v1::ALLTOALL:
    case v1::ALLTOALLV:
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("Math model: no formula for '", CollectiveOpName(op),
                       "' (known: allreduce, allgather, reducescatter, "
                       "alltoall, alltoallv)"));
  }
  if (n < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Math model: n must be >= 2, got ", n));
  }
  const double beta_u = p.beta_bytes_per_s * p.u;
  if (!std::isfinite(beta_u) || !(beta_u > 0.0) || !(p.u <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Math model: need beta > 0 and u in (0, 1], got beta = ",
                     p.beta_bytes_per_s, " bytes/s, u = ", p.u));
  }
  if (!std::isfinite(p.alpha_start_us) || !(p.alpha_start_us >= 0.0) ||
      !std::isfinite(p.alpha_switch_us) || !(p.alpha_switch_us >= 0.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Math model: latencies must be finite and >= 0, got alpha_start = ",
        p.alpha_start_us, " us, alpha_switch = ", p.alpha_switch_us, " us"));
  }
  return absl::OkStatus();
}

// One formula for both columns; `legacy` switches in the two old bugs.
absl::StatusOr<double> TimeUs(v1::CollectiveOp op, uint32_t n, uint64_t bytes,
                              TopologyKind topo, const MathParams& p,
                              bool legacy) {
  if (absl::Status s = CheckArgs(op, n, p); !s.ok()) return s;
  const double nm1 = static_cast<double>(n - 1);
  const double frac = nm1 / static_cast<double>(n);  // (N-1)/N
  // M/(beta*u): the whole M on the wire at the payload rate, in us.
  const double wire_us =
      static_cast<double>(bytes) / (p.beta_bytes_per_s * p.u) * 1e6;
  switch (op) {
    case v1::ALLGATHER:
    case v1::REDUCESCATTER:
      // Legacy bug: (N-1) * M on the wire instead of (N-1)/N * M.
      return (legacy ? nm1 : frac) * wire_us + nm1 * p.alpha_start_us;
    case v1::ALLREDUCE:
      // Legacy bug: (N-1) * alpha instead of 2(N-1) * alpha.
      return 2.0 * frac * wire_us +
             (legacy ? 1.0 : 2.0) * nm1 * p.alpha_start_us;
    case v1::ALLTOALL:
    case v1::ALLTOALLV:
      return wire_us + p.alpha_start_us +
             (topo == TopologyKind::kSwitch ? p.alpha_switch_us : 0.0);
    default:
      break;  // rejected by CheckArgs
  }
  return absl::InternalError("Math model: unreachable");
}

}  // namespace

absl::StatusOr<double> MathTimeUs(v1::CollectiveOp op, uint32_t n,
                                  uint64_t bytes, TopologyKind topo,
                                  const MathParams& params) {
  return TimeUs(op, n, bytes, topo, params, /*legacy=*/false);
}

absl::StatusOr<double> LegacyMathTimeUs(v1::CollectiveOp op, uint32_t n,
                                        uint64_t bytes, TopologyKind topo,
                                        const MathParams& params) {
  return TimeUs(op, n, bytes, topo, params, /*legacy=*/true);
}

double AlgBwGBps(uint64_t bytes, double time_us) {
  if (!(time_us > 0.0)) return 0.0;
  // bytes / (time_us * 1e-6 s) / 1e9 = bytes / (time_us * 1e3).
  return static_cast<double>(bytes) / (time_us * 1e3);
}

double BusBwGBps(v1::CollectiveOp op, uint32_t n, uint64_t bytes,
                 double time_us) {
  if (n == 0) return 0.0;  // f(0) is undefined
  return AlgBwGBps(bytes, time_us) * BusBwFactor(op, n);
}

}  // namespace ccreplay
