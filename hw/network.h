// The chip-to-chip network: one Port (hw/port.h) per directed link, the
// packets in flight, routing over the Topology, the switches' store-and-
// forward latency, relaying through chips' routers and credit-based flow
// control. It owns its state and reacts to its own events (kArrive,
// kSwitchForward, kPortKick, kCreditKick); the replay loop calls the
// handlers below. A packet that reaches its destination chip is handed back
// to the caller of OnArrive, which delivers it (replay/engine.cc).
//
// Timing of one hop (docs/hardware-model.md, "Links"): a packet waits in its
// (input, lane group) queue until the lane group is free and the far end has
// buffer credit, is serialised at link_bytes_per_s / lane_groups, and its
// last byte arrives link_latency + link_propagation after its serialisation
// ends (link latency + propagation, or a switch port's: LinkFlight); the
// credit comes back the same flight time after the far end frees the space
// (written to GMEM, or sent on). A credit is not an event: the port counts
// it from the picosecond it is due (Port::credits_due), and a port that
// waits for credit is served at the start of that picosecond (kCreditKick).
#ifndef CCREPLAY_HW_NETWORK_H_
#define CCREPLAY_HW_NETWORK_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "base/event_queue.h"
#include "base/units.h"
#include "hw/coalesce.h"
#include "hw/config.h"
#include "hw/net_recorder.h"
#include "hw/packet.h"
#include "hw/port.h"
#include "hw/topology.h"

namespace ccreplay {

class CdmaUnit;

// The flight time of directed link `link`: from a packet's last byte leaving
// its sender to that byte arriving at the far end (a credit returns over the
// same cable in the same time). A chip's output pays link.latency_ps +
// link.propagation_ps; a switch's output pays switch_config.port_latency_ps
// + port_propagation_ps (docs/hardware-model.md, "Crossing a switch").
TimePs LinkFlight(const HwConfig& hw, const Topology& topo, uint32_t link);

// One lane group's time to send `wire` bytes: it carries 1/lane_groups of
// the link's bandwidth.
inline TimePs LaneGroupTime(const HwConfig& hw, uint32_t wire) {
  return SerializationTime(static_cast<uint64_t>(wire) * hw.lane_groups,
                           hw.link_bytes_per_s);
}

// The lane group the address interleave gives a packet bound for global
// address `addr` (GlobalAddress); 0 with round-robin interleaving, which
// picks a lane group as the packet is sent.
inline uint32_t AddressLaneGroup(const HwConfig& hw, uint64_t addr) {
  switch (hw.interleave) {
    case InterleaveKind::kHash:
      return InterleaveHash(addr, hw.lane_groups);
    case InterleaveKind::kXor:
      return XorInterleave(addr, hw.interleave_block_bytes, hw.lane_groups);
    case InterleaveKind::kRoundRobin:
      break;
  }
  return 0;
}

// The virtual channels per link a replay of `hw` on `topo` uses:
// hw.link_vcs, or with 0 as many as the routes need.
inline uint32_t VirtualChannels(const HwConfig& hw, const Topology& topo) {
  return hw.link_vcs != 0 ? hw.link_vcs : topo.DatelineClasses();
}

// Where an acknowledgement's arrival can be applied when it is certain, not
// when it happens (docs/hardware-model.md, "Coalescing"): FoldAck(op, at)
// is offered the acknowledgement of write `op`, due at its source at `at`,
// and returns true if it has applied it (the arrival then needs no event).
class AckSink {
 public:
  virtual bool FoldAck(uint32_t op, TimePs at) = 0;

