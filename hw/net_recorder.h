// What the packet network reports to a timeline (replay/timeline.h) while it
// runs: an optional observer. The Network holds a NetRecorder pointer that
// is null unless a timeline was asked for, so each hook costs the hot path
// one predictable branch. The calls come in simulated-time order.
#ifndef CCREPLAY_HW_NET_RECORDER_H_
#define CCREPLAY_HW_NET_RECORDER_H_

#include <cstdint>

#include "base/units.h"
#include "hw/packet.h"
#include "hw/topology.h"

namespace ccreplay {

class NetRecorder {
 public:
  virtual ~NetRecorder() = default;
  // The network it observes runs on `topo` (links numbered as its links()).
  virtual void Attach(const Topology& topo) = 0;
  // Packet `pk` (`wire` bytes, header included) is serialised on lane group
  // `lg` of directed link `port` from `start` to `end`; with bounded link
  // buffers it holds `wire` bytes of the far end's credit from `start`.
  virtual void Serialise(uint32_t port, uint32_t lg, const Packet& pk,
                         uint32_t wire, TimePs start, TimePs end) = 0;
  // `bytes` of credit of `port` come back at `due` (the far end freed the
  // space): told when the credit is sent, which is before it is due, and
  // not in the order of due times.
  virtual void CreditReturned(uint32_t port, uint32_t bytes, TimePs due) = 0;
  // `port` now has `waiting` packets queued (not yet serialising).
  virtual void QueueDepth(uint32_t port, uint32_t waiting, TimePs now) = 0;
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_NET_RECORDER_H_
