#include "replay/engine.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/event_queue.h"
#include "hw/cdma.h"
#include "hw/events.h"
#include "hw/message.h"
#include "hw/network.h"
#include "hw/packet.h"
#include "replay/stream_core.h"

namespace ccreplay {
namespace {

// The packet engine: the shared instruction semantics (replay/stream_core.h)
// over the hardware blocks of hw/ -- CDMA engines that read packets, the
// network of ports, links and switches -- which own their state and react to
// their own events.
class Sim : public StreamCore, private AckSink {
 public:
  Sim(const Program& p, const HwConfig& hw, const Topology& topo,
      const ReplayOptions& opt)
      : StreamCore(p, hw, topo, opt, "replay", /*breakdown=*/true),
        net_(hw, topo, q_) {
    cdma_.Connect(&net_);
    net_.Connect(&cdma_);
    net_.coalescer().Enable(opt.coalesce, hw.packet_payload_bytes, &r_.events);
    net_.SetRecorder(opt.net_recorder);
    net_.EnableEarlyCredit(opt.coalesce);
    // Only where no timing records are kept: in a replay that keeps them
    // (a pairwise AllToAll) folding measured no gain, possibly a loss
    // (docs/hardware-model.md, "Coalescing").
    if (opt.coalesce && opt.net_recorder == nullptr && !opt.keep_records) {
      net_.SetAckSink(this);
    }
  }

 private:
  void Dispatch(const Event& ev, TimePs now) override;
  void Prefetch(uint32_t kind, uint32_t a, uint32_t b) const override {
    switch (kind) {
      case kArrive:
      case kSwitchForward:
      case kIngressHead:
        net_.PrefetchPacket(a);
        break;
      case kPortKick:
        // And the packet it will likely send (Network::KickAt).
        net_.PrefetchPort(a);
        if (b != kNone) net_.PrefetchPacket(b);
        break;
      case kCreditKick:
        net_.PrefetchPort(a);
        break;
      default:
        break;
    }
  }
  void StartData(uint32_t e, uint32_t g, const Instr& in, uint32_t state,
                 TimePs now) override {
    if (in.peer != ChipOf(g)) net_.coalescer().ExpectData(state, in.bytes);
    ops_[state].remaining = in.bytes;
    cdma_.BeginData(e, g, in.peer, in.qp_id, in.dst_addr, in.bytes, now,
                    state);
  }
  void SendControl(PacketKind kind, uint32_t g, const Instr& in,
                   TimePs now) override;
  absl::Status FinishTransport() override;
  TimePs DrainFolded(TimePs now) override {
    return Max(Max(now, net_.last_credit()), acks_until_);
  }
  // An acknowledgement's arrival at its write's source completes the write
  // (CompleteOp): it stamps the completion, lowers the stream's count of
  // writes in flight and frees the write's state. Only a Fence after the
  // write reads that count; with none, nothing reads any of it before the
  // end, so it is applied when the acknowledgement starts its last hop,
  // with the arrival's time, and the arrival gets no event
  // (docs/hardware-model.md, "Coalescing").
  bool FoldAck(uint32_t g, TimePs at) override {
    if (FenceAfter(g)) return false;
    ++r_.events;  // the per-packet simulation's count
    ++acks_folded_;
    acks_until_ = Max(acks_until_, at);
    CompleteFoldedAck(g, at);
    return true;
  }
  std::string NetworkStuck() const override;

  void Deliver(uint32_t packet, TimePs now);

