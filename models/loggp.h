// LogGP and LoGPC (docs/spec-notes.md §6, seed 004; Moritz & Frank, IEEE TPDS 2001),
// driven by the step view of a lowered schedule. Units: us and bytes.
//
// Parameters (LogGpParamsFromNet, docs/models.md):
//   o = (startup_us + receive_us) / 2   so that 2o is the sender's CDMA
//                                       startup plus the receiver's message
//                                       overhead (TPS186: o = 0.145 us)
//   g = packet_us                       the smallest gap between two
//                                       messages: one packet slot
//   G = 1 / min(link_payload_bps, inject_bps)  per byte, us
//   L = the path latency of each flow (models/net_params.h)
//
// Schedule-driven time, per step k with W_k its bandwidth term and L_k the
// longest path latency of its flows:
//   W_k = max over sending chips c of max(bytes_c / inject_bps,
//                                         max over c's flows f of b_f * G_eff)
//   first step of a phase:  2o + L_k + W_k
//   later steps:            max(o, g, W_k)   (LogP pipelining: latency and
//                                             overhead overlap the previous
//                                             step's transfer)
//   T = sum over steps.
// A phase is a maximal run of steps that all reduce or all copy, so a ring
// AllReduce is its ReduceScatter pipeline followed by its AllGather pipeline,
// as in the closed form below. LogP models data messages only: the
// message-only rendezvous of a step (Step::sync) is not part of it.
//
// LogGP: G_eff = G (assumption 3: no link sharing).
// LoGPC: G_eff = G * max(1, F_k / C), F_k the largest number of (src, dst)
// pairs any directed link carries in step k (FlowsPerLink) and C = 1 per
// directed link (the seed's C = 2 counts both directions of a full-duplex
// cable; ccreplay's links are already one per direction).
#ifndef CCREPLAY_MODELS_LOGGP_H_
#define CCREPLAY_MODELS_LOGGP_H_

#include <cstdint>

#include "hw/topology.h"
#include "models/net_params.h"
#include "models/steps.h"

namespace ccreplay {

struct LogGpParams {
  double o_us = 0;
  double g_us = 0;
  double G_us_per_byte = 0;
};

LogGpParams LogGpParamsFromNet(const NetParams& net);

// Channel capacity of one directed link: the flows it serves at full rate.
inline constexpr double kLoGpcLinkCapacity = 1.0;

// The schedule-driven time above; contention = false is LogGP, true LoGPC.
double LogGpScheduleUs(const StepView& view, const Topology& topo,
                       const NetParams& net, bool contention);

// LoGPC's largest G_eff / G over the steps (1 when no link is shared).
double LoGpcWorstFactor(const StepView& view, const Topology& topo);

// The seed's closed form for a ring AllReduce of M bytes over N chips:
//   T = 2[(2o + L + (M/N) G_eff) + (N-2) max(o, g, (M/N) G_eff)]
// REQUIRES: n >= 2.
double LoGpcRingAllReduceUs(uint64_t bytes, uint32_t n, double L_us,
                            const LogGpParams& p, double G_eff_us_per_byte);

}  // namespace ccreplay

#endif  // CCREPLAY_MODELS_LOGGP_H_
