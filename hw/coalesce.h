// Exact coalescing (docs/hardware-model.md, "Coalescing"): the events the
// packet engine can fold without changing any result. Two kinds here: the
// arrivals of a write's packets that are certainly not its last
// (ArrivalCoalescer, links without credit), and the credit returns to ports
// where no packet waits (CreditFolder, links with credit). The third, the
// arrivals of acknowledgements no Fence waits for, needs the streams'
// state: AckSink (hw/network.h), implemented by the packet engine.
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

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/units.h"
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

// A credit return (kCreditReturn) adds credit to its port and then serves
// the port (Network::TryTransmit). With no packet waiting there, serving
// does nothing, and nothing reads a port's credit while none of its packets
// waits; so the event's only effect is the credit. Such a return is held
// instead of scheduled, under the sequence number its event would have had
// (RadixEventQueue::ReserveSeq, so every other event keeps its number).
// When a packet is queued at the port (the only way one comes to wait),
// the held returns that precede the current event in (time, sequence) order
// are added, and the others are scheduled as the events they would have
// been, at their reserved places (PushReserved): from then on the port runs
// exactly as in the per-packet simulation. At the end of the run the ones
// left are added, and the run has drained at the latest of them.
class CreditFolder {
 public:
  // Folds nothing unless enabled, and only with credit (`buffer_bytes` >
  // 0). Each held return adds one to *events and each one scheduled after
  // all takes it back, so the count is the per-packet simulation's (and
  // meets --max-events no later).
  void Enable(bool on, uint64_t buffer_bytes, size_t ports, uint64_t* events) {
    on_ = on && buffer_bytes > 0;
    ports_.assign(on_ ? ports : 0, {});
    events_ = events;
  }
  bool enabled() const { return on_; }
  // Whether to hold a return to `port`, where no packet waits now. Exact
  // either way; a cost guess only: a held return that must be scheduled
  // after all costs more than an event, so a port whose release scheduled
  // one gets its next returns as events, 2 after the first such release,
  // then 4, 8, ... up to 2^kMaxBackoff after each further one in a row (a
  // congested port: packets keep coming); a release that schedules none
  // starts the count over.
  bool ShouldHold(uint32_t port) {
    PortFold& f = ports_[port];
    if (f.skip == 0) return true;
    --f.skip;
    return false;
  }
  // A return of `credit` (Network's credit word) to `port` at time `at`,
  // whose event would have had sequence number `seq`.
  // REQUIRES: enabled() and no packet waits at `port`.
  void Hold(uint32_t port, TimePs at, uint64_t seq, uint32_t credit) {
    std::vector<Held>& h = ports_[port].held;
    // Sequence numbers grow, so the new one goes after every one at or
    // before its time (a credit may be due before an earlier-held one: a
    // packet's buffer frees when it leaves, or when it lands).
    const auto pos = std::upper_bound(
        h.begin(), h.end(), at.ps(),
        [](int64_t t, const Held& x) { return t < x.time_ps; });
    h.insert(pos, Held{at.ps(), seq, credit});
    ++folded_;
    ++*events_;
  }
  bool holds(uint32_t port) const { return !ports_[port].held.empty(); }
  // A packet is about to wait at `port` during the event (now, seq):
  // apply(credit) for each held return before it, schedule(time, seq,
  // credit) for each after it; none is held afterwards.
  template <typename Apply, typename Schedule>
  void Release(uint32_t port, TimePs now, uint64_t seq, Apply apply,
               Schedule schedule) {
    PortFold& f = ports_[port];
    bool scheduled = false;
    for (const Held& h : f.held) {
      if (h.time_ps < now.ps() || (h.time_ps == now.ps() && h.seq < seq)) {
        apply(h.credit);
      } else {
        schedule(TimePs(h.time_ps), h.seq, h.credit);
        --folded_;  // an event after all: the loop counts it
        --*events_;
        scheduled = true;
      }
    }
    f.held.clear();
    if (!scheduled) {
      f.backoff = 0;
    } else {
      if (f.backoff < kMaxBackoff) ++f.backoff;
      f.skip = static_cast<uint16_t>(1u << f.backoff);
    }
  }
  // The end of the run: apply(port, credit) for every return still held;
  // returns the latest time among them (`now` if none is later).
  template <typename Apply>
  TimePs ReleaseAll(TimePs now, Apply apply) {
    for (uint32_t p = 0; p < ports_.size(); ++p) {
      for (const Held& h : ports_[p].held) {
        apply(p, h.credit);
        now = Max(now, TimePs(h.time_ps));
      }
      ports_[p].held.clear();
    }
    return now;
  }
  // Credit returns folded (held and never scheduled) so far.
  uint64_t folded() const { return folded_; }

 private:
  struct Held {
    int64_t time_ps;
    uint64_t seq;
    uint32_t credit;
  };
  static constexpr uint8_t kMaxBackoff = 10;
  bool on_ = false;
  uint64_t folded_ = 0;
  uint64_t* events_ = nullptr;
  // Per port, together so that one cache line serves a port's checks.
  struct PortFold {
    std::vector<Held> held;  // in (time, seq) order
    uint16_t skip = 0;       // returns not to hold (ShouldHold)
    uint8_t backoff = 0;     // releases in a row that scheduled one
  };
  std::vector<PortFold> ports_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_COALESCE_H_
