#include "replay/engine.h"

#include <array>
#include <limits>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "replay/event_queue.h"

namespace ccreplay {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

enum EventKind : uint32_t {
  kStreamResume,   // a = stream slot
  kCdmaKick,       // a = engine index: re-examine the queue heads
  kCdmaEmit,       // a = engine index: the current op's next packet is read
  kLocalDone,      // a = engine index: the current local copy is written
  kArrive,         // a = packet, b = node: the packet's last byte arrived
  kSwitchForward,  // a = packet, b = switch node: forwarding latency elapsed
  kMsgLocal,       // a = op (MsgSend): delivered to the local counter
  kPortKick,       // a = port: a lane group may be free, try to transmit
  kCreditReturn,   // a = port, b = bytes: buffer space at the far end freed
  kMsgCount,       // a = op (RemoteMsgSend): handshake done, count it
};

enum class PacketKind : uint8_t { kData, kMsg, kCts, kAck };

struct Packet {
  PacketKind kind = PacketKind::kData;
  uint32_t src = 0;          // chip
  uint32_t dst = 0;          // chip
  uint32_t op = 0;           // the instruction it belongs to (global index)
  uint32_t payload = 0;      // bytes
  uint32_t lg = 0;           // lane group on the current link (hash interleave)
  uint32_t in_link = kNone;  // link it arrived on; kNone at its source
  uint64_t addr = 0;         // global address (GlobalAddress) of its first byte
  uint32_t flow = 0;         // Topology::FlowHash(src, dst, qp): picks the path
  TimePs queued_at;          // when it entered its current port's queue
};

enum class WaitKind : uint8_t { kNone, kMsgWait, kFence, kDone };

struct StreamState {
  uint32_t chip = 0;
  uint32_t stream = 0;  // index within the chip
  uint32_t base = 0;    // global index of instruction 0
  uint32_t size = 0;
  uint32_t pc = 0;
  uint32_t outstanding = 0;  // data-moving instructions not yet complete
  WaitKind wait = WaitKind::kNone;
};

// Per issued queue-pair instruction (indexed by global instruction index).
struct OpState {
  uint32_t stream_slot = 0;
  uint32_t engine = 0;
  uint64_t emitted = 0;     // payload bytes read by the engine so far
  uint64_t arrived = 0;     // payload bytes landed at the destination
  uint32_t match = kNone;   // Send: its Receive; Receive: its Send
  uint32_t send_index = 0;  // Send: position among Sends of its chip pair
  uint32_t data_seq = 0;    // Transfer/Send: order among its qp's data ops
};

struct Engine {
  std::array<std::vector<uint32_t>, kVcBanksPerCdma> vc_queue;
  // Data phase of `current`: packets are read at the engine's rate from
  // (base_time, base_bytes); a stall at a full port moves the base.
  TimePs base_time;
  uint64_t base_bytes = 0;
  uint32_t blocked_port = kNone;  // holding a read packet for this port
  uint32_t last_op = kNone;       // the instruction it started last
  std::array<size_t, kVcBanksPerCdma> vc_head{};
  uint32_t chip = 0;
  uint32_t current = kNone;  // op in its data phase
  TimePs kick_at = TimePs::Max();
  std::vector<TimePs> started;  // data-phase start times (bounded pipelines)
};

// Sends and clear-to-sends between one ordered pair of chips.
struct PairState {
  std::vector<uint32_t> sends;  // Send ops in issue order
  std::vector<uint32_t> cts;    // Receive ops whose clear-to-send arrived
};

class Sim {
 public:
  Sim(const Program& p, const HwConfig& hw, const Topology& topo,
      const ReplayOptions& opt)
      : p_(p), hw_(hw), topo_(topo), opt_(opt) {}

  absl::StatusOr<ReplayResult> Run();

 private:
  const Instr& InstrAt(uint32_t g) const { return *instr_ptr_[g]; }
  uint32_t EngineIndex(uint32_t chip, uint32_t qp) const {
    return chip * hw_.cdma_engines + CdmaOfQp(qp);
  }
  size_t QpSlot(uint32_t chip, uint32_t qp) const {
    return static_cast<size_t>(chip) * hw_.num_qps() + qp;
  }
  // The address the lane-group hash sees for a control packet of
  // instruction `g`: a message by its destination counter, a clear-to-send
  // by the receive buffer, an acknowledgement by the end of the write. It
  // depends on the instruction's fields only, never on its position.
  uint64_t ControlAddr(PacketKind kind, uint32_t g) const {
    const Instr& in = InstrAt(g);
    switch (kind) {
      case PacketKind::kMsg:
        return (uint64_t{in.peer} << 20) | (uint64_t{in.dst_qp} << 8);
      case PacketKind::kCts:
        return in.dst_addr;
      default:
        return in.dst_addr + in.bytes;
    }
  }
  // Records that data op `g` has landed, and delivers the messages on its
  // qp that were waiting for it.
  void DataLanded(uint32_t g, TimePs now);
  uint32_t& Counter(uint32_t chip, uint32_t qp) {
    return counters_[static_cast<size_t>(chip) * hw_.num_qps() + qp];
  }

