#include "hw/budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/checked.h"
#include "hw/cdma.h"
#include "hw/network.h"
#include "hw/port.h"

namespace ccreplay {
namespace {

using u128 = unsigned __int128;

// A std::deque allocates an 8-pointer map and one 512-byte node as soon as it
// is constructed, empty or not (libstdc++); the switches' input FIFOs are
// deques (the ports' queues are Port::Queue, threaded through the packets).
constexpr uint64_t kDequeBytes =
    sizeof(std::deque<uint32_t>) + 8 * sizeof(void*) + 512;
// The replay's state per instruction: its result, InstrTiming
// (replay/engine.h, above this layer: chip and stream, 6 times, 2 causes;
// tests/budget_test.cc keeps this in step), and its entries in a CDMA queue
// and in the write + msg table (replay/stream_core.h, msg_after_). (The
// engine state of a write, OpState in replay/stream_core.h, lives only
// while the write is in flight, like the packets.)
constexpr uint64_t kInstrTimingBytes = kInstrTimingEstimateBytes;
constexpr uint64_t kEngineBytesPerInstr =
    kInstrTimingBytes + 2 * sizeof(uint32_t);
// The message unit's state per (chip, counter): hw/message.h's per-slot
// vectors.
constexpr uint64_t kMessageSlotBytes = 4 * sizeof(uint32_t) +
                                       sizeof(std::vector<bool>) +
                                       2 * sizeof(std::vector<uint32_t>);
// Events per packet at its source (kCdmaEmit, kCdmaKick) and, at most, on
// each hop (kPortKick; kArrive or kSwitchForward; kIngressHead; kCreditKick,
// which serves every credit due at its time); per instruction
// (kStreamResume, kLocalDone, kMsgLocal, kMsgCount).
constexpr uint64_t kEventsPerPacket = 2;
constexpr uint64_t kEventsPerHop = 4;
constexpr uint64_t kEventsPerInstr = 4;
// The picosecond clock is int64; half its range leaves room for sums of
// two times (an event's time plus a latency) without wrapping.
constexpr u128 kMaxPs = u128{1} << 62;

u128 Ceil(u128 num, u128 den) {
  // Most operands fit 64 bits: the 128-bit division is a library call.
  if ((num | den) <= ~uint64_t{0}) {
    const uint64_t n = static_cast<uint64_t>(num);
    const uint64_t d = static_cast<uint64_t>(den);
    return n / d + (n % d != 0);
  }
  return (num + den - 1) / den;
}

u128 SatMul(u128 a, u128 b) {
  return a != 0 && b > ~u128{0} / a ? ~u128{0} : a * b;
}
u128 SatAdd(u128 a, u128 b) { return b > ~u128{0} - a ? ~u128{0} : a + b; }

uint64_t Saturate(u128 v) {
  return v > ~uint64_t{0} ? ~uint64_t{0} : static_cast<uint64_t>(v);
}

// The most a packet of `wire_bytes` takes on one hop: serialised on one lane
// group (link rate / lane groups), the longer of a chip's and a switch
// output's flight, and a switch's forwarding.
u128 HopPs(const HwConfig& hw, uint64_t wire_bytes) {
  const u128 serial = Ceil(u128{wire_bytes} * hw.lane_groups * kPsPerSecond,
                           hw.link_bytes_per_s);
  const int64_t chip = hw.link_latency.ps() + hw.link_propagation.ps();
  const int64_t sw =
      hw.switch_port_latency.ps() + hw.switch_port_propagation.ps();
  return serial + static_cast<u128>(std::max(chip, sw)) +
         static_cast<u128>(hw.switch_forwarding.ps());
}

// One instruction's share of the estimate.
struct InstrCost {
  u128 events = kEventsPerInstr;
  u128 ps = 0;
};

// The per-instruction costs on one hardware, with what does not depend on
// the instruction worked out once.
class CostModel {
 public:
  explicit CostModel(const HwConfig& hw)
      : hw_(hw),
        hop_ctl_(HopPs(hw, hw.packet_header_bytes)),
        hop_data_(HopPs(
            hw, uint64_t{hw.packet_payload_bytes} + hw.packet_header_bytes)) {}

