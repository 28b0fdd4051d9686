#include "replay/fluid_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/event_queue.h"
#include "base/max_min.h"
#include "hw/cdma.h"
#include "hw/events.h"
#include "hw/message.h"
#include "hw/network.h"
#include "hw/port.h"
#include "replay/flow_net.h"
#include "replay/stream_core.h"

namespace ccreplay {
namespace {

// The fluid engine's own events, after the kinds of hw/events.h it shares
// with the packet engine (kStreamResume, kCdmaKick, kLocalDone, kMsgLocal,
// kMsgCount).
enum FluidEventKind : uint32_t {
  kFlowsChanged = 100,  // recompute the rates (once per batch of changes)
  kFlowEvent,           // a = flow, b = version: it ends or frees its engine
  kDataLanded,          // a = op: the last byte is in the destination GMEM
  kAcked,               // a = op: its acknowledgement is back at the source
  kMsgArrived,          // a = op (RemoteMsgSend): at its destination
  kCtsArrived,          // a = op (Receive): its clear-to-send at the sender
  kPacketHop,           // a = train, b = packet: it reaches its next link
};

// One remote data transfer in flight.
// Its links, demand (wire bytes/s its engine can feed; 0 = unbounded) and
// rate live in the FlowNet under the same id.
struct ActiveFlow {
  uint32_t op = 0;
  uint32_t engine = 0;
  uint32_t version = 0;  // of its pending kFlowEvent
  bool pending = false;  // a kFlowEvent of this version is in the queue
  TimePs anchor;         // `left` is as of this time
  double left = 0;       // wire bytes still to pass
  TimePs tail;           // its last packet's hops once the fluid has passed
  // The engine is free once the wire bytes left of all its flows fit in its
  // staging queues at the port (FluidSim::staging_), but not before it has
  // read this flow's payload at its own rate (`read_by`).
  bool holds_engine = true;
  TimePs read_by;
};

// A transfer that crosses the network as packets
// (ReplayOptions::fluid_packet_max): its packets are read one after another
// by its engine and cross its path store-and-forward, each link serving
// them first come, first served.
// A packet's event names its train, its index in the train and its hop
// (kPacketHop, b = index << 16 | hop): a train has at most kMaxTrainPackets
// packets and a path of at most kMaxTrainHops links; longer ones are flows.
inline constexpr uint32_t kMaxTrainPackets = 0xffff;
inline constexpr uint32_t kMaxTrainHops = 0xffff;
// Train::lands holds the kind of its landing event in 8 bits.
static_assert(kCtsArrived < 256);
// One cache line: a path of up to kInlineHops links is kept in it (the rest
// in FluidSim::long_paths_).
inline constexpr uint32_t kInlineHops = 6;
struct Train {
  // Where its first payload byte goes (packet k's: addr + k payloads), as
  // the lane-group interleave sees it (GlobalAddress(dst, addr)).
  uint64_t addr = 0;
  // The latest arrival of its packets so far: packets on different lane
  // groups may overtake each other.
  TimePs landed;
  uint32_t dst = 0;
  uint32_t op = 0;
  uint32_t engine = kNone;  // data: the engine that reads it
  uint32_t bytes = 0;       // payload
  uint16_t packets = 0;
  uint16_t hops = 0;
  uint16_t left = 0;  // packets yet to start their last link
  uint8_t lands = 0;  // the event of its arrival (a = op)
  uint32_t links[kInlineHops] = {};
};
static_assert(sizeof(Train) <= 64);

// Bytes a transfer puts on the wire: payload plus one header per packet
// (a transfer of 0 bytes is one header-only packet), and its last packet.
struct Wire {
  uint64_t packets = 1;
  uint64_t bytes = 0;
  uint64_t tail = 0;
};

Wire WireOf(const HwConfig& hw, uint64_t bytes) {
  Wire w;
  const uint64_t p = hw.packet_payload_bytes;
  w.packets = std::max<uint64_t>(1, (bytes + p - 1) / p);
  w.bytes = bytes + w.packets * hw.packet_header_bytes;
  w.tail = bytes - (w.packets - 1) * p + hw.packet_header_bytes;
  return w;
}

// Picoseconds to pass `bytes` at `bytes_per_s`, rounded up; a value within
// 1e-6 ps of a whole picosecond is that picosecond (double rounding).
TimePs PsToPass(double bytes, double bytes_per_s) {
  const double ps = bytes / bytes_per_s * 1e12;
  const double whole = std::round(ps);
  return TimePs(static_cast<int64_t>(
      std::abs(ps - whole) < 1e-6 ? whole : std::ceil(ps)));
}

class FluidSim : public StreamCore {
 public:
  FluidSim(const Program& p, const HwConfig& hw, const Topology& topo,
           const ReplayOptions& opt)
      : StreamCore(p, hw, topo, opt, "fluid replay", /*breakdown=*/false),
        net_(topo.links().size(), static_cast<double>(hw.link_bytes_per_s)),
        staging_(static_cast<double>(hw.cdma_staging_packets) * hw.lane_groups *
                 (hw.packet_payload_bytes + hw.packet_header_bytes)),
        on_engine_(static_cast<size_t>(p.num_chips) * hw.cdma_engines),
        engine_stamp_(on_engine_.size(), 0),
        link_free_(topo.links().size() * hw.lane_groups, TimePs::Zero()),
        stage_base_(topo.links().size(), kNone) {
    // A crossing of link l after its serialisation: the link's flight
    // (LinkFlight), and from a switch its store-and-forward too.
    crossing_.reserve(topo.links().size());
    for (uint32_t l = 0; l < topo.links().size(); ++l) {
      crossing_.push_back(LinkFlight(hw, topo, l) +
                          (topo.IsSwitch(topo.links()[l].src)
                               ? hw.switch_forwarding
                               : TimePs::Zero()));
    }
    // The staging queues: per link out of a chip, per engine of the chip
    // and lane group.
    size_t queues = 0;
    for (uint32_t c = 0; c < p.num_chips; ++c) {
      for (uint32_t l : topo.OutLinks(c)) {
        stage_base_[l] = static_cast<uint32_t>(queues);
        queues += static_cast<size_t>(hw.cdma_engines) * hw.lane_groups;
      }
    }
    staging_queues_.assign(queues * (1 + hw.cdma_staging_packets), 0);
    drops_superseded_ = true;
    r_.bytes_sent.assign(p.num_chips, 0);
    r_.links.resize(topo.links().size());
  }

