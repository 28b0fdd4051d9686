// The critical-path breakdown (replay/breakdown.h), kept as the replay runs
// instead of walked back over every instruction's timing record once it is
// over. The walk goes back from the last stream to finish through what held
// each point of an instruction's life up; every such point's sum (its time
// by mechanism back to time 0, and its steps) is the point's own cost plus
// the sum of the point it goes back to, which has always happened before.
// So each sum is made when its point happens, from the sums of earlier
// points that can still be reached, and those are kept where the next
// instruction to reach them will look:
//   - the stream's anchor: its last MsgWait or Fence that waited (whose
//     walk leaves the stream), from which any later instruction's issue is
//     two steps an instruction back (end, issue, end, ...);
//   - the engine's last instruction, at its engine start or data end (what
//     an instruction held up behind it goes back to);
//   - the counter's last message, where it counted (a MsgWait's cause);
//   - an instruction on a CDMA queue (OpPath, beside its engine state): its
//     issue, anchor and index; once started (StartedPath, in a pool of its
//     own, since a stream may queue thousands at once) its sum so far and
//     the times its later points read.
// The result is the same as the walk's, step for step (a test compares the
// two on every trace configuration), without reading a timing record.
#ifndef CCREPLAY_REPLAY_CRITICAL_PATH_H_
#define CCREPLAY_REPLAY_CRITICAL_PATH_H_

#include <array>
#include <cstdint>
#include <vector>

#include "base/units.h"
#include "hw/config.h"
#include "hw/events.h"
#include "hw/topology.h"
#include "replay/breakdown.h"
#include "replay/path.h"
#include "trace/program.h"

namespace ccreplay {

// A running sum: the walk's time by mechanism and its steps from one point
// back to time 0.
struct PathSum {
  std::array<TimePs, kNumPathCauses> by_cause{};
  uint32_t steps = 0;

  void Add(PathCause c, TimePs d) { PathCosts::Add(by_cause, c, d); }
  void Append(const PathSum& o) {
    for (int i = 0; i < kNumPathCauses; ++i) by_cause[i] += o.by_cause[i];
    steps += o.steps;
  }
};

// What the path needs of an instruction on a CDMA queue from its issue
// until it is done (StreamCore keeps one beside its engine state). Small:
// a stream may issue thousands at once; what a started one needs more is
// in CriticalPath's pool (StartedPath).
struct OpPath {
  // Its issue (a Receive's is read when it lands). A RemoteMsgSend once
  // started: how far behind its write's bytes it left (after_data).
  TimePs t_issue;
  // A RemoteMsgSend right after a write on its qp: when that write started
  // (-1: not yet).
  TimePs before_start{-1};
  uint32_t anchor = kNone;  // its stream's anchor when it was issued
  uint32_t index = 0;       // its index in the stream
  // A Transfer whose next instruction is a RemoteMsgSend on its qp that
  // was issued before it started: that message's engine-state slot.
  uint32_t follower = kNone;
  uint32_t started = kNone;  // once started: its StartedPath
  bool after_data = false;   // a RemoteMsgSend right after a write on its qp
};

// The rest, from its engine start until it is done.
struct StartedPath {
  // Its sum at the last point of its life reached: engine start, data end,
  // landing; a message released by a write: that write's, at its landing.
  PathSum sum;
  TimePs start;
  // A write: its data phase ended. A message or Receive: it (its
  // clear-to-send) arrived.
  TimePs t_end;
  // A write or Receive: it landed. A message released by a write: when
  // that write landed.
  TimePs t_landed;
  uint32_t held_by = kNone;  // a message held for a write: the write
};

class CriticalPath {
 public:
  // `on`: whether the replay sums the path at all (its callers check on()
  // and skip every call when it does not).
  CriticalPath(const HwConfig& hw, const Topology& topo, bool on)
      : costs_(hw, topo), on_(on) {}
  bool on() const { return on_; }

  void Init(uint32_t streams, uint32_t engines, size_t counters);

