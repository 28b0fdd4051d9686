#include "hw/network.h"

#include <deque>

#include "hw/cdma.h"
#include "hw/events.h"

namespace ccreplay {

TimePs LinkFlight(const HwConfig& hw, const Topology& topo, uint32_t link) {
  if (topo.IsSwitch(topo.links()[link].src)) {
    return hw.switch_port_latency + hw.switch_port_propagation;
  }
  return hw.link_latency + hw.link_propagation;
}

Network::Network(const HwConfig& hw, const Topology& topo, EventQueue& q)
    : hw_(hw),
      topo_(topo),
      q_(q),
      vcs_(VirtualChannels(hw, topo)),
      max_wire_(std::max(hw.packet_payload_bytes, hw.message_payload_bytes) +
                hw.packet_header_bytes),
      bytes_per_ps_(static_cast<double>(hw.link_bytes_per_s) / 1e12),
      early_room_(static_cast<int64_t>(hw.link_buffer_bytes) -
                  (static_cast<int64_t>(hw.lane_groups) + 1) * max_wire_ - 1) {
  // Inputs of a chip's port: its engines, then the acknowledgement path,
  // then every incoming link (relays). Inputs of a switch port: its
  // incoming links.
  flows_.resize(topo_.num_chips());
  std::vector<uint32_t> in_degree(topo_.num_nodes(), 0);
  in_index_.resize(topo_.links().size());
  flight_.resize(topo_.links().size());
  for (uint32_t l = 0; l < topo_.links().size(); ++l) {
    in_index_[l] = in_degree[topo_.links()[l].dst]++;
    flight_[l] = LinkFlight(hw_, topo_, l);
  }
  ports_.reserve(topo_.links().size());
  for (uint32_t l = 0; l < topo_.links().size(); ++l) {
    const uint32_t node = topo_.links()[l].src;
    const uint32_t inputs = topo_.IsSwitch(node)
                                ? in_degree[node]
                                : hw_.cdma_engines + 1 + in_degree[node];
    ports_.emplace_back(inputs, hw_.lane_groups,
                        RoundRobin() ? 1 : hw_.lane_groups, vcs_,
                        hw_.link_buffer_bytes);
  }
  bytes_sent_.assign(topo_.num_chips(), 0);
  // A lane group's time for each packet size there can be (the sizes are
  // few and the division is not cheap), unless the largest is very large.
  if (max_wire_ < (1u << 16)) {
    ser_.resize(max_wire_ + 1);
    for (uint32_t w = 0; w <= max_wire_; ++w) {
      ser_[w] = LaneGroupTime(hw_, w);
    }
  }
  if (hw_.switch_input_fifo) {
    ingress_.resize(topo_.links().size() * vcs_ *
                    (RoundRobin() ? 1 : hw_.lane_groups));
  }
}

bool Network::MayStage(uint32_t port, uint32_t input, uint32_t lg) {
  Port& pt = ports_[port];
  return pt.QueueSize(input, pt.Row(0, lg)) < hw_.cdma_staging_packets;
}

void Network::InjectOn(FlowPath flow, uint32_t lg, PacketKind kind,
                       uint32_t src, uint32_t dst, uint32_t op,
                       uint32_t payload, uint32_t input, TimePs now,
                       uint32_t state) {
  Packet pk;
  pk.kind = kind;
  pk.state = state;
  pk.dst = dst;
  pk.op = op;
  pk.payload = payload;
  // Every link has the same lane groups and the address does not change on
  // the way: the lane group of every hop, found once.
  pk.lg = static_cast<uint8_t>(lg);
  pk.flow = flow.hash;
  const uint32_t id = packets_.New(pk);
  injected_++;
  if (kind == PacketKind::kData) bytes_sent_[src] += payload;
  EnqueueAt(flow.port, input, id, now);
}

bool Network::OnArrive(uint32_t packet, uint32_t node, TimePs now) {
  const Packet& pk = packets_[packet];
  if (node != pk.dst) {
    // Relayed by the chip's router: it keeps its buffer space until it has
    // been sent on.
    EnqueueAt(topo_.NextLink(node, pk.dst, pk.flow),
              hw_.cdma_engines + 1 + in_index_[pk.in_link], packet, now);
    return false;
  }
  // Written to GMEM at once: its credit was sent when it started the hop
  // (ScheduleArrival).
  return true;
}

void Network::OnSwitchForward(uint32_t packet, uint32_t sw, TimePs now) {
  const Packet& pk = packets_[packet];
  if (hw_.switch_input_fifo) {
    // Only the head of an input FIFO competes for its output; the rest
    // wait behind it whatever their output (head-of-line blocking).
    std::deque<uint32_t>& fifo = Ingress(pk.in_link, pk.vc, pk.lg);
    fifo.push_back(packet);
    if (fifo.size() > 1) {
      packets_[packet].queued_at = now;
      return;
    }
  }
  EnqueueAt(OutPort(pk, sw), in_index_[pk.in_link], packet, now);
}

void Network::OnIngressHead(uint32_t packet, TimePs now) {
  const Packet& pk = packets_[packet];
  EnqueueAt(OutPort(pk, topo_.links()[pk.in_link].dst), in_index_[pk.in_link],
            packet, now, pk.queued_at);
}

void Network::EnqueueAt(uint32_t port, uint32_t input, uint32_t packet,
                        TimePs now, TimePs queued) {
  Packet& pk = packets_[packet];
  pk.queued_at = queued == TimePs::Max() ? now : queued;
  pk.in_vc = pk.vc;
  pk.vc = NextVc(pk.in_link, pk.vc, port);
  Port& pt = ports_[port];
  const uint32_t lg = RoundRobin() ? pt.rr_lg : pk.lg;
  // An idle port whose lane group is free: TryTransmit would find this
  // packet alone in its queue and send it at once if its credit is there
  // (every other lane group's queues are empty, so nothing else is served,
  // blocked or kicked). Sent so, without the queue and the arbiter; the
  // same state changes.
  if (pt.waiting() == 0 && pt.LgFree(lg, now) &&
      SendAlone(port, packet, input, lg, now)) {
    return;
  }
  pt.Enqueue(input, pt.Row(pk.vc, pk.lg), packet, packets_);
  if (rec_) rec_->QueueDepth(port, pt.waiting(), now);
  // Only the new packet can have become sendable (OnCreditReturn says
  // why), and only on its lane group (round-robin: the one whose turn it
  // is), unless a lane group freed at this very picosecond and its kick
  // has yet to run: if neither, the port only needs its kick.
  if (pt.kick_at > now && !pt.LgFree(lg, now)) {
    // The pending kick is no later than any other busy lane group with a
    // packet waiting (ScheduleKick keeps it so): only this one's can be
    // earlier.
    KickAt(port, pt.lg_free_at(lg));
    return;
  }
  TryTransmit(port, now);
}

void Network::TryTransmit(uint32_t port, TimePs now) {
  Port& pt = ports_[port];
  const uint32_t lanes = pt.lane_groups();
  bool credit_blocked = false;
  TakeDueCredits(pt, now);
  // Each free lane group serves one waiting packet; a lane group frees again
  // when its packet has been serialised (kPortKick). Round-robin
  // interleaving deals packets to the lane groups strictly in turn: the next
  // packet waits for the lane group whose turn it is.
  for (uint32_t k = 0; k < lanes && pt.waiting() > 0; ++k) {
    const uint32_t lg = RoundRobin() ? pt.rr_lg : k;
    if (!pt.LgFree(lg, now)) {
      if (RoundRobin()) break;
      continue;
    }
    const Pick pick = Arbitrate(pt, lg, &credit_blocked);
    if (pick.input == kNone) continue;
    Send(port, pick, lg, now);
    // A packet of no wire bytes leaves the lane group free: serve it again.
    if (pt.LgFree(lg, now)) --k;
  }
  if (credit_blocked) {
    if (pt.stalled_since == TimePs::Max()) pt.stalled_since = now;
    // Served again when the next credit is due (none in flight: when one
    // is sent, SendCredit).
    KickWhenCreditDue(port, pt.credits_due.next_due());
  }
  if (pt.waiting() > 0) ScheduleKick(port, now);
}

void Network::ScheduleKick(uint32_t port, TimePs now) {
  Port& pt = ports_[port];
  TimePs next = TimePs::Max();
  uint32_t next_lg = 0;
  if (RoundRobin()) {
    // The next packet, whatever its queue, waits for the lane group whose
    // turn it is.
    next_lg = pt.rr_lg;
    next = pt.lg_free_at(next_lg);
  } else {
    const uint32_t lanes = pt.lane_groups();
    for (uint32_t lg = 0; lg < lanes; ++lg) {
      const TimePs at = pt.lg_free_at(lg);
      if (at > now && at < next && pt.LgWaiting(lg)) {
        next = at;
        next_lg = lg;
      }
    }
  }
  // KickAt's own test too, made first so that the hint is looked for only
  // when a kick is pushed.
  if (next > now && next < pt.kick_at) {
    KickAt(port, next, NextPickHead(pt, next_lg));
  }
}

Network::Pick Network::Arbitrate(Port& pt, uint32_t lg,
                                 bool* credit_blocked) const {
  // Channels in turn from the one after the channel served last; within a
  // channel, round-robin: start after the input served last. FIFO: the
  // packet queued first over every channel (ties: the lower channel, then
  // the lower input). Visit only the inputs with a packet in the row, in
  // cyclic order from `start`.
  const uint32_t inputs = pt.num_inputs();
  const uint32_t vcs = pt.num_vcs();
  Pick best;
  TimePs best_at = TimePs::Max();
  for (uint32_t k = 0; k < vcs; ++k) {
    const uint32_t vc = hw_.switch_fifo ? k : AddMod(pt.rr_vc(lg), k, vcs);
    const uint32_t row = pt.Row(vc, lg);
    const uint32_t start = hw_.switch_fifo ? 0 : pt.rr_input(lg, vc);
    // With credit for the largest packet there can be, any head fits and
    // its size need not be read (a cache miss on a large system).
    const bool any_fits = !hw_.switch_fifo && pt.HasCredit(vc, max_wire_);
    uint32_t last_dist = 0;
    for (uint32_t i = pt.NextWaiting(row, start); i < inputs;
         i = pt.NextWaiting(row, AddMod(i, 1, inputs))) {
      const uint32_t dist = AddMod(i, inputs - start, inputs);
      if (dist < last_dist) break;  // wrapped around to the start
      last_dist = dist + 1;
      if (any_fits) return Pick{i, vc};
      const Packet& head = packets_[pt.Head(i, row)];
      if (!pt.HasCredit(vc, WireBytes(head))) {
        *credit_blocked = true;
        continue;
      }
      if (!hw_.switch_fifo) return Pick{i, vc};
      if (head.queued_at < best_at) {
        best = Pick{i, vc};
        best_at = head.queued_at;
      }
    }
  }
  return best;
}

// The packet lane group `lg` of `pt` likely sends next, or kNone: with
// round-robin arbitration the head of the next input in turn in the channel
// it served last (one channel in use is the common case); FIFO arbitration
// picks the oldest head of all, which no cheap guess names. Only a hint
// (ScheduleKick): a packet waits long in a busy port's queue, and its line
// has left the caches by the time it is sent; a switch port serves its
// inputs in turn, so the next packet of the queue just served is not the one
// sent next.
uint32_t Network::NextPickHead(Port& pt, uint32_t lg) const {
  if (hw_.switch_fifo) return kNone;
  const uint32_t vcs = pt.num_vcs();
  const uint32_t vc = AddMod(pt.rr_vc(lg), vcs - 1, vcs);
  const uint32_t row = pt.Row(vc, lg);
  const uint32_t i = pt.NextWaiting(row, pt.rr_input(lg, vc));
  return i < pt.num_inputs() ? pt.Head(i, row) : kNone;
}

void Network::Send(uint32_t port, Pick pick, uint32_t lg, TimePs now) {
  Port& pt = ports_[port];
  Transmit(port, pt.PopFrom(pick.input, pt.Row(pick.vc, lg), packets_), pick,
           lg, now);
}

bool Network::SendAlone(uint32_t port, uint32_t id, uint32_t input,
                        uint32_t lg, TimePs now) {
  Port& pt = ports_[port];
  const Packet& pk = packets_[id];
  TakeDueCredits(pt, now);
  if (!pt.HasCredit(pk.vc, WireBytes(pk))) return false;
  pt.NoteDepth(1);
  if (rec_) rec_->QueueDepth(port, 1, now);
  Transmit(port, id, Pick{input, pk.vc}, lg, now);
  return true;
}

[[gnu::always_inline]] inline void Network::Transmit(uint32_t port, uint32_t id,
                                                     Pick pick, uint32_t lg,
                                                     TimePs now) {
  Port& pt = ports_[port];
  const uint32_t lanes = pt.lane_groups();
  LinkStats& st = pt.stats();
  if (pt.stalled_since != TimePs::Max()) {
    st.credit_stall += now - pt.stalled_since;
    pt.stalled_since = TimePs::Max();
  }
  const uint32_t chosen = pick.input;
  Packet& pk = packets_[id];
  // Its credit goes back to the previous hop's port (SendCredit, below).
  if (pk.in_link != kNone) PrefetchPort(pk.in_link);
  const uint32_t wire = WireBytes(pk);
  const TimePs ser =
      wire < ser_.size() ? ser_[wire] : LaneGroupTime(hw_, wire);
  const TimePs end = now + ser;
  pt.Occupy(lg, end);
  pt.TakeCredit(pk.vc, wire);
  if (rec_) {
    rec_->Serialise(port, lg, pk, wire, now, end);
    rec_->QueueDepth(port, pt.waiting(), now);
  }
  st.packets++;
  st.wire_bytes += wire;
  st.payload_bytes += pk.payload;
  st.busy += ser;
  st.queued += now - pk.queued_at;
  if (now < st.first_start) st.first_start = now;
  st.last_end = Max(st.last_end, end);
  pt.CountLg(lg, ser, end);
  if (pk.in_link != kNone) {
    // It leaves the buffer of the previous hop: credit goes back there.
    SendCredit(pk.in_link, wire, pk.in_vc, end, now);
    if (hw_.switch_input_fifo && topo_.IsSwitch(topo_.links()[port].src)) {
      // The next packet of its input FIFO moves up to the head.
      std::deque<uint32_t>& fifo = Ingress(pk.in_link, pk.in_vc, pk.lg);
      fifo.pop_front();
      if (!fifo.empty()) q_.Push(now, kIngressHead, fifo.front());
    }
  }
  pk.in_link = port;
  ScheduleArrival(port, id, end + flight_[port], now);
  if (!hw_.switch_fifo) {
    pt.rr_input(lg, pick.vc) = AddMod(chosen, 1, pt.num_inputs());
    pt.rr_vc(lg) = AddMod(pick.vc, 1, pt.num_vcs());
  }
  if (RoundRobin()) pt.rr_lg = AddMod(lg, 1, lanes);
  // An engine waiting for room at this port may hand over its packet.
  const uint32_t node = topo_.links()[port].src;
  if (!topo_.IsSwitch(node) && chosen < hw_.cdma_engines) {
    cdma_->PortTookPacket(node * hw_.cdma_engines + chosen, port, now);
  }
}

[[gnu::always_inline]] inline void Network::ScheduleArrival(uint32_t port,
                                                            uint32_t id,
                                                            TimePs at,
                                                            TimePs now) {
  const uint32_t node = topo_.links()[port].dst;
  const Packet& pk = packets_[id];
  if (node == pk.dst) {
    // Written to GMEM as it arrives, it frees its buffer space then: a
    // credit due `at` plus the flight back, known now (a credit counts from
    // its due time whenever it is sent).
    SendCredit(port, WireBytes(pk), pk.vc, at, now);
    const bool folded =
        pk.kind == PacketKind::kAck
            ? ack_sink_ != nullptr && ack_sink_->FoldAck(pk.op, at)
            : coalesce_.enabled() && coalesce_.FoldArrival(pk);
    if (folded) {
      packets_.Free(id);
      return;
    }
  }
  // A switch does nothing with a packet but hold it for its forwarding
  // latency: its output sees it then (docs/hardware-model.md, "switch
  // arrivals").
  if (topo_.IsSwitch(node)) {
    q_.Push(at + hw_.switch_forwarding, kSwitchForward, id, node);
    return;
  }
  q_.Push(at, kArrive, id, node);
}

std::vector<LinkStats> Network::Stats() const {
  std::vector<LinkStats> out;
  out.reserve(ports_.size());
  for (const Port& p : ports_) out.push_back(p.Stats());
  return out;
}

}  // namespace ccreplay
