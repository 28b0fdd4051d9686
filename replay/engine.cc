#include "replay/engine.h"

#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/event_queue.h"
#include "hw/cdma.h"
#include "hw/events.h"
#include "hw/message.h"
#include "hw/network.h"
#include "hw/packet.h"

namespace ccreplay {
namespace {

enum class WaitKind : uint8_t { kNone, kMsgWait, kFence, kDone };

struct StreamState {
  uint32_t chip = 0;
  uint32_t stream = 0;  // index within the chip
  uint32_t base = 0;    // global index of instruction 0
  uint32_t size = 0;
  uint32_t pc = 0;
  uint32_t outstanding = 0;  // data-moving instructions not yet complete
  WaitKind wait = WaitKind::kNone;
};

// Per issued queue-pair instruction (indexed by global instruction index).
struct OpState {
  uint32_t stream_slot = 0;
  uint32_t engine = 0;
  uint64_t arrived = 0;     // payload bytes landed at the destination
  uint32_t match = kNone;   // Send: its Receive; Receive: its Send
  uint32_t send_index = 0;  // Send: position among Sends of its chip pair
  uint32_t data_seq = 0;    // Transfer/Send: order among its qp's data ops
};

// Sends and clear-to-sends between one ordered pair of chips.
struct PairState {
  std::vector<uint32_t> sends;  // Send ops in issue order
  std::vector<uint32_t> cts;    // Receive ops whose clear-to-send arrived
};

// The replay: instruction streams and their semantics (issue, waits, Fence,
// Send/Receive matching, completion) over the hardware blocks of hw/, which
// own the CDMA engines, the network and the message path. Run() is the event
// loop: it hands each event to the block that scheduled it.
class Sim {
 public:
  Sim(const Program& p, const HwConfig& hw, const Topology& topo,
      const ReplayOptions& opt)
      : p_(p),
        hw_(hw),
        topo_(topo),
        opt_(opt),
        cdma_(hw, p.num_chips, q_),
        net_(hw, topo, q_) {
    cdma_.Connect(&net_);
    net_.Connect(&cdma_);
  }

  absl::StatusOr<ReplayResult> Run();

 private:
  // Flattens the program: one OpState and one timing record per
  // instruction, allocated up front so the hot path never reallocates them.
  absl::Status Flatten();
  void Dispatch(const Event& ev, TimePs now);
  absl::StatusOr<ReplayResult> Finish(TimePs now);

  const Instr& InstrAt(uint32_t g) const { return *instr_ptr_[g]; }
  // The address the lane-group hash sees for a control packet of
  // instruction `g`: a message by its destination counter, a clear-to-send
  // by the receive buffer, an acknowledgement by the end of the write. It
  // depends on the instruction's fields only, never on its position.
  uint64_t ControlAddr(PacketKind kind, uint32_t g) const {
    const Instr& in = InstrAt(g);
    switch (kind) {
      case PacketKind::kMsg:
        return (uint64_t{in.peer} << 20) | (uint64_t{in.dst_qp} << 8);
      case PacketKind::kCts:
        return in.dst_addr;
      default:
        return in.dst_addr + in.bytes;
    }
  }
  // Records that data op `g` has landed, and delivers the messages on its
  // qp that were waiting for it.
  void DataLanded(uint32_t g, TimePs now);

  void Resume(uint32_t slot, TimePs now);
  void TryStart(uint32_t e, TimePs now);
  // `ready` is when the instruction could have started at the earliest.
  void StartOp(uint32_t e, uint32_t g, TimePs ready, TimePs now);
  // A Send's size against its Receive's; false (error_ set) on a mismatch.
  bool MatchSend(uint32_t g, uint32_t recv);
  void FinishDataPhase(uint32_t e, TimePs now);
  void LocalDone(uint32_t e, TimePs now);
  // A RemoteMsgSend whose data has landed: counted after the handshake.
  void DeliverMessage(uint32_t op, TimePs now);
  void CountMessage(uint32_t op, TimePs now);
  void Deliver(uint32_t packet, TimePs now);
  void DeliverData(const Packet& pk, TimePs now);
  void CompleteOp(uint32_t g, TimePs now);
  PairState& Pair(uint32_t src, uint32_t dst) {
    return pairs_[(static_cast<uint64_t>(src) << 32) | dst];
  }
  bool SendReady(uint32_t g);
  std::string DescribeStuck();

  const Program& p_;
  const HwConfig& hw_;
  const Topology& topo_;
  const ReplayOptions& opt_;

