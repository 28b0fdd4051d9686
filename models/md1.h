// M/D/1 mean queueing at switch output ports (docs/spec-notes.md §6, seed 004; Bertsekas
// & Gallager 1992), added to the switch latency of the alpha-beta model.
// Units: us.
//
//   W_q = rho / (2 (1 - rho)) * 1/mu
//
// 1/mu is one packet's service time (NetParams::packet_us). rho of a switch
// output port in a step is the fraction of the step it is busy: the bytes of
// the flows crossing it at link_payload_bps, over the step's duration as the
// fluid model gives it (startup and latency included). A flow waits W_q at
// every switch port on its path; a step adds its slowest flow's wait, and the
// collective the sum over steps. The model assumes Poisson arrivals and is
// valid for rho < 0.8 (kMd1MaxValidRho): every port at or above it is
// reported, and rho >= 1 has no finite mean (the prediction is not valid).
#ifndef CCREPLAY_MODELS_MD1_H_
#define CCREPLAY_MODELS_MD1_H_

#include <cstdint>

#include "hw/topology.h"
#include "models/net_params.h"
#include "models/steps.h"

namespace ccreplay {

inline constexpr double kMd1MaxValidRho = 0.8;

// REQUIRES: 0 <= rho < 1.
double Md1WaitUs(double rho, double service_us);

struct Md1Result {
  double queueing_us = 0;         // sum over steps of the slowest flow's wait
  double max_rho = 0;             // busiest switch port of any step
  uint32_t ports_over_limit = 0;  // (step, port) pairs with rho >= 0.8
  bool valid = true;              // false when some rho >= 1
};

Md1Result Md1Schedule(const StepView& view, const Topology& topo,
                      const NetParams& net);

}  // namespace ccreplay

#endif  // CCREPLAY_MODELS_MD1_H_