  // `out` hops from the instruction's chip to its peer, `back` hops back.
  InstrCost Of(const Instr& in, uint32_t chip, uint32_t out,
               uint32_t back) const {
    InstrCost c;
    auto control = [&](uint32_t hops) {  // one control packet
      c.events += kEventsPerPacket + kEventsPerHop * hops;
      c.ps += hop_ctl_ * hops;
    };
    switch (in.kind) {
      case OpKind::kTransfer:
      case OpKind::kSend: {
        c.ps += static_cast<u128>(hw_.cdma_startup.ps());
        if (hw_.cdma_bytes_per_s != 0) {
          c.ps += Ceil(u128{in.bytes} * kPsPerSecond, hw_.cdma_bytes_per_s);
        }
        if (in.kind == OpKind::kTransfer && in.peer == chip) break;  // local
        const u128 packets = Ceil(in.bytes, hw_.packet_payload_bytes);
        c.events += packets * (kEventsPerPacket + kEventsPerHop * out);
        c.ps = SatAdd(c.ps, SatMul(packets, SatMul(out, hop_data_)));
        control(back);  // the acknowledgement
        break;
      }
      case OpKind::kReceive:
        control(out);  // the clear-to-send
        break;
      case OpKind::kRemoteMsgSend:
        c.ps += static_cast<u128>(hw_.msg_remote_latency.ps());
        control(out);
        break;
      case OpKind::kMsgSend:
        c.ps += static_cast<u128>(hw_.msg_local_latency.ps());
        break;
      case OpKind::kMsgWait:
      case OpKind::kFence:
        break;
    }
    return c;
  }

  // Of() over the routes of `topo`.
  InstrCost On(const Instr& in, uint32_t chip, const Topology& topo) const {
    if (in.peer == chip || in.kind == OpKind::kMsgWait ||
        in.kind == OpKind::kFence || in.kind == OpKind::kMsgSend) {
      return Of(in, chip, 0, 0);
    }
    return Of(in, chip, topo.Hops(chip, in.peer), topo.Hops(in.peer, chip));
  }

 private:
  const HwConfig& hw_;
  const u128 hop_ctl_;   // HopPs of a control packet
  const u128 hop_data_;  // HopPs of a full data packet
};

std::string Sci(u128 v) {
  return absl::StrFormat("%.3g", static_cast<double>(v));
}

// "" or why `in` alone passes the clock's range.
std::string TooLong(const Instr& in, const HwConfig& hw, u128 ps) {
  if (ps < kMaxPs) return "";
  return absl::StrCat(
      in.bytes, " bytes take about ", Sci(ps),
      " ps on this hardware (cdma.bandwidth_bytes_per_s ", hw.cdma_bytes_per_s,
      ", link.bandwidth_bytes_per_s ", hw.link_bytes_per_s,
      "), past the range of the picosecond clock (2^62 ps, about 53 days)");
}

// Bytes of the ports, links and per-chip units a Network, CdmaUnit and
// MessageUnit of `hw` on `topo` allocate; *busiest is set to the port with
// the most queues.
u128 HardwareBytes(const HwConfig& hw, const Topology& topo, uint32_t* busiest,
                   u128* busiest_queues) {
  const uint64_t vcs = VirtualChannels(hw, topo);
  const uint64_t lg_queues =
      hw.interleave == InterleaveKind::kRoundRobin ? 1 : hw.lane_groups;
  const uint64_t rows = lg_queues * vcs;
  std::vector<uint64_t> in_degree(topo.num_nodes(), 0);
  for (const DirectedLink& l : topo.links()) ++in_degree[l.dst];
  u128 bytes = 0;
  *busiest_queues = 0;
  for (uint32_t l = 0; l < topo.links().size(); ++l) {
    const uint32_t node = topo.links()[l].src;
    const u128 inputs = topo.IsSwitch(node)
                            ? in_degree[node]
                            : u128{hw.cdma_engines} + 1 + in_degree[node];
    const u128 queues = inputs * rows;
    if (queues > *busiest_queues) *busiest_queues = queues, *busiest = l;
    bytes +=
        sizeof(Port) + queues * sizeof(Port::Queue) +
        rows * ((inputs + 63) / 64) * sizeof(uint64_t) +
        u128{hw.lane_groups} * (4 * sizeof(TimePs) + 2 * sizeof(uint64_t)) +
        vcs * sizeof(int64_t) + sizeof(LinkStats) + sizeof(TimePs) +
        sizeof(uint32_t);
    if (hw.switch_input_fifo) bytes += rows * kDequeBytes;
  }
  const u128 chips = topo.num_chips();
  bytes += chips * hw.cdma_engines * sizeof(CdmaEngine);
  bytes += chips * Network::kFlowMemoBytes;
  bytes += chips * hw.num_qps() * kMessageSlotBytes;
  return bytes;
}

}  // namespace

uint64_t MachineMemoryBytes() {
  FILE* f = std::fopen("/proc/meminfo", "re");
  if (f == nullptr) return 0;
  unsigned long long kb = 0;
  char line[256];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "MemTotal: %llu kB", &kb) == 1) break;
  }
  std::fclose(f);
  return Saturate(u128{kb} * 1024);
}

