#include "replay/stream_core.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/huge_pages.h"
#include "hw/events.h"

namespace ccreplay {
namespace {

// How far ahead Run() prefetches: while one event runs, the memory of the
// event this many pops after the next is requested. 0, 1 and 3 measured
// alike (within the machine's noise) on the 256-chip fat-tree AllToAll.
constexpr size_t kPrefetchAhead = 1;

}  // namespace

StreamCore::StreamCore(const Program& p, const HwConfig& hw,
                       const Topology& topo, const ReplayOptions& opt,
                       absl::string_view engine_name, bool breakdown)
    : p_(p),
      hw_(hw),
      topo_(topo),
      opt_(opt),
      cdma_(hw, p.num_chips, q_),
      engine_name_(engine_name),
      records_(opt.keep_records),
      // A lean replay reports the breakdown from its running sums.
      path_(hw, topo,
            opt.sum_critical_path || (!opt.keep_records && breakdown)) {}

absl::Status StreamCore::Flatten() {
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
  // Filled below, in one pass.
  if (records_) ReserveOnHugePages(r_.instrs, total);
  uint32_t g = 0;
  r_.chip_first_stream.reserve(n);
  for (uint32_t c = 0; c < n; ++c) {
    r_.chip_first_stream.push_back(static_cast<uint32_t>(streams_.size()));
    const auto& streams = p_.chips[c].streams;
    for (uint32_t s = 0; s < streams.size(); ++s) {
      StreamState st;
      st.chip = c;
      st.stream = s;
      st.base = g;
      st.size = static_cast<uint32_t>(streams[s].instrs.size());
      st.instrs = &streams[s].instrs;
      st.layout = st.instrs->layout();
      g += st.size;
      if (records_) {
        for (uint32_t i = 0; i < st.size; ++i) {
          InstrTiming& t = r_.instrs.emplace_back();
          t.chip = c;
          t.stream = s;
        }
      } else {
        stream_end_.push_back(g);
      }
      r_.stream_first.push_back(st.base);
      streams_.push_back(st);
    }
  }
  if (!OpSlots()) msg_after_.assign(total, 0);
  if (!records_) {
    // Block b starts at instruction b << kBlockBits; streams are in order.
    uint32_t slot = 0;
    for (size_t first = 0; first < total; first += size_t{1} << kBlockBits) {
      while (stream_end_[slot] <= first) ++slot;
      block_slot_.push_back(slot);
    }
  }
  msg_.emplace(hw_, n, q_);
  if (path_.on()) {
    path_.Init(static_cast<uint32_t>(streams_.size()),
               static_cast<uint32_t>(cdma_.engines().size()),
               static_cast<size_t>(n) * hw_.num_qps());
  }
  r_.chip_finish.assign(n, TimePs::Zero());
  r_.bytes_received.assign(n, 0);
  r_.bytes_local.assign(n, 0);
  return absl::OkStatus();
}

absl::Status StreamCore::StoppedAt(TimePs now) const {
  return absl::ResourceExhaustedError(
      absl::StrCat(engine_name_, " stopped after ", opt_.max_events,
                   " events (--max-events) at ", now.ps(), " ps"));
}

uint64_t StreamCore::NextStop() const {
  uint64_t stop = opt_.max_events != 0 ? opt_.max_events : UINT64_MAX;
  if (opt_.on_progress && opt_.progress_every != 0) {
    stop = std::min(stop, r_.events + opt_.progress_every);
  }
  return stop;
}

absl::StatusOr<ReplayResult> StreamCore::Run() {
  if (absl::Status s = Flatten(); !s.ok()) return s;
  for (uint32_t slot = 0; slot < streams_.size(); ++slot) {
    q_.Push(TimePs::Zero(), kStreamResume, slot);
  }
  TimePs now;
  uint64_t next_stop = NextStop();  // one compare per event for both checks
  while (!q_.empty() && error_.ok()) {
    const Event ev = q_.Pop();
    if (uint32_t k, a, b; q_.PeekSameTime(kPrefetchAhead, &k, &a, &b)) {
      Prefetch(k, a, b);
    }
    if (drops_superseded_ && Superseded(ev)) continue;
    now = TimePs(ev.time_ps);
    if (r_.events >= next_stop) {
      if (opt_.max_events != 0 && r_.events >= opt_.max_events) {
        return StoppedAt(now);
      }
      opt_.on_progress(r_.events, now);
      next_stop = NextStop();
    }
    r_.events++;
    Dispatch(ev, now);
  }
  if (!error_.ok()) return error_;
  // Events folded after the last one dispatched count too: the per-packet
  // simulation would have stopped before one of them.
  if (opt_.max_events != 0 && r_.events > opt_.max_events) {
    return StoppedAt(now);
  }
  now = DrainFolded(now);
  if (q_.went_back()) {
    return absl::InternalError(absl::StrCat(
        engine_name_,
        ": an event was scheduled before the current time (a bug in "
        "ccreplay's hardware model; please report it with the trace)"));
  }
  return Finish(now);
}

bool StreamCore::DispatchStream(const Event& ev, TimePs now) {
  switch (ev.kind) {
    case kStreamResume:
      Resume(ev.a, now);
      return true;
    case kCdmaKick:
      cdma_.OnKick(ev.a, now);
      TryStart(ev.a, now);
      return true;
    case kLocalDone:
      LocalDone(ev.a, now);
      return true;
    case kMsgCount:
      CountMessage(ev.a, now);
      return true;
    case kMsgLocal: {
      const Instr& in = InstrAt(ev.a);
      const uint32_t chip = ChipOf(ev.a);
      Stamp(ev.a, &InstrTiming::landed, now);
      Stamp(ev.a, &InstrTiming::complete, now);
      if (path_.on()) {
        path_.Counted(PathOf(ev.a), in, chip,
                      msg_->CounterIndex(chip, in.dst_qp), now);
      }
      if (OpSlots()) FreeOp(ev.a);
      msg_->Count(chip, in.dst_qp, ev.a, now);
      return true;
    }
    default:
      return false;
  }
}

absl::StatusOr<ReplayResult> StreamCore::Finish(TimePs now) {
  r_.drained = now;
  for (const StreamState& st : streams_) {
    if (st.wait != WaitKind::kDone) {
      return absl::FailedPreconditionError(DescribeStuck());
    }
  }
  for (const CdmaEngine& e : cdma_.engines()) {
    if (e.HasQueued()) return absl::FailedPreconditionError(DescribeStuck());
  }
  if (absl::Status s = FinishTransport(); !s.ok()) return s;
  r_.makespan = TimePs::Zero();
  for (TimePs t : r_.chip_finish) r_.makespan = Max(r_.makespan, t);
  r_.critical_path = PathResult();
  return std::move(r_);
}

void StreamCore::LocalDone(uint32_t e, TimePs now) {
  const uint32_t g = cdma_.engine(e).current;
  const uint32_t chip = cdma_.engine(e).chip;
  // Found once, as in WriteLanded: the next instruction the engine starts
  // (FinishDataPhase) is looked up in between.
  const uint32_t slot = HeldSlot(g);
  const Instr in = InstrOf(g, slot);
  r_.bytes_local[chip] += in.bytes;
  Stamp(g, &InstrTiming::landed, now);
  FinishDataPhase(e, now);
  if (path_.on()) path_.Landed(paths_[slot], in, chip, now);
  DataLanded(g, in, slot, now);
  CompleteOp(g, now);
}

void StreamCore::Resume(uint32_t slot, TimePs now) {
  StreamState& st = streams_[slot];
  if (st.wait == WaitKind::kDone) return;
  st.wait = WaitKind::kNone;
  while (st.pc < st.size) {
    const uint32_t g = st.base + st.pc;
    const Instr in = st.At(st.pc);
    if (st.pc_issue.ps() < 0) {
      st.pc_issue = now;
      Stamp(g, &InstrTiming::issue, now);
      if (st.pc + 1 == st.size && path_.on()) st.last_end = now;
    }
    const TimePs issue = st.pc_issue;
    switch (in.kind) {
      case OpKind::kMsgWait: {
        uint32_t& c = msg_->counter(st.chip, in.dst_qp);
        if (c < in.count) {
          st.wait = WaitKind::kMsgWait;
          msg_->Wait(st.chip, in.dst_qp, slot);
          return;
        }
        c -= in.count;
        Stamp(g, &InstrTiming::start, issue);
        StampEnd(g, now);
        const uint32_t last = msg_->last_message(st.chip, in.dst_qp);
        if (now > issue) {
          if (records_) r_.instrs[g].cause = last;
          if (last != kNone && path_.on()) {
            path_.MsgWaitPassed(slot, st.pc,
                                msg_->CounterIndex(st.chip, in.dst_qp));
          }
        }
        if (records_) r_.wait_releases.push_back({g, last});
        break;
      }
      case OpKind::kFence:
        if (st.outstanding > 0) {
          st.wait = WaitKind::kFence;
          return;
        }
        Stamp(g, &InstrTiming::start, issue);
        StampEnd(g, now);
        if (path_.on()) path_.FencePassed(slot, st.pc);
        break;
      default: {
        const uint32_t e = cdma_.Index(st.chip, in.qp_id);
        if (MovesData(in.kind)) st.outstanding++;
        uint32_t op_slot = kNoCause;
        if (in.kind == OpKind::kTransfer || in.kind == OpKind::kSend ||
            OpSlots()) {
          // A write: until it is done; where every op on a queue has a
          // slot (OpSlots), a message until it counts, a Receive until it
          // landed.
          op_slot = NewOp(g, in);
        }
        if (path_.on()) PathIssue(g, slot, in, now);
        if (in.kind == OpKind::kSend) {
          PairState& pair = Pair(st.chip, in.peer);
          Op(g).send_index = static_cast<uint32_t>(pair.sends.size());
          pair.sends.push_back(g);
        }
        CdmaQueued q;
        q.g = g;
        q.slot = op_slot;
        q.moves_data = MovesData(in.kind);
        q.may_block = in.kind == OpKind::kSend;
        q.issue = issue;
        cdma_.Enqueue(e, in.qp_id, q);
        TryStart(e, now);
        break;
      }
    }
    st.pc++;
    st.pc_issue = TimePs(-1);
  }
  st.wait = WaitKind::kDone;
  r_.chip_finish[st.chip] = Max(r_.chip_finish[st.chip], now);
}

const StreamCore::PairState* StreamCore::FindPair(uint32_t src,
                                                  uint32_t dst) const {
  auto it = pairs_.find((static_cast<uint64_t>(src) << 32) | dst);
  return it == pairs_.end() ? nullptr : &it->second;
}

bool StreamCore::SendReady(uint32_t g) const {
  const PairState* pair = FindPair(ChipOf(g), InstrAt(g).peer);
  return pair != nullptr && pair->cts.size() > Op(g).send_index;
}

uint32_t StreamCore::NewOp(uint32_t g, const Instr& in) {
  uint32_t slot;
  if (free_op_ == kNone) {
    // The per-slot arrays grow together.
    slot = static_cast<uint32_t>(ops_.size());
    ops_.emplace_back();
    if (path_.on()) paths_.emplace_back();
    if (!records_) op_instrs_.emplace_back();
  } else {
    slot = free_op_;
    free_op_ = ops_[slot].match;
    ops_[slot] = OpState{};
    if (path_.on()) paths_[slot] = OpPath{};
  }
  if (records_) {
    r_.instrs[g].held_by = slot;
    return slot;
  }
  held_.Insert(g, slot);
  op_instrs_[slot] = in;
  return slot;
}

void StreamCore::FreeOp(uint32_t g) {
  uint32_t slot;
  if (records_) {
    slot = r_.instrs[g].held_by;
    if (slot == kNoCause) return;  // had no slot
    r_.instrs[g].held_by = kNoCause;
  } else {
    slot = held_.Erase(g);
    if (slot == IdMap::kAbsent) return;  // had no slot
  }
  if (path_.on()) path_.Done(paths_[slot]);
  ops_[slot].match = free_op_;  // the free list's link (NewOp)
  free_op_ = slot;
}

void StreamCore::TryStart(uint32_t e, TimePs now) {
  cdma_.TryStart(
      e, now, [this](uint32_t g) { return !SendReady(g); },
      [this, e, now](uint32_t g, uint32_t slot, TimePs ready) {
        StartOp(e, g, slot, ready, now);
      });
}

bool StreamCore::MatchSend(uint32_t g, uint32_t recv) {
  const Instr& in = InstrAt(g);
  const Instr& rin = InstrAt(recv);
  if (rin.bytes != in.bytes) {
    error_ = absl::InvalidArgumentError(
        absl::StrCat(PlaceOf(g), " sends ", in.bytes,
                     " bytes but its matching ", PlaceOf(recv),
                     " expects ", rin.bytes));
    return false;
  }
  Op(g).match = recv;
  return true;
}

void StreamCore::StartOp(uint32_t e, uint32_t g, uint32_t slot, TimePs ready,
                         TimePs now) {
  // Its slot came with it from its queue (the calls below would each find
  // it again).
  const Instr in = InstrOf(g, slot);
  const uint32_t chip = cdma_.engine(e).chip;
  Stamp(g, &InstrTiming::start, now);
  const uint32_t before = cdma_.NoteStart(e, g, MovesData(in.kind), now);
  uint32_t cause = kNoCause;
  // What held it up: for its record and the path's sums (nothing else
  // reads it).
  if (now > ready && (records_ || path_.on())) {
    // Held up past its readiness: by a Send's clear-to-send arriving now,
    // or else by the engine finishing the instruction before it.
    const uint32_t recv = in.kind == OpKind::kSend
                              ? Pair(chip, in.peer).cts[ops_[slot].send_index]
                              : kNone;
    const TimePs cts = recv == kNone ? TimePs(-1)
                       : path_.on()  ? path_.ArrivedAt(PathOf(recv))
                                     : r_.instrs[recv].arrived;
    cause = recv != kNone && cts == now ? recv : before;
    if (records_) r_.instrs[g].cause = cause;
  }
  if (path_.on()) PathStart(e, g, in, slot, cause, now);
  switch (in.kind) {
    case OpKind::kTransfer:
    case OpKind::kSend:
      if (in.kind == OpKind::kSend &&
          !MatchSend(g, Pair(chip, in.peer).cts[ops_[slot].send_index])) {
        return;
      }
      ops_[slot].data_seq = msg_->DataStarted(chip, in.qp_id);
      StartData(e, g, in, slot, now);
      return;
    case OpKind::kReceive:
      // The receive is posted: a clear-to-send goes to the sender. The
      // engine is free again at once; the data arrives later.
      SendControl(PacketKind::kCts, g, in, now);
      StampEnd(g, now);
      return;
    case OpKind::kRemoteMsgSend:
      MsgAfter(g) = msg_->MessageSent(chip, in.qp_id);
      SendControl(PacketKind::kMsg, g, in, now);
      StampEnd(g, now);
      return;
    case OpKind::kMsgSend:
      StampEnd(g, now);
      msg_->SendLocal(g, now);
      return;
    default:
      return;  // waits never reach an engine
  }
}

void StreamCore::FinishDataPhase(uint32_t e, TimePs now) {
  const uint32_t g = cdma_.EndData(e);
  StampEnd(g, now);
  if (path_.on()) {
    path_.DataEnd(PathOf(g), InstrAt(g), cdma_.engine(e).chip, e, now);
  }
  TryStart(e, now);
}

void StreamCore::WriteLanded(uint32_t g, TimePs now) {
  // Found once: the lookups of the Receive and of the messages released
  // in between would make each later one a search of the map again.
  const uint32_t slot = HeldSlot(g);
  const Instr in = InstrOf(g, slot);
  Stamp(g, &InstrTiming::landed, now);
  if (path_.on()) path_.Landed(paths_[slot], in, ChipOf(g), now);
  if (const uint32_t recv = ops_[slot].match; recv != kNone) {
    // A Send: its Receive is done.
    Stamp(recv, &InstrTiming::landed, now);
    if (path_.on()) path_.ReceiveLanded(PathOf(recv), now);
    CompleteOp(recv, now);
  }
  // The destination acknowledges the whole write to the source.
  acking_ = g;
  SendControl(PacketKind::kAck, g, in, now);
  acking_ = kNone;
  DataLanded(g, in, slot, now);
  if (acked_at_.ps() >= 0) {
    CompleteOp(g, acked_at_);
    acked_at_ = TimePs(-1);
  }
}

void StreamCore::CompleteFoldedAck(uint32_t g, TimePs at) {
  if (g == acking_) {
    // Folded as WriteLanded sent it: DataLanded still reads the write's
    // state, so the completion waits for it.
    acked_at_ = at;
    return;
  }
  CompleteOp(g, at);
}

void StreamCore::MessageArrived(uint32_t g, TimePs now) {
  // Write + msg: the message counts only once every earlier data
  // instruction on its qp has landed (lane groups may reorder packets).
  Stamp(g, &InstrTiming::arrived, now);
  if (path_.on()) path_.Arrived(PathOf(g), now);
  if (msg_->MayCount(g, MsgAfter(g), ChipOf(g), InstrAt(g).qp_id)) {
    DeliverMessage(g, now);
  }
}

void StreamCore::CtsArrived(uint32_t g, TimePs now) {
  // At the sender (the Receive's peer) from the receiver (its chip).
  Stamp(g, &InstrTiming::arrived, now);
  if (path_.on()) path_.Arrived(PathOf(g), now);
  PairState& pair = Pair(InstrAt(g).peer, ChipOf(g));
  pair.cts.push_back(g);
  const size_t idx = pair.cts.size() - 1;
  if (idx < pair.sends.size()) {
    const uint32_t send = pair.sends[idx];
    TryStart(cdma_.Index(ChipOf(send), InstrAt(send).qp_id), now);
  }
}

void StreamCore::DeliverMessage(uint32_t op, TimePs now) {
  if (!msg_->DelayCount(op, now)) CountMessage(op, now);
}

void StreamCore::CountMessage(uint32_t op, TimePs now) {
  const Instr& in = InstrAt(op);
  Stamp(op, &InstrTiming::landed, now);
  Stamp(op, &InstrTiming::complete, now);
  if (path_.on()) {
    // Its held_by becomes the write it waited for, or none.
    OpPath& path = PathOf(op);
    path_.Counted(path, in, ChipOf(op),
                  msg_->CounterIndex(in.peer, in.dst_qp), now);
    const uint32_t held_by = path_.HeldBy(path);
    FreeOp(op);
    if (records_) r_.instrs[op].held_by = held_by;
  } else if (OpSlots()) {
    FreeOp(op);  // the message's engine-state slot is let go
  }
  // The streams this count wakes resume later in this picosecond, after
  // the events already due in it: their next instructions start loading
  // now (docs/architecture.md, "Lookahead prefetch").
  for (const uint32_t s : msg_->Waiters(in.peer, in.dst_qp)) {
    const StreamState& st = streams_[s];
    if (st.pc < st.size) {
      __builtin_prefetch(st.layout.At(st.pc));
      __builtin_prefetch(st.layout.At(std::min(st.pc + 2, st.size - 1)));
    }
  }
  msg_->Count(in.peer, in.dst_qp, op, now);
}

void StreamCore::DataLanded(uint32_t g, const Instr& in, uint32_t slot,
                            TimePs now) {
  msg_->DataLanded(ChipOf(g), in.qp_id, ops_[slot].data_seq,
                   [&](uint32_t m) {
                     if (path_.on()) {
                       path_.Released(PathOf(m), paths_[slot], g, now);
                     } else if (records_) {
                       r_.instrs[m].held_by = g;
                     }
                     DeliverMessage(m, now);
                   });
}

void StreamCore::CompleteOp(uint32_t g, TimePs now) {
  Stamp(g, &InstrTiming::complete, now);
  const uint32_t slot = SlotOf(g);
  StreamState& st = streams_[slot];
  st.outstanding--;
  if (st.outstanding == 0 && st.wait == WaitKind::kFence) {
    if (records_) r_.instrs[st.base + st.pc].cause = g;
    if (path_.on()) {
      path_.CompletedForFence(PathOf(g), InstrAt(g), st.chip, slot, now);
    }
    q_.Push(now, kStreamResume, slot);
  }
  FreeOp(g);
}

bool StreamCore::FenceAfter(uint32_t g) {
  if (!fences_scanned_) {
    // Once, every stream's last Fence, which its list keeps (most
    // programs, lowered ones all, have none: then no instruction's stream
    // need be looked up at all).
    fences_scanned_ = true;
    for (StreamState& st : streams_) {
      st.fence_end = st.instrs->shape().fence_end;
      any_fence_ = any_fence_ || st.fence_end > 0;
    }
  }
  if (!any_fence_) return false;
  const StreamState& st = streams_[SlotOf(g)];
  return st.fence_end > g - st.base + 1;
}

void StreamCore::StampEnd(uint32_t g, TimePs now) {
  Stamp(g, &InstrTiming::end, now);
  if (!path_.on()) return;  // only the running sums read last_end
  StreamState& st = streams_[SlotOf(g)];
  if (g + 1 == st.base + st.size) st.last_end = now;
}

std::string StreamCore::PlaceOf(uint32_t g) const {
  const StreamState& st = streams_[SlotOf(g)];
  return InstrPlace(p_, st.chip, st.stream, g - st.base);
}

void StreamCore::PathIssue(uint32_t g, uint32_t slot, const Instr& in,
                           TimePs now) {
  const StreamState& st = streams_[slot];
  OpPath& path = PathOf(g);
  path_.Issue(path, slot, st.pc, now);
  if (in.kind != OpKind::kRemoteMsgSend || st.pc == 0) return;
  // Write + msg: a message right after a write on its qp leaves behind
  // that write's bytes (the critical path needs when the write started;
  // it is still in flight, issued just before).
  if (PathCosts::FollowsOwnWrite(st.At(st.pc - 1), in, st.chip)) {
    path.after_data = true;
    OpPath& before = PathOf(g - 1);
    if (const TimePs start = path_.StartOf(before); start.ps() >= 0) {
      CriticalPath::BeforeStarted(path, start);
    } else {
      before.follower = HeldSlot(g);
    }
  }
}

void StreamCore::PathStart(uint32_t e, uint32_t g, const Instr& in,
                           uint32_t slot, uint32_t cause, TimePs now) {
  OpPath& path = paths_[slot];
  // The walk's rule (replay/breakdown.cc, EngineStart): a Send goes back
  // through the clear-to-send of a Receive that caused it and arrived as it
  // started; anything else that caused it is the engine's previous
  // instruction.
  const OpPath* cts = nullptr;  // started: it holds a sum
  if (cause != kNoCause && in.kind == OpKind::kSend &&
      KindAt(cause) == OpKind::kReceive && HeldSlot(cause) != kNoCause &&
      path_.ArrivedAt(PathOf(cause)) == now) {
    cts = &PathOf(cause);
  }
  if (cts == nullptr) {
    path_.Start(path, in, e, now, cause != kNoCause, nullptr, nullptr, 0);
  } else {
    const Instr receive = InstrAt(cause);
    path_.Start(path, in, e, now, true, cts, &receive, ChipOf(cause));
  }
  if (in.kind == OpKind::kTransfer && path.follower != kNone) {
    CriticalPath::BeforeStarted(paths_[path.follower], now);
  }
  if (in.kind == OpKind::kRemoteMsgSend && path.after_data) {
    path_.MessageAfterData(path, InstrAt(g - 1), now);
  }
}

std::optional<Breakdown> StreamCore::PathResult() {
  if (!path_.on()) return std::nullopt;
  if (opt_.every_stream_path) {
    for (uint32_t s = 0; s < streams_.size(); ++s) {
      r_.stream_paths.push_back(
          streams_[s].size == 0
              ? Breakdown{}
              : path_.Result(s, streams_[s].size - 1, TimePs::Zero()));
    }
  }
  if (streams_.empty() || r_.makespan.ps() == 0) {
    Breakdown b;
    b.total = r_.makespan;
    return b;
  }
  // The walk starts at the last instruction of the stream that finished
  // last (the first such stream in chip order).
  for (uint32_t s = 0; s < streams_.size(); ++s) {
    const StreamState& st = streams_[s];
    if (st.size == 0) continue;
    if (st.last_end == r_.makespan) {
      return path_.Result(s, st.size - 1, r_.makespan);
    }
  }
  return std::nullopt;
}

std::string StreamCore::DescribeStuck() const {
  std::vector<std::string> lines;
  for (const StreamState& st : streams_) {
    if (st.wait == WaitKind::kDone) continue;
    const Instr in = st.At(st.pc);
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
      const uint32_t g = eng.vc_queue[vc][eng.vc_head[vc]].g;
      const Instr& in = InstrAt(g);
      lines.push_back(absl::StrCat(
          PlaceOf(g), ": queued on qp ",
          in.qp_id,
          in.kind == OpKind::kSend
              ? absl::StrCat(", waits for a matching Receive on chip ", in.peer)
              : std::string(", behind a blocked instruction")));
    }
  }
  constexpr size_t kMaxLines = 16;
  const size_t more = lines.size() > kMaxLines ? lines.size() - kMaxLines : 0;
  if (more) lines.resize(kMaxLines);
  std::string msg = NetworkStuck();
  if (!msg.empty()) {
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

}  // namespace ccreplay
