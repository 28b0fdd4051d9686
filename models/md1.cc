#include "models/md1.h"

#include <algorithm>

#include "models/fluid.h"

namespace ccreplay {

double Md1WaitUs(double rho, double service_us) {
  return rho / (2 * (1 - rho)) * service_us;
}

Md1Result Md1Schedule(const StepView& view, const Topology& topo,
                      const NetParams& net) {
  Md1Result r;
  const size_t num_links = topo.links().size();
  for (const Step& step : view.steps) {
    const double window_us = FluidStepUs(step, topo, net);
    std::vector<double> bytes_on(num_links, 0.0);
    for (const Flow& f : step.flows) {
      for (uint32_t l : f.links) bytes_on[l] += static_cast<double>(f.bytes);
    }
    std::vector<double> wait(num_links, 0.0);
    for (size_t l = 0; l < num_links; ++l) {
      if (bytes_on[l] == 0 || !topo.IsSwitch(topo.links()[l].src)) continue;
      const double rho = bytes_on[l] / net.link_payload_bps * 1e6 / window_us;
      r.max_rho = std::max(r.max_rho, rho);
      if (rho >= kMd1MaxValidRho) ++r.ports_over_limit;
      if (rho >= 1) {
        r.valid = false;
        continue;
      }
      wait[l] = Md1WaitUs(rho, net.packet_us);
    }
    double worst = 0;
    for (const Flow& f : step.flows) {
      double w = 0;
      for (uint32_t l : f.links) w += wait[l];
      worst = std::max(worst, w);
    }
    r.queueing_us += worst;
  }
  return r;
}

}  // namespace ccreplay
