// Exact coalescing of packet arrivals (docs/hardware-model.md,
// "Coalescing"): the part of a burst of one write's packets whose arrival
// events need not be simulated one by one.
//
// A data packet's last hop ends with a kArrive at its destination chip. On a
// link without credit (link.buffer_bytes 0) that event does two things only:
// it adds the payload to the write's landed bytes, and, when that completes
// the write, the write lands (WriteLanded). The landed count is read by
// nothing but that test, so the arrival of a packet that is certainly not
// the write's last may be folded: its bytes are counted with the write's
// next delivered arrival instead of in an event of its own. A full-size
// packet that starts its last hop while another full-size packet of the same
// write has yet to start that hop is never the last: the other one crosses
// the same link (same flow, same route), starts no earlier, has at least as
// many wire bytes, so arrives no earlier, and at a tie its event was
// scheduled later, hence runs later. The same holds for the write's short
// last packet (its tail) when it starts the hop before a full-size one.
// Every folded packet is thus outrun by the last full-size packet to start
// the hop, which is never folded; so the write's last arrival in (time,
// sequence) order is that packet's or an unfolded tail's, every folded
// packet has been counted by then, and the write lands at the same event,
// with the same count, as in the per-packet simulation.
#ifndef CCREPLAY_HW_COALESCE_H_
#define CCREPLAY_HW_COALESCE_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "hw/packet.h"

namespace ccreplay {

class ArrivalCoalescer {
 public:
  // Folds nothing unless enabled, and only with unbounded link buffers
  // (`buffer_bytes` 0): an arrival that returns credit is never folded.
  // Each fold adds one to *events (the replay's event count, which thus
  // stays the per-packet simulation's, and meets --max-events no later).
  void Enable(bool on, uint64_t buffer_bytes, uint32_t packet_payload,
              uint64_t* events) {
    on_ = on && buffer_bytes == 0 && packet_payload > 0;
    payload_ = packet_payload;
    events_ = events;
  }
  bool enabled() const { return on_; }

  // Data instruction `op` starts sending `bytes` over the network.
  void ExpectData(uint32_t op, uint64_t bytes) {
    // Nothing folds without a full-size packet and another packet.
    if (!on_ || bytes <= payload_) return;
    bursts_[op] = Burst{bytes / payload_, 0, 0};
  }
  // Packet `pk` starts its last hop (the link into its destination chip):
  // true if its arrival is folded (its event need not be scheduled).
  bool FoldArrival(const Packet& pk);
  // The payload bytes of `op`'s folded arrivals not yet counted: the caller
  // counts them with the arrival it is delivering.
  uint64_t TakeFolded(uint32_t op) {
    if (bursts_.empty()) return 0;
    auto it = bursts_.find(op);
    if (it == bursts_.end()) return 0;
    const uint64_t bytes = it->second.folded_bytes;
    it->second.folded_bytes = 0;
    if (it->second.started == it->second.full) bursts_.erase(it);
    return bytes;
  }
  // Arrival events folded so far.
  uint64_t folded() const { return folded_; }

 private:
  // One write's full-size packets: how many it has, how many have started
  // their last hop, and the bytes of the folded ones not yet counted.
  struct Burst {
    uint64_t full = 0;
    uint64_t started = 0;
    uint64_t folded_bytes = 0;
  };

  bool on_ = false;
  uint32_t payload_ = 0;
  uint64_t folded_ = 0;
  uint64_t* events_ = nullptr;
  absl::flat_hash_map<uint32_t, Burst> bursts_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_COALESCE_H_
