#include "replay/breakdown.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "hw/network.h"

namespace ccreplay {

absl::string_view PathCauseName(PathCause c) {
  switch (c) {
    case PathCause::kStartup:
      return "cdma_startup";
    case PathCause::kEngineRead:
      return "engine_read";
    case PathCause::kBackpressure:
      return "link_backpressure";
    case PathCause::kSerialisation:
      return "serialisation";
    case PathCause::kLatency:
      return "link_latency";
    case PathCause::kSwitch:
      return "switch_forwarding";
    case PathCause::kQueueing:
      return "queueing";
    case PathCause::kOther:
      return "other";
  }
  return "?";
}

PathCosts::PathCosts(const HwConfig& hw, const Topology& topo)
    : hw_(hw),
      topo_(topo),
      routes_(topo.num_chips()),
      message_lane_group_(LaneGroupTime(hw, MessageWire())) {}

const PathCosts::SizeCosts& PathCosts::NewSizes(uint64_t bytes) const {
  SizeCosts& s = sizes_;
  s.bytes = bytes;
  const uint64_t payload = hw_.packet_payload_bytes;
  s.read = hw_.CdmaReadTime(bytes);
  s.first_read = hw_.CdmaReadTime(std::min<uint64_t>(bytes, payload));
  const uint64_t packets = (bytes + payload - 1) / payload;
  s.own_serialisation = SerializationTime(
      bytes + packets * hw_.packet_header_bytes, hw_.link_bytes_per_s);
  const uint64_t tail = bytes % payload;
  const uint32_t last_wire = static_cast<uint32_t>(tail == 0 ? payload : tail) +
                             hw_.packet_header_bytes;
  s.last_serialisation = SerializationTime(static_cast<uint64_t>(last_wire),
                                           hw_.link_bytes_per_s);
  s.last_lane_group = LaneGroupTime(hw_, last_wire);
  return s;
}

const PathCosts::RouteMemo& PathCosts::Route(uint32_t src, uint32_t dst,
                                             uint32_t qp) const {
  RouteMemo& m = routes_[src];
  if (m.dst == dst && m.qp == qp) return m;
  // Along the route (Topology::Path), link by link, without building it.
  const uint32_t flow = Topology::FlowHash(src, dst, qp);
  m = RouteMemo{dst, qp, TimePs::Zero(), TimePs::Zero(), 0};
  for (uint32_t node = src; node != dst; ++m.hops) {
    const uint32_t l = topo_.NextLink(node, dst, flow);
    node = topo_.links()[l].dst;
    m.flight += LinkFlight(hw_, topo_, l);
    if (topo_.IsSwitch(node)) m.fwd += hw_.switch_forwarding;
  }
  return m;
}

void PathCosts::Network(Causes& b, uint32_t src, uint32_t dst, uint32_t qp,
                        TimePs ser, TimePs total, TimePs behind_own) const {
  const RouteMemo& route = Route(src, dst, qp);
  // Clip to the measured time: the walk never attributes more than
  // happened.
  TimePs left = total;
  const auto take = [&](PathCause c, TimePs d) {
    const TimePs t = std::min(d, left);
    Add(b, c, t);
    left = left - t;
  };
  take(PathCause::kLatency, route.flight);
  take(PathCause::kSwitch, route.fwd);
  take(PathCause::kSerialisation, ser * route.hops + behind_own);
  Add(b, PathCause::kQueueing, left);
}

void PathCosts::DataPhase(Causes& b, const Instr& in, bool local,
                          TimePs phase) const {
  // Beyond the unloaded time the engine was held by other traffic on the
  // link (or credit): backpressure. When the link is the slower, the
  // engine's read of the first packet (which the link waits for) is engine
  // time, the rest the link's.
  const SizeCosts& size = Sizes(in.bytes);
  const TimePs read = size.read;
  const TimePs wire = local ? TimePs::Zero() : size.own_serialisation;
  if (wire > read) {
    const TimePs fill = std::min(phase, size.first_read);
    const TimePs ser = std::min(phase - fill, wire);
    Add(b, PathCause::kEngineRead, fill);
    Add(b, PathCause::kSerialisation, ser);
    Add(b, PathCause::kBackpressure, phase - fill - ser);
  } else {
    const TimePs own = std::min(phase, read);
    Add(b, PathCause::kEngineRead, own);
    Add(b, PathCause::kBackpressure, phase - own);
  }
}

void PathCosts::LastPacket(Causes& b, uint32_t chip, const Instr& in,
                           TimePs start, TimePs end, TimePs landed) const {
  // The last packet waits behind the instruction's own earlier packets
  // when the engine reads faster than the link serialises.
  const SizeCosts& size = Sizes(in.bytes);
  Network(b, chip, in.peer, in.qp_id, size.last_lane_group, landed - end,
          Max(OwnBacklog(in, start, end) - size.last_serialisation,
              TimePs::Zero()));
}

void PathCosts::Acknowledgement(Causes& b, uint32_t chip, const Instr& in,
                                TimePs landed, TimePs complete) const {
  if ((in.kind == OpKind::kTransfer && in.peer != chip) ||
      in.kind == OpKind::kSend) {
    ControlNetwork(b, in.peer, chip, in.qp_id, complete - landed);
  }
}

void PathCosts::MessageCounted(Causes& b, uint32_t chip, const Instr& in,
                               TimePs start, TimePs arrived, TimePs landed,
                               TimePs backlog) const {
  Add(b, PathCause::kLatency, landed - arrived);  // the handshake
  ControlNetwork(b, chip, in.peer, in.qp_id, arrived - start, backlog);
}

void PathCosts::HeldCounted(Causes& b, TimePs data, TimePs landed) const {
  const TimePs handshake = std::min(hw_.msg_remote_latency, landed - data);
  Add(b, PathCause::kLatency, handshake);
  Add(b, PathCause::kQueueing, landed - data - handshake);
}

TimePs PathCosts::OwnBacklog(const Instr& in, TimePs start, TimePs at) const {
  // At least all of it less the time since its first packet could go on
  // the link (its data phase began, plus that packet's read).
  const SizeCosts& size = Sizes(in.bytes);
  const TimePs left =
      size.own_serialisation - (at - (start + size.first_read));
  return Max(left, TimePs::Zero());
}

namespace {

class Walker {
 public:
  Walker(const Program& p, const ReplayResult& r, const HwConfig& hw,
         const Topology& topo)
      : p_(p), r_(r), costs_(hw, topo) {
    // Global index of instruction 0 of every (chip, stream).
    base_.resize(p.num_chips);
    uint32_t g = 0;
    for (uint32_t c = 0; c < p.num_chips; ++c) {
      for (const StreamProgram& s : p.chips[c].streams) {
        base_[c].push_back(g);
        g += static_cast<uint32_t>(s.instrs.size());
      }
    }
  }

