// Exact coalescing (docs/hardware-model.md, "Coalescing"): the events the
// packet engine can fold without changing any result. One kind here: the
// arrivals of a write's packets that are certainly not its last
// (ArrivalCoalescer). The other, the arrivals of acknowledgements no Fence
// waits for, needs the streams' state: AckSink (hw/network.h), implemented
// by the packet engine.
//
// A data packet's last hop ends with a kArrive at its destination chip.
// That event does two things only (the credit for the space the packet
// frees in the link's receive buffer as it arrives was sent when it
// started the hop, counting from its due time: Network::ScheduleArrival):
// it adds the payload to the write's landed bytes, and, when that
// completes the write, the write lands (WriteLanded). The landed count is
// read by nothing but that test, so the arrival of a packet that is
// certainly not the write's last may be folded: its bytes are counted with
// the write's next delivered arrival instead of in an event of its own. A
// full-size packet that starts its last hop while another full-size packet of
// the same write has yet to start that hop is never the last: the other one
// crosses the same link (same flow, same route), starts no earlier, has at
// least as many wire bytes, so arrives no earlier, and at a tie its event was
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
#include <utility>
#include <vector>

#include "hw/packet.h"

namespace ccreplay {

class ArrivalCoalescer {
 public:
  // Folds nothing unless enabled. Each fold adds one to *events (the
  // replay's event count, which thus stays the per-packet simulation's, and
  // meets --max-events no later).
  void Enable(bool on, uint32_t packet_payload, uint64_t* events) {
    on_ = on && packet_payload > 0;
    payload_ = packet_payload;
    events_ = events;
  }
  bool enabled() const { return on_; }

  // A data instruction whose engine-state slot is `slot` (its packets'
  // Packet::state) starts sending `bytes` over the network. Nothing folds
  // without a full-size packet and another packet.
  void ExpectData(uint32_t slot, uint64_t bytes) {
    if (!on_) return;
    if (bytes <= payload_) {
      // One packet: nothing folds. A slot past the list reads so already,
      // and the list grows only for writes of several packets (a pairwise
      // AllToAll's single-packet writes in flight number millions).
      if (slot < slots_.size()) slots_[slot] = Burst{};
      return;
    }
    if (slot >= slots_.size()) slots_.resize(slot + 1);
    slots_[slot] = Burst{bytes / payload_, 0, 0};
  }
  // Packet `pk` starts its last hop (the link into its destination chip):
  // true if its arrival is folded (its event need not be scheduled). In
  // the header: both copies of the port's send inline it.
  bool FoldArrival(const Packet& pk) {
    if (pk.kind != PacketKind::kData || pk.state >= slots_.size()) {
      return false;
    }
    Burst& b = slots_[pk.state];
    if (b.full == 0) return false;
    // The last full-size packet to start the hop may be the last to arrive;
    // the short tail is dominated by any full-size packet still to start.
    if (pk.payload == payload_) {
      if (++b.started == b.full) return false;
    } else if (b.started == b.full) {
      return false;
    }
    b.folded_bytes += pk.payload;
    ++folded_;
    ++*events_;
    return true;
  }
  // The payload bytes of the folded arrivals of the write in `slot` not
  // yet counted: the caller counts them with the arrival it is delivering.
  uint64_t TakeFolded(uint32_t slot) {
    if (slot >= slots_.size()) return 0;
    return std::exchange(slots_[slot].folded_bytes, 0);
  }
  // Arrival events folded so far.
  uint64_t folded() const { return folded_; }

 private:
  // One write's full-size packets: how many it has (0: none folds), how
  // many have started their last hop, and the bytes of the folded ones not
  // yet counted.
  struct Burst {
    uint64_t full = 0;
    uint64_t started = 0;
    uint64_t folded_bytes = 0;
  };

  bool on_ = false;
  uint32_t payload_ = 0;
  uint64_t folded_ = 0;
  uint64_t* events_ = nullptr;
  // Per engine-state slot (a write in flight has one, reused after it):
  // its write's burst, set anew when the write starts.
  std::vector<Burst> slots_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_COALESCE_H_