uint64_t AddressSpaceLimitBytes() {
  struct rlimit r;
  if (::getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<uint64_t>(r.rlim_cur);
}

uint64_t ResourceBudget::MemoryLimit() const {
  if (max_memory_bytes != 0) return max_memory_bytes;
  uint64_t limit = ~uint64_t{0};
  for (uint64_t v : {MachineMemoryBytes(), AddressSpaceLimitBytes()}) {
    if (v != 0) limit = std::min(limit, v);
  }
  return limit;
}

uint64_t ResourceBudget::EventLimit() const {
  return max_events != 0 ? max_events : kDefaultMaxEvents;
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 6) v /= 1000, ++u;
  return u == 0 ? absl::StrCat(bytes, " bytes")
                : absl::StrFormat("%.3g %s", v, units[u]);
}

namespace {

// The per-instruction costs summed, and the first instruction whose own
// time passes the clock's range (its message; "" if none).
struct Totals {
  u128 events = 0, ps = 0, instrs = 0;
  std::string too_long;
};

// Per kind of instruction, the last shape of a stream that was costed, its
// cost and how many instructions of that kind in a row since had it.
// Within a stream (one chip) an instruction's cost depends on its kind, peer
// and size alone (CostModel::On), and a collective's stream repeats a few
// shapes (a ring step's write, message and wait), so most instructions are
// counted by one comparison instead of two route lookups and the
// arithmetic, and a shape's instructions are added to the totals at once:
// the sums saturate, so their order does not matter.
class StreamCostMemo {
 public:
  // Counts the instruction packed in `p` and returns true if it has the
  // last shape of its kind, found from its words alone (no Read).
  bool CountRepeat(const InstrList& list, const InstrList::Packed& p) {
    if (InstrList::Escaped(p)) return false;
    Entry& e = last_[static_cast<size_t>(list.Kind(p))];
    if (e.count == 0 || !e.keyed || !(e.key == InstrList::CostKeyOf(p))) {
      return false;
    }
    ++e.count;
    return true;
  }
  // Counts instruction `in` (of `chip`), packed in `p`; a new shape is
  // costed, and returns its cost (else nullptr: the cost of the same shape
  // before, already checked).
  const InstrCost* Count(const CostModel& model, const Instr& in,
                         const InstrList::Packed& p, uint32_t chip,
                         const Topology& topology, Totals& t) {
    Entry& e = last_[static_cast<size_t>(in.kind)];
    if (e.count != 0 && e.peer == in.peer && e.bytes == in.bytes) {
      ++e.count;
      return nullptr;
    }
    AddTo(e, t);
    e.peer = in.peer;
    e.bytes = in.bytes;
    e.keyed = !InstrList::Escaped(p);
    if (e.keyed) e.key = InstrList::CostKeyOf(p);
    e.cost = model.On(in, chip, topology);
    e.count = 1;
    return &e.cost;
  }
  // Adds every count not yet added to `t`.
  void Flush(Totals& t) {
    for (Entry& e : last_) AddTo(e, t);
  }

