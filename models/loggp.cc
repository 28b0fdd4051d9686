#include "models/loggp.h"

#include <algorithm>
#include <map>

namespace ccreplay {
namespace {

// F_k / C of the step's most shared link, at least 1.
double ContentionFactor(const Step& step, const Topology& topo) {
  const std::vector<uint32_t> f = FlowsPerLink(step, topo.links().size());
  const uint32_t worst = f.empty() ? 0 : *std::max_element(f.begin(), f.end());
  return std::max(1.0, worst / kLoGpcLinkCapacity);
}

// W_k of the header: the slowest sender's bandwidth term.
double BandwidthTermUs(const Step& step, const NetParams& net, double G_eff) {
  std::map<uint32_t, uint64_t> chip_bytes;
  double w = 0;
  for (const Flow& f : step.flows) {
    chip_bytes[f.src] += f.bytes;  // local copies load the engines too
    if (f.src == f.dst) continue;
    w = std::max(w, static_cast<double>(f.bytes) * G_eff);
  }
  for (const auto& [chip, bytes] : chip_bytes) {
    w = std::max(w, static_cast<double>(bytes) / net.inject_bps * 1e6);
  }
  return w;
}

}  // namespace

LogGpParams LogGpParamsFromNet(const NetParams& net) {
  LogGpParams p;
  p.o_us = (net.startup_us + net.receive_us) / 2;
  p.g_us = net.packet_us;
  p.G_us_per_byte = 1e6 / std::min(net.link_payload_bps, net.inject_bps);
  return p;
}

double LogGpScheduleUs(const StepView& view, const Topology& topo,
                       const NetParams& net, bool contention) {
  const LogGpParams p = LogGpParamsFromNet(net);
  double t = 0;
  const Step* prev = nullptr;  // the previous step with data
  for (const Step& step : view.steps) {
    if (step.flows.empty()) continue;
    const double factor = contention ? ContentionFactor(step, topo) : 1.0;
    const double w = BandwidthTermUs(step, net, p.G_us_per_byte * factor);
    const bool phase_start = prev == nullptr || prev->reduce != step.reduce;
    prev = &step;
    if (phase_start) {
      double l = 0;
      for (const Flow& f : step.flows) {
        l = std::max(l, PathLatencyUs(net, topo, f.links));
      }
      t += 2 * p.o_us + l + w;
    } else {
      t += std::max({p.o_us, p.g_us, w});
    }
  }
  return t;
}

double LoGpcWorstFactor(const StepView& view, const Topology& topo) {
  double worst = 1.0;
  for (const Step& s : view.steps) {
    worst = std::max(worst, ContentionFactor(s, topo));
  }
  return worst;
}

double LoGpcRingAllReduceUs(uint64_t bytes, uint32_t n, double L_us,
                            const LogGpParams& p, double G_eff_us_per_byte) {
  const double block = static_cast<double>(bytes) / n * G_eff_us_per_byte;
  return 2 * ((2 * p.o_us + L_us + block) +
              (n - 2) * std::max({p.o_us, p.g_us, block}));
}

}  // namespace ccreplay