  Network net_;
  uint64_t acks_folded_ = 0;
  TimePs acks_until_;  // the latest folded acknowledgement's arrival
};

void Sim::Dispatch(const Event& ev, TimePs now) {
  switch (ev.kind) {
    case kCdmaEmit:
      if (cdma_.OnEmit(ev.a, now)) FinishDataPhase(ev.a, now);
      break;
    case kArrive:
      if (net_.OnArrive(ev.a, ev.b, now)) Deliver(ev.a, now);
      break;
    case kSwitchForward:
      net_.OnSwitchForward(ev.a, ev.b, now);
      break;
    case kIngressHead:
      net_.OnIngressHead(ev.a, now);
      break;
    case kPortKick:
      net_.OnPortKick(ev.a, now);
      break;
    case kCreditKick:
      // One that serves nothing is not an event of the model (OnCreditKick).
      if (!net_.OnCreditKick(ev.a, now)) --r_.events;
      break;
    default:
      DispatchStream(ev, now);
      break;
  }
}

void Sim::SendControl(PacketKind kind, uint32_t g, const Instr& in,
                      TimePs now) {
  if (kind == PacketKind::kAck) {
    // From the write's destination, on the acknowledgement path.
    net_.Inject(kind, in.peer, ChipOf(g), g, in.qp_id,
                hw_.message_payload_bytes, ControlAddr(kind, in),
                hw_.cdma_engines, now);
    return;
  }
  net_.Inject(kind, ChipOf(g), in.peer, g, in.qp_id, hw_.message_payload_bytes,
              ControlAddr(kind, in), CdmaOfQp(in.qp_id), now);
}

absl::Status Sim::FinishTransport() {
  // Every stream done, but packets still wait for credit: the data of a
  // trace that ends without a Fence never lands.
  for (uint32_t l = 0; l < net_.num_ports(); ++l) {
    if (net_.waiting(l) != 0) {
      return absl::FailedPreconditionError(DescribeStuck());
    }
  }
  r_.links = net_.Stats();
  // r_.events counts the folded events already (ArrivalCoalescer::Enable,
  // FoldAck).
  r_.coalesced_events = net_.coalescer().folded() + acks_folded_;
  r_.credits_counted_early = net_.credits_counted_early();
  r_.credits_kept = net_.credits_kept();
  r_.packets = net_.packets_injected();
  r_.bytes_sent = net_.bytes_sent();
  return absl::OkStatus();
}

void Sim::Deliver(uint32_t packet, TimePs now) {
  const Packet pk = net_.packet(packet);
  net_.Free(packet);
  switch (pk.kind) {
    case PacketKind::kData: {
      // With the payload of the write's packets whose arrivals coalescing
      // folded (hw/coalesce.h): the count completes at the same arrival.
      const uint64_t bytes = pk.payload + net_.coalescer().TakeFolded(pk.state);
      r_.bytes_received[pk.dst] += bytes;
      // Counted in the write's own state (the packet names its slot): the
      // instruction's records are read once, when it has landed.
      OpState& op = ops_[pk.state];
      op.remaining -= bytes;
      if (op.remaining == 0) WriteLanded(pk.op, now);
      break;
    }
    case PacketKind::kAck:
      CompleteOp(pk.op, now);
      break;
    case PacketKind::kMsg:
      MessageArrived(pk.op, now);
      break;
    case PacketKind::kCts:
      CtsArrived(pk.op, now);
      break;
  }
}

// Packets that wait for credit with none left to come back: the receive
// buffers along a cycle of links are full of packets that wait for each
// other (a routing deadlock of credit-based flow control).
std::string Sim::NetworkStuck() const {
  std::vector<std::string> ports;
  for (uint32_t l = 0; l < net_.num_ports(); ++l) {
    if (net_.waiting(l) == 0) continue;
    ports.push_back(absl::StrCat(topo_.LinkName(l), " (", net_.waiting(l),
                                 " packets waiting)"));
  }
  if (ports.empty()) return "";
  constexpr size_t kMaxLines = 16;
  const size_t more_ports =
      ports.size() > kMaxLines ? ports.size() - kMaxLines : 0;
  if (more_ports) ports.resize(kMaxLines);
  return absl::StrCat(
      "network deadlock: packets wait for receive-buffer credit that can "
      "never return (a cycle of full link buffers; ",
      VirtualChannels(hw_, topo_) < topo_.DatelineClasses()
          ? absl::StrCat("set link.virtual_channels to ",
                         topo_.DatelineClasses(), ", which these routes need, ")
          : std::string(),
      "raise link.buffer_bytes or choose another topology/algorithm) at ",
      ports.size() + more_ports, " link(s):\n  ", absl::StrJoin(ports, "\n  "),
      more_ports ? absl::StrCat("\n  ... and ", more_ports, " more") : "");
}

}  // namespace

bool PreferLeanReplay(const Program& program) {
  uint64_t instrs = 0;
  uint64_t in_flight = 0;
  for (const ChipProgram& c : program.chips) {
    for (const StreamProgram& s : c.streams) {
      instrs += s.instrs.size();
      in_flight += 2 * uint64_t{s.instrs.shape().longest_queue_run};
    }
  }
  return 4 * in_flight < instrs;
}

absl::StatusOr<ReplayResult> Replay(const Program& program, const HwConfig& hw,
                                    const Topology& topology,
                                    const ReplayOptions& options) {
  if (topology.num_chips() != program.num_chips) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology has ", topology.num_chips(),
                     " chips but the trace has ", program.num_chips));
  }
  // One channel is allowed (a network without channels, which may
  // deadlock); more must be enough to break every cycle, and "as many as
  // the routes need" (0) must fit the hardware's limit.
  const uint32_t need = topology.DatelineClasses();
  const bool too_few = hw.link_vcs > 1 && need > hw.link_vcs;
  const bool too_many = hw.link_vcs == 0 && need > kMaxVirtualChannels;
  if (too_few || too_many) {
    return absl::InvalidArgumentError(absl::StrCat(
        "link.virtual_channels: ",
        hw.link_vcs == 0 ? std::string("0 (as many as the routes need)")
                         : absl::StrCat(hw.link_vcs, " channels"),
        ", but the routes of ",
        TopologySpecString(topology.kind(), topology.params()), " over ",
        topology.num_chips(), " chips cross up to ", need - 1,
        " datelines and need ", need, " (at most ", kMaxVirtualChannels,
        "; docs/hardware-model.md, \"Virtual channels\")"));
  }
  Sim sim(program, hw, topology, options);
  return sim.Run();
}

}  // namespace ccreplay
