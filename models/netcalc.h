// Network calculus (docs/spec-notes.md §6, seed 004; Le Boudec & Thiran, LNCS
// 2050): a worst-case delay bound per flow, per step and per collective. Units:
// bytes, bytes per second, us.
//
//   arrival curve (leaky bucket)  alpha(t) = sigma + rho t
//   rate-latency service          beta(t)  = R (t - T)+
//   delay bound                   d_max    = T + sigma / R      (rho <= R)
//   concatenation of hops         R = min_h R_h,  T = sum_h T_h
//
// A flow of a step (NcFlowBoundUs) is one burst: sigma = its bytes (the whole
// block is posted at once), rho = its demand. Its servers, in order:
//   injection  R_0 = min(inject_bps / m_c, S * engine_bps),
//              T_0 = startup_us * ceil(X_c / K)
//              (m_c the flows its chip sends in the step, local copies
//              included, S its stripes, X_c the Transfers of the chip in the
//              step, K its engines: an engine's startups may all precede its
//              data)
//   each link  R_h = link_payload_bps / W / F_h,  T_h = hop_us + P
//              (F_h the flows crossing it in the step, all served fairly;
//              W = lane_groups when blocks are spread over the lane groups by
//              address (a hash may put every block of a flow on one group,
//              the XOR fold a short flow; and the lane group's slack covers
//              arbiters that take turns among inputs, not flows), 1 for
//              round-robin spreading; P = packet_us * lane_groups, one
//              packet on one lane group, for the non-preemptive packet
//              already on the wire)
//              + switch_us + P when the link leaves a switch
//              (store-and-forward of the flow's packet)
//              + P with W = 1 (round-robin): the flow's own last packet on
//              one lane group
// and the message that follows the data adds P per hop and receive_us.
// A chip's engines serve its Transfers in order, one stripe of a pair's
// blocks each, so a chip's (src, dst) pairs may pass one after another (the
// ECMP sub-flows of one pair side by side): a flow's sigma / R is at least
// its chip's sum over pairs p of max over p's sub-flows s of bytes_s / r_s,
//   r_s = min(inject_bps, S_s * engine_bps,
//             min_h link_payload_bps / W / (F_h - F_h,c + 1) / k_p,h)
// (F_h,c the chip's own flows on link h: its pairs take their turns, so
// they share the link with the other chips' flows as one; k_p,h the pair's
// sub-flows on h): whatever runs at once, the chip's pairs progress by at
// least one unit of that sum per unit of time.
// Whatever the order of service, a pair's turn also ends once the work
// ahead of each sub-flow s is done: its busiest engine's bytes at
// engine_bps, and on each link h of its path
// (B_h - B_h,c + B_h,p) * lane_groups / link_bps (wire bytes), B_h the sum
// over the step's flows on h of WorstLaneWireBytes (models/net_params.h),
// B_h,c that of the chip's flows, B_h,p the pair's (links serve whenever
// they hold data); a flow's bound is the smaller of T + its chip's pairs'
// in-order sum above and T + the sum of their turns' work.
// A step's bound is its rendezvous (each sync message: per hop hop_us + 2P,
// + switch_us at a switch; then receive_us) plus its slowest flow's; the
// collective's is the sum over steps, each step bounded from the moment the
// previous one is done.
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
