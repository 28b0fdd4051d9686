#include "replay/fluid_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/event_queue.h"
#include "base/max_min.h"
#include "hw/cdma.h"
#include "hw/events.h"
#include "hw/message.h"
#include "replay/flow_net.h"

namespace ccreplay {
namespace {

// The fluid engine's own events, after the kinds of hw/events.h it shares
// with the packet engine (kStreamResume, kCdmaKick, kLocalDone, kMsgLocal,
// kMsgCount).
enum FluidEventKind : uint32_t {
  kFlowsChanged = 100,  // recompute the rates (once per batch of changes)
  kFlowEvent,           // a = flow, b = version: it ends or frees its engine
  kDataLanded,          // a = op: the last byte is in the destination GMEM
  kAcked,               // a = op: its acknowledgement is back at the source
  kMsgArrived,          // a = op (RemoteMsgSend): at its destination
  kCtsArrived,          // a = op (Receive): its clear-to-send at the sender
};

enum class Wait : uint8_t { kNone, kMsgWait, kFence, kDone };

struct Stream {
  uint32_t chip = 0;
  uint32_t stream = 0;  // index within the chip
  uint32_t base = 0;    // global index of instruction 0
  uint32_t size = 0;
  uint32_t pc = 0;
  uint32_t outstanding = 0;  // data-moving instructions not yet complete
  Wait wait = Wait::kNone;
};

struct Op {
  uint32_t stream_slot = 0;
  uint32_t engine = 0;
  uint32_t match = kNone;   // Send: its Receive; Receive: its Send
  uint32_t send_index = 0;  // Send: position among Sends of its chip pair
  uint32_t data_seq = 0;    // Transfer/Send: order among its qp's data ops
};

struct Pair {
  std::vector<uint32_t> sends;  // Send ops in issue order
  std::vector<uint32_t> cts;    // Receive ops whose clear-to-send arrived
};

// One remote data transfer in flight.
// Its links, demand (wire bytes/s its engine can feed; 0 = unbounded) and
// rate live in the FlowNet under the same id.
struct ActiveFlow {
  uint32_t op = 0;
  uint32_t engine = 0;
  uint32_t version = 0;  // of its pending kFlowEvent
  TimePs anchor;         // `left` is as of this time
  double left = 0;       // wire bytes still to pass
  TimePs tail;           // its last packet's hops once the fluid has passed
  // The engine is free once only `staged` wire bytes are left (they wait in
  // its staging queues at the port) but not before it has read them all at
  // its own rate (`read_by`).
  bool holds_engine = true;
  double staged = 0;
  TimePs read_by;
};

// Bytes a transfer puts on the wire: payload plus one header per packet
// (a transfer of 0 bytes is one header-only packet), and its last packet.
struct Wire {
  uint64_t packets = 1;
  uint64_t bytes = 0;
  uint64_t tail = 0;
};

Wire WireOf(const HwConfig& hw, uint64_t bytes) {
  Wire w;
  const uint64_t p = hw.packet_payload_bytes;
  w.packets = std::max<uint64_t>(1, (bytes + p - 1) / p);
  w.bytes = bytes + w.packets * hw.packet_header_bytes;
  w.tail = bytes - (w.packets - 1) * p + hw.packet_header_bytes;
  return w;
}

// Picoseconds to pass `bytes` at `bytes_per_s`, rounded up; a value within
// 1e-6 ps of a whole picosecond is that picosecond (double rounding).
TimePs PsToPass(double bytes, double bytes_per_s) {
  const double ps = bytes / bytes_per_s * 1e12;
  const double whole = std::round(ps);
  return TimePs(static_cast<int64_t>(
      std::abs(ps - whole) < 1e-6 ? whole : std::ceil(ps)));
}

class FluidSim {
 public:
  FluidSim(const Program& p, const HwConfig& hw, const Topology& topo,
           const ReplayOptions& opt)
      : p_(p),
        hw_(hw),
        topo_(topo),
        opt_(opt),
        cdma_(hw, p.num_chips, q_),
        net_(topo.links().size(), static_cast<double>(hw.link_bytes_per_s)) {}

