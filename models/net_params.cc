#include "models/net_params.h"

#include <algorithm>
#include <limits>

namespace ccreplay {

NetParams NetParamsFromHw(const HwConfig& hw) {
  NetParams p;
  const double wire = hw.packet_payload_bytes + hw.packet_header_bytes;
  const double u = wire > 0 ? hw.packet_payload_bytes / wire : 1.0;
  p.link_payload_bps = static_cast<double>(hw.link_bytes_per_s) * u;
  p.engine_bps = hw.cdma_bytes_per_s == 0
                     ? std::numeric_limits<double>::infinity()  // unbounded
                     : static_cast<double>(hw.cdma_bytes_per_s);
  p.engines = hw.cdma_engines;
  p.inject_bps = p.engine_bps * hw.cdma_engines;
  p.startup_us = hw.cdma_startup.us();
  p.receive_us = hw.msg_remote_latency.us();
  p.hop_us = (hw.link_latency + hw.link_propagation).us();
  p.lane_groups = hw.lane_groups;
  // Address-based interleaves (hash or XOR fold) can put a short flow on
  // one lane group; only round-robin cannot.
  p.hashed_lanes =
      hw.interleave != InterleaveKind::kRoundRobin && hw.lane_groups > 1;
  p.switch_hop_us = (hw.switch_port_latency + hw.switch_port_propagation).us();
  p.switch_us = hw.switch_forwarding.us();
  p.packet_us = hw.link_bytes_per_s > 0
                    ? wire / static_cast<double>(hw.link_bytes_per_s) * 1e6
                    : 0.0;
  return p;
}

double PathLatencyUs(const NetParams& p, const Topology& topo,
                     const std::vector<uint32_t>& links) {
  double t = 0;
  for (uint32_t l : links) {
    if (topo.IsSwitch(topo.links()[l].src)) {
      t += p.switch_hop_us + p.switch_us + p.packet_us;
    } else {
      t += p.hop_us;
    }
  }
  return t;
}

double SyncLatencyUs(const NetParams& p, const Topology& topo,
                     const Step& step) {
  double t = 0;
  for (const Flow& f : step.sync) {
    t = std::max(t, PathLatencyUs(p, topo, f.links) + p.receive_us);
  }
  return t;
}

}  // namespace ccreplay