  // Instruction `index` of stream `s` issued at `now` onto a CDMA queue.
  void Issue(OpPath& op, uint32_t s, uint32_t index, TimePs now);
  // The op's engine started it at `now`. `cause`: nothing held it up
  // (nullptr), the engine's previous instruction (held_by_engine), or a
  // Receive's clear-to-send (`cts`, with its instruction and chip).
  void Start(OpPath& op, const Instr& in, uint32_t e, TimePs now,
             bool held_by_engine, const OpPath* cts, const Instr* cts_in,
             uint32_t cts_chip);
  // A RemoteMsgSend's write before it started at `now` (follower slot).
  static void BeforeStarted(OpPath& msg, TimePs now) { msg.before_start = now; }
  // RemoteMsgSend `msg` started at `now`, right after write `before_in` on
  // its qp: how far behind that write's bytes it leaves.
  void MessageAfterData(OpPath& msg, const Instr& before_in, TimePs now) const {
    msg.t_issue = costs_.OwnBacklog(before_in, msg.before_start, now);
  }
  // A started message or clear-to-send arrived.
  void Arrived(const OpPath& op, TimePs now) { started_[op.started].t_end = now; }
  // When a started op started, and when a started message or clear-to-send
  // arrived (-1: not started / not arrived).
  TimePs StartOf(const OpPath& op) const {
    return op.started == kNone ? TimePs(-1) : started_[op.started].start;
  }
  TimePs ArrivedAt(const OpPath& op) const {
    return op.started == kNone ? TimePs(-1) : started_[op.started].t_end;
  }
  // A message's write that released it (kNone: none).
  uint32_t HeldBy(const OpPath& op) const {
    return op.started == kNone ? kNone : started_[op.started].held_by;
  }
  // Data phase of `op` on engine `e` (chip `chip`) ended at `now`.
  void DataEnd(OpPath& op, const Instr& in, uint32_t chip, uint32_t e,
               TimePs now);
  // Write `op` landed at `now` (remote: its last packet arrived; local:
  // written).
  void Landed(OpPath& op, const Instr& in, uint32_t chip, TimePs now);
  // A Receive landed (its Send's write did) at `now`.
  void ReceiveLanded(OpPath& op, TimePs now);
  // Message `msg` may now count because write `by` landed.
  void Released(const OpPath& msg, const OpPath& by, uint32_t by_g,
                TimePs now) {
    StartedPath& m = started_[msg.started];
    m.sum = started_[by.started].sum;
    m.held_by = by_g;
    m.t_landed = now;
  }
  // Message `op` counted at `now` on counter `counter`.
  void Counted(OpPath& op, const Instr& in, uint32_t chip, size_t counter,
               TimePs now);
  // Data-moving `op` completed at `now` while stream `s` waits at a Fence
  // for it: the Fence's walk leaves through it.
  void CompletedForFence(const OpPath& op, const Instr& in, uint32_t chip,
                         uint32_t s, TimePs now);
  // A MsgWait of stream `s` passed after waiting for counter `counter`.
  void MsgWaitPassed(uint32_t s, uint32_t index, size_t counter);
  // A Fence of stream `s` passed; it waited if CompletedForFence said so.
  void FencePassed(uint32_t s, uint32_t index);
  // The op is done: its anchor, if it still holds one, and its
  // StartedPath are let go.
  void Done(OpPath& op);
  // The breakdown once the run is over: the walk from the last instruction
  // of stream `s`, `last` its index.
  Breakdown Result(uint32_t s, uint32_t last, TimePs makespan) const;

 private:
  struct Anchor {
    PathSum sum;         // of its instruction's end
    int64_t index = -1;  // -1: the stream's start
    uint32_t refs = 0;
  };
  struct StreamPath {
    uint32_t anchor = kNone;
    bool fence_waited = false;
    PathSum fence;  // the sum the waiting Fence goes back to
  };
  // The sum at the issue of instruction `index` under `anchor`.
  PathSum IssueSum(uint32_t anchor, uint32_t index) const;
  uint32_t NewAnchor(const PathSum& sum, int64_t index);
  void Unref(uint32_t anchor);
  // Stream `s`'s new anchor: instruction `index`'s end, one step back to
  // the sum `back_to` (not one of anchors_).
  void SetAnchor(uint32_t s, const PathSum& back_to, int64_t index);

  PathCosts costs_;
  bool on_;
  std::vector<Anchor> anchors_;
  // The free anchors and started states, reused last first: the last
  // freed, whose refs (held_by) names the one freed before it (kNone:
  // none).
  uint32_t free_anchor_ = kNone;
  std::vector<StreamPath> streams_;
  std::vector<StartedPath> started_;  // of started ops (OpPath::started)
  uint32_t free_started_ = kNone;
  std::vector<PathSum> engines_;     // the last started op's sum
  std::vector<uint32_t> counters_;   // index into counter_sums_, or kNone
  std::vector<PathSum> counter_sums_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_CRITICAL_PATH_H_
