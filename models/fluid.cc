#include "models/fluid.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace ccreplay {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Relative slack for "done": rates are sums of doubles.
constexpr double kEps = 1e-9;

}  // namespace

std::vector<double> FluidFinishTimesUs(const std::vector<double>& capacity_bps,
                                       const std::vector<FluidFlow>& flows) {
  std::vector<double> finish(flows.size(), 0.0);
  std::vector<double> left(flows.size());
  std::vector<size_t> active;
  for (size_t i = 0; i < flows.size(); ++i) {
    left[i] = flows[i].bytes;
    if (left[i] > 0) active.push_back(i);
  }
  double now_s = 0;
  while (!active.empty()) {
    std::vector<FluidFlow> sub;
    for (size_t i : active) sub.push_back(flows[i]);
    const std::vector<double> rate = MaxMinRates(capacity_bps, sub);
    double dt = kInf;
    for (size_t j = 0; j < active.size(); ++j) {
      dt = std::min(dt, left[active[j]] / rate[j]);
    }
    if (!(dt < kInf)) {
      // No flow moves (every rate 0): none of them ever finishes.
      for (size_t i : active) finish[i] = kInf;
      break;
    }
    now_s += dt;
    std::vector<size_t> still;
    for (size_t j = 0; j < active.size(); ++j) {
      const size_t i = active[j];
      // A flow of unbounded rate (an unbounded engine copying locally, on
      // the alpha-beta machine) is done at once; inf * 0 would be NaN.
      left[i] = rate[j] < kInf ? left[i] - rate[j] * dt : 0.0;
      if (left[i] <= flows[i].bytes * kEps) {
        finish[i] = now_s * 1e6;
      } else {
        still.push_back(i);
      }
    }
    active.swap(still);
  }
  return finish;
}

void FluidProblem(const Step& step, const Topology& topo, const NetParams& net,
                  std::vector<double>* capacity_bps,
                  std::vector<FluidFlow>* flows) {
  const size_t num_links = topo.links().size();
  capacity_bps->assign(num_links, net.link_payload_bps);
  capacity_bps->resize(num_links + topo.num_chips(), net.inject_bps);
  flows->clear();
  for (const Flow& f : step.flows) {
    FluidFlow ff;
    ff.resources = f.links;
    ff.resources.push_back(static_cast<uint32_t>(num_links + f.src));
    ff.demand_bps = f.stripes * net.engine_bps;
    ff.bytes = static_cast<double>(f.bytes);
    flows->push_back(std::move(ff));
  }
}

double FluidStepUs(const Step& step, const Topology& topo,
                   const NetParams& net) {
  std::vector<double> capacity;
  std::vector<FluidFlow> flows;
  FluidProblem(step, topo, net, &capacity, &flows);
  const std::vector<double> finish = FluidFinishTimesUs(capacity, flows);
  double t = 0;
  const double sync = SyncLatencyUs(net, topo, step);
  for (size_t i = 0; i < flows.size(); ++i) {
    t = std::max(t, sync + net.startup_us + finish[i] +
                        PathLatencyUs(net, topo, step.flows[i].links) +
                        net.receive_us);
  }
  return std::max(t, sync);
}

double FluidScheduleUs(const StepView& view, const Topology& topo,
                       const NetParams& net) {
  // Per chip, when it may start its next step: its own flows have left its
  // engines, and the flows to it have landed (their arrival notices
  // counted).
  std::vector<double> ready(topo.num_chips(), 0.0);
  double end = 0;
  std::vector<double> capacity;
  std::vector<FluidFlow> flows;
  for (const Step& s : view.steps) {
    FluidProblem(s, topo, net, &capacity, &flows);
    const std::vector<double> finish = FluidFinishTimesUs(capacity, flows);
    std::vector<double> next = ready;
    // A rendezvous: each ready message (from a destination to its sender)
    // lands after its own path latency and receive_us.
    std::map<std::pair<uint32_t, uint32_t>, double> ready_message;
    for (const Flow& g : s.sync) {
      const double landed =
          ready[g.src] + PathLatencyUs(net, topo, g.links) + net.receive_us;
      double& at = ready_message[{g.src, g.dst}];
      at = std::max(at, landed);
      next[g.dst] = std::max(next[g.dst], landed);
    }
    for (size_t i = 0; i < s.flows.size(); ++i) {
      const Flow& f = s.flows[i];
      const auto message = ready_message.find({f.dst, f.src});
      const double start = message == ready_message.end()
                               ? ready[f.src]
                               : std::max(ready[f.src], message->second);
      const double sent = start + net.startup_us + finish[i];
      const double landed =
          sent + PathLatencyUs(net, topo, f.links) + net.receive_us;
      next[f.src] = std::max(next[f.src], sent);
      next[f.dst] = std::max(next[f.dst], landed);
      end = std::max(end, landed);
    }
    ready = std::move(next);
  }
  for (double r : ready) end = std::max(end, r);
  return end;
}

}  // namespace ccreplay
