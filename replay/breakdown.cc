#include "replay/breakdown.h"

#include <algorithm>

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

namespace {

class Walker {
 public:
  Walker(const Program& p, const ReplayResult& r, const HwConfig& hw,
         const Topology& topo)
      : p_(p), r_(r), hw_(hw), topo_(topo) {
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

 private:
  enum class Mode {
    kEnd,
    kIssue,
    kCounted,
    kEngineStart,
    kDataEnd,
    kLanded,
    kComplete
  };

  const Instr& In(uint32_t g) const {
    const InstrTiming& t = r_.instrs[g];
    return p_.chips[t.chip].streams[t.stream].instrs[t.instr];
  }
  void Add(PathCause c, TimePs d) {
    if (d.ps() > 0) b_.by_cause[static_cast<int>(c)] += d;
  }
  // Splits `total`, the time a packet of `wire` bytes took from chip `src`
  // to chip `dst` on the flow of `qp`, along its route.
  void Network(uint32_t src, uint32_t dst, uint32_t qp, uint32_t wire,
               TimePs total) {
    const auto path = topo_.Path(src, dst, Topology::FlowHash(src, dst, qp));
    const TimePs ser = SerializationTime(
        static_cast<uint64_t>(wire) * hw_.lane_groups, hw_.link_bytes_per_s);
    TimePs flight;
    TimePs fwd;
    for (uint32_t l : path) {
      flight += LinkFlight(hw_, topo_, l);
      if (topo_.IsSwitch(topo_.links()[l].dst)) fwd += hw_.switch_forwarding;
    }
    // Clip to the measured time: the walk never attributes more than
    // happened.
    TimePs left = total;
    const auto take = [&](PathCause c, TimePs d) {
      const TimePs t = std::min(d, left);
      Add(c, t);
      left = left - t;
    };
    take(PathCause::kLatency, flight);
    take(PathCause::kSwitch, fwd);
    take(PathCause::kSerialisation, ser * static_cast<int64_t>(path.size()));
    Add(PathCause::kQueueing, left);
  }
  uint32_t MessageWire() const {
    return hw_.message_payload_bytes + hw_.packet_header_bytes;
  }
  uint32_t LastPacketWire(const Instr& in) const {
    const uint64_t tail = in.bytes % hw_.packet_payload_bytes;
    return static_cast<uint32_t>(tail == 0 ? hw_.packet_payload_bytes : tail) +
           hw_.packet_header_bytes;
  }

  const Program& p_;
  const ReplayResult& r_;
  const HwConfig& hw_;
  const Topology& topo_;
  std::vector<std::vector<uint32_t>> base_;
  Breakdown b_;
};

absl::StatusOr<Breakdown> Walker::Run() {
  b_.total = r_.makespan;
  if (r_.instrs.empty() || r_.makespan.ps() == 0) return b_;
  // Start at the last instruction of the stream that finished last (the
  // first such stream in chip order).
  uint32_t g = 0;
  bool found = false;
  for (uint32_t c = 0; c < p_.num_chips && !found; ++c) {
    for (uint32_t s = 0; s < p_.chips[c].streams.size() && !found; ++s) {
      const uint32_t size =
          static_cast<uint32_t>(p_.chips[c].streams[s].instrs.size());
      if (size == 0) continue;
      const uint32_t last = base_[c][s] + size - 1;
      const InstrTiming& t = r_.instrs[last];
      const TimePs end = t.end.ps() >= 0 ? t.end : t.issue;
      if (end == r_.makespan) {
        g = last;
        found = true;
      }
    }
  }
  if (!found) {
    return absl::InternalError("critical path: no stream ends at the makespan");
  }
  Mode mode = Mode::kEnd;
  const uint64_t limit = 8 * r_.instrs.size() + 16;
  for (uint64_t step = 0; step < limit; ++step) {
    b_.steps++;
    const InstrTiming& t = r_.instrs[g];
    const Instr& in = In(g);
    switch (mode) {
      case Mode::kEnd:
        if ((in.kind == OpKind::kMsgWait || in.kind == OpKind::kFence) &&
            t.cause != kNoCause) {
          g = t.cause;
          mode = in.kind == OpKind::kMsgWait ? Mode::kCounted : Mode::kComplete;
        } else {
          mode = Mode::kIssue;
        }
        break;
      case Mode::kIssue:
        if (t.instr == 0) {
          // The stream's first instruction: streams start at time 0.
          Add(PathCause::kOther, t.issue);
          return b_;
        }
        g = g - 1;
        mode = Mode::kEnd;
        break;
      case Mode::kCounted:  // at t.landed of a message
        if (in.kind == OpKind::kMsgSend) {
          Add(PathCause::kLatency, t.landed - t.start);
          mode = Mode::kEngineStart;
        } else if (t.held_by != kNoCause) {
          // Counted (after the handshake) when earlier data on its qp
          // landed.
          const TimePs data = r_.instrs[t.held_by].landed;
          const TimePs handshake =
              std::min(hw_.msg_remote_latency, t.landed - data);
          Add(PathCause::kLatency, handshake);
          Add(PathCause::kQueueing, t.landed - data - handshake);
          g = t.held_by;
          mode = Mode::kLanded;
        } else {
          Add(PathCause::kLatency, t.landed - t.arrived);  // the handshake
          Network(t.chip, in.peer, in.qp_id, MessageWire(),
                  t.arrived - t.start);
          mode = Mode::kEngineStart;
        }
        break;
      case Mode::kEngineStart:  // at t.start of an instruction on a CDMA
        if (t.cause != kNoCause) {
          const InstrTiming& c = r_.instrs[t.cause];
          if (c.kind == OpKind::kReceive && in.kind == OpKind::kSend &&
              c.arrived == t.start) {
            // The Send waited for its Receive's clear-to-send.
            const Instr& cin = In(t.cause);
            Network(c.chip, cin.peer, cin.qp_id, MessageWire(),
                    c.arrived - c.start);
            g = t.cause;
            mode = Mode::kEngineStart;
          } else {
            g = t.cause;
            mode = MovesData(c.kind) && c.end > c.start ? Mode::kDataEnd
                                                        : Mode::kEngineStart;
          }
        } else {
          if (MovesData(in.kind)) Add(PathCause::kStartup, t.start - t.issue);
          mode = Mode::kIssue;
        }
        break;
      case Mode::kDataEnd: {  // at t.end of a data phase
        const TimePs phase = t.end - t.start;
        const TimePs read =
            std::min(phase, SerializationTime(in.bytes, hw_.cdma_bytes_per_s));
        Add(PathCause::kEngineRead, read);
        Add(PathCause::kBackpressure, phase - read);
        mode = Mode::kEngineStart;
        break;
      }
      case Mode::kLanded:  // at t.landed of a data-moving instruction
        if (in.kind == OpKind::kReceive) {
          // Landed when its Send's data did; the walk does not follow the
          // Send (no record links them), so the wait is unattributed.
          Add(PathCause::kOther, t.landed - t.issue);
          mode = Mode::kIssue;
        } else if (in.peer == t.chip) {
          mode = Mode::kDataEnd;  // a local copy lands when written
        } else {
          Network(t.chip, in.peer, in.qp_id, LastPacketWire(in),
                  t.landed - t.end);
          mode = Mode::kDataEnd;
        }
        break;
      case Mode::kComplete:  // at t.complete of a data-moving instruction
        if (in.kind == OpKind::kTransfer && in.peer != t.chip) {
          Network(in.peer, t.chip, in.qp_id, MessageWire(),
                  t.complete - t.landed);
        } else if (in.kind == OpKind::kSend) {
          Network(in.peer, t.chip, in.qp_id, MessageWire(),
                  t.complete - t.landed);
        }
        mode = Mode::kLanded;
        break;
    }
  }
  return absl::InternalError(absl::StrCat(
      "critical path: walk did not reach time 0 after ", limit, " steps"));
}

}  // namespace

absl::StatusOr<Breakdown> CriticalPathBreakdown(const Program& program,
                                                const ReplayResult& result,
                                                const HwConfig& hw,
                                                const Topology& topology) {
  Walker w(program, result, hw, topology);
  return w.Run();
}

}  // namespace ccreplay
