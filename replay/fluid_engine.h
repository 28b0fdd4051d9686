// The fluid replay engine (`ccreplay replay --engine fluid`,
// docs/models.md "Fluid engine"): the same instruction semantics as the
// packet engine (replay/engine.h) -- streams, CDMA queues in qp order with
// the pipelined startup, MsgWait counters, write + msg ordering, Send /
// Receive matching, acknowledgements and Fence -- but a remote data
// transfer of more than ReplayOptions::fluid_packet_max packets is one flow
// over its routed path instead of packets. A flow's rate is its max-min fair
// share (base/max_min.h) of the links it crosses, capped by its CDMA engine;
// the rates are recomputed only when a flow starts or ends. Shorter
// transfers, and messages, clear-to-sends and acknowledgements, cross as
// packets, store-and-forward, each link serving them first come, first
// served; they and the flows do not slow each other (docs/models.md,
// "Packets in the fluid engine"). Latencies come from the same HwConfig fields
// the packet engine reads. Time is integer picoseconds (a flow ends at the
// picosecond its last byte has passed, rounded up); ties are broken by
// scheduling order, so the same inputs give the same result, bit for bit.
//
// Packets cross each link on the lane group the address interleave gives
// them, at link_bytes_per_s / lane_groups. Not modelled: a flow's packets
// on the links (only its last packet's store-and-forward per hop) and its
// lane groups (a flow sees a link as one pipe of link_bytes_per_s),
// credits and receive buffers, virtual channels, switch arbitration and
// input queueing (a packet queue is first come, first served), and a
// flow's staging backpressure beyond the engine's release rule; packets
// and flows do not slow each other, nor do a train's and a flow's staged
// bytes on one engine.
#ifndef CCREPLAY_REPLAY_FLUID_ENGINE_H_
#define CCREPLAY_REPLAY_FLUID_ENGINE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "replay/engine.h"
#include "trace/program.h"

namespace ccreplay {

struct FluidStats {
  uint64_t flows = 0;         // remote data transfers replayed as flows
  uint64_t recomputes = 0;    // max-min allocations computed
  uint64_t solved_flows = 0;  // flows in them, summed
  uint64_t rate_changes = 0;  // flows whose rate a recompute moved, summed
  // Of `flows`, those that crossed as packets
  // (ReplayOptions::fluid_packet_max), and their packets' link crossings.
  uint64_t trains = 0;
  uint64_t packet_hops = 0;
  // Most trains (data and control packets) in flight at once.
  uint64_t peak_trains = 0;
};

// Replays `program` like Replay() (same REQUIRES, same errors, same
// ReplayResult) with flows in place of packets. In the result, `packets`
// counts those that crossed as packets, each link's `packets` also the
// packets its flows' bytes make up (not simulated one by one), `busy` is
// their serialisation time, `queued` the packets' waits, and
// `credit_stall`, `peak_depth` and the per-lane-group vectors stay empty.
// ReplayOptions::fluid_packet_max above 65535 counts as 65535 (the CLI
// refuses it). It has no breakdown of its own
// (`ccreplay replay --engine fluid` reports none): a lean replay
// (`keep_records` false) sums the critical path only when
// `sum_critical_path` asks for it.
// How reports name the engine run with ReplayOptions::fluid_packet_max =
// `fluid_packet_max`: "fluid engine (flows, no packets)" for 0, else "fluid
// engine (flows; packets for transfers of at most N packets)".
std::string FluidEngineName(uint32_t fluid_packet_max);

absl::StatusOr<ReplayResult> ReplayFluid(const Program& program,
                                         const HwConfig& hw,
                                         const Topology& topology,
                                         const ReplayOptions& options = {});
// The same, and `stats` (not null) receives the flow counts.
absl::StatusOr<ReplayResult> ReplayFluidWithStats(const Program& program,
                                                  const HwConfig& hw,
                                                  const Topology& topology,
                                                  const ReplayOptions& options,
                                                  FluidStats* stats);

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_FLUID_ENGINE_H_
