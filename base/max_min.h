// Max-min fair rates by progressive filling: the one solver behind the fluid
// model of the analytic ladder (models/fluid.h) and the fluid replay engine
// (replay/fluid_engine.h). Units are the caller's (bytes per second there).
//
// Progressive filling: all unfixed flows grow at the same rate; a flow is
// fixed when it reaches its own demand (rate cap) or when a resource it
// crosses is full. The result is the unique max-min fair allocation: no flow
// can get more without taking from a flow that has no more than it.
//
// Implementation: water-filling by levels. Every unfixed flow runs at the
// current level; a resource r is full at level (capacity_r - rates of its
// fixed flows) / (its unfixed flows), kept in a min-heap, and the flows'
// demands are visited in increasing order; the lower of the two next
// events fixes one flow (a demand) or every unfixed flow of one resource (a
// full resource). O(E log E) for E (flow, resource) pairs.
#ifndef CCREPLAY_BASE_MAX_MIN_H_
#define CCREPLAY_BASE_MAX_MIN_H_

#include <cstdint>
#include <vector>

namespace ccreplay {

struct FluidFlow {
  std::vector<uint32_t> resources;  // indices into the capacity vector
  double demand_bps = 0;            // the flow's own cap; 0 = none
  double bytes = 0;                 // FluidFinishTimesUs only
};

// Max-min fair rates of `flows` over resources of `capacity_bps`. A flow
// that crosses no resource and has no demand is bounded by nothing: +inf.
// REQUIRES: every resource index < capacity_bps.size(), listed once per flow.
std::vector<double> MaxMinRates(const std::vector<double>& capacity_bps,
                                const std::vector<FluidFlow>& flows);

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_MAX_MIN_H_