  EventQueue q_;
  CdmaUnit cdma_;
  Network net_;
  std::optional<MessageUnit> msg_;  // sized once the program is flattened
  ReplayResult r_;
  absl::Status error_;
  std::vector<const Instr*> instr_ptr_;
  std::vector<OpState> ops_;
  std::vector<StreamState> streams_;
  absl::flat_hash_map<uint64_t, PairState> pairs_;
};

absl::Status Sim::Flatten() {
  const uint32_t n = p_.num_chips;
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
  for (uint32_t c = 0; c < n; ++c) {
    const auto& streams = p_.chips[c].streams;
    for (uint32_t s = 0; s < streams.size(); ++s) {
      StreamState st;
      st.chip = c;
      st.stream = s;
      st.base = static_cast<uint32_t>(instr_ptr_.size());
      st.size = static_cast<uint32_t>(streams[s].instrs.size());
      for (uint32_t i = 0; i < st.size; ++i) {
        InstrTiming& t = r_.instrs[st.base + i];
        t.chip = c;
        t.stream = s;
        t.instr = i;
        t.kind = streams[s].instrs[i].kind;
        instr_ptr_.push_back(&streams[s].instrs[i]);
      }
      streams_.push_back(st);
    }
  }
  msg_.emplace(hw_, n, static_cast<uint32_t>(total), q_);
  r_.chip_finish.assign(n, TimePs::Zero());
  r_.bytes_received.assign(n, 0);
  r_.bytes_local.assign(n, 0);
  return absl::OkStatus();
}

absl::StatusOr<ReplayResult> Sim::Run() {
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
          absl::StrCat("replay stopped after ", r_.events,
                       " events (--max-events) at ", now.ps(), " ps"));
    }
    r_.events++;
    Dispatch(ev, now);
  }
  if (!error_.ok()) return error_;
  if (q_.went_back()) {
    return absl::InternalError(
        "replay: an event was scheduled before the current time (a bug in "
        "ccreplay's hardware model; please report it with the trace)");
  }
  return Finish(now);
}

void Sim::Dispatch(const Event& ev, TimePs now) {
  switch (ev.kind) {
    case kStreamResume:
      Resume(ev.a, now);
      break;
    case kCdmaKick:
      cdma_.OnKick(ev.a, now);
      TryStart(ev.a, now);
      break;
    case kCdmaEmit:
      if (cdma_.OnEmit(ev.a, now)) FinishDataPhase(ev.a, now);
      break;
    case kLocalDone:
      LocalDone(ev.a, now);
      break;
    case kArrive:
      if (net_.OnArrive(ev.a, ev.b, now)) Deliver(ev.a, now);
      break;
    case kSwitchForward:
      net_.OnSwitchForward(ev.a, ev.b, now);
      break;
    case kIngressHead:
      net_.OnIngressHead(ev.a, now);
      break;
    case kMsgCount:
      CountMessage(ev.a, now);
      break;
    case kPortKick:
      net_.OnPortKick(ev.a, now);
      break;
    case kCreditReturn:
      net_.OnCreditReturn(ev.a, ev.b, now);
      break;
    case kMsgLocal: {
      const Instr& in = InstrAt(ev.a);
      r_.instrs[ev.a].landed = r_.instrs[ev.a].complete = now;
      msg_->Count(r_.instrs[ev.a].chip, in.dst_qp, ev.a, now);
      break;
    }
  }
}

absl::StatusOr<ReplayResult> Sim::Finish(TimePs now) {
  r_.drained = now;
  for (const StreamState& st : streams_) {
    if (st.wait != WaitKind::kDone) {
      return absl::FailedPreconditionError(DescribeStuck());
    }
  }
  for (const CdmaEngine& e : cdma_.engines()) {
    if (e.HasQueued()) return absl::FailedPreconditionError(DescribeStuck());
  }
  // Every stream done, but packets still wait for credit: the data of a
  // trace that ends without a Fence never lands.
  for (uint32_t l = 0; l < net_.num_ports(); ++l) {
    if (net_.waiting(l) != 0) {
      return absl::FailedPreconditionError(DescribeStuck());
    }
  }
  r_.makespan = TimePs::Zero();
  for (TimePs t : r_.chip_finish) r_.makespan = Max(r_.makespan, t);
  r_.links = net_.Stats();
  r_.packets = net_.packets_injected();
  r_.bytes_sent = net_.bytes_sent();
  return std::move(r_);
}