 protected:
  ~AckSink() = default;
};

class Network {
 public:
  // REQUIRES: hw and topo outlive the Network.
  Network(const HwConfig& hw, const Topology& topo, EventQueue& q);
  // The CDMA engines that feed the chips' ports: told when a port takes a
  // packet from an engine's input (CdmaUnit::PortTookPacket).
  void Connect(CdmaUnit* cdma) { cdma_ = cdma; }
  // Exact coalescing of arrivals (hw/coalesce.h); off by default.
  ArrivalCoalescer& coalescer() { return coalesce_; }
  // Lets a port count a credit before it is due where no decision can
  // tell (SendCredit); off by default: every credit waits in its port's
  // list until due (the reference path).
  void EnableEarlyCredit(bool on) { early_credit_ = on; }
  // Credits counted early, and kept until due, so far.
  uint64_t credits_counted_early() const { return credits_early_; }
  uint64_t credits_kept() const { return credits_kept_; }
  // Offers every acknowledgement's arrival at its destination to `sink`
  // (null: none is offered) when it starts its last hop. A folded one gets
  // no event; the sink has applied it (AckSink). (Its credit, as every
  // packet's into its destination, is sent then: ScheduleArrival.)
  void SetAckSink(AckSink* sink) { ack_sink_ = sink; }
  // When the last credit came back (zero if none was sent): the run has
  // drained when every credit is back, as when each was an event.
  TimePs last_credit() const { return last_credit_; }
  // Reports serialisation, credit and queue depth to `rec` (null: none).
  void SetRecorder(NetRecorder* rec) {
    rec_ = rec;
    if (rec_) rec_->Attach(topo_);
  }

  // The path of flow (src, dst, qp) (hw/packet.h): the hash and first link
  // the topology gives, from a memo of the two flows chip `src` looked up
  // last (a chip of a collective sends its writes and messages to one peer
  // and its acknowledgements to another, step after step), else hashed and
  // looked up in the route table.
  FlowPath FlowOf(uint32_t src, uint32_t dst, uint32_t qp) const {
    FlowMemo& m = flows_[src];
    for (uint32_t w = 0; w < 2; ++w) {
      if (m.dst[w] == dst && m.qp[w] == qp) return m.path[w];
    }
    const uint32_t hash = Topology::FlowHash(src, dst, qp);
    const uint32_t w = m.older;
    m.older ^= 1u;
    m.dst[w] = dst;
    m.qp[w] = qp;
    m.path[w] = FlowPath{hash, topo_.NextLink(src, dst, hash)};
    return m.path[w];
  }
  // May input `input` of `port` stage one more packet in lane group `lg`
  // (LaneGroupOf its address), within hw.cdma_staging_packets per (input,
  // lane group)?
  bool MayStage(uint32_t port, uint32_t input, uint32_t lg);
  // Creates a packet of instruction `op` (travelling as qp `qp`) at chip
  // `src` and queues it at its first port on `input` (an engine, or the
  // acknowledgement path hw.cdma_engines). `addr` is the chip-local address
  // of its first payload byte.
  // `state`: for data, the write's engine-state slot (Packet::state).
  void Inject(PacketKind kind, uint32_t src, uint32_t dst, uint32_t op,
              uint32_t qp, uint32_t payload, uint64_t addr, uint32_t input,
              TimePs now, uint32_t state = kNone) {
    InjectOn(FlowOf(src, dst, qp), LaneGroupOf(GlobalAddress(dst, addr)), kind,
             src, dst, op, payload, input, now, state);
  }
  // Inject for a flow already looked up (FlowOf(src, dst, qp)), which an
  // engine keeps for its write, and the packet's lane group found
  // (LaneGroupOf(GlobalAddress(dst, addr))), as an engine does to see
  // whether it may stage the packet.
  // `src` counts the payload it sends (bytes_sent).
  void InjectOn(FlowPath flow, uint32_t lg, PacketKind kind, uint32_t src,
                uint32_t dst, uint32_t op, uint32_t payload, uint32_t input,
                TimePs now, uint32_t state = kNone);
  // The lane group of a packet bound for global address `addr` (0 with
  // round-robin interleaving, whose ports keep one queue per input).
  uint32_t LaneGroupOf(uint64_t addr) const {
    return AddressLaneGroup(hw_, addr);
  }

