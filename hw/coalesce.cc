#include "hw/coalesce.h"

namespace ccreplay {

bool ArrivalCoalescer::FoldArrival(const Packet& pk) {
  if (pk.kind != PacketKind::kData || pk.payload != payload_ ||
      bursts_.empty()) {
    return false;
  }
  auto it = bursts_.find(pk.op);
  if (it == bursts_.end()) return false;
  Burst& b = it->second;
  // The last full-size packet to start the hop may be the last to arrive.
  if (++b.started == b.full) return false;
  b.folded_bytes += pk.payload;
  ++folded_;
  ++*events_;
  return true;
}

}  // namespace ccreplay