  absl::StatusOr<Breakdown> Run();
  // The walk from instruction `last` (at its end), to time 0.
  absl::StatusOr<Breakdown> RunFrom(uint32_t last);

 private:
  std::optional<uint32_t> LastInstruction() const;
  // One step of the walk back from (g_, mode_); true when it reached time 0.
  bool Step();
  void Counted(const InstrTiming& t, const Instr& in);
  void EngineStart(const InstrTiming& t, const Instr& in);
  void Landed(const InstrTiming& t, const Instr& in);

  enum class Mode {
    kEnd,
    kIssue,
    kCounted,
    kEngineStart,
    kDataEnd,
    kLanded,
    kComplete
  };

  Instr In(uint32_t g) const { return r_.InstrOf(p_, g); }
  void Add(PathCause c, TimePs d) { PathCosts::Add(b_.by_cause, c, d); }
  // The data instruction a RemoteMsgSend follows on its qp (write + msg:
  // the instruction before it in its stream), or kNone.
  uint32_t DataBefore(uint32_t g) const {
    const InstrTiming& t = r_.instrs[g];
    if (r_.IndexInStream(g) == 0) return kNone;
    return PathCosts::FollowsOwnWrite(In(g - 1), In(g), t.chip) &&
                   r_.instrs[g - 1].start.ps() >= 0
               ? g - 1
               : kNone;
  }

