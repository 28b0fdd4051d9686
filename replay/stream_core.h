// The instruction semantics both replay engines share (replay/engine.cc,
// packets; replay/fluid_engine.cc, flows): the streams and their issue,
// MsgWait and Fence; the CDMA queues in qp order (hw/cdma.h); Send /
// Receive matching; write + msg ordering and the counters (hw/message.h);
// completion and acknowledgement; the event loop; the report of a trace
// that cannot finish. An engine derives from StreamCore and supplies only
// how data and control packets travel (StartData, SendControl) and its own
// events (Dispatch), so both engines execute a trace the same way.
#ifndef CCREPLAY_REPLAY_STREAM_CORE_H_
#define CCREPLAY_REPLAY_STREAM_CORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/event_queue.h"
#include "base/id_map.h"
#include "hw/cdma.h"
#include "hw/config.h"
#include "hw/message.h"
#include "hw/packet.h"
#include "hw/topology.h"
#include "replay/critical_path.h"
#include "replay/engine.h"
#include "trace/program.h"

namespace ccreplay {

class StreamCore {
 public:
  // `engine_name` names the engine in the message of --max-events.
  // `breakdown` says whether the engine reports a critical-path breakdown
  // (the packet engine does, the fluid engine does not): a lean replay
  // (ReplayOptions::keep_records false) sums it as it runs only then, or
  // when ReplayOptions::sum_critical_path asks for it.
  StreamCore(const Program& p, const HwConfig& hw, const Topology& topo,
             const ReplayOptions& opt, absl::string_view engine_name,
             bool breakdown);
  virtual ~StreamCore() = default;
  StreamCore(const StreamCore&) = delete;
  StreamCore& operator=(const StreamCore&) = delete;

  absl::StatusOr<ReplayResult> Run();

 protected:
  enum class WaitKind : uint8_t { kNone, kMsgWait, kFence, kDone };

  struct StreamState {
    uint32_t chip = 0;
    uint32_t stream = 0;  // index within the chip
    uint32_t base = 0;    // global index of instruction 0
    uint32_t size = 0;
    uint32_t pc = 0;
    uint32_t outstanding = 0;  // data-moving instructions not yet complete
    WaitKind wait = WaitKind::kNone;
    // 1 + the index of its last Fence (0: it has none); set when
    // FenceAfter is first called.
    uint32_t fence_end = 0;
    // When the stream reached instruction pc (-1: not yet).
    TimePs pc_issue{-1};
    // Its last instruction's end once it has one, else its issue (-1:
    // not reached): where the critical path's walk may start. Kept when
    // the path is summed.
    TimePs last_end{-1};
    const InstrList* instrs = nullptr;  // the program's, for this stream
    // instrs->layout(): its instructions found without reading the list,
    // which is not where the rest of the state is.
    InstrList::Layout layout;
    // Its instruction i, and that instruction's kind.
    Instr At(uint32_t i) const { return instrs->Read(*layout.At(i)); }
    OpKind KindAt(uint32_t i) const { return instrs->Kind(*layout.At(i)); }
  };

  // Engine state of a Transfer or Send from its issue until it is done (its
  // acknowledgement came back, or it was written locally); where every op
  // on a queue has a slot (OpSlots: a lean replay, or one that sums the
  // critical path), of every instruction on a CDMA queue (a Receive: until
  // its Send's data landed; a message: until it counted), with its OpPath
  // in paths_ under the same slot when the path is summed. The rest of an
  // instruction's state is its timing record. The states live in a pool
  // whose slots are reused, so its size follows the instructions in
  // flight, not the trace; the slot of instruction g is kept in
  // r_.instrs[g].held_by while it is in flight (a message's own held_by is
  // written when it counts), or in a lean replay in held_, and cleared when
  // the slot is freed (HeldSlot, Op, NewOp, FreeOp).
  struct OpState {
    uint64_t remaining = 0;   // payload bytes yet to land at the destination
    uint32_t match = kNone;   // Send: its Receive
    uint32_t send_index = 0;  // Send: position among Sends of its chip pair
    uint32_t data_seq = 0;    // order among its qp's data ops
    // RemoteMsgSend, where every op has a slot (else in msg_after_): data
    // ops on its qp that must land before it counts
    // (MessageUnit::MessageSent).
    uint32_t msg_after = 0;
  };
  static_assert(sizeof(OpState) <= 24, "engine state per op in flight");

