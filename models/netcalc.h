// Network calculus (SPEC.md §6, seed 004; Le Boudec & Thiran, LNCS 2050): a
// worst-case delay bound per flow, per step and per collective. Units: bytes,
// bytes per second, us.
//
//   arrival curve (leaky bucket)  alpha(t) = sigma + rho t
//   rate-latency service          beta(t)  = R (t - T)+
//   delay bound                   d_max    = T + sigma / R      (rho <= R)
//   concatenation of hops         R = min_h R_h,  T = sum_h T_h
//
// A flow of a step (NcFlowBoundUs) is one burst: sigma = its bytes (the whole
// block is posted at once), rho = its demand. Its servers, in order:
//   injection  R_0 = min(inject_bps / m_c, S * engine_bps),  T_0 = startup_us
//              (m_c the flows its chip sends in the step, S its stripes)
//   each link  R_h = link_payload_bps / F_h,  T_h = hop_us + packet_us
//              (F_h the flows crossing it in the step, all served fairly; one
//              packet slot for the non-preemptive packet already on the wire)
//              + switch_us + packet_us when the link leaves a switch
//              (store-and-forward)
// and the message that follows the data adds receive_us. A step's bound is
// its slowest flow's; the collective's is the sum over steps, each step
// bounded from the moment the previous one is done.
#ifndef CCREPLAY_MODELS_NETCALC_H_
#define CCREPLAY_MODELS_NETCALC_H_

#include <vector>

#include "hw/topology.h"
#include "models/net_params.h"
#include "models/steps.h"

namespace ccreplay {

struct LeakyBucket {
  double sigma_bytes = 0;
  double rho_bps = 0;
};

struct RateLatency {
  double rate_bps = 0;
  double latency_us = 0;
};

// R = min R_h, T = sum T_h. REQUIRES: hops non-empty.
RateLatency Concatenate(const std::vector<RateLatency>& hops);

// d_max = T + sigma / R. Infinite when rho > R (the backlog grows without
// bound). REQUIRES: s.rate_bps > 0.
double DelayBoundUs(const LeakyBucket& a, const RateLatency& s);

// The servers of step.flows[i] as above.
std::vector<RateLatency> NcFlowServers(const Step& step, size_t i,
                                       const Topology& topo,
                                       const NetParams& net);
double NcStepBoundUs(const Step& step, const Topology& topo,
                     const NetParams& net);
double NcScheduleBoundUs(const StepView& view, const Topology& topo,
                         const NetParams& net);

}  // namespace ccreplay

#endif  // CCREPLAY_MODELS_NETCALC_H_
