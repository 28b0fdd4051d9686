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
// fixed flows) / (its unfixed flows), the lowest found by a scan of the
// resources, and the flows' demands are visited in increasing order; the
// lower of the two next events fixes one flow (a demand) or every unfixed
// flow of one resource (a full resource). O(E + F R) for E (flow, resource)
// pairs, R resources and F events: a scan of the few resources of a solve
// costs less than a heap's upkeep at every fix.
#ifndef CCREPLAY_BASE_MAX_MIN_H_
#define CCREPLAY_BASE_MAX_MIN_H_

#include <cstdint>
#include <utility>
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

// The same filling (the same rates, bit for bit) for callers that solve
// many problems: the problem is given flat and the scratch is kept between
// calls. Fill in the public vectors, then Solve.
class MaxMinSolver {
 public:
  std::vector<double> capacity;      // per resource
  std::vector<double> demand;        // per flow; 0 = none
  std::vector<uint32_t> flow_begin;  // flow i crosses resources
  std::vector<uint32_t> resources;   //   resources[flow_begin[i] .. [i+1])
  // Which of two levels equal within rounding is full first: with
  // `heap_order`, as the lazy heap of earlier versions had it, so the rates
  // are theirs bit for bit (MaxMinRates: the model ladder prints them in
  // full); without, the lower as computed, which saves a scan per event.
  // The same allocation up to rounding either way.
  bool heap_order = true;

  void Clear();
  // Appends a flow; then append its resources to `resources`.
  void AddFlow(double demand_bps);
  // The rates, per flow, valid until the next Solve.
  const std::vector<double>& Solve();

 private:
  void UpdateLevel(uint32_t r);
  uint32_t TopResource();
  uint32_t HeapOrderTop();
  void Fix(uint32_t i, double rate);
  void Build();

  std::vector<double> left_;
  std::vector<uint32_t> unfixed_;
  std::vector<uint32_t> begin_;  // flows per resource, flat
  std::vector<uint32_t> on_;
  std::vector<uint32_t> fill_;
  std::vector<double> rate_;
  std::vector<uint8_t> fixed_;
  std::vector<uint32_t> by_demand_;
  std::vector<double> level_;  // per resource: at which it is full
  // Per resource: its level when TopResource last brought it up to date.
  std::vector<double> seen_;
  // The resources that had unfixed flows at the last TopResource.
  std::vector<uint32_t> active_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_MAX_MIN_H_