  absl::StatusOr<ReplayResult> Run();
  const FluidStats& stats() const { return stats_; }

 private:
  absl::Status Flatten();
  void Dispatch(const Event& ev, TimePs now);
  absl::StatusOr<ReplayResult> Finish(TimePs now);
  const Instr& InstrAt(uint32_t g) const { return *instr_ptr_[g]; }

  // Streams and queues.
  void Resume(uint32_t slot, TimePs now);
  void Issue(Stream& st, uint32_t slot, uint32_t g, TimePs now);
  void TryStart(uint32_t e, TimePs now);
  void StartOp(uint32_t e, uint32_t g, TimePs ready, TimePs now);
  bool MatchSend(uint32_t g, uint32_t recv);
  void EndPhase(uint32_t e, TimePs now);
  void CompleteOp(uint32_t g, TimePs now);
  Pair& PairOf(uint32_t src, uint32_t dst) {
    return pairs_[(static_cast<uint64_t>(src) << 32) | dst];
  }

  // Data and messages.
  void LocalDone(uint32_t e, TimePs now);
  void Landed(uint32_t g, TimePs now);
  void MsgArrived(uint32_t g, TimePs now);
  void CtsArrived(uint32_t g, TimePs now);
  void DeliverMessage(uint32_t g, TimePs now) {
    if (!msg_->DelayCount(g, now)) CountMessage(g, now);
  }
  void CountMessage(uint32_t g, TimePs now);
  void DataLanded(uint32_t g, TimePs now);

  // Flows.
  std::vector<uint32_t> Route(uint32_t src, uint32_t dst, uint32_t qp) const {
    return topo_.Path(src, dst, Topology::FlowHash(src, dst, qp));
  }
  // A packet of `wire` bytes crossing `links` store-and-forward: per link
  // its serialisation and the crossing (link latency + propagation; from a
  // switch: forwarding + the switch port's latency + propagation).
  TimePs PathTime(const std::vector<uint32_t>& links, uint64_t wire) const;
  TimePs MessageTime(uint32_t src, uint32_t dst, uint32_t qp) const {
    return PathTime(Route(src, dst, qp),
                    hw_.message_payload_bytes + hw_.packet_header_bytes);
  }
  void StartFlow(uint32_t e, uint32_t g, TimePs now);
  // Moves flow `id`'s bytes on to `now` at its current rate.
  void Advance(uint32_t id, TimePs now);
  void MarkChanged(TimePs now);
  void Reallocate(TimePs now);
  // Schedules flow `id`'s next kFlowEvent at its current rate.
  void Schedule(uint32_t id, TimePs now);
  void OnFlowEvent(uint32_t id, uint32_t version, TimePs now);
  // When flow `id` lets its engine go, at the rates as of now.
  TimePs ReleaseAt(uint32_t id, TimePs now) const;

  std::string DescribeStuck() const;

  const Program& p_;
  const HwConfig& hw_;
  const Topology& topo_;
  const ReplayOptions& opt_;

  EventQueue q_;
  CdmaUnit cdma_;
  std::optional<MessageUnit> msg_;
  ReplayResult r_;
  FluidStats stats_;
  absl::Status error_;
  std::vector<const Instr*> instr_ptr_;
  std::vector<Op> ops_;
  std::vector<Stream> streams_;
  absl::flat_hash_map<uint64_t, Pair> pairs_;

