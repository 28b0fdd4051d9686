// Timelines of a replay (docs/timelines.md), in two formats: Chrome trace
// JSON (TimelineJson) and Perfetto's binary protobuf trace (TimelinePerfetto,
// a subset of Perfetto's schema in proto/perfetto_trace.proto); both load in
// ui.perfetto.dev and hold the same tracks and events.
//
// One process per chip; inside it a track per stream (where the stream
// waited: MsgWait, Fence; and an instant where each MsgWait was released),
// per CDMA engine (each instruction's data phase; MsgSend and RemoteMsgSend
// as instants), per output link and lane group (the packets being
// serialised; back-to-back packets of one instruction on one lane group are
// one slice) and counters per link (utilisation in time bins, credit in
// use). One
// process per switch with the same link tracks and a queue-depth counter per
// output port. Flows: a Transfer to the RemoteMsgSend behind it, a message
// to the MsgWait it released. Slices on one track never overlap.
//
// JSON timestamps are microseconds (picoseconds / 1e6 as a double, printed
// as the shortest text that reads back as that double: exact for the six
// decimals a picosecond count has, and deterministic). Perfetto timestamps
// are whole nanoseconds (picoseconds rounded down).
#ifndef CCREPLAY_REPLAY_TIMELINE_H_
#define CCREPLAY_REPLAY_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hw/config.h"
#include "hw/net_recorder.h"
#include "hw/port.h"
#include "hw/topology.h"
#include "replay/engine.h"
#include "trace/program.h"

namespace ccreplay {

// "12.345678": picoseconds as microseconds, exactly.
std::string PsToUsString(TimePs t);

enum class TimelineFormat { kJson, kPerfetto };

// The format a --timeline path asks for by its extension: .json, or
// .pftrace / .perfetto-trace. Anything else is an error naming those.
absl::StatusOr<TimelineFormat> TimelineFormatOf(absl::string_view path);

// What a timeline keeps: the chips (empty: all) and a time window; slices
// crossing the window are clipped to it. A link is kept when either end is
// a kept chip; a link between two switches only when every chip is kept.
struct TimelineFilter {
  std::vector<bool> chips;  // indexed by chip; empty = every chip
  TimePs from = TimePs::Zero();
  TimePs to = TimePs::Max();

  bool KeepChip(uint32_t c) const {
    return chips.empty() || (c < chips.size() && chips[c]);
  }
  bool KeepLink(const Topology& topo, uint32_t link) const;
};

// "0-3,8": chip numbers and inclusive ranges, comma-separated. The result
// has one more entry than the largest chip named.
absl::StatusOr<std::vector<bool>> ParseChipList(absl::string_view text);
// "10us:50us", "1.5us:", ":2ms": from and to, each a number with a unit
// (ps, ns, us, ms, s); an empty side is open. from < to.
absl::StatusOr<std::pair<TimePs, TimePs>> ParseTimeWindow(
    absl::string_view text);

// Records what the packet network reports (hw/net_recorder.h) for the
// timeline's link tracks and counters: pass it as ReplayOptions::net_recorder.
// Keeps only the links and times `filter` keeps.
class TimelineRecorder : public NetRecorder {
 public:
  // A slice of serialisation: `packets` back-to-back packets of one
  // instruction's packets of one kind on one lane group.
  struct LinkSlice {
    uint32_t lg = 0;
    uint32_t op = 0;
    PacketKind kind = PacketKind::kData;
    uint32_t packets = 0;
    uint64_t wire_bytes = 0;
    TimePs start, end;
  };
  struct Sample {
    TimePs t;
    int64_t value = 0;
  };
  struct PortLog {
    std::vector<LinkSlice> slices;  // closed, in order of their start
    std::vector<LinkSlice> open;    // per lane group: the slice growing
    std::vector<Sample> credit;     // bytes of far-end credit in use
    std::vector<Sample> queue;      // packets waiting (switch ports)
    int64_t credit_now = 0;
    CreditsDue returns;  // credits not yet counted in `credit`
  };

  // Credit is counted only with bounded link buffers
  // (hw.link_buffer_bytes != 0).
  TimelineRecorder(TimelineFilter filter, const HwConfig& hw);
  uint32_t lane_groups() const { return lane_groups_; }
  // Sizes the logs for `topo`'s links; the Network calls it on SetRecorder.
  void Attach(const Topology& topo) override;
  void Serialise(uint32_t port, uint32_t lg, const Packet& pk, uint32_t wire,
                 TimePs start, TimePs end) override;
  void CreditReturned(uint32_t port, uint32_t bytes, TimePs due) override;
  void QueueDepth(uint32_t port, uint32_t waiting, TimePs now) override;

  // Per link (empty if the packet engine never ran): the open slices closed.
  const std::vector<PortLog>& Logs();

 private:
  void Close(PortLog& log, uint32_t lg);
  // Counts in `log.credit` the returns due by `t`, in their order.
  void CountReturns(PortLog& log, TimePs t);

  TimelineFilter filter_;
  bool credit_bounded_;
  uint32_t lane_groups_;
  std::vector<PortLog> logs_;
  std::vector<bool> keep_;        // per link
  std::vector<bool> queue_kept_;  // per link: a kept switch port
};

// The inputs of a timeline. REQUIRES: `result` is the replay of `program`
// on `topology`; `net` (may be null) the recorder that replay was given.
struct TimelineInputs {
  const Program& program;
  const ReplayResult& result;
  const Topology* topology = nullptr;  // null: no link tracks
  TimelineRecorder* net = nullptr;
  TimelineFilter filter;
};

std::string TimelineJson(const TimelineInputs& in);
std::string TimelinePerfetto(const TimelineInputs& in);
// Everything, as JSON (no links).
std::string TimelineJson(const Program& program, const ReplayResult& result);

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_TIMELINE_H_
