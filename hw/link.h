// One direction of a full-duplex link, or a switch output port (the switch
// side of a cable): a FIFO that serialises packets (payload + header bytes)
// at the link rate. A packet's last byte reaches the far end
// latency + propagation after it left.
//
// Packets are served in the order they are queued. Because every caller
// queues in nondecreasing time, the FIFO needs no event of its own: the
// departure of each packet is known when it is queued (htsim's pipe/queue
// split, with the queue's next-free time kept instead of a pending event).
#ifndef CCREPLAY_HW_LINK_H_
#define CCREPLAY_HW_LINK_H_

#include <cassert>
#include <cstdint>
#include <vector>

#include "hw/units.h"

namespace ccreplay {

struct LinkStats {
  uint64_t packets = 0;
  uint64_t wire_bytes = 0;  // payload + headers
  uint64_t payload_bytes = 0;
  TimePs busy;              // time spent serialising
  TimePs queued;            // sum over packets of (start - queued at)
  uint32_t peak_depth = 0;  // most packets waiting or in service at once
  TimePs first_start = TimePs::Max();
  TimePs last_end;
};

class Link {
 public:
  Link(uint64_t bytes_per_s, TimePs latency, TimePs propagation)
      : bytes_per_s_(bytes_per_s), flight_(latency + propagation) {}

  // Queues a packet at time `now`; returns the time its last byte arrives at
  // the far end. REQUIRES: `now` is not earlier than in any earlier call.
  TimePs Send(TimePs now, uint32_t wire_bytes, uint32_t payload_bytes) {
    assert(now >= last_now_);
    last_now_ = now;
    // Packets that have fully left by `now` no longer occupy the queue.
    while (head_ < ends_.size() && ends_[head_] <= now) ++head_;
    if (head_ > 4096 && head_ * 2 > ends_.size()) {
      ends_.erase(ends_.begin(), ends_.begin() + head_);
      head_ = 0;
    }
    const TimePs start = Max(now, free_at_);
    const TimePs ser = SerializationTime(wire_bytes, bytes_per_s_);
    free_at_ = start + ser;
    ends_.push_back(free_at_);
    const uint32_t depth = static_cast<uint32_t>(ends_.size() - head_);
    if (depth > stats_.peak_depth) stats_.peak_depth = depth;
    stats_.packets++;
    stats_.wire_bytes += wire_bytes;
    stats_.payload_bytes += payload_bytes;
    stats_.busy += ser;
    stats_.queued += start - now;
    if (start < stats_.first_start) stats_.first_start = start;
    stats_.last_end = free_at_;
    return free_at_ + flight_;
  }

  const LinkStats& stats() const { return stats_; }

 private:
  uint64_t bytes_per_s_;
  TimePs flight_;
  TimePs free_at_;
  TimePs last_now_;
  std::vector<TimePs> ends_;  // departure times of queued packets
  size_t head_ = 0;
  LinkStats stats_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_LINK_H_