  FlowNet net_;
  std::vector<ActiveFlow> flows_;  // by FlowNet id
  bool changed_ = false;           // a kFlowsChanged is pending
};

absl::Status FluidSim::Flatten() {
  size_t total = 0;
  for (const ChipProgram& c : p_.chips) {
    for (const StreamProgram& s : c.streams) total += s.instrs.size();
  }
  if (total >= kNone) {
    return absl::ResourceExhaustedError(
        absl::StrCat("trace has ", total, " instructions; at most ", kNone - 1,
                     " are supported"));
  }
  instr_ptr_.reserve(total);
  r_.instrs.resize(total);
  ops_.resize(total);
  for (uint32_t c = 0; c < p_.num_chips; ++c) {
    const auto& streams = p_.chips[c].streams;
    for (uint32_t s = 0; s < streams.size(); ++s) {
      Stream st{c, s, static_cast<uint32_t>(instr_ptr_.size()),
                static_cast<uint32_t>(streams[s].instrs.size())};
      for (uint32_t i = 0; i < st.size; ++i) {
        r_.instrs[st.base + i] = {c, s, i, streams[s].instrs[i].kind};
        instr_ptr_.push_back(&streams[s].instrs[i]);
      }
      streams_.push_back(st);
    }
  }
  msg_.emplace(hw_, p_.num_chips, static_cast<uint32_t>(total), q_);
  r_.chip_finish.assign(p_.num_chips, TimePs::Zero());
  r_.bytes_sent.assign(p_.num_chips, 0);
  r_.bytes_received.assign(p_.num_chips, 0);
  r_.bytes_local.assign(p_.num_chips, 0);
  r_.links.resize(topo_.links().size());
  return absl::OkStatus();
}

absl::StatusOr<ReplayResult> FluidSim::Run() {
  if (absl::Status s = Flatten(); !s.ok()) return s;
  for (uint32_t slot = 0; slot < streams_.size(); ++slot) {
    q_.Push(TimePs::Zero(), kStreamResume, slot);
  }
  TimePs now;
  while (!q_.empty() && error_.ok()) {
    const Event ev = q_.Pop();
    now = TimePs(ev.time_ps);
    if (opt_.max_events != 0 && r_.events >= opt_.max_events) {
      return absl::ResourceExhaustedError(
          absl::StrCat("fluid replay stopped after ", r_.events,
                       " events (--max-events) at ", now.ps(), " ps"));
    }
    r_.events++;
    Dispatch(ev, now);
  }
  if (!error_.ok()) return error_;
  return Finish(now);
}

void FluidSim::Dispatch(const Event& ev, TimePs now) {
  switch (ev.kind) {
    case kStreamResume:
      Resume(ev.a, now);
      break;
    case kCdmaKick:
      cdma_.OnKick(ev.a, now);
      TryStart(ev.a, now);
      break;
    case kLocalDone:
      LocalDone(ev.a, now);
      break;
    case kMsgLocal:
      r_.instrs[ev.a].landed = r_.instrs[ev.a].complete = now;
      msg_->Count(r_.instrs[ev.a].chip, InstrAt(ev.a).dst_qp, ev.a, now);
      break;
    case kMsgCount:
      CountMessage(ev.a, now);
      break;
    case kFlowsChanged:
      Reallocate(now);
      break;
    case kFlowEvent:
      OnFlowEvent(ev.a, ev.b, now);
      break;
    case kDataLanded:
      Landed(ev.a, now);
      break;
    case kAcked:
      CompleteOp(ev.a, now);
      break;
    case kMsgArrived:
      MsgArrived(ev.a, now);
      break;
    case kCtsArrived:
      CtsArrived(ev.a, now);
      break;
  }
}

absl::StatusOr<ReplayResult> FluidSim::Finish(TimePs now) {
  r_.drained = now;
  for (const Stream& st : streams_) {
    if (st.wait != Wait::kDone) {
      return absl::FailedPreconditionError(DescribeStuck());
    }
  }
  for (const CdmaEngine& e : cdma_.engines()) {
    if (e.HasQueued()) return absl::FailedPreconditionError(DescribeStuck());
  }
  r_.makespan = TimePs::Zero();
  for (TimePs t : r_.chip_finish) r_.makespan = Max(r_.makespan, t);
  return std::move(r_);
}

void FluidSim::Resume(uint32_t slot, TimePs now) {
  Stream& st = streams_[slot];
  if (st.wait == Wait::kDone) return;
  st.wait = Wait::kNone;
  for (; st.pc < st.size; ++st.pc) {
    const uint32_t g = st.base + st.pc;
    const Instr& in = InstrAt(g);
    InstrTiming& t = r_.instrs[g];
    if (t.issue.ps() < 0) t.issue = now;
    if (in.kind == OpKind::kMsgWait) {
      uint32_t& count = msg_->counter(st.chip, in.dst_qp);
      if (count < in.count) {
        st.wait = Wait::kMsgWait;
        msg_->Wait(st.chip, in.dst_qp, slot);
        return;
      }
      count -= in.count;
      if (now > t.issue) t.cause = msg_->last_message(st.chip, in.dst_qp);
    } else if (in.kind == OpKind::kFence) {
      if (st.outstanding > 0) {
        st.wait = Wait::kFence;
        return;
      }
    } else {
      Issue(st, slot, g, now);
      continue;
    }
    t.start = t.issue;
    t.end = now;
  }
  st.wait = Wait::kDone;
  r_.chip_finish[st.chip] = Max(r_.chip_finish[st.chip], now);
}

// A queue-pair instruction goes to its engine's VC queue (posted).
void FluidSim::Issue(Stream& st, uint32_t slot, uint32_t g, TimePs now) {
  const Instr& in = InstrAt(g);
  const uint32_t e = cdma_.Index(st.chip, in.qp_id);
  ops_[g].stream_slot = slot;
  ops_[g].engine = e;
  if (MovesData(in.kind)) st.outstanding++;
  if (in.kind == OpKind::kSend) {
    Pair& pair = PairOf(st.chip, in.peer);
    ops_[g].send_index = static_cast<uint32_t>(pair.sends.size());
    pair.sends.push_back(g);
  }
  cdma_.Enqueue(e, in.qp_id, g);
  TryStart(e, now);
}

void FluidSim::TryStart(uint32_t e, TimePs now) {
  cdma_.TryStart(
      e, now,
      [this](uint32_t g) {
        const Instr& in = InstrAt(g);
        QueuedOp op;
        op.issue = r_.instrs[g].issue;
        op.moves_data = MovesData(in.kind);
        op.blocked =
            in.kind == OpKind::kSend &&
            PairOf(r_.instrs[g].chip, in.peer).cts.size() <= ops_[g].send_index;
        return op;
      },
      [this, e, now](uint32_t g, TimePs ready) { StartOp(e, g, ready, now); });
}

bool FluidSim::MatchSend(uint32_t g, uint32_t recv) {
  if (InstrAt(recv).bytes != InstrAt(g).bytes) {
    const InstrTiming& t = r_.instrs[g];
    const InstrTiming& rt = r_.instrs[recv];
    error_ = absl::InvalidArgumentError(
        absl::StrCat(InstrPlace(p_, t.chip, t.stream, t.instr), " sends ",
                     InstrAt(g).bytes, " bytes but its matching ",
                     InstrPlace(p_, rt.chip, rt.stream, rt.instr), " expects ",
                     InstrAt(recv).bytes));
    return false;
  }
  ops_[g].match = recv;
  ops_[recv].match = g;
  return true;
}

void FluidSim::StartOp(uint32_t e, uint32_t g, TimePs ready, TimePs now) {
  const Instr& in = InstrAt(g);
  InstrTiming& t = r_.instrs[g];
  const uint32_t chip = t.chip;
  t.start = now;
  const uint32_t before = cdma_.NoteStart(e, g, MovesData(in.kind), now);
  const uint32_t recv = in.kind == OpKind::kSend
                            ? PairOf(chip, in.peer).cts[ops_[g].send_index]
                            : kNone;
  if (now > ready) {
    t.cause = recv != kNone && r_.instrs[recv].arrived == now ? recv : before;
  }
  switch (in.kind) {
    case OpKind::kTransfer:
    case OpKind::kSend:
      if (recv != kNone && !MatchSend(g, recv)) return;
      ops_[g].data_seq = msg_->DataStarted(chip, in.qp_id);
      if (in.peer == chip) {  // a local copy: the engine alone, as packets
        cdma_.BeginData(e, g, in.peer, in.qp_id, in.dst_addr, in.bytes, now);
      } else {
        StartFlow(e, g, now);
      }
      return;
    case OpKind::kReceive:
      q_.Push(now + MessageTime(chip, in.peer, in.qp_id), kCtsArrived, g);
      t.end = now;
      return;
    case OpKind::kRemoteMsgSend:
      msg_->MessageSent(g, chip, in.qp_id);
      q_.Push(now + MessageTime(chip, in.peer, in.qp_id), kMsgArrived, g);
      t.end = now;
      return;
    case OpKind::kMsgSend:
      t.end = now;
      msg_->SendLocal(g, now);
      return;
    default:
      return;  // waits never reach an engine
  }
}

void FluidSim::EndPhase(uint32_t e, TimePs now) {
  r_.instrs[cdma_.EndData(e)].end = now;
  TryStart(e, now);
}

void FluidSim::LocalDone(uint32_t e, TimePs now) {
  const uint32_t g = cdma_.engine(e).current;
  r_.bytes_local[r_.instrs[g].chip] += InstrAt(g).bytes;
  r_.instrs[g].landed = now;
  EndPhase(e, now);
  DataLanded(g, now);
  CompleteOp(g, now);
}

void FluidSim::Landed(uint32_t g, TimePs now) {
  const Instr& in = InstrAt(g);
  const uint32_t src = r_.instrs[g].chip;
  r_.bytes_received[in.peer] += in.bytes;
  r_.instrs[g].landed = now;
  if (ops_[g].match != kNone) {  // a Send: its Receive is done
    r_.instrs[ops_[g].match].landed = now;
    CompleteOp(ops_[g].match, now);
  }
  // The destination acknowledges the whole write to the source.
  q_.Push(now + MessageTime(in.peer, src, in.qp_id), kAcked, g);
  DataLanded(g, now);
}

void FluidSim::MsgArrived(uint32_t g, TimePs now) {
  // Write + msg: it counts only once every earlier data instruction on its
  // qp has landed.
  r_.instrs[g].arrived = now;
  if (msg_->MayCount(g, r_.instrs[g].chip, InstrAt(g).qp_id)) {
    DeliverMessage(g, now);
  }
}

void FluidSim::CtsArrived(uint32_t g, TimePs now) {
  // At the sender (the Receive's peer) from the receiver.
  r_.instrs[g].arrived = now;
  Pair& pair = PairOf(InstrAt(g).peer, r_.instrs[g].chip);
  pair.cts.push_back(g);
  const size_t idx = pair.cts.size() - 1;
  if (idx < pair.sends.size()) TryStart(ops_[pair.sends[idx]].engine, now);
}

void FluidSim::CountMessage(uint32_t g, TimePs now) {
  r_.instrs[g].landed = r_.instrs[g].complete = now;
  msg_->Count(InstrAt(g).peer, InstrAt(g).dst_qp, g, now);
}

void FluidSim::DataLanded(uint32_t g, TimePs now) {
  msg_->DataLanded(r_.instrs[g].chip, InstrAt(g).qp_id, ops_[g].data_seq,
                   [&](uint32_t m) {
                     r_.instrs[m].held_by = g;
                     DeliverMessage(m, now);
                   });
}

void FluidSim::CompleteOp(uint32_t g, TimePs now) {
  r_.instrs[g].complete = now;
  Stream& st = streams_[ops_[g].stream_slot];
  st.outstanding--;
  if (st.outstanding == 0 && st.wait == Wait::kFence) {
    r_.instrs[st.base + st.pc].cause = g;
    q_.Push(now, kStreamResume, ops_[g].stream_slot);
  }
}

TimePs FluidSim::PathTime(const std::vector<uint32_t>& links,
                          uint64_t wire) const {
  TimePs t = TimePs::Zero();
  for (uint32_t l : links) {
    t = t + SerializationTime(wire, hw_.link_bytes_per_s);
    if (topo_.IsSwitch(topo_.links()[l].src)) {
      t = t + hw_.switch_forwarding + hw_.switch_port_latency +
          hw_.switch_port_propagation;
    } else {
      t = t + hw_.link_latency + hw_.link_propagation;
    }
  }
  return t;
}

void FluidSim::StartFlow(uint32_t e, uint32_t g, TimePs now) {
  const Instr& in = InstrAt(g);
  const uint32_t chip = r_.instrs[g].chip;
  const Wire wire = WireOf(hw_, in.bytes);
  std::vector<uint32_t> links = Route(chip, in.peer, in.qp_id);
  ActiveFlow f;
  f.op = g;
  f.engine = e;
  f.anchor = now;
  f.left = static_cast<double>(wire.bytes);
  f.tail = PathTime(links, wire.tail);
  // The engine reads payload at cdma_bytes_per_s: on the wire that is
  // wire / payload as fast.
  f.read_by = now + hw_.CdmaReadTime(in.bytes);
  double demand = 0;
  if (hw_.cdma_bytes_per_s != 0 && in.bytes > 0) {
    demand = static_cast<double>(hw_.cdma_bytes_per_s) *
             static_cast<double>(wire.bytes) / static_cast<double>(in.bytes);
  }
  // Staging: cdma.staging_packets packets per lane group.
  f.staged = std::min<double>(
      f.left, static_cast<double>(hw_.cdma_staging_packets) * hw_.lane_groups *
                  (hw_.packet_payload_bytes + hw_.packet_header_bytes));
  r_.bytes_sent[chip] += in.bytes;
  for (uint32_t l : links) {
    LinkStats& s = r_.links[l];
    s.packets += wire.packets;
    s.wire_bytes += wire.bytes;
    s.payload_bytes += in.bytes;
    // Summed over lane groups, as the packet engine counts it.
    s.busy = s.busy + SerializationTime(wire.bytes * hw_.lane_groups,
                                        hw_.link_bytes_per_s);
    s.first_start = std::min(s.first_start, now);
  }
  const uint32_t id = net_.Add(std::move(links), demand);
  if (flows_.size() <= id) flows_.resize(id + 1);
  f.version = flows_[id].version + 1;  // a reused id: old events are stale
  flows_[id] = f;
  cdma_.engine(e).current = g;  // the engine's data phase: one at a time
  ++stats_.flows;
  MarkChanged(now);
}

void FluidSim::Advance(uint32_t id, TimePs now) {
  ActiveFlow& f = flows_[id];
  f.left -= net_.rate(id) * ((now - f.anchor).ps() * 1e-12);
  f.anchor = now;
}

void FluidSim::MarkChanged(TimePs now) {
  if (changed_) return;
  changed_ = true;
  q_.Push(now, kFlowsChanged, 0);
}

// New max-min rates around the flows that started, ended or changed.
void FluidSim::Reallocate(TimePs now) {
  changed_ = false;
  const uint64_t before = net_.solves();
  const std::vector<FlowNet::Change>& changed = net_.Reallocate();
  stats_.recomputes += net_.solves() - before;
  stats_.solved_flows = net_.solved_flows();
  for (const FlowNet::Change& c : changed) {
    // The bytes moved so far went at the old rate.
    ActiveFlow& f = flows_[c.id];
    f.left -= c.old_rate * ((now - f.anchor).ps() * 1e-12);
    f.anchor = now;
    Schedule(c.id, now);
  }
}

void FluidSim::Schedule(uint32_t id, TimePs now) {
  ActiveFlow& f = flows_[id];
  ++f.version;
  TimePs next = now + PsToPass(std::max(f.left, 0.0), net_.rate(id));
  if (f.holds_engine) next = std::min(next, ReleaseAt(id, now));
  q_.Push(next, kFlowEvent, id, f.version);
}

// A flow running at its engine's rate stages nothing (the port takes each
// packet as it is read): its engine is busy to the end. Otherwise the engine
// runs ahead of the links by what its staging queues hold.
TimePs FluidSim::ReleaseAt(uint32_t id, TimePs now) const {
  const ActiveFlow& f = flows_[id];
  const double rate = net_.rate(id);
  const double demand = net_.demand(id);
  const double left = std::max(f.left, 0.0);
  if (demand > 0 && rate >= demand * (1 - 1e-9)) {
    return now + PsToPass(left, rate);
  }
  return Max(f.read_by, now + PsToPass(std::max(left - f.staged, 0.0), rate));
}

void FluidSim::OnFlowEvent(uint32_t id, uint32_t version, TimePs now) {
  if (flows_[id].version != version) return;  // rates changed since
  Advance(id, now);
  ActiveFlow& f = flows_[id];
  // Less than a picosecond of bytes left counts as none (ends are rounded
  // up to the picosecond).
  const bool done = f.left <= net_.rate(id) * 1e-12;
  const uint32_t engine = f.engine;
  bool free_engine = false;
  if (f.holds_engine && (done || ReleaseAt(id, now) <= now)) {
    f.holds_engine = false;
    free_engine = true;
    if (!done && net_.demand(id) > 0) {
      net_.SetDemand(id, 0);  // what is staged drains at the links' pace
      MarkChanged(now);
    }
  }
  if (done) {
    for (uint32_t l : net_.links(id)) {
      r_.links[l].last_end = Max(r_.links[l].last_end, now);
    }
    q_.Push(now + f.tail, kDataLanded, f.op);
    ++f.version;
    net_.Remove(id);
    MarkChanged(now);
  } else {
    Schedule(id, now);
  }
  // Last: starting the engine's next instruction may add a flow (and move
  // flows_).
  if (free_engine) EndPhase(engine, now);
}

std::string FluidSim::DescribeStuck() const {
  std::vector<std::string> lines;
  for (const Stream& st : streams_) {
    if (st.wait == Wait::kDone) continue;
    const Instr& in = InstrAt(st.base + st.pc);
    lines.push_back(absl::StrCat(
        InstrPlace(p_, st.chip, st.stream, st.pc), ": ",
        st.wait == Wait::kMsgWait
            ? absl::StrCat("waits for ", in.count, " message(s) on qp ",
                           in.dst_qp, ", has ",
                           msg_->counter(st.chip, in.dst_qp))
            : absl::StrCat("waits for ", st.outstanding,
                           " earlier data-moving instruction(s)")));
  }
  for (const CdmaEngine& eng : cdma_.engines()) {
    for (uint32_t vc = 0; vc < kVcBanksPerCdma; ++vc) {
      if (eng.vc_head[vc] == eng.vc_queue[vc].size()) continue;
      const InstrTiming& t = r_.instrs[eng.vc_queue[vc][eng.vc_head[vc]]];
      lines.push_back(absl::StrCat(InstrPlace(p_, t.chip, t.stream, t.instr),
                                   ": queued, behind a Send without its "
                                   "Receive"));
    }
  }
  constexpr size_t kMaxLines = 16;
  const size_t more = lines.size() > kMaxLines ? lines.size() - kMaxLines : 0;
  lines.resize(std::min(lines.size(), kMaxLines));
  return absl::StrCat(
      "deadlock (fluid engine): no event left but ", lines.size() + more,
      " stream(s) or queue(s) cannot finish:\n  ", absl::StrJoin(lines, "\n  "),
      more ? absl::StrCat("\n  ... and ", more, " more") : "");
}

}  // namespace

absl::StatusOr<ReplayResult> ReplayFluidWithStats(const Program& program,
                                                  const HwConfig& hw,
                                                  const Topology& topology,
                                                  const ReplayOptions& options,
                                                  FluidStats* stats) {
  if (topology.num_chips() != program.num_chips) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology has ", topology.num_chips(),
                     " chips but the trace has ", program.num_chips));
  }
  FluidSim sim(program, hw, topology, options);
  auto result = sim.Run();
  *stats = sim.stats();
  return result;
}

absl::StatusOr<ReplayResult> ReplayFluid(const Program& program,
                                         const HwConfig& hw,
                                         const Topology& topology,
                                         const ReplayOptions& options) {
  FluidStats stats;
  return ReplayFluidWithStats(program, hw, topology, options, &stats);
}

}  // namespace ccreplay
