#include "hw/coalesce.h"

namespace ccreplay {

bool ArrivalCoalescer::FoldArrival(const Packet& pk) {
  if (pk.kind != PacketKind::kData || pk.state >= slots_.size()) return false;
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

}  // namespace ccreplay
