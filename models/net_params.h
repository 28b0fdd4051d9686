// The hardware figures every analytic model reads, derived from the same
// HwConfig and Topology the replay runs on (docs/models.md, "Parameters").
// Units: times in microseconds (double: models are reports, not the engine),
// rates in bytes per second.
#ifndef CCREPLAY_MODELS_NET_PARAMS_H_
#define CCREPLAY_MODELS_NET_PARAMS_H_

#include <cstdint>
#include <vector>

#include "hw/config.h"
#include "hw/topology.h"
#include "models/steps.h"

namespace ccreplay {

struct NetParams {
  // Payload rate of one directed link: link_bytes_per_s * u, with
  // u = payload / (payload + header) (TPS186: 400e9 * 0.9 = 360e9).
  double link_payload_bps = 0;
  // What one chip's CDMA engines can inject together: engines * per-engine
  // rate (TPS186: 8 * 64e9 = 512e9).
  double inject_bps = 0;
  // CDMA engines per chip.
  uint32_t engines = 1;
  // One engine's rate: caps a flow of S stripes at S * engine_bps.
  double engine_bps = 0;
  // Sender start-up (CDMA startup), us. TPS186 0.29.
  double startup_us = 0;
  // Receiver overhead: the message path's remote latency, us. TPS186 0.
  double receive_us = 0;
  // One link crossing: link latency + propagation, us. TPS186 0.225.
  double hop_us = 0;
  // A switch output's latency + propagation (switch_config.port_*), us.
  double switch_hop_us = 0;
  // One switch pass: forwarding latency, us. TPS186 1.0.
  double switch_us = 0;
  // Lane groups a link's bandwidth is split into, and whether a flow's
  // blocks are spread over them by address hash (ITLV, any split possible)
  // rather than round-robin (an even split).
  uint32_t lane_groups = 1;
  bool hashed_lanes = false;
  // One packet's slot on a link, (payload + header) / link rate, us: the
  // smallest gap between two messages (LogP g) and the M/D/1 service time.
  // TPS186 320 B / 400e9 = 0.0008.
  double packet_us = 0;
};

NetParams NetParamsFromHw(const HwConfig& hw);

// Latency of a path with no data on it, us: every chip link crossing
// (hop_us) and switch output (switch_hop_us),
// and at every switch it passes the switch forwarding plus one packet slot
// (store-and-forward receives a whole packet before sending it on).
double PathLatencyUs(const NetParams& p, const Topology& topo,
                     const std::vector<uint32_t>& links);

// The rendezvous that opens `step`: its slowest sync message's path latency
// plus receive_us; 0 without sync messages. Models that walk the schedule
// step by step (alpha(n)-beta(n) and PLogP use their own L) add it before
// the step's data.
double SyncLatencyUs(const NetParams& p, const Topology& topo,
                     const Step& step);

}  // namespace ccreplay

#endif  // CCREPLAY_MODELS_NET_PARAMS_H_
