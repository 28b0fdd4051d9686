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
  // Lane groups a link's bandwidth is split into, and how a flow's packets
  // are spread over them (hw.interleave): round-robin (an even split), an
  // XOR fold of the address's block number (an even split of every aligned
  // run of lane_groups blocks) or an address hash (any split possible).
  uint32_t lane_groups = 1;
  InterleaveKind interleave = InterleaveKind::kRoundRobin;
  // kXor's block (hw.interleave_block_bytes), a packet's payload and
  // header, bytes; a link's rate in wire bytes (payload and headers).
  uint64_t interleave_block_bytes = 0;
  uint64_t packet_payload_bytes = 0;
  uint64_t packet_header_bytes = 0;
  double link_wire_bps = 0;
  // One packet's slot on a link, (payload + header) / link rate, us: the
  // smallest gap between two messages (LogP g) and the M/D/1 service time.
  // TPS186 320 B / 400e9 = 0.0008.
  double packet_us = 0;
};

NetParams NetParamsFromHw(const HwConfig& hw);

// The most wire bytes (payload and headers) of a flow of `bytes` in
// `stripes` Transfers (each a contiguous address range) that the interleave
// can put on one lane group (docs/models.md, "Network calculus"). The flow
// is at most bytes / p + S packets of payload p, so at most
// wire = bytes + header * (bytes / p + S); of that, wire / lane_groups with
// round-robin spreading; all of it with a hash (or one lane group); with
// XOR, of block b and W lane groups, a stripe's packets start in at most
// R <= (bytes_s - 1) / b + 2 consecutive block numbers, every aligned run of
// W of which holds each lane group once, so one lane group gets at most
// ceil(R / W) + 1 of them, each with at most ceil(b / p) packets of
// p + header wire bytes; summed over the stripes (sum R <= bytes / b + 2S)
// and capped at `wire`.
double WorstLaneWireBytes(const NetParams& p, double bytes, uint32_t stripes);

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
