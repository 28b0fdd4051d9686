// Packets on the chip-to-chip network and the pool that owns them. A packet
// is a small value; the pool recycles ids so that a long replay allocates
// only as many packets as are ever in flight at once.
#ifndef CCREPLAY_HW_PACKET_H_
#define CCREPLAY_HW_PACKET_H_

#include <cstdint>
#include <vector>

#include "base/units.h"
#include "hw/events.h"

namespace ccreplay {

// kData: a PAXI write segment; kMsg: a RemoteMsgSend's 32-bit message; kCts:
// a Receive's clear-to-send to its Send; kAck: the destination's
// acknowledgement of a whole write.
enum class PacketKind : uint8_t { kData, kMsg, kCts, kAck };

// A flow (src chip, dst chip, qp): its hash, which picks its path
// (Topology::FlowHash), and the first link of that path. Packets of one qp
// between two chips share a flow, hence a path, hence their order.
struct FlowPath {
  uint32_t hash = 0;
  uint32_t port = kNone;
};

struct Packet {
  PacketKind kind = PacketKind::kData;
  uint8_t vc = 0;            // virtual channel on the current link
  uint8_t in_vc = 0;         // virtual channel on in_link
  // Lane group on every link (address interleave): a config has at most 64
  // (HwConfig validation, link.lane_groups).
  uint8_t lg = 0;
  uint32_t dst = 0;          // chip
  uint32_t op = 0;           // the instruction it belongs to (global index)
  // kData: its write's engine-state slot (StreamCore::OpState), so that an
  // arrival counts its bytes without reading the instruction's records.
  uint32_t state = kNone;
  uint32_t payload = 0;      // bytes
  uint32_t in_link = kNone;  // link it arrived on; kNone at its source
  uint32_t flow = 0;         // Topology::FlowHash(src, dst, qp): picks the path
  uint32_t next = kNone;     // the packet behind it in its port queue
  TimePs queued_at;          // when it entered its current port's queue
};
// Nothing a packet does not need: a large AllToAll has nearly all of its
// packets in flight at once (they wait in the switches' buffers), so the
// pool is a large part of the replay's memory and reading a packet is
// usually a cache miss. Its source and address are not kept (the flow hash
// and lane group are what the hops read).
static_assert(sizeof(Packet) <= 40, "a packet in flight");

class PacketPool {
 public:
  uint32_t New(const Packet& pk) {
    if (free_ != kNone) {
      const uint32_t id = free_;
      free_ = packets_[id].next;
      packets_[id] = pk;
      return id;
    }
    packets_.push_back(pk);
    return static_cast<uint32_t>(packets_.size() - 1);
  }
  // REQUIRES: id came from New() and was not freed since.
  void Free(uint32_t id) {
    packets_[id].next = free_;
    free_ = id;
  }
  Packet& operator[](uint32_t id) { return packets_[id]; }
  const Packet& operator[](uint32_t id) const { return packets_[id]; }

 private:
  std::vector<Packet> packets_;
  // The freed packets, the last freed first, linked through their `next`
  // (a freed packet is in no port queue): reusing the line a packet just
  // left, with no list of its own to grow.
  uint32_t free_ = kNone;
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_PACKET_H_
