// The Math baseline: the alpha-beta formulas of docs/spec-notes.md §2, with
// every parameter derived from the hardware configuration
// (proto/hw_config.proto), plus the "legacy" variant that reproduces an older
// tool's two known bugs, and the nccl-tests algbw/busbw helpers. See
// docs/math.md.
//
// Units: times are microseconds (double, for reports only; the engine never
// uses these), sizes are bytes, bandwidths are bytes per second, and the
// *GBps helpers return decimal GB/s (1 GB = 1e9 bytes).
#ifndef CCREPLAY_COLLECTIVES_MATH_H_
#define CCREPLAY_COLLECTIVES_MATH_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "hw/config.h"
#include "proto/trace.pb.h"

namespace ccreplay {

// The four constants of the Math model.
struct MathParams {
  // beta: link bandwidth per direction, bytes per second.
  double beta_bytes_per_s = 0.0;
  // u: fraction of the wire that carries payload, in (0, 1].
  double u = 0.0;
  // alpha_start: start-up of every step, microseconds.
  double alpha_start_us = 0.0;
  // alpha_switch: extra latency of one pass through a switch, microseconds.
  double alpha_switch_us = 0.0;
};

// Derives the Math parameters from the hardware configuration, as stated in
// the header comment of proto/hw_config.proto:
//   beta         = link_bytes_per_s
//   u            = packet_payload_bytes /
//                  (packet_payload_bytes + packet_header_bytes)
//   alpha_start  = cdma_startup + 2 * link_latency
//   alpha_switch = 2 * (switch_forwarding + link_propagation)
// TPS186: 400e9 B/s, 0.9, 0.69 us, 2.05 us. No validation here: a HwConfig
// from HwConfigFromProto() is valid; MathTimeUs() rejects bad parameters.
MathParams MathParamsFromHw(const HwConfig& hw);

// Time of one collective under the corrected Math model (docs/spec-notes.md
// §2), in microseconds. `n` is the number of chips (>= 2) and `bytes` is M:
//   - AllGather / ReduceScatter: M is the whole collective's size;
//       T = (N-1)/N * M/(beta*u) + (N-1) * alpha_start
//   - AllReduce: M is the whole collective's size;
//       T = 2(N-1)/N * M/(beta*u) + 2(N-1) * alpha_start
//   - AllToAll and AllToAllv: M is each chip's total send volume; one step,
//       T = M/(beta*u) + alpha_start (+ alpha_switch when `topo` is kSwitch).
//     The reference gives only the switch form; the non-switch form (no switch
//     pass) is a ccreplay extension.
// Other operations return InvalidArgument, as do n < 2 and parameters that
// are not finite, beta*u <= 0, u > 1 or negative latencies.
absl::StatusOr<double> MathTimeUs(v1::CollectiveOp op, uint32_t n,
                                  uint64_t bytes, TopologyKind topo,
                                  const MathParams& params);

// The same with the older tool's two documented bugs (docs/spec-notes.md §2),
// kept only to explain old spreadsheets:
//   - AllReduce charges (N-1) * alpha_start instead of 2(N-1) * alpha_start;
//   - AllGather / ReduceScatter move (N-1) * M instead of (N-1)/N * M.
// AllToAll(v) is unchanged. Same errors as MathTimeUs().
absl::StatusOr<double> LegacyMathTimeUs(v1::CollectiveOp op, uint32_t n,
                                        uint64_t bytes, TopologyKind topo,
                                        const MathParams& params);

// Algorithm bandwidth M / T in GB/s (1e9 bytes/s), nccl-tests convention.
// Returns 0 when time_us is not > 0.
double AlgBwGBps(uint64_t bytes, double time_us);

// Bus bandwidth M * f(N) / T in GB/s, f = BusBwFactor(op, n) of
// collectives/collective.h. Returns 0 when time_us is not > 0 or n is 0.
double BusBwGBps(v1::CollectiveOp op, uint32_t n, uint64_t bytes,
                 double time_us);

}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_MATH_H_