  // Sends and clear-to-sends between one ordered pair of chips.
  struct PairState {
    std::vector<uint32_t> sends;  // Send ops in issue order
    std::vector<uint32_t> cts;    // Receive ops whose clear-to-send arrived
  };

  // --- What an engine supplies.
  // Handles one event: the engine's own kinds, and the rest through
  // DispatchStream.
  virtual void Dispatch(const Event& ev, TimePs now) = 0;
  // Data-moving instruction `g` (Transfer, or a matched Send: `in`, its
  // engine-state slot `slot`, HeldSlot(g)) starts its data phase on engine
  // `e`.
  virtual void StartData(uint32_t e, uint32_t g, const Instr& in,
                         uint32_t slot, TimePs now) = 0;
  // The address the lane-group hash sees for a control packet of
  // instruction `in`: a message by its destination counter, a clear-to-send
  // by the receive buffer, an acknowledgement by the end of the write. It
  // depends on the instruction's fields only, never on its position.
  static uint64_t ControlAddr(PacketKind kind, const Instr& in) {
    switch (kind) {
      case PacketKind::kMsg:
        return (uint64_t{in.peer} << 20) | (uint64_t{in.dst_qp} << 8);
      case PacketKind::kCts:
        return in.dst_addr;
      default:
        return in.dst_addr + in.bytes;
    }
  }
  // A control packet of instruction `g` leaves: kCts (a Receive's
  // clear-to-send) and kMsg (a RemoteMsgSend) from g's chip to its peer,
  // kAck (of write g) from the peer back to g's chip. Its arrival calls
  // CtsArrived, MessageArrived or CompleteOp.
  // `in` is instruction g, which the caller has at hand.
  virtual void SendControl(PacketKind kind, uint32_t g, const Instr& in,
                           TimePs now) = 0;
  // The event queue is empty: the events the engine folded and has not yet
  // applied take effect; returns when the last of them, or `now`, happened
  // (the run's drain time).
  virtual TimePs DrainFolded(TimePs now) { return now; }
  // Once every stream has ended: the engine's own checks and results.
  virtual absl::Status FinishTransport() { return absl::OkStatus(); }
  // Why the network cannot drain, or "" (the first part of DescribeStuck).
  virtual std::string NetworkStuck() const { return ""; }
  // Only when `drops_superseded_` is set: true for an event the engine has
  // replaced by a later one. Run() drops it uncounted and without moving the
  // clock.
  virtual bool Superseded(const Event&) { return false; }
  // A hint, called with an event that will pop soon (RadixEventQueue::
  // PeekSameTime): start loading what it will touch. Must not change state.
  virtual void Prefetch(uint32_t /*kind*/, uint32_t /*a*/,
                        uint32_t /*b*/) const {}

