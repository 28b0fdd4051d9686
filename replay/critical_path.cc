#include "replay/critical_path.h"

#include <algorithm>

namespace ccreplay {

void CriticalPath::Init(uint32_t streams, uint32_t engines, size_t counters) {
  streams_.assign(streams, StreamPath{});
  // Every stream starts at time 0: its start is where the walk ends, with
  // nothing to attribute.
  for (StreamPath& s : streams_) s.anchor = NewAnchor(PathSum{}, -1);
  engines_.assign(engines, PathSum{});
  counters_.assign(counters, kNone);
}

uint32_t CriticalPath::NewAnchor(const PathSum& sum, int64_t index) {
  uint32_t id = free_anchor_;
  if (id == kNone) {
    id = static_cast<uint32_t>(anchors_.size());
    anchors_.emplace_back();
  } else {
    free_anchor_ = anchors_[id].refs;
  }
  anchors_[id] = Anchor{sum, index, 1};
  return id;
}

void CriticalPath::Unref(uint32_t anchor) {
  if (--anchors_[anchor].refs == 0) {
    anchors_[anchor].refs = free_anchor_;  // the free list's link
    free_anchor_ = anchor;
  }
}

void CriticalPath::SetAnchor(uint32_t s, const PathSum& back_to,
                             int64_t index) {
  Unref(streams_[s].anchor);
  const uint32_t id = NewAnchor(back_to, index);
  anchors_[id].sum.steps += 1;
  streams_[s].anchor = id;
}

PathSum CriticalPath::IssueSum(uint32_t anchor, uint32_t index) const {
  // From an instruction's issue the walk steps back to the previous one's
  // end, then (no wait diverted it) its issue, and so on to the anchor's
  // end: one step for this issue and two per instruction between.
  const Anchor& a = anchors_[anchor];
  PathSum b = a.sum;
  b.steps += static_cast<uint32_t>(2 * (int64_t{index} - 1 - a.index) + 1);
  return b;
}

void CriticalPath::Issue(OpPath& op, uint32_t s, uint32_t index, TimePs now) {
  op.t_issue = now;
  op.index = index;
  op.anchor = streams_[s].anchor;
  anchors_[op.anchor].refs++;
}

void CriticalPath::Start(OpPath& op, const Instr& in, uint32_t e, TimePs now,
                         bool held_by_engine, const OpPath* cts,
                         const Instr* cts_in, uint32_t cts_chip) {
  // Each sum below is the sum it goes back to plus its own costs, which
  // only ever add: made in place from a copy of the former.
  PathSum& b = engines_[e];
  if (cts != nullptr) {
    // A Send held for its Receive's clear-to-send: the control packet's
    // way, back to the Receive's engine start.
    const StartedPath& c = started_[cts->started];
    b = c.sum;
    costs_.ControlNetwork(b.by_cause, cts_chip, cts_in->peer, cts_in->qp_id,
                          c.t_end - c.start);
  } else if (!held_by_engine) {
    // (Held by the engine: its last sum, where b already is.)
    b = IssueSum(op.anchor, op.index);
    if (MovesData(in.kind)) b.Add(PathCause::kStartup, now - op.t_issue);
  }
  b.steps += 1;
  if (free_started_ == kNone) {
    op.started = static_cast<uint32_t>(started_.size());
    started_.emplace_back();
  } else {
    op.started = free_started_;
    free_started_ = started_[op.started].held_by;
  }
  started_[op.started] = StartedPath{.sum = b,
                                     .start = now,
                                     .t_end = TimePs(),
                                     .t_landed = TimePs(),
                                     .held_by = kNone};
  // A Receive keeps its anchor: its landing goes back to its issue.
  if (in.kind != OpKind::kReceive) {
    Unref(op.anchor);
    op.anchor = kNone;
  }
}

void CriticalPath::DataEnd(OpPath& op, const Instr& in, uint32_t chip,
                           uint32_t e, TimePs now) {
  StartedPath& sp = started_[op.started];
  sp.t_end = now;
  sp.sum.steps += 1;
  costs_.DataPhase(sp.sum.by_cause, in, in.peer == chip, now - sp.start);
  // An instruction held up behind this one goes back to its data end, if
  // the phase took any time (else to its engine start, as it is now).
  if (now > sp.start) engines_[e] = sp.sum;
}

void CriticalPath::Landed(OpPath& op, const Instr& in, uint32_t chip,
                          TimePs now) {
  StartedPath& sp = started_[op.started];
  sp.t_landed = now;
  sp.sum.steps += 1;
  if (in.peer != chip) {
    costs_.LastPacket(sp.sum.by_cause, chip, in, sp.start, sp.t_end, now);
  }
}

void CriticalPath::ReceiveLanded(OpPath& op, TimePs now) {
  // Landed when its Send's data did; nothing links the two, so the wait
  // is unattributed, back to its issue.
  StartedPath& sp = started_[op.started];
  sp.t_landed = now;
  PathSum b;
  b.steps = 1;
  b.Add(PathCause::kOther, now - op.t_issue);
  b.Append(IssueSum(op.anchor, op.index));
  Unref(op.anchor);
  op.anchor = kNone;
  sp.sum = b;
}

void CriticalPath::Counted(OpPath& op, const Instr& in, uint32_t chip,
                           size_t counter, TimePs now) {
  const StartedPath& sp = started_[op.started];
  uint32_t& slot = counters_[counter];
  if (slot == kNone) {
    slot = static_cast<uint32_t>(counter_sums_.size());
    counter_sums_.emplace_back();
  }
  PathSum& b = counter_sums_[slot];
  b = sp.sum;
  b.steps += 1;
  if (in.kind == OpKind::kMsgSend) {
    b.Add(PathCause::kLatency, now - sp.start);
  } else if (sp.held_by != kNone) {
    // Counted (after the handshake) when earlier data on its qp landed.
    costs_.HeldCounted(b.by_cause, sp.t_landed, now);
  } else {
    costs_.MessageCounted(b.by_cause, chip, in, sp.start, sp.t_end, now,
                          op.after_data ? op.t_issue : TimePs::Zero());
  }
}

void CriticalPath::CompletedForFence(const OpPath& op, const Instr& in,
                                     uint32_t chip, uint32_t s, TimePs now) {
  PathSum b;
  b.steps = 1;
  const StartedPath& sp = started_[op.started];
  costs_.Acknowledgement(b.by_cause, chip, in, sp.t_landed, now);
  b.Append(sp.sum);
  streams_[s].fence = b;
  streams_[s].fence_waited = true;
}

void CriticalPath::MsgWaitPassed(uint32_t s, uint32_t index, size_t counter) {
  SetAnchor(s, counter_sums_[counters_[counter]], index);
}

void CriticalPath::FencePassed(uint32_t s, uint32_t index) {
  StreamPath& sp = streams_[s];
  if (!sp.fence_waited) return;
  sp.fence_waited = false;
  SetAnchor(s, sp.fence, index);
}

void CriticalPath::Done(OpPath& op) {
  if (op.anchor != kNone) Unref(op.anchor);
  op.anchor = kNone;
  if (op.started != kNone) {
    started_[op.started].held_by = free_started_;  // the free list's link
    free_started_ = op.started;
  }
  op.started = kNone;
}

Breakdown CriticalPath::Result(uint32_t s, uint32_t last,
                               TimePs makespan) const {
  const Anchor& a = anchors_[streams_[s].anchor];
  // The last instruction's end: the anchor itself, or two steps an
  // instruction back to it.
  Breakdown b;
  b.total = makespan;
  b.by_cause = a.sum.by_cause;
  b.steps = a.sum.steps + static_cast<uint32_t>(2 * (int64_t{last} - a.index));
  return b;
}

}  // namespace ccreplay