  // kArrive: the packet's last byte reached chip `node` (a packet bound
  // for a switch has a kSwitchForward instead). Returns true when
  // `node` is the packet's destination chip: the buffer credit is already on
  // its way back and the caller must deliver the packet and Free() it.
  bool OnArrive(uint32_t packet, uint32_t node, TimePs now);
  // kSwitchForward: switch `sw` has the packet ready for its output port
  // (with FIFO inputs: at the tail of its input FIFO).
  void OnSwitchForward(uint32_t packet, uint32_t sw, TimePs now);
  // kIngressHead: the packet reached the head of its switch input FIFO and
  // now competes for its output port.
  void OnIngressHead(uint32_t packet, TimePs now);
  // kPortKick: a lane group of `port` that a waiting packet needs is free.
  // A kick superseded by an earlier one is stale and does nothing.
  void OnPortKick(uint32_t port, TimePs now) {
    if (ports_[port].kick_at != now) return;
    ports_[port].kick_at = TimePs::Max();
    TryTransmit(port, now);
  }
  // kCreditKick: credit is due at `port` now, at the start of the
  // picosecond, while a packet waited for credit there. Serves the port
  // and returns true; false for a kick that finds no packet waiting for
  // credit any more, or that a later one superseded: it does nothing and
  // is not counted as an event. (Whether such a kick exists depends on
  // when the credit was registered, which coalescing changes; whether a
  // kick serves a port waiting for credit does not.)
  bool OnCreditKick(uint32_t port, TimePs now) {
    Port& pt = ports_[port];
    if (pt.credit_kick_at != now) return false;
    pt.credit_kick_at = TimePs::Max();
    if (pt.stalled_since == TimePs::Max()) return false;
    TryTransmit(port, now);
    return true;
  }