  void Resume(uint32_t slot, TimePs now);
  void TryStart(uint32_t e, TimePs now);
  // `ready` is when the instruction could have started at the earliest.
  void StartOp(uint32_t e, uint32_t g, TimePs ready, TimePs now);
  void EmitNext(uint32_t e, TimePs now);
  void FinishDataPhase(uint32_t e, TimePs now);
  // Creates a packet at chip `src` and queues it at its first port on
  // `input`. Returns the port.
  uint32_t Inject(PacketKind kind, uint32_t src, uint32_t dst, uint32_t op,
                  uint32_t payload, uint64_t addr, uint32_t input, TimePs now);
  // The qp a packet of instruction `g` travels as.
  uint32_t PacketQp(uint32_t g) const { return InstrAt(g).qp_id; }
  // The first link of the path of flow (src, dst, qp). Packets of one qp
  // between two chips share a flow, hence a path, hence their order.
  uint32_t FirstPort(uint32_t src, uint32_t dst, uint32_t qp) const {
    return topo_.NextLink(src, dst, Topology::FlowHash(src, dst, qp));
  }
  void EnqueueAt(uint32_t port, uint32_t input, uint32_t packet, TimePs now);
  void TryTransmit(uint32_t port, TimePs now);
  uint32_t WireBytes(const Packet& pk) const {
    return pk.payload + hw_.packet_header_bytes;
  }
  // Engine `e` holds a read packet for `port`: may it queue it there?
  bool EngineMayQueue(uint32_t e, uint32_t port, uint64_t addr) {
    const uint32_t lg =
        hw_.interleave_round_robin ? 0 : InterleaveHash(addr, hw_.lane_groups);
    return ports_[port].queue(e % hw_.cdma_engines, lg).size() <
           hw_.cdma_staging_packets;
  }
  // A RemoteMsgSend whose data has landed: counted after the handshake.
  void DeliverMessage(uint32_t op, TimePs now);
  void CountMessage(uint32_t op, TimePs now);
  void Deliver(uint32_t packet, TimePs now);
  void CompleteOp(uint32_t g, TimePs now);
  void AddMessage(uint32_t chip, uint32_t qp, uint32_t op, TimePs now);
  uint32_t NewPacket(const Packet& pk);
  PairState& Pair(uint32_t src, uint32_t dst) {
    return pairs_[(static_cast<uint64_t>(src) << 32) | dst];
  }
  bool SendReady(uint32_t g);
  std::string DescribeStuck();

  const Program& p_;
  const HwConfig& hw_;
  const Topology& topo_;
  const ReplayOptions& opt_;