  const FluidStats& stats() const { return stats_; }

 private:
  void Dispatch(const Event& ev, TimePs now) override;
  void Prefetch(uint32_t kind, uint32_t a, uint32_t) const override {
    if (kind == kPacketHop) __builtin_prefetch(&trains_[a]);
  }
  // An end event of a flow rescheduled since (its rate changed).
  bool Superseded(const Event& ev) override {
    if (!Stale(ev)) return false;
    --superseded_;
    return true;
  }
  bool Stale(const Event& ev) const {
    return ev.kind == kFlowEvent && flows_[ev.a].version != ev.b;
  }
  void StartData(uint32_t e, uint32_t g, const Instr& in,
                 uint32_t /*slot*/, TimePs now) override {
    if (in.peer == ChipOf(g)) {  // a local copy: the engine alone, as packets
      cdma_.BeginData(e, g, in.peer, in.qp_id, in.dst_addr, in.bytes, now);
    } else {
      StartFlow(e, g, now);
    }
  }
  // A control packet crosses as a packet (a train of one), queued with the
  // trains' packets; with fluid_packet_max 0 it pays its path's latency and
  // serialisation but takes no share of the links.
  void SendControl(PacketKind kind, uint32_t g, const Instr& in,
                   TimePs now) override;
  // The last byte of write `g` is in the destination GMEM.
  void Landed(uint32_t g, TimePs now) {
    r_.bytes_received[InstrAt(g).peer] += InstrAt(g).bytes;
    WriteLanded(g, now);
  }