  const Packet& packet(uint32_t id) const { return packets_[id]; }
  // Hints for the engine's lookahead (StreamCore::Prefetch): packet `id`
  // (up to two cache lines) and port `port`'s own fields.
  void PrefetchPacket(uint32_t id) const {
    const char* p = reinterpret_cast<const char*>(&packets_[id]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + sizeof(Packet) - 1);
  }
  void PrefetchPort(uint32_t port) const {
    const char* p = reinterpret_cast<const char*>(&ports_[port]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
  }
  void Free(uint32_t id) { packets_.Free(id); }

  uint64_t packets_injected() const { return injected_; }
  // Per chip: data payload bytes put on links.
  const std::vector<uint64_t>& bytes_sent() const { return bytes_sent_; }
  size_t num_ports() const { return ports_.size(); }
  uint32_t waiting(uint32_t port) const { return ports_[port].waiting(); }
  // Per port (indexed like Topology::links()).
  std::vector<LinkStats> Stats() const;

 private:
  uint32_t WireBytes(const Packet& pk) const {
    return pk.payload + hw_.packet_header_bytes;
  }
  bool RoundRobin() const {
    return hw_.interleave == InterleaveKind::kRoundRobin;
  }
  // During the event at `now`, `bytes` of channel `vc`'s buffer at the far
  // end of `link` are found freed at `at` (when a packet bound for the chip
  // there arrives, or when a relayed packet's serialisation on its next hop
  // ends): the credit travels back over the link and counts from its due
  // time on (docs/hardware-model.md, "credits"). With unbounded buffers a
  // credit changes nothing and none is sent.
  void SendCredit(uint32_t link, uint32_t bytes, uint8_t vc, TimePs at,
                  TimePs now) {
    if (hw_.link_buffer_bytes == 0) return;
    const TimePs due = at + flight_[link];
    last_credit_ = Max(last_credit_, due);
    if (rec_) rec_->CreditReturned(link, bytes, due);
    Port& pt = ports_[link];
    const bool stalled = pt.stalled_since != TimePs::Max();
    if (due <= now) {
      // Back at once (a relayed packet of no wire bytes, over links of no
      // flight time): a port waiting for credit is served after this event,
      // as by its kick.
      pt.ReturnCredit(vc, bytes);
      if (stalled) KickAt(link, now);
      return;
    }
    if (early_credit_ && !stalled && MayCountEarly(pt, due, now)) {
      pt.ReturnCredit(vc, bytes);
      pt.early.Add(bytes, due);
      ++credits_early_;
      return;
    }
    ++credits_kept_;
    pt.credits_due.Add(due, bytes, vc);
    if (stalled) KickWhenCreditDue(link, due);
  }
  // Whether a credit due at `due` may be counted now, before it is due: if
  // every channel of `pt` will have credit for the largest packet at every
  // moment until then without it, no decision of the port can tell it was
  // counted early. Until `due` the port's lane groups can take at most
  // (due - now) x link bandwidth + one largest packet each (a lane group
  // starts its next packet only when the one before is serialised), and
  // the credits counted early and not yet due are at most
  // early.Pending(now): each channel's true credit stays at least
  //   buffer - in_use - Pending - that,
  // which must be at least the largest packet (early_room_: the buffer
  // less those packets, rounding included).
  bool MayCountEarly(Port& pt, TimePs due, TimePs now) const {
    const double window = static_cast<double>((due - now).ps());
    return early_room_ - pt.in_use - pt.early.Pending(now) -
               static_cast<int64_t>(window * bytes_per_ps_) >=
           0;
  }
  // Counts the credits due at `port` by `now`.
  void TakeDueCredits(Port& pt, TimePs now) {
    pt.credits_due.TakeDue(now, [&pt](TimePs, uint32_t bytes, uint32_t vc) {
      pt.ReturnCredit(vc, bytes);
    });
  }
  // `port`, where a packet waits for credit, is served at the start of the
  // picosecond `at` (a credit due there; TimePs::Max(): none) unless a kick
  // no later is pending: an event whose place among those of its
  // picosecond depends on the port and the time only, not on when the
  // credit became known (EventQueue::PushFirst). REQUIRES: `at` after the
  // current time (the port's credits due by now may not be counted yet: a
  // lower-ranked port's kick at this picosecond can send it one before its
  // own kick runs).
  void KickWhenCreditDue(uint32_t port, TimePs at) {
    Port& pt = ports_[port];
    if (at >= pt.credit_kick_at) return;
    pt.credit_kick_at = at;
    q_.PushFirst(at, port, kCreditKick, port);
  }
  // The channel a packet that came on `in_link` in channel `vc` takes on
  // `port`: one more when `port` does not rank above `in_link` (a dateline
  // crossing; Topology::LinkRank), never beyond the last channel.
  uint8_t NextVc(uint32_t in_link, uint8_t vc, uint32_t port) const {
    if (in_link == kNone) return 0;
    const uint32_t up = topo_.LinkRank(port) <= topo_.LinkRank(in_link) ? 1 : 0;
    return static_cast<uint8_t>(std::min<uint32_t>(vc + up, vcs_ - 1));
  }
  // Queues the packet at `port` (its queue time `queued`, default now).
  void EnqueueAt(uint32_t port, uint32_t input, uint32_t packet, TimePs now,
                 TimePs queued = TimePs::Max());
  // The switch output port a packet that arrived at switch `sw` takes.
  uint32_t OutPort(const Packet& pk, uint32_t sw) const {
    return topo_.NextLink(sw, pk.dst, pk.flow);
  }
  // FIFO switch inputs (hw.switch_input_fifo): the input FIFO of a packet
  // that arrived on `in_link` in channel `vc` (lane group `lg` for address
  // interleaving; one FIFO per channel for round-robin).
  std::deque<uint32_t>& Ingress(uint32_t in_link, uint32_t vc, uint32_t lg) {
    const size_t fifo = static_cast<size_t>(in_link) * vcs_ + vc;
    return RoundRobin() ? ingress_[fifo]
                        : ingress_[fifo * hw_.lane_groups + lg];
  }
  // Serves every free lane group of `port` that has a packet with credit,
  // then schedules a kick for the earliest busy lane group a waiting packet
  // needs (ScheduleKick).
  void TryTransmit(uint32_t port, TimePs now);
  // At most one kick is pending per port, and only while a packet waits for
  // a busy lane group: a lane group that frees with nothing to send, or a
  // packet that waits for credit only (a credit return serves it), needs no
  // event.
  void ScheduleKick(uint32_t port, TimePs now);
  // Brings `port`'s pending kick forward to `at` (none pending: schedules
  // one); a later `at` changes nothing.
  // `hint`: the packet the kick will likely send, or kNone (NextPickHead),
  // for the engine to prefetch just before the kick runs.
  void KickAt(uint32_t port, TimePs at, uint32_t hint = kNone) {
    Port& pt = ports_[port];
    if (at >= pt.kick_at) return;
    pt.kick_at = at;
    q_.Push(at, kPortKick, port, hint);
  }
  // The queue (input, row) whose head packet lane group `lg` sends next
  // (input kNone if none); sets *credit_blocked when a head packet waits
  // for credit only.
  struct Pick {
    uint32_t input = kNone;
    uint32_t vc = 0;
  };
  Pick Arbitrate(Port& pt, uint32_t lg, bool* credit_blocked) const;
  // Puts the head packet of (input, vc, lg) on the wire.
  void Send(uint32_t port, Pick pick, uint32_t lg, TimePs now);
  // Puts packet `id`, from `pick` and out of its queue, on the wire.
  // Inlined in Send and SendAlone: out of line it costs the per-packet path
  // of a busy port (Send, inlined in TryTransmit) a call and its register
  // saves; inlined in EnqueueAt too it moved ScheduleArrival out of line.
  [[gnu::always_inline]] void Transmit(uint32_t port, uint32_t id, Pick pick,
                                       uint32_t lg, TimePs now);
  // Sends packet `id`, which came to idle `port` from `input` and needs
  // free lane group `lg`, without queueing it, if its credit is there;
  // false (nothing done but the credits due counted) if not (EnqueueAt).
  // Out of line: the busy port's path through EnqueueAt stays short.
  [[gnu::noinline]] bool SendAlone(uint32_t port, uint32_t id, uint32_t input,
                                   uint32_t lg, TimePs now);
  uint32_t NextPickHead(Port& pt, uint32_t lg) const;
  // Schedules the kArrive of packet `id`, whose last byte reaches the far
  // end of `port` at `at`, unless coalescing folds it (it is then freed,
  // its credit on its way back). `now`: the time of the event sending it.
  // Inlined in both copies of Transmit, as it was in the one before.
  [[gnu::always_inline]] void ScheduleArrival(uint32_t port, uint32_t id,
                                              TimePs at, TimePs now);

  const HwConfig& hw_;
  const Topology& topo_;
  EventQueue& q_;
  uint32_t vcs_;  // virtual channels per link: VirtualChannels()
  // Wire bytes of the largest packet there can be: a data packet carries at
  // most packet_payload_bytes, a control packet message_payload_bytes.
  uint32_t max_wire_;
  double bytes_per_ps_;  // the link bandwidth (MayCountEarly)
  // MayCountEarly's constant part: the buffer less one largest packet per
  // lane group and one more, and a byte for rounding the window's.
  int64_t early_room_;
  std::vector<TimePs> ser_;  // LaneGroupTime per wire size, if not too many
  CdmaUnit* cdma_ = nullptr;
  AckSink* ack_sink_ = nullptr;
  ArrivalCoalescer coalesce_;
  TimePs last_credit_;  // the latest credit's due time
  bool early_credit_ = false;
  uint64_t credits_early_ = 0;
  uint64_t credits_kept_ = 0;
  NetRecorder* rec_ = nullptr;      // a timeline's observer, if any
  // FlowOf's memo of one chip: two flows, the one looked up longer ago
  // replaced first.
  struct FlowMemo {
    uint32_t dst[2] = {kNone, kNone};
    uint32_t qp[2] = {0, 0};
    FlowPath path[2];
    uint32_t older = 0;
  };

 public:
  // Bytes of FlowOf's memo per chip (hw/budget.cc).
  static constexpr size_t kFlowMemoBytes = sizeof(FlowMemo);

 private:
  mutable std::vector<FlowMemo> flows_;  // per chip
  std::vector<TimePs> flight_;      // per link: LinkFlight()
  std::vector<Port> ports_;         // one per directed link
  std::vector<uint32_t> in_index_;  // per link: input number at its dst node
  PacketPool packets_;
  uint64_t injected_ = 0;
  std::vector<uint64_t> bytes_sent_;
  // Per (link into a switch, channel, lane group) with FIFO inputs: the
  // packets forwarded and waiting, the head queued at its output port.
  std::vector<std::deque<uint32_t>> ingress_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_NETWORK_H_