  EventQueue q_;
  ReplayResult r_;
  absl::Status error_;
  std::vector<const Instr*> instr_ptr_;
  std::vector<OpState> ops_;
  std::vector<StreamState> streams_;
  std::vector<Engine> engines_;
  std::vector<Port> ports_;         // one per directed link
  std::vector<uint32_t> in_index_;  // per link: input number at its dst node
  TimePs flight_;                   // link latency + propagation
  // Write + msg ordering: per (chip, qp), data-moving instructions started
  // and landed, and messages that arrived before their data.
  std::vector<uint32_t> data_started_;
  std::vector<uint32_t> data_landed_;  // landed prefix: all seq < it landed
  std::vector<std::vector<bool>> landed_seq_;
  std::vector<uint32_t> msg_after_;  // per op: data ops on its qp before it
  std::vector<std::vector<uint32_t>> held_msgs_;  // per (chip, qp)
  std::vector<uint32_t> counters_;
  std::vector<uint32_t> last_msg_;  // per counter: the message counted last
  std::vector<std::vector<uint32_t>> waiters_;  // per counter: stream slots
  std::vector<Packet> packets_;
  std::vector<uint32_t> free_packets_;
  absl::flat_hash_map<uint64_t, PairState> pairs_;
};

absl::StatusOr<ReplayResult> Sim::Run() {
  const uint32_t n = p_.num_chips;
  // Flatten instructions; one OpState and one timing record per instruction,
  // allocated up front so the hot path never reallocates them.
  size_t total = 0;
  for (const ChipProgram& c : p_.chips) {
    for (const StreamProgram& s : c.streams) total += s.instrs.size();
  }
  if (total >= kNone) {
    return absl::ResourceExhaustedError(
        absl::StrCat("trace has ", total, " instructions; at most ", kNone - 1,
                     " are supported"));
  }
  instr_ptr_.reserve(total);
  r_.instrs.resize(total);
  ops_.resize(total);
  for (uint32_t c = 0; c < n; ++c) {
    const auto& streams = p_.chips[c].streams;
    for (uint32_t s = 0; s < streams.size(); ++s) {
      StreamState st;
      st.chip = c;
      st.stream = s;
      st.base = static_cast<uint32_t>(instr_ptr_.size());
      st.size = static_cast<uint32_t>(streams[s].instrs.size());
      for (uint32_t i = 0; i < st.size; ++i) {
        InstrTiming& t = r_.instrs[st.base + i];
        t.chip = c;
        t.stream = s;
        t.instr = i;
        t.kind = streams[s].instrs[i].kind;
        instr_ptr_.push_back(&streams[s].instrs[i]);
      }
      streams_.push_back(st);
    }
  }
  engines_.resize(static_cast<size_t>(n) * hw_.cdma_engines);
  for (uint32_t e = 0; e < engines_.size(); ++e) {
    engines_[e].chip = e / hw_.cdma_engines;
  }
  // Inputs of a chip's port: its engines, then the acknowledgement path,
  // then every incoming link (relays). Inputs of a switch port: its
  // incoming links.
  flight_ = hw_.link_latency + hw_.link_propagation;
  std::vector<uint32_t> in_degree(topo_.num_nodes(), 0);
  in_index_.resize(topo_.links().size());
  for (uint32_t l = 0; l < topo_.links().size(); ++l) {
    in_index_[l] = in_degree[topo_.links()[l].dst]++;
  }
  for (uint32_t l = 0; l < topo_.links().size(); ++l) {
    const uint32_t node = topo_.links()[l].src;
    const uint32_t inputs = topo_.IsSwitch(node)
                                ? in_degree[node]
                                : hw_.cdma_engines + 1 + in_degree[node];
    ports_.emplace_back(inputs, hw_.lane_groups,
                        hw_.interleave_round_robin ? 1 : hw_.lane_groups,
                        hw_.link_buffer_bytes);
  }
  data_started_.assign(static_cast<size_t>(n) * hw_.num_qps(), 0);
  data_landed_.assign(data_started_.size(), 0);
  held_msgs_.resize(data_started_.size());
  landed_seq_.resize(data_started_.size());
  msg_after_.assign(total, 0);
  counters_.assign(static_cast<size_t>(n) * hw_.num_qps(), 0);
  waiters_.resize(counters_.size());
  last_msg_.assign(counters_.size(), kNone);
  r_.chip_finish.assign(n, TimePs::Zero());
  r_.bytes_sent.assign(n, 0);
  r_.bytes_received.assign(n, 0);
  r_.bytes_local.assign(n, 0);

  for (uint32_t slot = 0; slot < streams_.size(); ++slot) {
    q_.Push(TimePs::Zero(), kStreamResume, slot);
  }
  TimePs now;
  while (!q_.empty() && error_.ok()) {
    const Event ev = q_.Pop();
    now = TimePs(ev.time_ps);
    if (opt_.max_events != 0 && r_.events >= opt_.max_events) {
      return absl::ResourceExhaustedError(
          absl::StrCat("replay stopped after ", r_.events,
                       " events (--max-events) at ", now.ps(), " ps"));
    }
    r_.events++;
    switch (ev.kind) {
      case kStreamResume:
        Resume(ev.a, now);
        break;
      case kCdmaKick:
        if (engines_[ev.a].kick_at == now)
          engines_[ev.a].kick_at = TimePs::Max();
        TryStart(ev.a, now);
        break;
      case kCdmaEmit:
        EmitNext(ev.a, now);
        break;
      case kLocalDone: {
        const uint32_t g = engines_[ev.a].current;
        const uint32_t chip = engines_[ev.a].chip;
        r_.bytes_local[chip] += InstrAt(g).bytes;
        ops_[g].emitted = ops_[g].arrived = InstrAt(g).bytes;
        r_.instrs[g].landed = now;
        FinishDataPhase(ev.a, now);
        DataLanded(g, now);
        CompleteOp(g, now);
        break;
      }
      case kArrive: {
        const uint32_t node = ev.b;
        const Packet& pk = packets_[ev.a];
        if (topo_.IsSwitch(node)) {
          q_.Push(now + hw_.switch_forwarding, kSwitchForward, ev.a, node);
        } else if (node != pk.dst) {
          // Relayed by the chip's router: it keeps its buffer space until
          // it has been sent on.
          EnqueueAt(topo_.NextLink(node, pk.dst, pk.flow),
                    hw_.cdma_engines + 1 + in_index_[pk.in_link], ev.a, now);
        } else {
          // Written to GMEM at once: the buffer space is free again, and the
          // credit travels back over the link.
          q_.Push(now + flight_, kCreditReturn, pk.in_link, WireBytes(pk));
          Deliver(ev.a, now);
        }
        break;
      }
      case kSwitchForward: {
        const Packet& pk = packets_[ev.a];
        EnqueueAt(topo_.NextLink(ev.b, pk.dst, pk.flow), in_index_[pk.in_link],
                  ev.a, now);
        break;
      }
      case kMsgCount:
        CountMessage(ev.a, now);
        break;
      case kPortKick:
        TryTransmit(ev.a, now);
        break;
      case kCreditReturn:
        ports_[ev.a].ReturnCredit(ev.b);
        TryTransmit(ev.a, now);
        break;
      case kMsgLocal: {
        const Instr& in = InstrAt(ev.a);
        r_.instrs[ev.a].landed = r_.instrs[ev.a].complete = now;
        AddMessage(r_.instrs[ev.a].chip, in.dst_qp, ev.a, now);
        break;
      }
    }
  }
  if (!error_.ok()) return error_;
  r_.drained = now;

  for (const StreamState& st : streams_) {
    if (st.wait != WaitKind::kDone) {
      return absl::FailedPreconditionError(DescribeStuck());
    }
  }
  for (const Engine& e : engines_) {
    for (uint32_t vc = 0; vc < kVcBanksPerCdma; ++vc) {
      if (e.vc_head[vc] < e.vc_queue[vc].size()) {
        return absl::FailedPreconditionError(DescribeStuck());
      }
    }
  }
  r_.makespan = TimePs::Zero();
  for (TimePs t : r_.chip_finish) r_.makespan = Max(r_.makespan, t);
  r_.links.reserve(ports_.size());
  for (const Port& p : ports_) r_.links.push_back(p.stats());
  return std::move(r_);
}

void Sim::Resume(uint32_t slot, TimePs now) {
  StreamState& st = streams_[slot];
  if (st.wait == WaitKind::kDone) return;
  st.wait = WaitKind::kNone;
  while (st.pc < st.size) {
    const uint32_t g = st.base + st.pc;
    const Instr& in = InstrAt(g);
    InstrTiming& t = r_.instrs[g];
    if (t.issue.ps() < 0) t.issue = now;
    switch (in.kind) {
      case OpKind::kMsgWait: {
        uint32_t& c = Counter(st.chip, in.dst_qp);
        if (c < in.count) {
          st.wait = WaitKind::kMsgWait;
          waiters_[static_cast<size_t>(st.chip) * hw_.num_qps() + in.dst_qp]
              .push_back(slot);
          return;
        }
        c -= in.count;
        t.start = t.issue;
        t.end = now;
        if (now > t.issue) t.cause = last_msg_[QpSlot(st.chip, in.dst_qp)];
        break;
      }
      case OpKind::kFence:
        if (st.outstanding > 0) {
          st.wait = WaitKind::kFence;
          return;
        }
        t.start = t.issue;
        t.end = now;
        break;
      default: {
        const uint32_t e = EngineIndex(st.chip, in.qp_id);
        ops_[g].stream_slot = slot;
        ops_[g].engine = e;
        if (MovesData(in.kind)) st.outstanding++;
        if (in.kind == OpKind::kSend) {
          PairState& pair = Pair(st.chip, in.peer);
          ops_[g].send_index = static_cast<uint32_t>(pair.sends.size());
          pair.sends.push_back(g);
        }
        engines_[e].vc_queue[VcOfQp(in.qp_id)].push_back(g);
        TryStart(e, now);
        break;
      }
    }
    st.pc++;
  }
  st.wait = WaitKind::kDone;
  r_.chip_finish[st.chip] = Max(r_.chip_finish[st.chip], now);
}

bool Sim::SendReady(uint32_t g) {
  const Instr& in = InstrAt(g);
  const PairState& pair = Pair(r_.instrs[g].chip, in.peer);
  return pair.cts.size() > ops_[g].send_index;
}

void Sim::TryStart(uint32_t e, TimePs now) {
  Engine& eng = engines_[e];
  while (eng.current == kNone) {
    uint32_t best = kNone;
    uint32_t best_vc = 0;
    TimePs best_ready = TimePs::Max();
    for (uint32_t vc = 0; vc < kVcBanksPerCdma; ++vc) {
      if (eng.vc_head[vc] == eng.vc_queue[vc].size()) continue;
      const uint32_t g = eng.vc_queue[vc][eng.vc_head[vc]];
      const Instr& in = InstrAt(g);
      TimePs ready = r_.instrs[g].issue;
      if (MovesData(in.kind)) {
        // The startup (descriptor fetch, first DDR read, NoC, die-to-die)
        // runs while earlier instructions still move data, up to
        // max_outstanding instructions ahead.
        const uint32_t d = hw_.cdma_max_outstanding;
        if (d != 0 && eng.started.size() >= d) {
          ready = Max(ready, eng.started[eng.started.size() - d]);
        }
        ready = ready + hw_.cdma_startup;
        if (in.kind == OpKind::kSend && !SendReady(g)) continue;
      }
      if (ready < best_ready) {
        best_ready = ready;
        best = g;
        best_vc = vc;
      }
    }
    if (best == kNone) return;  // idle, or Sends waiting for clear-to-send
    if (best_ready > now) {
      if (best_ready < eng.kick_at) {
        eng.kick_at = best_ready;
        q_.Push(best_ready, kCdmaKick, e);
      }
      return;
    }
    eng.vc_head[best_vc]++;
    StartOp(e, best, best_ready, now);
  }
}

void Sim::StartOp(uint32_t e, uint32_t g, TimePs ready, TimePs now) {
  Engine& eng = engines_[e];
  const Instr& in = InstrAt(g);
  InstrTiming& t = r_.instrs[g];
  const uint32_t chip = eng.chip;
  t.start = now;
  if (now > ready) {
    // Held up past its readiness: by a Send's clear-to-send arriving now,
    // or else by the engine finishing the instruction before it.
    const uint32_t recv = in.kind == OpKind::kSend
                              ? Pair(chip, in.peer).cts[ops_[g].send_index]
                              : kNone;
    t.cause =
        recv != kNone && r_.instrs[recv].arrived == now ? recv : eng.last_op;
  }
  eng.last_op = g;
  if (hw_.cdma_max_outstanding != 0 && MovesData(in.kind)) {
    eng.started.push_back(now);
  }
  switch (in.kind) {
    case OpKind::kTransfer:
    case OpKind::kSend:
      if (in.kind == OpKind::kSend) {
        const uint32_t recv = Pair(chip, in.peer).cts[ops_[g].send_index];
        const Instr& rin = InstrAt(recv);
        if (rin.bytes != in.bytes) {
          const InstrTiming& rt = r_.instrs[recv];
          error_ = absl::InvalidArgumentError(
              absl::StrCat(InstrPlace(p_, chip, t.stream, t.instr), " sends ",
                           in.bytes, " bytes but its matching ",
                           InstrPlace(p_, rt.chip, rt.stream, rt.instr),
                           " expects ", rin.bytes));
          return;
        }
        ops_[g].match = recv;
        ops_[recv].match = g;
      }
      eng.current = g;
      eng.base_time = now;
      eng.base_bytes = 0;
      ops_[g].data_seq = data_started_[QpSlot(chip, in.qp_id)]++;
      if (in.kind == OpKind::kTransfer && in.peer == chip) {
        q_.Push(now + SerializationTime(in.bytes, hw_.cdma_bytes_per_s),
                kLocalDone, e);
      } else {
        const uint64_t first =
            std::min<uint64_t>(in.bytes, hw_.packet_payload_bytes);
        q_.Push(now + SerializationTime(first, hw_.cdma_bytes_per_s), kCdmaEmit,
                e);
      }
      return;
    case OpKind::kReceive:
      // The receive is posted: a clear-to-send goes to the sender. The
      // engine is free again at once; the data arrives later.
      Inject(PacketKind::kCts, chip, in.peer, g, hw_.message_payload_bytes,
             ControlAddr(PacketKind::kCts, g), CdmaOfQp(in.qp_id), now);
      t.end = now;
      return;
    case OpKind::kRemoteMsgSend:
      msg_after_[g] = data_started_[QpSlot(chip, in.qp_id)];
      Inject(PacketKind::kMsg, chip, in.peer, g, hw_.message_payload_bytes,
             ControlAddr(PacketKind::kMsg, g), CdmaOfQp(in.qp_id), now);
      t.end = now;
      return;
    case OpKind::kMsgSend:
      t.end = now;
      q_.Push(now + hw_.msg_local_latency, kMsgLocal, g);
      return;
    default:
      return;  // waits never reach an engine
  }
}

void Sim::EmitNext(uint32_t e, TimePs now) {
  Engine& eng = engines_[e];
  const uint32_t g = eng.current;
  const Instr& in = InstrAt(g);
  OpState& op = ops_[g];
  const uint32_t chunk = static_cast<uint32_t>(
      std::min<uint64_t>(in.bytes - op.emitted, hw_.packet_payload_bytes));
  const uint32_t port = FirstPort(eng.chip, in.peer, in.qp_id);
  if (!EngineMayQueue(e, port,
                      GlobalAddress(in.peer, in.dst_addr + op.emitted))) {
    // The port still holds this engine's previous packet: keep the one just
    // read and stop reading until the port takes it (TryTransmit resumes).
    eng.blocked_port = port;
    return;
  }
  Inject(PacketKind::kData, eng.chip, in.peer, g, chunk,
         in.dst_addr + op.emitted, e % hw_.cdma_engines, now);
  op.emitted += chunk;
  if (op.emitted < in.bytes) {
    // Packet k is handed over once the engine has read its payload: at
    // base + (bytes read since base) / rate, with no rounding drift.
    const uint64_t next =
        std::min<uint64_t>(in.bytes - op.emitted, hw_.packet_payload_bytes);
    q_.Push(
        eng.base_time + SerializationTime(op.emitted - eng.base_bytes + next,
                                          hw_.cdma_bytes_per_s),
        kCdmaEmit, e);
    return;
  }
  FinishDataPhase(e, now);
}

void Sim::FinishDataPhase(uint32_t e, TimePs now) {
  Engine& eng = engines_[e];
  r_.instrs[eng.current].end = now;
  eng.current = kNone;
  TryStart(e, now);
}

uint32_t Sim::NewPacket(const Packet& pk) {
  if (!free_packets_.empty()) {
    const uint32_t id = free_packets_.back();
    free_packets_.pop_back();
    packets_[id] = pk;
    return id;
  }
  packets_.push_back(pk);
  return static_cast<uint32_t>(packets_.size() - 1);
}

uint32_t Sim::Inject(PacketKind kind, uint32_t src, uint32_t dst, uint32_t op,
                     uint32_t payload, uint64_t addr, uint32_t input,
                     TimePs now) {
  Packet pk;
  pk.kind = kind;
  pk.src = src;
  pk.dst = dst;
  pk.op = op;
  pk.payload = payload;
  pk.addr = GlobalAddress(dst, addr);
  pk.flow = Topology::FlowHash(src, dst, PacketQp(op));
  const uint32_t id = NewPacket(pk);
  r_.packets++;
  if (kind == PacketKind::kData) r_.bytes_sent[src] += payload;
  const uint32_t port = topo_.NextLink(src, dst, pk.flow);
  EnqueueAt(port, input, id, now);
  return port;
}

void Sim::EnqueueAt(uint32_t port, uint32_t input, uint32_t packet,
                    TimePs now) {
  Packet& pk = packets_[packet];
  pk.queued_at = now;
  if (!hw_.interleave_round_robin) {
    pk.lg = InterleaveHash(pk.addr, hw_.lane_groups);
  }
  ports_[port].Enqueue(input, pk.lg, packet);
  TryTransmit(port, now);
}

void Sim::TryTransmit(uint32_t port, TimePs now) {
  Port& pt = ports_[port];
  const uint32_t lanes = pt.lane_groups();
  const uint32_t inputs = pt.num_inputs();
  bool credit_blocked = false;
  // Each free lane group serves one waiting packet; a lane group frees again
  // when its packet has been serialised (kPortKick). Round-robin
  // interleaving deals packets to the lane groups strictly in turn: the next
  // packet waits for the lane group whose turn it is.
  for (uint32_t k = 0; k < lanes && pt.waiting() > 0; ++k) {
    const uint32_t lg = hw_.interleave_round_robin ? pt.rr_lg : k;
    if (!pt.LgFree(lg, now)) {
      if (hw_.interleave_round_robin) break;
      continue;
    }
    // Arbitrate over the inputs with a packet for this lane group.
    // Round-robin: start after the input served last. FIFO: the packet
    // queued first (ties: the lower input).
    uint32_t chosen = kNone;
    // Visit only the inputs with a packet for this lane group, in cyclic
    // order from `start`.
    const uint32_t start = hw_.switch_fifo ? 0 : pt.rr_input(lg);
    uint32_t last_dist = 0;
    for (uint32_t i = pt.NextWaiting(lg, start); i < inputs;
         i = pt.NextWaiting(lg, (i + 1) % inputs)) {
      const uint32_t dist = (i + inputs - start) % inputs;
      if (dist < last_dist) break;  // wrapped around to the start
      last_dist = dist + 1;
      const std::deque<uint32_t>& q = pt.queue(i, lg);
      const Packet& head = packets_[q.front()];
      if (!pt.HasCredit(WireBytes(head))) {
        credit_blocked = true;
        continue;
      }
      if (hw_.switch_fifo && chosen != kNone &&
          packets_[pt.queue(chosen, lg).front()].queued_at <= head.queued_at) {
        continue;
      }
      chosen = i;
      if (!hw_.switch_fifo) break;
    }
    if (chosen == kNone) continue;
    LinkStats& st = pt.stats();
    if (pt.stalled_since != TimePs::Max()) {
      st.credit_stall += now - pt.stalled_since;
      pt.stalled_since = TimePs::Max();
    }
    const uint32_t id = pt.PopFrom(chosen, lg);
    Packet& pk = packets_[id];
    const uint32_t wire = WireBytes(pk);
    // One lane group carries 1/lanes of the link's bandwidth.
    const TimePs ser = SerializationTime(static_cast<uint64_t>(wire) * lanes,
                                         hw_.link_bytes_per_s);
    const TimePs end = now + ser;
    pt.Occupy(lg, end);
    pt.TakeCredit(wire);
    st.packets++;
    st.wire_bytes += wire;
    st.payload_bytes += pk.payload;
    st.busy += ser;
    st.queued += now - pk.queued_at;
    if (now < st.first_start) st.first_start = now;
    st.last_end = Max(st.last_end, end);
    st.lg_packets[lg]++;
    st.lg_busy[lg] += ser;
    st.lg_last_end[lg] = end;
    if (pk.in_link != kNone) {
      // It leaves the buffer of the previous hop: credit goes back there.
      q_.Push(end + flight_, kCreditReturn, pk.in_link, wire);
    }
    pk.in_link = port;
    q_.Push(end, kPortKick, port);
    q_.Push(end + flight_, kArrive, id, topo_.links()[port].dst);
    if (!hw_.switch_fifo) pt.rr_input(lg) = (chosen + 1) % inputs;
    if (hw_.interleave_round_robin) pt.rr_lg = (lg + 1) % lanes;
    // An engine waiting for room at this port may hand over its packet.
    const uint32_t node = topo_.links()[port].src;
    if (!topo_.IsSwitch(node) && chosen < hw_.cdma_engines) {
      const uint32_t e = node * hw_.cdma_engines + chosen;
      Engine& eng = engines_[e];
      if (eng.blocked_port == port) {
        eng.blocked_port = kNone;
        const Instr& in = InstrAt(eng.current);
        const uint64_t held = std::min<uint64_t>(
            in.bytes - ops_[eng.current].emitted, hw_.packet_payload_bytes);
        eng.base_time = now;
        eng.base_bytes = ops_[eng.current].emitted + held;
        q_.Push(now, kCdmaEmit, e);
      }
    }
  }
  if (credit_blocked && pt.stalled_since == TimePs::Max()) {
    pt.stalled_since = now;
  }
}

void Sim::Deliver(uint32_t packet, TimePs now) {
  const Packet pk = packets_[packet];
  free_packets_.push_back(packet);
  switch (pk.kind) {
    case PacketKind::kData: {
      r_.bytes_received[pk.dst] += pk.payload;
      OpState& op = ops_[pk.op];
      op.arrived += pk.payload;
      if (op.arrived == InstrAt(pk.op).bytes) {
        r_.instrs[pk.op].landed = now;
        if (op.match != kNone) {  // a Send: its Receive is done
          r_.instrs[op.match].landed = now;
          CompleteOp(op.match, now);
        }
        // The destination acknowledges the whole write to the source.
        Inject(PacketKind::kAck, pk.dst, pk.src, pk.op,
               hw_.message_payload_bytes, ControlAddr(PacketKind::kAck, pk.op),
               hw_.cdma_engines, now);
        DataLanded(pk.op, now);
      }
      break;
    }
    case PacketKind::kAck:
      CompleteOp(pk.op, now);
      break;
    case PacketKind::kMsg: {
      // Write + msg: the message counts only once every earlier data
      // instruction on its qp has landed (lane groups may reorder packets).
      const size_t slot = QpSlot(pk.src, InstrAt(pk.op).qp_id);
      r_.instrs[pk.op].arrived = now;
      if (data_landed_[slot] >= msg_after_[pk.op]) {
        DeliverMessage(pk.op, now);
      } else {
        held_msgs_[slot].push_back(pk.op);
      }
      break;
    }
    case PacketKind::kCts: {
      // At the sender (pk.dst) from the receiver (pk.src).
      r_.instrs[pk.op].arrived = now;
      PairState& pair = Pair(pk.dst, pk.src);
      pair.cts.push_back(pk.op);
      const size_t idx = pair.cts.size() - 1;
      if (idx < pair.sends.size()) TryStart(ops_[pair.sends[idx]].engine, now);
      break;
    }
  }
}

void Sim::DeliverMessage(uint32_t op, TimePs now) {
  if (hw_.msg_remote_latency.ps() > 0) {
    q_.Push(now + hw_.msg_remote_latency, kMsgCount, op);
    return;
  }
  CountMessage(op, now);
}

void Sim::CountMessage(uint32_t op, TimePs now) {
  r_.instrs[op].landed = r_.instrs[op].complete = now;
  AddMessage(InstrAt(op).peer, InstrAt(op).dst_qp, op, now);
}

void Sim::DataLanded(uint32_t g, TimePs now) {
  const size_t slot = QpSlot(r_.instrs[g].chip, InstrAt(g).qp_id);
  std::vector<bool>& seen = landed_seq_[slot];
  const uint32_t seq = ops_[g].data_seq;
  if (seen.size() <= seq) seen.resize(seq + 1, false);
  seen[seq] = true;
  uint32_t& prefix = data_landed_[slot];
  while (prefix < seen.size() && seen[prefix]) ++prefix;
  auto& held = held_msgs_[slot];
  size_t kept = 0;
  for (uint32_t m : held) {
    if (prefix >= msg_after_[m]) {
      r_.instrs[m].held_by = g;
      DeliverMessage(m, now);
    } else {
      held[kept++] = m;
    }
  }
  held.resize(kept);
}

void Sim::CompleteOp(uint32_t g, TimePs now) {
  r_.instrs[g].complete = now;
  StreamState& st = streams_[ops_[g].stream_slot];
  st.outstanding--;
  if (st.outstanding == 0 && st.wait == WaitKind::kFence) {
    r_.instrs[st.base + st.pc].cause = g;
    q_.Push(now, kStreamResume, ops_[g].stream_slot);
  }
}

void Sim::AddMessage(uint32_t chip, uint32_t qp, uint32_t op, TimePs now) {
  Counter(chip, qp)++;
  last_msg_[QpSlot(chip, qp)] = op;
  auto& w = waiters_[static_cast<size_t>(chip) * hw_.num_qps() + qp];
  for (uint32_t slot : w) q_.Push(now, kStreamResume, slot);
  w.clear();
}

std::string Sim::DescribeStuck() {
  std::vector<std::string> lines;
  for (const StreamState& st : streams_) {
    if (st.wait == WaitKind::kDone) continue;
    const uint32_t g = st.base + st.pc;
    const Instr& in = InstrAt(g);
    std::string what;
    if (st.wait == WaitKind::kMsgWait) {
      what = absl::StrCat("waits for ", in.count, " message(s) on qp ",
                          in.dst_qp, ", has ", Counter(st.chip, in.dst_qp));
    } else {
      what = absl::StrCat("waits for ", st.outstanding,
                          " earlier data-moving instruction(s) to complete");
    }
    lines.push_back(
        absl::StrCat(InstrPlace(p_, st.chip, st.stream, st.pc), ": ", what));
  }
  for (const Engine& eng : engines_) {
    for (uint32_t vc = 0; vc < kVcBanksPerCdma; ++vc) {
      if (eng.vc_head[vc] == eng.vc_queue[vc].size()) continue;
      const uint32_t g = eng.vc_queue[vc][eng.vc_head[vc]];
      const InstrTiming& t = r_.instrs[g];
      const Instr& in = InstrAt(g);
      lines.push_back(absl::StrCat(
          InstrPlace(p_, t.chip, t.stream, t.instr), ": queued on qp ",
          in.qp_id,
          in.kind == OpKind::kSend
              ? absl::StrCat(", waits for a matching Receive on chip ", in.peer)
              : std::string(", behind a blocked instruction")));
    }
  }
  // Packets that wait for credit with none left to come back: the receive
  // buffers along a cycle of links are full of packets that wait for each
  // other (a routing deadlock of credit-based flow control).
  std::vector<std::string> ports;
  for (uint32_t l = 0; l < ports_.size(); ++l) {
    if (ports_[l].waiting() == 0) continue;
    ports.push_back(absl::StrCat(topo_.LinkName(l), " (", ports_[l].waiting(),
                                 " packets waiting)"));
  }
  constexpr size_t kMaxLines = 16;
  const size_t more = lines.size() > kMaxLines ? lines.size() - kMaxLines : 0;
  if (more) lines.resize(kMaxLines);
  std::string msg;
  if (!ports.empty()) {
    const size_t more_ports =
        ports.size() > kMaxLines ? ports.size() - kMaxLines : 0;
    if (more_ports) ports.resize(kMaxLines);
    msg = absl::StrCat(
        "network deadlock: packets wait for receive-buffer credit that can "
        "never return (a cycle of full link buffers; raise link.buffer_bytes "
        "or choose another topology/algorithm) at ",
        ports.size() + more_ports, " link(s):\n  ",
        absl::StrJoin(ports, "\n  "),
        more_ports ? absl::StrCat("\n  ... and ", more_ports, " more") : "",
        "\nand so ");
  }
  absl::StrAppend(&msg, "deadlock: no event left but ", lines.size() + more,
                  " stream(s) or queue(s) cannot finish:\n  ",
                  absl::StrJoin(lines, "\n  "));
  if (more) absl::StrAppend(&msg, "\n  ... and ", more, " more");
  return msg;
}

}  // namespace

absl::StatusOr<ReplayResult> Replay(const Program& program, const HwConfig& hw,
                                    const Topology& topology,
                                    const ReplayOptions& options) {
  if (topology.num_chips() != program.num_chips) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology has ", topology.num_chips(),
                     " chips but the trace has ", program.num_chips));
  }
  Sim sim(program, hw, topology, options);
  return sim.Run();
}

}  // namespace ccreplay