  // --- The shared semantics, for the engines to call.
  // kStreamResume, kCdmaKick, kLocalDone, kMsgLocal, kMsgCount; false for
  // any other kind.
  bool DispatchStream(const Event& ev, TimePs now);
  // From the stream's own array (SlotOf finds the stream); in a lean
  // replay, an instruction in flight from the copy its state slot keeps
  // (op_instrs_): by its later events the program's line has left the
  // cache.
  Instr InstrAt(uint32_t g) const {
    return InstrOf(g, records_ ? kNoCause : held_.Find(g));
  }
  // InstrAt(g) where g's engine-state slot is known (`slot`, HeldSlot(g)).
  Instr InstrOf(uint32_t g, uint32_t slot) const {
    static_assert(kNoCause == IdMap::kAbsent);
    return !records_ && slot != kNoCause ? op_instrs_[slot] : ProgramInstr(g);
  }
  // From the stream's own array.
  Instr ProgramInstr(uint32_t g) const {
    const StreamState& st = streams_[SlotOf(g)];
    return st.At(g - st.base);
  }
  OpKind KindAt(uint32_t g) const {
    const StreamState& st = streams_[SlotOf(g)];
    return st.KindAt(g - st.base);
  }
  // Instruction g's engine-state slot while it is in flight (OpState), else
  // kNoCause: in its timing record, or in a lean replay's map of the
  // instructions in flight (ReplayOptions::keep_records).
  uint32_t HeldSlot(uint32_t g) const {
    return records_ ? r_.instrs[g].held_by : held_.Find(g);
  }
  // Sets one time of g's timing record, when records are kept.
  void Stamp(uint32_t g, TimePs InstrTiming::*field, TimePs now) {
    if (records_) r_.instrs[g].*field = now;
  }
  // Instruction g's end is now (records, and its stream's last_end).
  void StampEnd(uint32_t g, TimePs now);
  uint32_t ChipOf(uint32_t g) const {
    return records_ ? r_.instrs[g].chip : streams_[SlotOf(g)].chip;
  }
  // The engine state of Transfer or Send g, issued and not yet done (where
  // OpSlots: of any op on a queue until it is done or counts).
  OpState& Op(uint32_t g) { return ops_[HeldSlot(g)]; }
  const OpState& Op(uint32_t g) const { return ops_[HeldSlot(g)]; }
  OpPath& PathOf(uint32_t g) { return paths_[HeldSlot(g)]; }
  // The data phase of engine `e` ended: its next instruction may start.
  void FinishDataPhase(uint32_t e, TimePs now);
  // Write `g` has landed in full at its destination: its Send's Receive
  // completes, the acknowledgement leaves, held messages may count.
  void WriteLanded(uint32_t g, TimePs now);
  // A RemoteMsgSend / a Receive's clear-to-send arrived.
  void MessageArrived(uint32_t g, TimePs now);
  void CtsArrived(uint32_t g, TimePs now);
  // True if a Fence follows instruction g in its stream: only such a
  // Fence reads whether g is complete (the stream's outstanding count).
  bool FenceAfter(uint32_t g);
  // Completes write g, whose acknowledgement arrives at `at` and was
  // folded (no event): at once, or, when WriteLanded is sending it, at the
  // end of WriteLanded.
  void CompleteFoldedAck(uint32_t g, TimePs at);
  // Data-moving `g` is complete at its issuing chip.
  void CompleteOp(uint32_t g, TimePs now);
  std::string DescribeStuck() const;
  // The event count at which Run() next checks max_events or reports
  // progress (UINT64_MAX: never).
  uint64_t NextStop() const;

  const Program& p_;
  const HwConfig& hw_;
  const Topology& topo_;
  const ReplayOptions& opt_;
  EventQueue q_;
  CdmaUnit cdma_;
  std::optional<MessageUnit> msg_;  // sized once the program is flattened
  ReplayResult r_;
  absl::Status error_;
  std::vector<OpState> ops_;        // the pool: slots of ops in flight
  // The free slots of ops_, reused last first: the last freed, whose
  // OpState::match names the one freed before it (kNone: none).
  uint32_t free_op_ = kNone;
  std::vector<OpPath> paths_;       // with ops_, when the path is summed
  bool drops_superseded_ = false;   // Run() asks Superseded of every event