void Sim::LocalDone(uint32_t e, TimePs now) {
  const uint32_t g = cdma_.engine(e).current;
  const uint32_t chip = cdma_.engine(e).chip;
  r_.bytes_local[chip] += InstrAt(g).bytes;
  ops_[g].arrived = InstrAt(g).bytes;
  r_.instrs[g].landed = now;
  FinishDataPhase(e, now);
  DataLanded(g, now);
  CompleteOp(g, now);
}

void Sim::Resume(uint32_t slot, TimePs now) {
  StreamState& st = streams_[slot];
  if (st.wait == WaitKind::kDone) return;
  st.wait = WaitKind::kNone;
  while (st.pc < st.size) {
    const uint32_t g = st.base + st.pc;
    const Instr& in = InstrAt(g);
    InstrTiming& t = r_.instrs[g];
    if (t.issue.ps() < 0) t.issue = now;
    switch (in.kind) {
      case OpKind::kMsgWait: {
        uint32_t& c = msg_->counter(st.chip, in.dst_qp);
        if (c < in.count) {
          st.wait = WaitKind::kMsgWait;
          msg_->Wait(st.chip, in.dst_qp, slot);
          return;
        }
        c -= in.count;
        t.start = t.issue;
        t.end = now;
        if (now > t.issue) t.cause = msg_->last_message(st.chip, in.dst_qp);
        break;
      }
      case OpKind::kFence:
        if (st.outstanding > 0) {
          st.wait = WaitKind::kFence;
          return;
        }
        t.start = t.issue;
        t.end = now;
        break;
      default: {
        const uint32_t e = cdma_.Index(st.chip, in.qp_id);
        ops_[g].stream_slot = slot;
        ops_[g].engine = e;
        if (MovesData(in.kind)) st.outstanding++;
        if (in.kind == OpKind::kSend) {
          PairState& pair = Pair(st.chip, in.peer);
          ops_[g].send_index = static_cast<uint32_t>(pair.sends.size());
          pair.sends.push_back(g);
        }
        cdma_.Enqueue(e, in.qp_id, g);
        TryStart(e, now);
        break;
      }
    }
    st.pc++;
  }
  st.wait = WaitKind::kDone;
  r_.chip_finish[st.chip] = Max(r_.chip_finish[st.chip], now);
}

bool Sim::SendReady(uint32_t g) {
  const Instr& in = InstrAt(g);
  const PairState& pair = Pair(r_.instrs[g].chip, in.peer);
  return pair.cts.size() > ops_[g].send_index;
}

void Sim::TryStart(uint32_t e, TimePs now) {
  cdma_.TryStart(
      e, now,
      [this](uint32_t g) {
        const Instr& in = InstrAt(g);
        QueuedOp op;
        op.issue = r_.instrs[g].issue;
        op.moves_data = MovesData(in.kind);
        op.blocked = in.kind == OpKind::kSend && !SendReady(g);
        return op;
      },
      [this, e, now](uint32_t g, TimePs ready) { StartOp(e, g, ready, now); });
}

bool Sim::MatchSend(uint32_t g, uint32_t recv) {
  const Instr& in = InstrAt(g);
  const Instr& rin = InstrAt(recv);
  if (rin.bytes != in.bytes) {
    const InstrTiming& t = r_.instrs[g];
    const InstrTiming& rt = r_.instrs[recv];
    error_ = absl::InvalidArgumentError(absl::StrCat(
        InstrPlace(p_, t.chip, t.stream, t.instr), " sends ", in.bytes,
        " bytes but its matching ",
        InstrPlace(p_, rt.chip, rt.stream, rt.instr), " expects ", rin.bytes));
    return false;
  }
  ops_[g].match = recv;
  ops_[recv].match = g;
  return true;
}