 private:
  struct Entry {
    uint32_t peer = 0;
    uint64_t bytes = 0;
    bool keyed = false;       // its shape's instructions are packed whole
    InstrList::CostKey key;   // their key, if so
    InstrCost cost;
    uint64_t count = 0;  // of its shape, not yet added to the totals
  };
  static void AddTo(Entry& e, Totals& t) {
    if (e.count == 0) return;
    t.events = SatAdd(t.events, SatMul(e.cost.events, e.count));
    t.ps = SatAdd(t.ps, SatMul(e.cost.ps, e.count));
    t.instrs += e.count;
    e.count = 0;
  }
  std::array<Entry, static_cast<size_t>(OpKind::kFence) + 1> last_;
};

Totals SumCosts(const Program& program, const HwConfig& hw,
                const Topology& topology) {
  Totals t;
  const CostModel model(hw);
  for (uint32_t c = 0; c < program.chips.size(); ++c) {
    const ChipProgram& chip = program.chips[c];
    for (uint32_t s = 0; s < chip.streams.size(); ++s) {
      const InstrList& list = chip.streams[s].instrs;
      const InstrList::Layout layout = list.layout();
      StreamCostMemo memo;
      for (uint32_t i = 0; i < list.size(); ++i) {
        const InstrList::Packed& p = *layout.At(i);
        if (memo.CountRepeat(list, p)) continue;
        const Instr in = list.Read(p);
        const InstrCost* cost = memo.Count(model, in, p, c, topology, t);
        // Only a new shape can be the first too long: a repeated one had
        // its cost checked at its first instruction.
        if (cost != nullptr && cost->ps >= kMaxPs && t.too_long.empty()) {
          t.too_long = absl::StrCat(InstrPlace(program, c, s, i), ": ",
                                    TooLong(in, hw, cost->ps));
        }
      }
      memo.Flush(t);
    }
  }
  return t;
}

}  // namespace

ReplayEstimate EstimateReplay(const Program& program, const HwConfig& hw,
                              const Topology& topology) {
  const Totals t = SumCosts(program, hw, topology);
  uint32_t busiest = 0;
  u128 queues = 0;
  ReplayEstimate e;
  e.memory_bytes = Saturate(HardwareBytes(hw, topology, &busiest, &queues) +
                            t.instrs * kEngineBytesPerInstr);
  e.events = Saturate(t.events);
  e.serial_ps = Saturate(t.ps);
  return e;
}

std::string InstrTimeProblem(const Instr& in, uint32_t chip,
                             const HwConfig& hw) {
  return TooLong(in, hw, CostModel(hw).Of(in, chip, 1, 1).ps);
}

absl::Status CheckReplayBudget(const Program& program, const HwConfig& hw,
                               const Topology& topology,
                               const ResourceBudget& budget) {
  // Each instruction alone first, so the message names the one that cannot
  // be timed; then the totals.
  const Totals t = SumCosts(program, hw, topology);
  if (!t.too_long.empty()) return absl::ResourceExhaustedError(t.too_long);
  const u128 events = t.events, ps = t.ps, instrs = t.instrs;
  if (ps >= kMaxPs) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the trace's ", Saturate(instrs), " instructions take up to ", Sci(ps),
        " ps run one after another on this hardware, past the range "
        "of the picosecond clock (2^62 ps, about 53 days)"));
  }
  if (events > budget.EventLimit()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "replay needs up to ", Sci(events), " events (", Saturate(instrs),
        " instructions, their packets of at most ", hw.packet_payload_bytes,
        " bytes on every hop of their routes), more than the budget of ",
        Sci(budget.EventLimit()), " (--max-events raises it)"));
  }
  uint32_t busiest = 0;
  u128 queues = 0;
  const u128 hw_bytes = HardwareBytes(hw, topology, &busiest, &queues);
  const u128 bytes = hw_bytes + instrs * kEngineBytesPerInstr;
  if (bytes > budget.MemoryLimit()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "replay needs about ", HumanBytes(Saturate(bytes)), " of memory (",
        HumanBytes(Saturate(hw_bytes)), " for ", topology.links().size(),
        " ports and ", hw.cdma_engines, " engines per chip, the busiest port ",
        topology.LinkName(busiest), " with ", Saturate(queues), " queues; ",
        HumanBytes(Saturate(instrs * kEngineBytesPerInstr)), " for ",
        Saturate(instrs), " instructions), more than the budget of ",
        HumanBytes(budget.MemoryLimit()), " (",
        budget.max_memory_bytes == 0
            ? "the machine's memory or the address-space limit; "
            : "",
        "--max-memory raises it)"));
  }
  return absl::OkStatus();
}

}  // namespace ccreplay