  const Program& p_;
  const ReplayResult& r_;
  PathCosts costs_;
  std::vector<std::vector<uint32_t>> base_;
  Breakdown b_;
  // Where the walk is: an instruction (global index) and which of its
  // times it stands at.
  uint32_t g_ = 0;
  Mode mode_ = Mode::kEnd;
};

// The last instruction of the stream that finished last (the first such
// stream in chip order), where the walk back starts.
std::optional<uint32_t> Walker::LastInstruction() const {
  for (uint32_t c = 0; c < p_.num_chips; ++c) {
    for (uint32_t s = 0; s < p_.chips[c].streams.size(); ++s) {
      const uint32_t size =
          static_cast<uint32_t>(p_.chips[c].streams[s].instrs.size());
      if (size == 0) continue;
      const uint32_t last = base_[c][s] + size - 1;
      const InstrTiming& t = r_.instrs[last];
      const TimePs end = t.end.ps() >= 0 ? t.end : t.issue;
      if (end == r_.makespan) return last;
    }
  }
  return std::nullopt;
}

absl::StatusOr<Breakdown> Walker::Run() {
  b_.total = r_.makespan;
  if (r_.instrs.empty() || r_.makespan.ps() == 0) return b_;
  const std::optional<uint32_t> last = LastInstruction();
  if (!last.has_value()) {
    return absl::InternalError("critical path: no stream ends at the makespan");
  }
  return RunFrom(*last);
}

absl::StatusOr<Breakdown> Walker::RunFrom(uint32_t last) {
  g_ = last;
  mode_ = Mode::kEnd;
  const uint64_t limit = 8 * r_.instrs.size() + 16;
  for (uint64_t step = 0; step < limit; ++step) {
    b_.steps++;
    if (Step()) return b_;
  }
  return absl::InternalError(absl::StrCat(
      "critical path: walk did not reach time 0 after ", limit, " steps"));
}

bool Walker::Step() {
  const InstrTiming& t = r_.instrs[g_];
  const Instr& in = In(g_);
  switch (mode_) {
    case Mode::kEnd:
      if ((in.kind == OpKind::kMsgWait || in.kind == OpKind::kFence) &&
          t.cause != kNoCause) {
        g_ = t.cause;
        mode_ = in.kind == OpKind::kMsgWait ? Mode::kCounted : Mode::kComplete;
      } else {
        mode_ = Mode::kIssue;
      }
      return false;
    case Mode::kIssue:
      if (r_.IndexInStream(g_) == 0) {
        // The stream's first instruction: streams start at time 0.
        Add(PathCause::kOther, t.issue);
        return true;
      }
      g_ = g_ - 1;
      mode_ = Mode::kEnd;
      return false;
    case Mode::kCounted:
      Counted(t, in);
      return false;
    case Mode::kEngineStart:
      EngineStart(t, in);
      return false;
    case Mode::kDataEnd:  // at t.end of a data phase
      costs_.DataPhase(b_.by_cause, in, in.peer == t.chip, t.end - t.start);
      mode_ = Mode::kEngineStart;
      return false;
    case Mode::kLanded:
      Landed(t, in);
      return false;
    case Mode::kComplete:  // at t.complete of a data-moving instruction
      costs_.Acknowledgement(b_.by_cause, t.chip, in, t.landed, t.complete);
      mode_ = Mode::kLanded;
      return false;
  }
  return false;
}

// At t.landed of a message: what made it count then.
void Walker::Counted(const InstrTiming& t, const Instr& in) {
  if (in.kind == OpKind::kMsgSend) {
    Add(PathCause::kLatency, t.landed - t.start);
    mode_ = Mode::kEngineStart;
  } else if (t.held_by != kNoCause) {
    // Counted (after the handshake) when earlier data on its qp landed.
    costs_.HeldCounted(b_.by_cause, r_.instrs[t.held_by].landed, t.landed);
    g_ = t.held_by;
    mode_ = Mode::kLanded;
  } else {
    // A message leaves behind its own write's packets on the same qp.
    const uint32_t data = DataBefore(g_);
    costs_.MessageCounted(
        b_.by_cause, t.chip, in, t.start, t.arrived, t.landed,
        data == kNone
            ? TimePs::Zero()
            : costs_.OwnBacklog(In(data), r_.instrs[data].start, t.start));
    mode_ = Mode::kEngineStart;
  }
}

// At t.start of an instruction on a CDMA: what held its engine start.
void Walker::EngineStart(const InstrTiming& t, const Instr& in) {
  if (t.cause == kNoCause) {
    if (MovesData(in.kind)) Add(PathCause::kStartup, t.start - t.issue);
    mode_ = Mode::kIssue;
    return;
  }
  const InstrTiming& c = r_.instrs[t.cause];
  const Instr& cin = In(t.cause);
  if (cin.kind == OpKind::kReceive && in.kind == OpKind::kSend &&
      c.arrived == t.start) {
    // The Send waited for its Receive's clear-to-send.
    costs_.ControlNetwork(b_.by_cause, c.chip, cin.peer, cin.qp_id,
                          c.arrived - c.start);
    g_ = t.cause;
    mode_ = Mode::kEngineStart;
  } else {
    g_ = t.cause;
    mode_ = MovesData(cin.kind) && c.end > c.start ? Mode::kDataEnd
                                                 : Mode::kEngineStart;
  }
}

// At t.landed of a data-moving instruction.
void Walker::Landed(const InstrTiming& t, const Instr& in) {
  if (in.kind == OpKind::kReceive) {
    // Landed when its Send's data did; the walk does not follow the Send (no
    // record links them), so the wait is unattributed.
    Add(PathCause::kOther, t.landed - t.issue);
    mode_ = Mode::kIssue;
  } else if (in.peer == t.chip) {
    mode_ = Mode::kDataEnd;  // a local copy lands when written
  } else {
    costs_.LastPacket(b_.by_cause, t.chip, in, t.start, t.end, t.landed);
    mode_ = Mode::kDataEnd;
  }
}

}  // namespace

absl::StatusOr<Breakdown> CriticalPathBreakdown(const Program& program,
                                                const ReplayResult& result,
                                                const HwConfig& hw,
                                                const Topology& topology) {
  if (result.critical_path.has_value()) return *result.critical_path;
  if (result.instrs.empty() && result.makespan.ps() != 0) {
    // A lean replay (no timing records) summed its path and found no
    // start, as the walk would not.
    return absl::InternalError("critical path: no stream ends at the makespan");
  }
  return WalkCriticalPath(program, result, hw, topology);
}

absl::StatusOr<Breakdown> WalkCriticalPath(const Program& program,
                                           const ReplayResult& result,
                                           const HwConfig& hw,
                                           const Topology& topology) {
  Walker w(program, result, hw, topology);
  return w.Run();
}

absl::StatusOr<Breakdown> WalkPathFrom(const Program& program,
                                       const ReplayResult& result,
                                       const HwConfig& hw,
                                       const Topology& topology,
                                       uint32_t last) {
  Walker w(program, result, hw, topology);
  return w.RunFrom(last);
}

}  // namespace ccreplay