  // Flows.
  // The links of the route, in a buffer reused from call to call (valid
  // until the next).
  const std::vector<uint32_t>& Route(uint32_t src, uint32_t dst,
                                     uint32_t qp) const {
    topo_.PathInto(src, dst, Topology::FlowHash(src, dst, qp), &route_);
    return route_;
  }
  // A packet of `wire` bytes crossing `links` store-and-forward: per link
  // its serialisation and the crossing (link latency + propagation; from a
  // switch: forwarding + the switch port's latency + propagation).
  TimePs PathTime(const std::vector<uint32_t>& links, uint64_t wire) const;
  // A crossing of link `l` after its serialisation (crossing_).
  TimePs Crossing(uint32_t l) const { return crossing_[l]; }
  TimePs MessageTime(uint32_t src, uint32_t dst, uint32_t qp) const {
    return PathTime(Route(src, dst, qp),
                    hw_.message_payload_bytes + hw_.packet_header_bytes);
  }
  void StartFlow(uint32_t e, uint32_t g, TimePs now);
  // Packets (ReplayOptions::fluid_packet_max).
  void StartTrain(uint32_t e, uint32_t g, const std::vector<uint32_t>& links,
                  TimePs now);
  // A train of `packets` packets of `bytes` payload over `links`, landing as
  // event `lands` (a = op `g`); `e`: the engine that reads it (kNone: a
  // control packet, ready at once). Returns its id.
  uint32_t NewTrain(uint32_t e, uint32_t g, uint32_t lands, uint64_t bytes,
                    uint32_t packets, uint32_t dst, uint64_t addr,
                    const std::vector<uint32_t>& links);
  // The lane group of link `l` that packet `k` of train `t` takes: the
  // address interleave's, or with round-robin interleaving the one free
  // first.
  uint32_t TrainLaneGroup(const Train& t, uint32_t k, uint32_t l) const;
  // Packet `k` of train `t` reaches link `h` of its path (h = 0: it has
  // just been read, or waited to be staged); the last packet of a data
  // train, once staged, ends its engine's data phase (FinishDataPhase).
  void OnPacketHop(uint32_t t, uint32_t k, uint32_t h, TimePs now);
  uint32_t TrainLink(uint32_t id, uint32_t h) const {
    return h < kInlineHops ? trains_[id].links[h] : long_paths_.at(id)[h];
  }
  // Packet `k` of a train: its payload and wire bytes.
  uint64_t PacketPayload(const Train& t, uint32_t k) const {
    const uint64_t p = hw_.packet_payload_bytes;
    const uint64_t bytes = t.bytes;
    return std::min<uint64_t>(p, bytes - std::min<uint64_t>(bytes, k * p));
  }
  // Moves flow `id`'s bytes on to `now` at its current rate.
  void Advance(uint32_t id, TimePs now);
  void MarkChanged(TimePs now);
  void Reallocate(TimePs now);
  // Schedules flow `id`'s next kFlowEvent at its current rate.
  void Schedule(uint32_t id, TimePs now);
  void OnFlowEvent(uint32_t id, TimePs now);
  // When flow `id` lets its engine go, at the rates as of now.
  TimePs ReleaseAt(uint32_t id, TimePs now) const;
  // Wire bytes flow `id` has still to pass at `now` (at its current rate).
  double LeftAt(uint32_t id, TimePs now) const {
    const ActiveFlow& f = flows_[id];
    return f.left - net_.rate(id) * ((now - f.anchor).ps() * 1e-12);
  }
  // Engine `e`'s release time may have moved: its holder is rescheduled at
  // the end of the Reallocate.
  void EngineMoved(uint32_t e) {
    if (engine_stamp_[e] == engine_pass_) return;
    engine_stamp_[e] = engine_pass_;
    moved_engines_.push_back(e);
  }

  // The flow holding engine `e`, if any: its newest (the engine starts a
  // flow only once the one before has let it go).
  std::optional<uint32_t> Holder(uint32_t e) const {
    const std::vector<uint32_t>& on = on_engine_[e];
    if (on.empty() || !flows_[on.back()].holds_engine) return std::nullopt;
    return on.back();
  }

  FluidStats stats_;
  FlowNet net_;
  mutable std::vector<uint32_t> route_;  // Route()'s buffer
  std::vector<ActiveFlow> flows_;        // by FlowNet id
  // What the port's staging queues hold for one engine, in wire bytes:
  // cdma.staging_packets per lane group.
  double staging_;
  // Per engine: its flows in flight (the one holding it and those whose
  // bytes are still staged), in start order.
  std::vector<std::vector<uint32_t>> on_engine_;
  // Engines whose holder must be rescheduled (EngineMoved), once each.
  std::vector<uint32_t> moved_engines_;
  std::vector<uint32_t> engine_stamp_;
  uint32_t engine_pass_ = 1;
  // Superseded kFlowEvents still in the queue; when they outnumber the
  // others, they are removed (Schedule), so the queue holds at most about
  // twice the events that are due.
  uint64_t superseded_ = 0;
  bool changed_ = false;  // a kFlowsChanged is pending

