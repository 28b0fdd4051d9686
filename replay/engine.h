// The discrete-event replay engine: executes a decoded Program against the
// hardware blocks of hw/ (CdmaUnit, Network, MessageUnit; see
// docs/hardware-model.md), which own their state and react to their events.
// Time is integer picoseconds; ties are broken by scheduling order, so the
// same inputs give the same result, bit for bit.
#ifndef CCREPLAY_REPLAY_ENGINE_H_
#define CCREPLAY_REPLAY_ENGINE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/units.h"
#include "hw/config.h"
#include "hw/net_recorder.h"
#include "hw/port.h"
#include "hw/topology.h"
#include "replay/path.h"
#include "trace/program.h"

namespace ccreplay {

struct ReplayOptions {
  // Stop with an error after this many events (0 = no limit).
  uint64_t max_events = 0;
  // Called from the event loop every `progress_every` events with the
  // events so far and the simulated time (a progress bar); it must not
  // touch the replay. Null: never (the loop then checks one counter only).
  std::function<void(uint64_t events, TimePs now)> on_progress;
  uint64_t progress_every = uint64_t{1} << 16;
  // Exact coalescing (docs/hardware-model.md, "Coalescing"): the packet
  // engine folds events whose effects it can apply without changing any
  // result. false = the per-packet reference path (--no-coalesce); both
  // give byte-identical results.
  bool coalesce = true;
  // Told what the packet network does, for a timeline (null: nothing is
  // recorded; the fluid engine tells it nothing).
  NetRecorder* net_recorder = nullptr;
  // Sum the critical-path breakdown as the replay runs
  // (replay/critical_path.h; ReplayResult::critical_path), instead of
  // leaving it to a walk over the timing records once it is over
  // (WalkCriticalPath). The two agree to the picosecond; the running sums
  // cost time per instruction and are the way to a replay that keeps no
  // timing records.
  bool sum_critical_path = false;
  // For tests of the critical path: also keep, per stream, the breakdown
  // of the walk from its last instruction (ReplayResult::stream_paths).
  // Needs sum_critical_path.
  bool every_stream_path = false;
  // Keep every instruction's timing record (ReplayResult::instrs), which
  // the timeline, calibrate and the walk over the records read. false: a
  // lean replay, with no state per instruction beyond the program's (the
  // state of what is in flight only; replay/stream_core.h, HeldSlot,
  // SlotOf), the breakdown summed as it runs (sum_critical_path is implied
  // for Replay; ReplayFluid, which reports no breakdown, sums it only when
  // sum_critical_path asks) and no MsgWait releases
  // (ReplayResult::wait_releases, a timeline's). Every other result is the
  // same.
  bool keep_records = true;
  // Fluid engine only (replay/fluid_engine.h): a remote transfer of at most
  // this many packets crosses the network as packets, store-and-forward
  // through a first-come first-served queue per link and lane group,
  // instead of as a flow
  // (docs/models.md, "Packets in the fluid engine"), and so do messages,
  // clear-to-sends and acknowledgements. 0: every transfer is a flow and
  // control packets take no share of a link. 16, from measurements: packets
  // were cheaper than flows and closer to the packet engine on the fat-tree
  // AllToAlls of 64 to 1024 chips (13 to 1 packets a transfer), and
  // transfers of 29 packets (the 64-chip 4 MB ring AllReduce) were 3x
  // cheaper as flows.
  uint32_t fluid_packet_max = 16;
};

inline constexpr uint32_t kNoCause = 0xffffffffu;

// The part of an instruction's timing record the replay reads while it
// runs (ReplayOptions::keep_records): where it is, and its engine-state slot
// while it is in flight. 12 bytes. (A lean replay finds both otherwise.)
struct InstrCore {
  uint32_t chip = 0;
  uint32_t stream = 0;  // index into the chip's streams
  // A message counted after it arrived: the data instruction (earlier on its
  // qp) whose landing released it. kNoCause for every other kind once the
  // run is over (while an instruction is in flight, the engine keeps its
  // state slot here: replay/stream_core.h, OpState).
  uint32_t held_by = kNoCause;
};

// What happened to one instruction. Times are absolute; a field that does not
// apply to the kind is -1 ps. 64 bytes, a cache line: its index in the
// stream and its kind are not kept (ReplayResult::IndexInStream, InstrOf).
struct InstrTiming : InstrCore {
  // What held this instruction up, for the critical path (kNoCause if
  // nothing did): MsgWait: the message that completed its count; Fence: the
  // last instruction to complete; an instruction on a CDMA queue that
  // started later than it was ready: the instruction the engine finished
  // just before (or, for a Send, the Receive whose clear-to-send arrived).
  uint32_t cause = kNoCause;
  // When the stream reached the instruction (for waits: started waiting).
  TimePs issue{-1};
  // Data-moving: first byte leaves the engine (after the startup latency).
  // Messages: the message leaves the engine. Waits: equal to issue.
  TimePs start{-1};
  // Data-moving: last byte has left the engine (local copy: written).
  // Messages: equal to start. Waits: the stream is released.
  TimePs end{-1};
  // Data-moving: last byte is in the destination GMEM. Messages: delivered to
  // the counter.
  TimePs landed{-1};
  // Data-moving: completion known at the issuing chip (remote: the
  // acknowledgement has come back; local: equal to landed; Receive: landed).
  TimePs complete{-1};
  // Messages: when the packet arrived, before any wait for earlier data on
  // its qp (landed is when it was counted).
  TimePs arrived{-1};
};
static_assert(sizeof(InstrCore) == 12, "the first 12 bytes of a record");
static_assert(sizeof(InstrTiming) == 64, "one timing record, one cache line");

struct ReplayResult {
  // The collective's time: when the last stream of any chip finished.
  TimePs makespan;
  // When the last event of the run happened (late acknowledgements included).
  TimePs drained;
  std::vector<TimePs> chip_finish;       // per chip: its last stream ended
  std::vector<uint64_t> bytes_sent;      // per chip: payload put on links
  std::vector<uint64_t> bytes_received;  // per chip: payload taken off links
  std::vector<uint64_t> bytes_local;     // per chip: local copies
  // One per instruction, ordered by (chip, stream, instruction): its global
  // index g.
  std::vector<InstrTiming> instrs;
  // Per stream, in (chip, stream) order: the global index of its first
  // instruction; per chip: the position of its first stream there.
  std::vector<uint32_t> stream_first;
  std::vector<uint32_t> chip_first_stream;
  // Instruction g's stream, by its position in (chip, stream) order.
  uint32_t StreamOf(uint32_t g) const {
    return chip_first_stream[instrs[g].chip] + instrs[g].stream;
  }
  // Instruction g's index in its stream.
  uint32_t IndexInStream(uint32_t g) const {
    return g - stream_first[StreamOf(g)];
  }
  // Instruction g of `p`, the program replayed.
  Instr InstrOf(const Program& p, uint32_t g) const {
    const InstrTiming& t = instrs[g];
    return p.chips[t.chip].streams[t.stream].instrs[IndexInStream(g)];
  }
  // Its place in words (PlaceText): "chip 3, stream 1, instruction 12".
  std::string PlaceOf(const Program& p, uint32_t g) const {
    const InstrTiming& t = instrs[g];
    return InstrPlace(p, t.chip, t.stream, IndexInStream(g));
  }
  std::vector<LinkStats> links;  // indexed like Topology::links()
  // Each MsgWait that passed, in the order they passed, and the message
  // that last counted on its counter before it did (kNoCause: none), for a
  // timeline's flows.
  struct WaitRelease {
    uint32_t wait = 0;
    uint32_t msg = kNoCause;
  };
  std::vector<WaitRelease> wait_releases;
  // Events of the per-packet simulation, coalesced ones included: the
  // same with and without coalescing.
  uint64_t events = 0;
  // Of those, the ones coalescing folded instead of dispatching.
  uint64_t coalesced_events = 0;
  // Link credits a port counted before they were due, where no decision
  // could tell (coalescing; Network::SendCredit), against those it kept
  // until due. Not reported; tests read them.
  uint64_t credits_counted_early = 0;
  uint64_t credits_kept = 0;
  uint64_t packets = 0;
  // With ReplayOptions::sum_critical_path: where the time went on the
  // critical path (replay/critical_path.h), summed as the replay ran;
  // nullopt when no stream's last instruction ends at the makespan (a trace
  // whose last stream ends by issuing a write: the walk has nowhere to
  // start), and without that option.
  std::optional<Breakdown> critical_path;
  // With ReplayOptions::every_stream_path: per stream, in (chip, stream)
  // order, the breakdown from its last instruction back (empty streams
  // included, all zero).
  std::vector<Breakdown> stream_paths;
};

// Whether `program` is better replayed without timing records
// (ReplayOptions::keep_records = false; the results are the same): a lean
// replay keeps 12 bytes an instruction instead of 64, but about 170 bytes
// for each instruction on a CDMA queue at the same time (its engine state
// and its part of the critical path), so it pays where few are in flight
// at once. Their estimate: per stream, twice the most CDMA instructions
// between two waits (MsgWait or Fence: the run being issued and the one
// before it finishing); lean when the sum over all streams is under a
// quarter of the instructions (docs/architecture.md, "Memory per
// instruction").
bool PreferLeanReplay(const Program& program);

// Replays `program` on `hw` connected as `topology`.
// REQUIRES: program was produced by ValidateAndDecode against `hw`, and
// topology.num_chips() == program.num_chips.
// Errors: a trace that cannot finish (a wait that is never satisfied, a Send
// without its Receive) returns FailedPrecondition naming each stuck chip,
// stream and instruction and what it waits for; a Send/Receive size mismatch
// returns InvalidArgument naming both; exceeding max_events returns
// ResourceExhausted.
absl::StatusOr<ReplayResult> Replay(const Program& program, const HwConfig& hw,
                                    const Topology& topology,
                                    const ReplayOptions& options = {});

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_ENGINE_H_
