#include "models/net_params.h"

#include <algorithm>
#include <cmath>
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
  p.interleave = hw.interleave;
  p.packet_payload_bytes = hw.packet_payload_bytes;
  p.packet_header_bytes = hw.packet_header_bytes;
  p.link_wire_bps = static_cast<double>(hw.link_bytes_per_s);
  p.interleave_block_bytes = hw.interleave_block_bytes;  // resolved on load
  p.switch_hop_us = (hw.switch_port_latency + hw.switch_port_propagation).us();
  p.switch_us = hw.switch_forwarding.us();
  p.packet_us = hw.link_bytes_per_s > 0
                    ? wire / static_cast<double>(hw.link_bytes_per_s) * 1e6
                    : 0.0;
  return p;
}

double WorstLaneWireBytes(const NetParams& p, double bytes, uint32_t stripes) {
  if (bytes <= 0) return 0;
  const double pay = static_cast<double>(p.packet_payload_bytes);
  const double header = static_cast<double>(p.packet_header_bytes);
  const double s = std::max<uint32_t>(1, stripes);
  const double wire = pay > 0 ? bytes + header * (bytes / pay + s) : bytes;
  const uint32_t w = p.lane_groups;
  if (w <= 1) return wire;
  switch (p.interleave) {
    case InterleaveKind::kRoundRobin:
      return wire / w;
    case InterleaveKind::kHash:
      return wire;
    case InterleaveKind::kXor:
      break;
  }
  const double b = static_cast<double>(p.interleave_block_bytes);
  if (b <= 0 || pay <= 0 || (w & (w - 1)) != 0) return wire;
  // Per stripe ceil(R_s / W) + 1 <= (R_s + W - 1) / W + 1 blocks.
  const double blocks = (bytes / b + 2 * s + s * (w - 1)) / w + s;
  const double per_block = std::ceil(b / pay);
  return std::min(wire, blocks * per_block * (pay + header));
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