  // Transfers crossing as packets: trains by id (ids of landed ones reused).
  std::vector<Train> trains_;
  std::vector<uint32_t> free_trains_;
  // The paths of trains of more than kInlineHops links, by train.
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> long_paths_;
  // Per link and lane group (l x lane_groups + lg): when its last packet
  // so far is through (first come, first served).
  std::vector<TimePs> link_free_;
  // Per link: its flight, plus the forwarding when it leaves a switch
  // (Crossing), found once.
  std::vector<TimePs> crossing_;
  // The port's staging queues, one per (link out of a chip, engine of the
  // chip, lane group; with round-robin interleaving lane group 0 only):
  // stage_base_[l] + engine in chip x lane_groups + lg
  // (kNone for links out of a switch). Per queue, 1 + cdma.staging_packets
  // words in staging_queues_: how many packets its engine has staged in it,
  // then when the last cdma.staging_packets of them started on the link (a
  // ring, in picoseconds). An engine hands a packet it has read to its
  // queue, and reads on, only once fewer than cdma.staging_packets of its
  // packets wait there, as the packet engine's staging does (CdmaUnit,
  // Network::MayStage).
  std::vector<uint32_t> stage_base_;
  std::vector<int64_t> staging_queues_;
};

void FluidSim::Dispatch(const Event& ev, TimePs now) {
  switch (ev.kind) {
    case kFlowsChanged:
      Reallocate(now);
      break;
    case kFlowEvent:
      OnFlowEvent(ev.a, now);
      break;
    case kDataLanded:
      Landed(ev.a, now);
      break;
    case kAcked:
      CompleteOp(ev.a, now);
      break;
    case kMsgArrived:
      MessageArrived(ev.a, now);
      break;
    case kCtsArrived:
      CtsArrived(ev.a, now);
      break;
    case kPacketHop:
      OnPacketHop(ev.a, ev.b >> 16, ev.b & 0xffff, now);
      break;
    default:
      DispatchStream(ev, now);
      break;
  }
}

void FluidSim::SendControl(PacketKind kind, uint32_t g, const Instr& in,
                           TimePs now) {
  const uint32_t chip = ChipOf(g);
  const bool back = kind == PacketKind::kAck;
  if (opt_.fluid_packet_max != 0 && kind != PacketKind::kData) {
    const std::vector<uint32_t>& links =
        back ? Route(in.peer, chip, in.qp_id) : Route(chip, in.peer, in.qp_id);
    if (links.size() <= kMaxTrainHops) {
      // One packet, queued with the trains on every link.
      const uint32_t lands = back                       ? kAcked
                             : kind == PacketKind::kMsg ? kMsgArrived
                                                        : kCtsArrived;
      const uint32_t id =
          NewTrain(kNone, g, lands, hw_.message_payload_bytes, 1,
                   back ? chip : in.peer, ControlAddr(kind, in), links);
      q_.Push(now, kPacketHop, id, 0);
      return;
    }
  }
  switch (kind) {
    case PacketKind::kCts:
      q_.Push(now + MessageTime(chip, in.peer, in.qp_id), kCtsArrived, g);
      return;
    case PacketKind::kMsg:
      q_.Push(now + MessageTime(chip, in.peer, in.qp_id), kMsgArrived, g);
      return;
    case PacketKind::kAck:
      q_.Push(now + MessageTime(in.peer, chip, in.qp_id), kAcked, g);
      return;
    case PacketKind::kData:
      return;  // data travels as flows (StartFlow)
  }
}

TimePs FluidSim::PathTime(const std::vector<uint32_t>& links,
                          uint64_t wire) const {
  TimePs t = TimePs::Zero();
  for (uint32_t l : links) {
    t = t + SerializationTime(wire, hw_.link_bytes_per_s) + Crossing(l);
  }
  return t;
}

void FluidSim::StartFlow(uint32_t e, uint32_t g, TimePs now) {
  const Instr& in = InstrAt(g);
  const uint32_t chip = ChipOf(g);
  const Wire wire = WireOf(hw_, in.bytes);
  const std::vector<uint32_t>& links = Route(chip, in.peer, in.qp_id);
  if (wire.packets <= std::min(opt_.fluid_packet_max, kMaxTrainPackets) &&
      links.size() <= kMaxTrainHops &&
      in.bytes <= std::numeric_limits<uint32_t>::max()) {
    StartTrain(e, g, links, now);
    return;
  }
  ActiveFlow f;
  f.op = g;
  f.engine = e;
  f.anchor = now;
  f.left = static_cast<double>(wire.bytes);
  f.tail = PathTime(links, wire.tail);
  // The engine reads payload at cdma_bytes_per_s: on the wire that is
  // wire / payload as fast.
  f.read_by = now + hw_.CdmaReadTime(in.bytes);
  double demand = 0;
  if (hw_.cdma_bytes_per_s != 0 && in.bytes > 0) {
    demand = static_cast<double>(hw_.cdma_bytes_per_s) *
             static_cast<double>(wire.bytes) / static_cast<double>(in.bytes);
  }
  r_.bytes_sent[chip] += in.bytes;
  for (uint32_t l : links) {
    LinkStats& s = r_.links[l];
    s.packets += wire.packets;
    s.wire_bytes += wire.bytes;
    s.payload_bytes += in.bytes;
    // Summed over lane groups, as the packet engine counts it.
    s.busy = s.busy + SerializationTime(wire.bytes * hw_.lane_groups,
                                        hw_.link_bytes_per_s);
    s.first_start = std::min(s.first_start, now);
  }
  const uint32_t id = net_.Add(links, demand);
  if (flows_.size() <= id) flows_.resize(id + 1);
  f.version = flows_[id].version + 1;  // a reused id: old events are stale
  flows_[id] = f;
  on_engine_[e].push_back(id);
  cdma_.engine(e).current = g;  // the engine's data phase: one at a time
  ++stats_.flows;
  MarkChanged(now);
}

void FluidSim::Advance(uint32_t id, TimePs now) {
  ActiveFlow& f = flows_[id];
  f.left = LeftAt(id, now);
  f.anchor = now;
}

void FluidSim::MarkChanged(TimePs now) {
  if (changed_) return;
  changed_ = true;
  q_.Push(now, kFlowsChanged, 0);
}

// New max-min rates around the flows that started, ended or changed.
void FluidSim::Reallocate(TimePs now) {
  changed_ = false;
  const uint64_t before = net_.solves();
  const std::vector<FlowNet::Change>& changed = net_.Reallocate();
  stats_.recomputes += net_.solves() - before;
  stats_.solved_flows = net_.solved_flows();
  stats_.rate_changes += changed.size();
  for (const FlowNet::Change& c : changed) {
    // The bytes moved so far went at the old rate.
    ActiveFlow& f = flows_[c.id];
    f.left -= c.old_rate * ((now - f.anchor).ps() * 1e-12);
    f.anchor = now;
  }
  // Scheduled once all are brought to now: a holder's release reads the
  // bytes left of its engine's other flows.
  for (const FlowNet::Change& c : changed) {
    Schedule(c.id, now);
    EngineMoved(flows_[c.id].engine);
  }
  // An engine whose flows' rates moved (or one of which ended) frees itself
  // at another time.
  for (uint32_t e : moved_engines_) {
    if (const std::optional<uint32_t> h = Holder(e)) Schedule(*h, now);
  }
  moved_engines_.clear();
  ++engine_pass_;
}

void FluidSim::Schedule(uint32_t id, TimePs now) {
  ActiveFlow& f = flows_[id];
  if (f.pending) ++superseded_;
  f.pending = true;
  ++f.version;  // the pending event, if any, is superseded
  if (superseded_ > 4096 && 2 * superseded_ > q_.size()) {
    q_.RemoveIf([this](const Event& ev) { return Stale(ev); });
    superseded_ = 0;
  }
  TimePs next = now + PsToPass(std::max(LeftAt(id, now), 0.0), net_.rate(id));
  if (f.holds_engine) next = std::min(next, ReleaseAt(id, now));
  q_.Push(next, kFlowEvent, id, f.version);
}

// A flow running at its engine's rate stages nothing (the port takes each
// packet as it is read): its engine is busy to the end. Otherwise the engine
// runs ahead of the links by what its staging queues hold, for all its flows
// together: it is free once the bytes left of its flows in flight (this one
// and the earlier ones still draining) fit in them, at their rates as of
// now (the time moves when one of them ends or changes rate: EngineMoved).
TimePs FluidSim::ReleaseAt(uint32_t id, TimePs now) const {
  const ActiveFlow& f = flows_[id];
  const double rate = net_.rate(id);
  const double demand = net_.demand(id);
  if (demand > 0 && rate >= demand * (1 - 1e-9)) {
    return now + PsToPass(std::max(LeftAt(id, now), 0.0), rate);
  }
  double left = 0;
  double drain = 0;
  for (uint32_t g : on_engine_[f.engine]) {
    left += std::max(LeftAt(g, now), 0.0);
    drain += net_.rate(g);
  }
  if (left <= staging_) return Max(f.read_by, now);
  // No rate yet (none is 0 once allocated): the next allocation reschedules.
  if (drain <= 0) return TimePs::Max();
  return Max(f.read_by, now + PsToPass(left - staging_, drain));
}

void FluidSim::OnFlowEvent(uint32_t id, TimePs now) {
  ActiveFlow& f = flows_[id];  // `version` is current (Superseded)
  f.pending = false;
  Advance(id, now);
  // Less than a picosecond of bytes left counts as none (ends are rounded
  // up to the picosecond).
  const bool done = f.left <= net_.rate(id) * 1e-12;
  const uint32_t engine = f.engine;
  bool free_engine = false;
  if (f.holds_engine && (done || ReleaseAt(id, now) <= now)) {
    f.holds_engine = false;
    free_engine = true;
    if (!done && net_.demand(id) > 0) {
      net_.SetDemand(id, 0);  // what is staged drains at the links' pace
      MarkChanged(now);
    }
  }
  if (done) {
    for (uint32_t l : net_.links(id)) {
      r_.links[l].last_end = Max(r_.links[l].last_end, now);
    }
    q_.Push(now + f.tail, kDataLanded, f.op);
    ++f.version;
    std::vector<uint32_t>& on = on_engine_[engine];
    on.erase(std::find(on.begin(), on.end(), id));
    EngineMoved(engine);
    net_.Remove(id);
    MarkChanged(now);
  } else {
    Schedule(id, now);
  }
  // Last: starting the engine's next instruction may add a flow (and move
  // flows_).
  if (free_engine) FinishDataPhase(engine, now);
}

uint32_t FluidSim::NewTrain(uint32_t e, uint32_t g, uint32_t lands,
                            uint64_t bytes, uint32_t packets, uint32_t dst,
                            uint64_t addr, const std::vector<uint32_t>& links) {
  uint32_t id;
  if (free_trains_.empty()) {
    id = static_cast<uint32_t>(trains_.size());
    trains_.emplace_back();
    stats_.peak_trains = trains_.size();
  } else {
    id = free_trains_.back();
    free_trains_.pop_back();
  }
  Train& t = trains_[id];
  t.op = g;
  t.engine = e;
  t.bytes = static_cast<uint32_t>(bytes);
  t.packets = static_cast<uint16_t>(packets);
  t.left = static_cast<uint16_t>(packets);
  t.landed = TimePs::Zero();
  t.lands = static_cast<uint8_t>(lands);
  t.dst = dst;
  t.addr = addr;
  t.hops = static_cast<uint16_t>(links.size());
  std::copy_n(links.begin(), std::min<size_t>(links.size(), kInlineHops),
              t.links);
  if (links.size() > kInlineHops) long_paths_[id] = links;
  r_.packets += packets;
  return id;
}

void FluidSim::StartTrain(uint32_t e, uint32_t g,
                          const std::vector<uint32_t>& links, TimePs now) {
  const Instr& in = InstrAt(g);
  const uint32_t packets = static_cast<uint32_t>(WireOf(hw_, in.bytes).packets);
  const uint32_t id = NewTrain(e, g, kDataLanded, in.bytes, packets, in.peer,
                               in.dst_addr, links);
  r_.bytes_sent[ChipOf(g)] += in.bytes;
  ++stats_.flows;
  ++stats_.trains;
  cdma_.engine(e).current = g;  // the engine's data phase: one at a time
  q_.Push(now + hw_.CdmaReadTime(PacketPayload(trains_[id], 0)), kPacketHop, id,
          0);
}

uint32_t FluidSim::TrainLaneGroup(const Train& t, uint32_t k,
                                  uint32_t l) const {
  if (hw_.interleave != InterleaveKind::kRoundRobin) {
    const uint64_t addr = t.addr + uint64_t{k} * hw_.packet_payload_bytes;
    return AddressLaneGroup(hw_, GlobalAddress(t.dst, addr));
  }
  const TimePs* free = &link_free_[static_cast<size_t>(l) * hw_.lane_groups];
  return static_cast<uint32_t>(std::min_element(free, free + hw_.lane_groups) -
                               free);
}

void FluidSim::OnPacketHop(uint32_t id, uint32_t k, uint32_t h, TimePs now) {
  Train& t = trains_[id];
  const uint32_t l = TrainLink(id, h);
  const uint64_t payload = PacketPayload(t, k);
  const uint64_t wire = payload + hw_.packet_header_bytes;
  const uint32_t lg = TrainLaneGroup(t, k, l);
  // A data packet just read: its engine's staging queue for this link and
  // lane group (ring, count: the last packets of the engine in it).
  int64_t* queue = nullptr;  // [0]: packets staged; [1 + i]: a ring
  const uint32_t depth = hw_.cdma_staging_packets;
  if (h == 0 && t.engine != kNone) {
    // With round-robin interleaving the port keeps one queue per engine
    // (the lane group is picked as the packet is sent).
    const uint32_t staged_lg =
        hw_.interleave == InterleaveKind::kRoundRobin ? 0 : lg;
    const size_t q =
        stage_base_[l] +
        static_cast<size_t>(t.engine % hw_.cdma_engines) * hw_.lane_groups +
        staged_lg;
    queue = &staging_queues_[q * (1 + depth)];
    // The queue holds `depth` of the engine's packets: the engine keeps this
    // one until the oldest of them starts.
    const int64_t oldest = queue[1 + queue[0] % depth];
    if (queue[0] >= depth && oldest > now.ps()) {
      q_.Push(TimePs(oldest), kPacketHop, id, k << 16);
      return;
    }
  }
  TimePs& free = link_free_[static_cast<size_t>(l) * hw_.lane_groups + lg];
  const TimePs start = Max(now, free);
  const TimePs through =
      start + LaneGroupTime(hw_, static_cast<uint32_t>(wire));
  free = through;
  LinkStats& s = r_.links[l];
  s.packets += 1;
  s.wire_bytes += wire;
  s.payload_bytes += payload;
  s.busy = s.busy + (through - start);  // one lane group's, as the packet
                                        // engine sums them
  s.queued = s.queued + (start - now);
  s.first_start = std::min(s.first_start, start);
  s.last_end = Max(s.last_end, through);
  ++stats_.packet_hops;
  const TimePs arrives = through + Crossing(l);
  const bool last_packet = k + 1 == t.packets;
  if (h + 1 < t.hops) {
    q_.Push(arrives, kPacketHop, id, k << 16 | (h + 1));
  } else {
    // The train lands with its latest packet (one may overtake another on
    // another lane group).
    t.landed = Max(t.landed, arrives);
    if (--t.left == 0) {
      q_.Push(t.landed, t.lands, t.op);
      if (t.hops > kInlineHops) long_paths_.erase(id);
      free_trains_.push_back(id);
    }
  }
  if (queue == nullptr) return;
  // Staged: the engine reads on.
  queue[1 + queue[0] % depth] = start.ps();
  ++queue[0];
  if (!last_packet) {
    q_.Push(now + hw_.CdmaReadTime(PacketPayload(t, k + 1)), kPacketHop, id,
            (k + 1) << 16);
  } else {
    // Last: it may start a train (and move trains_).
    FinishDataPhase(t.engine, now);
  }
}

}  // namespace

std::string FluidEngineName(uint32_t fluid_packet_max) {
  if (fluid_packet_max == 0) return "fluid engine (flows, no packets)";
  return absl::StrCat("fluid engine (flows; packets for transfers of at most ",
                      fluid_packet_max,
                      fluid_packet_max == 1 ? " packet)" : " packets)");
}

absl::StatusOr<ReplayResult> ReplayFluidWithStats(const Program& program,
                                                  const HwConfig& hw,
                                                  const Topology& topology,
                                                  const ReplayOptions& options,
                                                  FluidStats* stats) {
  if (topology.num_chips() != program.num_chips) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology has ", topology.num_chips(),
                     " chips but the trace has ", program.num_chips));
  }
  FluidSim sim(program, hw, topology, options);
  auto result = sim.Run();
  *stats = sim.stats();
  return result;
}

absl::StatusOr<ReplayResult> ReplayFluid(const Program& program,
                                         const HwConfig& hw,
                                         const Topology& topology,
                                         const ReplayOptions& options) {
  FluidStats stats;
  return ReplayFluidWithStats(program, hw, topology, options, &stats);
}

}  // namespace ccreplay
