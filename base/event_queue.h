// A vector-backed binary min-heap of small POD events ordered by
// (time, sequence). The sequence number is the order of scheduling, so ties
// in time resolve the same way on every run: the replay is deterministic.
// No allocation per event once the vector has grown; no virtual calls.
#ifndef CCREPLAY_BASE_EVENT_QUEUE_H_
#define CCREPLAY_BASE_EVENT_QUEUE_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/units.h"

namespace ccreplay {

struct Event {
  int64_t time_ps = 0;
  uint64_t seq = 0;
  uint32_t kind = 0;  // an EventKind (hw/events.h), dispatched with a switch
  uint32_t a = 0;     // kind-specific operands
  uint32_t b = 0;
};

class EventQueue {
 public:
  void Push(TimePs t, uint32_t kind, uint32_t a, uint32_t b = 0) {
    heap_.push_back(Event{t.ps(), next_seq_++, kind, a, b});
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // REQUIRES: !empty().
  Event Pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  void Reserve(size_t n) { heap_.reserve(n); }

 private:
  static bool Later(const Event& x, const Event& y) {
    return x.time_ps != y.time_ps ? x.time_ps > y.time_ps : x.seq > y.seq;
  }
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_EVENT_QUEUE_H_