void Sim::StartOp(uint32_t e, uint32_t g, TimePs ready, TimePs now) {
  const Instr& in = InstrAt(g);
  InstrTiming& t = r_.instrs[g];
  const uint32_t chip = cdma_.engine(e).chip;
  t.start = now;
  const uint32_t before = cdma_.NoteStart(e, g, MovesData(in.kind), now);
  if (now > ready) {
    // Held up past its readiness: by a Send's clear-to-send arriving now,
    // or else by the engine finishing the instruction before it.
    const uint32_t recv = in.kind == OpKind::kSend
                              ? Pair(chip, in.peer).cts[ops_[g].send_index]
                              : kNone;
    t.cause = recv != kNone && r_.instrs[recv].arrived == now ? recv : before;
  }
  switch (in.kind) {
    case OpKind::kTransfer:
    case OpKind::kSend:
      if (in.kind == OpKind::kSend &&
          !MatchSend(g, Pair(chip, in.peer).cts[ops_[g].send_index])) {
        return;
      }
      ops_[g].data_seq = msg_->DataStarted(chip, in.qp_id);
      cdma_.BeginData(e, g, in.peer, in.qp_id, in.dst_addr, in.bytes, now);
      return;
    case OpKind::kReceive:
      // The receive is posted: a clear-to-send goes to the sender. The
      // engine is free again at once; the data arrives later.
      net_.Inject(PacketKind::kCts, chip, in.peer, g, in.qp_id,
                  hw_.message_payload_bytes, ControlAddr(PacketKind::kCts, g),
                  CdmaOfQp(in.qp_id), now);
      t.end = now;
      return;
    case OpKind::kRemoteMsgSend:
      msg_->MessageSent(g, chip, in.qp_id);
      net_.Inject(PacketKind::kMsg, chip, in.peer, g, in.qp_id,
                  hw_.message_payload_bytes, ControlAddr(PacketKind::kMsg, g),
                  CdmaOfQp(in.qp_id), now);
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

void Sim::FinishDataPhase(uint32_t e, TimePs now) {
  r_.instrs[cdma_.EndData(e)].end = now;
  TryStart(e, now);
}

void Sim::Deliver(uint32_t packet, TimePs now) {
  const Packet pk = net_.packet(packet);
  net_.Free(packet);
  switch (pk.kind) {
    case PacketKind::kData:
      DeliverData(pk, now);
      break;
    case PacketKind::kAck:
      CompleteOp(pk.op, now);
      break;
    case PacketKind::kMsg:
      // Write + msg: the message counts only once every earlier data
      // instruction on its qp has landed (lane groups may reorder packets).
      r_.instrs[pk.op].arrived = now;
      if (msg_->MayCount(pk.op, pk.src, InstrAt(pk.op).qp_id)) {
        DeliverMessage(pk.op, now);
      }
      break;
    case PacketKind::kCts: {
      // At the sender (pk.dst) from the receiver (pk.src).
      r_.instrs[pk.op].arrived = now;
      PairState& pair = Pair(pk.dst, pk.src);
      pair.cts.push_back(pk.op);
      const size_t idx = pair.cts.size() - 1;
      if (idx < pair.sends.size()) TryStart(ops_[pair.sends[idx]].engine, now);
      break;
    }
  }
}

void Sim::DeliverData(const Packet& pk, TimePs now) {
  r_.bytes_received[pk.dst] += pk.payload;
  OpState& op = ops_[pk.op];
  op.arrived += pk.payload;
  if (op.arrived != InstrAt(pk.op).bytes) return;
  r_.instrs[pk.op].landed = now;
  if (op.match != kNone) {  // a Send: its Receive is done
    r_.instrs[op.match].landed = now;
    CompleteOp(op.match, now);
  }
  // The destination acknowledges the whole write to the source.
  net_.Inject(PacketKind::kAck, pk.dst, pk.src, pk.op, InstrAt(pk.op).qp_id,
              hw_.message_payload_bytes, ControlAddr(PacketKind::kAck, pk.op),
              hw_.cdma_engines, now);
  DataLanded(pk.op, now);
}

void Sim::DeliverMessage(uint32_t op, TimePs now) {
  if (!msg_->DelayCount(op, now)) CountMessage(op, now);
}

void Sim::CountMessage(uint32_t op, TimePs now) {
  r_.instrs[op].landed = r_.instrs[op].complete = now;
  msg_->Count(InstrAt(op).peer, InstrAt(op).dst_qp, op, now);
}

void Sim::DataLanded(uint32_t g, TimePs now) {
  msg_->DataLanded(r_.instrs[g].chip, InstrAt(g).qp_id, ops_[g].data_seq,
                   [&](uint32_t m) {
                     r_.instrs[m].held_by = g;
                     DeliverMessage(m, now);
                   });
}

void Sim::CompleteOp(uint32_t g, TimePs now) {
  r_.instrs[g].complete = now;
  StreamState& st = streams_[ops_[g].stream_slot];
  st.outstanding--;
  if (st.outstanding == 0 && st.wait == WaitKind::kFence) {
    r_.instrs[st.base + st.pc].cause = g;
    q_.Push(now, kStreamResume, ops_[g].stream_slot);
  }
}

std::string Sim::DescribeStuck() {
  std::vector<std::string> lines;
  for (const StreamState& st : streams_) {
    if (st.wait == WaitKind::kDone) continue;
    const uint32_t g = st.base + st.pc;
    const Instr& in = InstrAt(g);
    std::string what;
    if (st.wait == WaitKind::kMsgWait) {
      what =
          absl::StrCat("waits for ", in.count, " message(s) on qp ", in.dst_qp,
                       ", has ", msg_->counter(st.chip, in.dst_qp));
    } else {
      what = absl::StrCat("waits for ", st.outstanding,
                          " earlier data-moving instruction(s) to complete");
    }
    lines.push_back(
        absl::StrCat(InstrPlace(p_, st.chip, st.stream, st.pc), ": ", what));
  }
  for (const CdmaEngine& eng : cdma_.engines()) {
    for (uint32_t vc = 0; vc < kVcBanksPerCdma; ++vc) {
      if (eng.vc_head[vc] == eng.vc_queue[vc].size()) continue;
      const uint32_t g = eng.vc_queue[vc][eng.vc_head[vc]];
      const InstrTiming& t = r_.instrs[g];
      const Instr& in = InstrAt(g);
      lines.push_back(absl::StrCat(
          InstrPlace(p_, t.chip, t.stream, t.instr), ": queued on qp ",
          in.qp_id,
          in.kind == OpKind::kSend
              ? absl::StrCat(", waits for a matching Receive on chip ", in.peer)
              : std::string(", behind a blocked instruction")));
    }
  }
  // Packets that wait for credit with none left to come back: the receive
  // buffers along a cycle of links are full of packets that wait for each
  // other (a routing deadlock of credit-based flow control).
  std::vector<std::string> ports;
  for (uint32_t l = 0; l < net_.num_ports(); ++l) {
    if (net_.waiting(l) == 0) continue;
    ports.push_back(absl::StrCat(topo_.LinkName(l), " (", net_.waiting(l),
                                 " packets waiting)"));
  }
  constexpr size_t kMaxLines = 16;
  const size_t more = lines.size() > kMaxLines ? lines.size() - kMaxLines : 0;
  if (more) lines.resize(kMaxLines);
  std::string msg;
  if (!ports.empty()) {
    const size_t more_ports =
        ports.size() > kMaxLines ? ports.size() - kMaxLines : 0;
    if (more_ports) ports.resize(kMaxLines);
    msg = absl::StrCat(
        "network deadlock: packets wait for receive-buffer credit that can "
        "never return (a cycle of full link buffers; ",
        VirtualChannels(hw_, topo_) < topo_.DatelineClasses()
            ? absl::StrCat("set link.virtual_channels to ",
                           topo_.DatelineClasses(),
                           ", which these routes need, ")
            : std::string(),
        "raise link.buffer_bytes or choose another topology/algorithm) at ",
        ports.size() + more_ports, " link(s):\n  ",
        absl::StrJoin(ports, "\n  "),
        more_ports ? absl::StrCat("\n  ... and ", more_ports, " more") : "");
    // Every stream ended: only the data in flight is stuck.
    if (lines.empty()) return msg;
    absl::StrAppend(&msg, "\nand so ");
  }
  absl::StrAppend(&msg, "deadlock: no event left but ", lines.size() + more,
                  " stream(s) or queue(s) cannot finish:\n  ",
                  absl::StrJoin(lines, "\n  "));
  if (more) absl::StrAppend(&msg, "\n  ... and ", more, " more");
  return msg;
}

}  // namespace

absl::StatusOr<ReplayResult> Replay(const Program& program, const HwConfig& hw,
                                    const Topology& topology,
                                    const ReplayOptions& options) {
  if (topology.num_chips() != program.num_chips) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology has ", topology.num_chips(),
                     " chips but the trace has ", program.num_chips));
  }
  // One channel is allowed (a network without channels, which may
  // deadlock); more must be enough to break every cycle, and "as many as
  // the routes need" (0) must fit the hardware's limit.
  const uint32_t need = topology.DatelineClasses();
  const bool too_few = hw.link_vcs > 1 && need > hw.link_vcs;
  const bool too_many = hw.link_vcs == 0 && need > kMaxVirtualChannels;
  if (too_few || too_many) {
    return absl::InvalidArgumentError(absl::StrCat(
        "link.virtual_channels: ",
        hw.link_vcs == 0 ? std::string("0 (as many as the routes need)")
                         : absl::StrCat(hw.link_vcs, " channels"),
        ", but the routes of ",
        TopologySpecString(topology.kind(), topology.params()), " over ",
        topology.num_chips(), " chips cross up to ", need - 1,
        " datelines and need ", need, " (at most ", kMaxVirtualChannels,
        "; docs/hardware-model.md, \"Virtual channels\")"));
  }
  Sim sim(program, hw, topology, options);
  return sim.Run();
}

}  // namespace ccreplay
