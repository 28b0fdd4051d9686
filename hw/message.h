// The message path of every chip (docs/hardware-model.md, "Messages"): the
// msg_central counters (one per qp id, i.e. per (CDMA engine, VC bank)), the
// streams blocked in MsgWait on them, and the write + msg ordering rule: a
// RemoteMsgSend counts at its destination only after every data instruction
// started before it on the same (chip, qp) has landed, even when lane groups
// let the message overtake the data. A counted remote message pays
// msg_remote_latency (the A4S handshake and msg_central counting) first.
#ifndef CCREPLAY_HW_MESSAGE_H_
#define CCREPLAY_HW_MESSAGE_H_

#include <cstdint>
#include <vector>

#include "base/event_queue.h"
#include "base/units.h"
#include "hw/config.h"
#include "hw/events.h"

namespace ccreplay {

class MessageUnit {
 public:
  // REQUIRES: hw outlives the unit.
  MessageUnit(const HwConfig& hw, uint32_t num_chips, EventQueue& q);

  // A data instruction starts on (chip, qp): returns its sequence number
  // among that qp's data instructions.
  uint32_t DataStarted(uint32_t chip, uint32_t qp) {
    return data_started_[Slot(chip, qp)]++;
  }
  // A RemoteMsgSend leaves (chip, qp): returns how many data instructions
  // on that qp must land before it may count (every one started so far).
  // The caller keeps it with the message's state while it is in flight.
  uint32_t MessageSent(uint32_t chip, uint32_t qp) const {
    return data_started_[Slot(chip, qp)];
  }
  // RemoteMsgSend `op` from (chip, qp), sent when `after` data instructions
  // had started there, arrived: true if it may count now, else it is held
  // until that data has landed (DataLanded releases it).
  bool MayCount(uint32_t op, uint32_t after, uint32_t chip, uint32_t qp);
  // Data instruction number `seq` of (chip, qp) landed: calls release(m)
  // for every held message that may now count, in the order they arrived.
  template <typename Release>
  void DataLanded(uint32_t chip, uint32_t qp, uint32_t seq, Release&& release);
  // A remote message may count: true if it must first wait
  // msg_remote_latency (a kMsgCount is scheduled), false if it counts now.
  bool DelayCount(uint32_t op, TimePs now) {
    if (hw_.msg_remote_latency.ps() <= 0) return false;
    q_.Push(now + hw_.msg_remote_latency, kMsgCount, op);
    return true;
  }
  // MsgSend `op` issued: it reaches the local counter after
  // msg_local_latency (kMsgLocal).
  void SendLocal(uint32_t op, TimePs now) {
    q_.Push(now + hw_.msg_local_latency, kMsgLocal, op);
  }

  // Counter (chip, qp) gets message `op`; every stream waiting on it
  // resumes (kStreamResume, in the order they began waiting).
  void Count(uint32_t chip, uint32_t qp, uint32_t op, TimePs now);
  uint32_t& counter(uint32_t chip, uint32_t qp) {
    return counters_[Slot(chip, qp)];
  }
  uint32_t counter(uint32_t chip, uint32_t qp) const {
    return counters_[Slot(chip, qp)];
  }
  // The index of counter (chip, qp) among all chips' counters.
  size_t CounterIndex(uint32_t chip, uint32_t qp) const {
    return Slot(chip, qp);
  }
  // The message counted last on (chip, qp), or kNone.
  uint32_t last_message(uint32_t chip, uint32_t qp) const {
    return last_msg_[Slot(chip, qp)];
  }
  // The stream slots waiting on (chip, qp), in the order they began.
  const std::vector<uint32_t>& Waiters(uint32_t chip, uint32_t qp) const {
    return waiters_[Slot(chip, qp)];
  }
  // Stream `slot` waits for counter (chip, qp).
  void Wait(uint32_t chip, uint32_t qp, uint32_t slot) {
    waiters_[Slot(chip, qp)].push_back(slot);
  }

 private:
  size_t Slot(uint32_t chip, uint32_t qp) const {
    return static_cast<size_t>(chip) * hw_.num_qps() + qp;
  }

  const HwConfig& hw_;
  EventQueue& q_;
  // Per (chip, qp): data instructions started and the landed prefix (every
  // seq below it landed), the landed set beyond it, and held messages.
  std::vector<uint32_t> data_started_;
  std::vector<uint32_t> data_landed_;
  std::vector<std::vector<bool>> landed_seq_;
  struct Held {
    uint32_t op;
    uint32_t after;  // MessageSent's value: landed data it waits for
  };
  std::vector<std::vector<Held>> held_msgs_;
  std::vector<uint32_t> counters_;
  std::vector<uint32_t> last_msg_;              // per counter
  std::vector<std::vector<uint32_t>> waiters_;  // per counter: stream slots
};

template <typename Release>
void MessageUnit::DataLanded(uint32_t chip, uint32_t qp, uint32_t seq,
                             Release&& release) {
  const size_t slot = Slot(chip, qp);
  std::vector<bool>& seen = landed_seq_[slot];
  uint32_t& prefix = data_landed_[slot];
  if (seq == prefix && seen.size() <= seq + size_t{1}) {
    ++prefix;  // in order, nothing landed beyond it: no bit to keep
  } else {
    if (seen.size() <= seq) seen.resize(seq + 1, false);
    seen[seq] = true;
    while (prefix < seen.size() && seen[prefix]) ++prefix;
  }
  auto& held = held_msgs_[slot];
  if (held.empty()) return;
  size_t kept = 0;
  for (const Held& m : held) {
    if (prefix >= m.after) {
      release(m.op);
    } else {
      held[kept++] = m;
    }
  }
  held.resize(kept);
}

}  // namespace ccreplay

#endif  // CCREPLAY_HW_MESSAGE_H_
