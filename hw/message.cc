#include "hw/message.h"

namespace ccreplay {

MessageUnit::MessageUnit(const HwConfig& hw, uint32_t num_chips,
                         EventQueue& q)
    : hw_(hw), q_(q) {
  const size_t slots = static_cast<size_t>(num_chips) * hw_.num_qps();
  data_started_.assign(slots, 0);
  data_landed_.assign(slots, 0);
  landed_seq_.resize(slots);
  held_msgs_.resize(slots);
  counters_.assign(slots, 0);
  last_msg_.assign(slots, kNone);
  waiters_.resize(slots);
}

bool MessageUnit::MayCount(uint32_t op, uint32_t after, uint32_t chip,
                           uint32_t qp) {
  const size_t slot = Slot(chip, qp);
  if (data_landed_[slot] >= after) return true;
  held_msgs_[slot].push_back({op, after});
  return false;
}

void MessageUnit::Count(uint32_t chip, uint32_t qp, uint32_t op, TimePs now) {
  const size_t slot = Slot(chip, qp);
  counters_[slot]++;
  last_msg_[slot] = op;
  for (uint32_t s : waiters_[slot]) q_.Push(now, kStreamResume, s);
  waiters_[slot].clear();
}

}  // namespace ccreplay