 private:
  // One timing record per instruction, allocated up front so the hot path
  // never reallocates them.
  absl::Status Flatten();
  absl::StatusOr<ReplayResult> Finish(TimePs now);
  // The error of a run stopped by ReplayOptions::max_events at `now`.
  absl::Status StoppedAt(TimePs now) const;
  void Resume(uint32_t slot, TimePs now);
  void TryStart(uint32_t e, TimePs now);
  // `ready` is when the instruction could have started at the earliest;
  // `slot` its engine-state slot (HeldSlot), kNoCause if it has none.
  void StartOp(uint32_t e, uint32_t g, uint32_t slot, TimePs ready,
               TimePs now);
  // The critical path's sum at g's engine start (`in`, its engine-state
  // slot `slot`); `cause` as in its timing record (InstrTiming::cause).
  void PathStart(uint32_t e, uint32_t g, const Instr& in, uint32_t slot,
                 uint32_t cause, TimePs now);
  // "chip 3, stream 1, instruction 12 (Transfer)".
  std::string PlaceOf(uint32_t g) const;
  // The critical path's state of CDMA instruction g, issued now by the
  // stream in `slot` (at its pc: `in`).
  void PathIssue(uint32_t g, uint32_t slot, const Instr& in, TimePs now);
  // A Send's size against its Receive's; false (error_ set) on a mismatch.
  bool MatchSend(uint32_t g, uint32_t recv);
  void LocalDone(uint32_t e, TimePs now);
  void DeliverMessage(uint32_t op, TimePs now);
  void CountMessage(uint32_t op, TimePs now);
  // Records that data op `g` (`in`, its engine-state slot `slot`) has
  // landed, and delivers the messages on its qp that were waiting for it.
  void DataLanded(uint32_t g, const Instr& in, uint32_t slot, TimePs now);
  PairState& Pair(uint32_t src, uint32_t dst) {
    return pairs_[(static_cast<uint64_t>(src) << 32) | dst];
  }
  const PairState* FindPair(uint32_t src, uint32_t dst) const;
  // The stream slot (index into streams_) of instruction `g`: from its
  // timing record, or (lean) from the stream that holds the first
  // instruction of g's block of 2^kBlockBits, and the streams after it.
  uint32_t SlotOf(uint32_t g) const {
    if (records_) {
      return r_.chip_first_stream[r_.instrs[g].chip] + r_.instrs[g].stream;
    }
    uint32_t slot = block_slot_[g >> kBlockBits];
    while (g >= stream_end_[slot]) ++slot;
    return slot;
  }
  static constexpr uint32_t kBlockBits = 6;
  bool SendReady(uint32_t g) const;
  // Takes a pool slot for Transfer or Send g at its issue and returns it;
  // FreeOp frees it once its write has landed.
  uint32_t NewOp(uint32_t g, const Instr& in);
  void FreeOp(uint32_t g);

  // The critical path's sums (CriticalPath), and the breakdown they give
  // once every stream has ended (nullopt: no stream's last instruction
  // ends at the makespan); fills r_.stream_paths if asked.
  std::optional<Breakdown> PathResult();

  std::string engine_name_;
  const bool records_;  // ReplayOptions::keep_records
  // Every instruction on a CDMA queue has an engine-state slot while it is
  // in flight (OpState), not only the writes: where there are no timing
  // records to keep what a message waits for, or where the path is summed
  // (its OpPath lives under the same slot). (Its issue time waits with it
  // in its engine's queue: CdmaQueued.)
  bool OpSlots() const { return !records_ || path_.on(); }
  // Folded acknowledgements (FenceAfter, CompleteFoldedAck).
  uint32_t acking_ = kNone;      // the write WriteLanded is acknowledging
  TimePs acked_at_{-1};          // its folded acknowledgement's arrival
  bool fences_scanned_ = false;  // every stream's fence_end is set
  bool any_fence_ = false;       // some stream has a Fence
  // Without records: per block of 2^kBlockBits instructions, the stream
  // slot of its first; per stream slot, the end of its instructions
  // (base + size); the state slots of the instructions in flight.
  std::vector<uint32_t> block_slot_;
  std::vector<uint32_t> stream_end_;
  IdMap held_;
  std::vector<Instr> op_instrs_;  // lean: per state slot, its instruction
  static_assert(IdMap::kAbsent == kNoCause, "HeldSlot of none");
  // Where messages have no engine state (records, no sums): per
  // instruction, what a RemoteMsgSend waits for (OpState::msg_after).
  std::vector<uint32_t> msg_after_;
  uint32_t& MsgAfter(uint32_t g) {
    return OpSlots() ? Op(g).msg_after : msg_after_[g];
  }
  CriticalPath path_;
  std::vector<StreamState> streams_;
  absl::flat_hash_map<uint64_t, PairState> pairs_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_STREAM_CORE_H_
