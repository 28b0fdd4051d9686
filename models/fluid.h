// Fluid max-min (docs/spec-notes.md §6, seed 004; the analytic mode of SimAI):
// flows are continuous, every shared resource is divided max-min fairly by
// progressive filling, and rates are recomputed whenever a flow ends. Units:
// bytes, bytes per second, us.
//
// The allocation is MaxMinRates (base/max_min.h, progressive filling), the
// solver the fluid replay engine (replay/fluid_engine.h) uses too.
//
// On a step of the schedule (FluidStepUs) the resources are every directed
// link (capacity link_payload_bps) and every chip's CDMA injection
// (inject_bps); a flow of S stripes demands at most S * engine_bps (one
// engine per stripe). A flow f finishes its bytes at t_f under these rates;
// the step lasts its rendezvous (SyncLatencyUs) plus max over f of
// startup_us + t_f + path latency + receive_us.
// The schedule (FluidScheduleUs) walks the steps chip by chip, not in
// lockstep: a chip starts its step k + 1 once its own flows of step k have
// left its engines (start + startup_us + t_f) and the flows to it have
// landed (+ path latency + receive_us); a flow whose destination sends it a
// ready message (a rendezvous) also waits for that message to land (its
// path latency + receive_us after the destination was ready). The schedule
// ends with the last landing. Each step's rates are still those of all its
// flows at once.
#ifndef CCREPLAY_MODELS_FLUID_H_
#define CCREPLAY_MODELS_FLUID_H_

#include <cstdint>
#include <vector>

#include "base/max_min.h"
#include "hw/topology.h"
#include "models/net_params.h"
#include "models/steps.h"

namespace ccreplay {

// When each flow, all started at t = 0, has moved its bytes (us), with the
// max-min rates recomputed each time a flow ends.
std::vector<double> FluidFinishTimesUs(const std::vector<double>& capacity_bps,
                                       const std::vector<FluidFlow>& flows);

// The resources and flows of one step as above (links first, then one
// injection resource per chip).
void FluidProblem(const Step& step, const Topology& topo, const NetParams& net,
                  std::vector<double>* capacity_bps,
                  std::vector<FluidFlow>* flows);

double FluidStepUs(const Step& step, const Topology& topo,
                   const NetParams& net);
double FluidScheduleUs(const StepView& view, const Topology& topo,
                       const NetParams& net);

}  // namespace ccreplay

#endif  // CCREPLAY_MODELS_FLUID_H_
