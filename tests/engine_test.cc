// Replay engine timings, derived by hand from the hardware parameters.
#include "replay/engine.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/network.h"
#include "hw/port.h"
#include "hw/topology.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

// TPS186 parameters with one CDMA engine and one lane group, so that every
// instruction's timing can be followed packet by packet.
HwConfig OneEngineTps186() {
  HwConfig hw = DefaultTps186();
  hw.cdma_engines = 1;
  hw.lane_groups = 1;
  return hw;
}

// The instruction builders of trace/program.h, with no addresses.
Instr Transfer(uint32_t qp, uint32_t dst, uint64_t bytes) {
  return TransferInstr(qp, dst, 0, 0, bytes, false);
}
Instr RemoteMsg(uint32_t qp, uint32_t dst, uint32_t dst_qp) {
  return RemoteMsgSendInstr(qp, dst, dst_qp);
}
Instr LocalMsg(uint32_t qp, uint32_t dst_qp) {
  return MsgSendInstr(qp, dst_qp);
}
Instr MsgWait(uint32_t qp, uint32_t count) { return MsgWaitInstr(qp, count); }
Instr Fence() { return FenceInstr(); }
Instr SendTo(uint32_t qp, uint32_t dst, uint64_t bytes) {
  return SendInstr(qp, dst, 0, bytes);
}
Instr ReceiveFrom(uint32_t qp, uint32_t src, uint64_t bytes) {
  return ReceiveInstr(qp, src, 0, bytes);
}

// One stream per chip, stream id 0.
Program OneStreamPerChip(std::vector<std::vector<Instr>> per_chip) {
  Program p;
  p.num_chips = static_cast<uint32_t>(per_chip.size());
  for (auto& instrs : per_chip) {
    ChipProgram c;
    if (!instrs.empty()) c.streams.push_back(StreamProgram{0, instrs});
    p.chips.push_back(std::move(c));
  }
  return p;
}

ReplayResult MustReplay(const Program& p, const HwConfig& hw,
                        TopologyKind kind) {
  auto topo = Topology::Build(kind, p.num_chips);
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto r = Replay(p, hw, *topo);
  EXPECT_TRUE(r.ok()) << r.status();
  return *std::move(r);
}

// Wire time of `bytes` at the 400 GB/s link: 2.5 ps per byte.
int64_t LinkPs(int64_t bytes) { return bytes * 5 / 2; }
// Engine read time of `bytes` at 64 GB/s: 15.625 ps per byte.
int64_t CdmaPs(int64_t bytes) { return bytes * 15625 / 1000; }

TEST(EngineTest, TransferBetweenNeighboursFollowsPacketByPacket) {
  const HwConfig hw = OneEngineTps186();
  // 1000 bytes = 3 full packets of 288 + a tail of 136.
  const Program p = OneStreamPerChip({{Transfer(0, 1, 1000)}, {}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kRing);

  const int64_t startup = 290000;         // cdma.startup_latency_ps
  const int64_t flight = 200000 + 25000;  // link latency + propagation
  const int64_t data_start = startup;
  // The engine hands packet k over once it has read its payload; the link is
  // faster than one engine (400 vs 64 GB/s), so every packet finds it idle.
  const int64_t last_read = data_start + CdmaPs(1000);  // 305625
  const int64_t last_tx_end = last_read + LinkPs(136 + 32);
  const int64_t landed = last_tx_end + flight;
  // The acknowledgement: a 4-byte message word plus a 32-byte header.
  const int64_t acked = landed + LinkPs(4 + 32) + flight;

  const InstrTiming& t = r.instrs[0];
  EXPECT_EQ(t.issue.ps(), 0);
  EXPECT_EQ(t.start.ps(), data_start);
  EXPECT_EQ(t.end.ps(), last_read);
  EXPECT_EQ(t.landed.ps(), landed);
  EXPECT_EQ(landed, 531045);
  EXPECT_EQ(t.complete.ps(), acked);
  EXPECT_EQ(r.bytes_sent[0], 1000u);
  EXPECT_EQ(r.bytes_received[1], 1000u);
  EXPECT_EQ(r.packets, 4u + 1u);  // 4 data packets + 1 acknowledgement
  EXPECT_EQ(r.links[0].wire_bytes, 1000u + 4 * 32);
  // Each packet found the port idle and was sent at once, without waiting
  // in its queue (Network::EnqueueAt): the link's counters are those of a
  // packet queued and served in the same picosecond, one waiting at most.
  EXPECT_EQ(r.links[0].packets, 4u);
  EXPECT_EQ(r.links[0].peak_depth, 1u);
  EXPECT_EQ(r.links[0].queued.ps(), 0);
  EXPECT_EQ(r.links[0].busy.ps(), 3 * LinkPs(288 + 32) + LinkPs(136 + 32));
  EXPECT_EQ(r.links[0].last_end.ps(), last_tx_end);
}

TEST(EngineTest, RemoteMsgSendArrivesBehindItsDataOnTheSameQp) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip(
      {{Transfer(0, 1, 1000), RemoteMsg(0, 1, 0)}, {MsgWait(0, 1)}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kRing);

  const int64_t flight = 225000;
  const int64_t last_read = 290000 + CdmaPs(1000);
  const int64_t tail_tx_end = last_read + LinkPs(136 + 32);
  // The message leaves the engine when the Transfer's last packet has been
  // read, and queues behind that packet on the link.
  const int64_t msg_tx_end = tail_tx_end + LinkPs(4 + 32);
  const int64_t msg_arrives = msg_tx_end + flight;

  EXPECT_EQ(r.instrs[1].start.ps(), last_read);
  EXPECT_EQ(r.instrs[1].landed.ps(), msg_arrives);
  EXPECT_GT(r.instrs[1].landed, r.instrs[0].landed);
  // Chip 1's MsgWait (global index 2) is released by that message.
  EXPECT_EQ(r.instrs[2].end.ps(), msg_arrives);
  EXPECT_EQ(r.chip_finish[1].ps(), msg_arrives);
  EXPECT_EQ(r.makespan.ps(), msg_arrives);
}

// Crossing a switch: the chip's link pays its protocol latency and its
// cable (link.latency_ps + link.propagation_ps), the switch stores and
// forwards (switch_config.forwarding_latency_ps), and its output port pays
// switch_config.port_latency_ps + port_propagation_ps (TPS186: 0 and 0, so
// one c2c_lat and one cable_delay per traversal, as the derivation of
// alpha_switch counts them).
TEST(EngineTest, TransferThroughTheSwitchIsStoredAndForwarded) {
  const HwConfig hw = OneEngineTps186();
  const int64_t chip_flight = hw.link_latency.ps() + hw.link_propagation.ps();
  const int64_t port_flight =
      hw.switch_port_latency.ps() + hw.switch_port_propagation.ps();
  ASSERT_EQ(chip_flight, 200000 + 25000);
  ASSERT_EQ(port_flight, 0);
  ASSERT_EQ(hw.switch_forwarding.ps(), 1000000);
  const Program p = OneStreamPerChip({{Transfer(0, 1, 288)}, {}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kSwitch);

  const int64_t read = 290000 + CdmaPs(288);                   // 294500
  const int64_t at_switch = read + LinkPs(320) + chip_flight;  // chip 0 -> sw
  const int64_t forwarded = at_switch + hw.switch_forwarding.ps();
  const int64_t landed = forwarded + LinkPs(320) + port_flight;  // sw -> 1
  EXPECT_EQ(r.instrs[0].landed.ps(), landed);
  EXPECT_EQ(landed, 1521100);
}

// The same crossing with the switch port's protocol layers and cable made
// explicit (the values of a chip's link): each adds to the traversal.
TEST(EngineTest, SwitchPortLatencyAndCableAreParameters) {
  HwConfig hw = OneEngineTps186();
  hw.switch_port_latency = TimePs(200000);
  hw.switch_port_propagation = TimePs(25000);
  const Program p = OneStreamPerChip({{Transfer(0, 1, 288)}, {}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kSwitch);
  const int64_t landed = 290000 + CdmaPs(288) + LinkPs(320) + 225000 + 1000000 +
                         LinkPs(320) + 200000 + 25000;
  EXPECT_EQ(r.instrs[0].landed.ps(), landed);
  EXPECT_EQ(landed, 1746100);
}

// The fixed cost of a 2-chip exchange through one switch: each chip writes
// 288 bytes to the other and follows it with a RemoteMsgSend on the same qp;
// each waits for the other's message. The critical path is one traversal:
// startup + read + (uplink serialisation + chip flight) + forwarding +
// (downlink serialisation + port flight) for the data, whose message (36
// wire bytes) follows it on the same lane group and is counted on arrival.
TEST(EngineTest, TwoChipExchangeThroughASwitchPaysOneTraversal) {
  const HwConfig hw = OneEngineTps186();
  const int64_t chip_flight = hw.link_latency.ps() + hw.link_propagation.ps();
  const int64_t port_flight =
      hw.switch_port_latency.ps() + hw.switch_port_propagation.ps();
  const Program p = OneStreamPerChip(
      {{Transfer(0, 1, 288), RemoteMsg(0, 1, 0), MsgWait(0, 1)},
       {Transfer(0, 0, 288), RemoteMsg(0, 0, 0), MsgWait(0, 1)}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kSwitch);
  // The message leaves the engine when the data's last byte has been read
  // (294500) and queues behind the data packet on the one lane group.
  const int64_t data_up_end = 290000 + CdmaPs(288) + LinkPs(320);
  const int64_t msg_up_end = data_up_end + LinkPs(36);
  const int64_t msg_forwarded = msg_up_end + chip_flight + 1000000;
  // At the switch output the data (forwarded 90 ps earlier) is still being
  // serialised (800 ps): the message waits for it.
  const int64_t data_down_end =
      data_up_end + chip_flight + 1000000 + LinkPs(320);
  const int64_t msg_down_end =
      std::max(msg_forwarded, data_down_end) + LinkPs(36);
  const int64_t counted = msg_down_end + port_flight;
  EXPECT_EQ(r.instrs[2].end.ps(), counted);
  EXPECT_EQ(r.instrs[5].end.ps(), counted);
  EXPECT_EQ(r.makespan.ps(), 1521190);
}

TEST(EngineTest, TwoTransfersContendForOneSwitchOutputPort) {
  const HwConfig hw = OneEngineTps186();
  const int64_t chip_flight = hw.link_latency.ps() + hw.link_propagation.ps();
  const int64_t port_flight =
      hw.switch_port_latency.ps() + hw.switch_port_propagation.ps();
  // Chips 0 and 1 both write one full packet to chip 2 at time 0.
  const Program p =
      OneStreamPerChip({{Transfer(0, 2, 288)}, {Transfer(0, 2, 288)}, {}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kSwitch);

  const int64_t forwarded = 290000 + CdmaPs(288) + LinkPs(320) + chip_flight +
                            1000000;  // both reach the output port together
  // First served: chip 0's packet (scheduled first). The second waits for
  // the first to be serialised: one packet time, 800 ps.
  const int64_t first = forwarded + LinkPs(320) + port_flight;
  const int64_t second = forwarded + 2 * LinkPs(320) + port_flight;
  EXPECT_EQ(r.instrs[0].landed.ps(), first);
  EXPECT_EQ(r.instrs[1].landed.ps(), second);
  // The switch -> chip 2 port (link index 5: cables are added chip by chip,
  // each as chip->switch then switch->chip) had one packet waiting while the
  // other was serialised.
  EXPECT_EQ(r.links[5].peak_depth, 1u);
  EXPECT_EQ(r.links[5].queued.ps(), LinkPs(320));
}

TEST(EngineTest, FenceWaitsForTheAcknowledgementOfEarlierTransfers) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip({{Transfer(0, 1, 1000), Fence()}, {}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kRing);
  EXPECT_EQ(r.instrs[1].issue.ps(), 0);
  EXPECT_EQ(r.instrs[1].end.ps(), r.instrs[0].complete.ps());
  EXPECT_EQ(r.instrs[1].end.ps(), 531045 + LinkPs(36) + 225000);
}

TEST(EngineTest, MessageOnlyInstructionsPayNoStartup) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip({{RemoteMsg(0, 1, 0)}, {MsgWait(0, 1)}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kRing);
  EXPECT_EQ(r.instrs[0].start.ps(), 0);
  EXPECT_EQ(r.instrs[1].end.ps(), LinkPs(36) + 225000);
}

TEST(EngineTest, SendStartsWhenTheReceiversClearToSendArrives) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip(
      {{SendTo(0, 1, 288)}, {ReceiveFrom(0, 0, 288), Fence()}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kRing);
  // The Receive pays its startup, then its clear-to-send crosses the link.
  const int64_t cts_arrives = 290000 + LinkPs(36) + 225000;
  // The Send's own startup overlapped that wait.
  EXPECT_EQ(r.instrs[0].start.ps(), cts_arrives);
  const int64_t landed = cts_arrives + CdmaPs(288) + LinkPs(320) + 225000;
  EXPECT_EQ(r.instrs[1].complete.ps(), landed);
  EXPECT_EQ(r.instrs[2].end.ps(), landed);  // the Fence after the Receive
}

TEST(EngineTest, SendReceiveSizeMismatchNamesBothSides) {
  const HwConfig hw = OneEngineTps186();
  const Program p =
      OneStreamPerChip({{SendTo(0, 1, 288)}, {ReceiveFrom(0, 0, 100)}});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  auto r = Replay(p, hw, *topo);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("chip 0, stream 0, instruction 0 (Send) sends 288"));
  EXPECT_THAT(
      r.status().message(),
      HasSubstr("chip 1, stream 0, instruction 0 (Receive) expects 100"));
}

TEST(EngineTest, WaitForAMessageThatNeverComesIsADeadlockNotAHang) {
  const HwConfig hw = OneEngineTps186();
  const Program p =
      OneStreamPerChip({{RemoteMsg(0, 1, 0), MsgWait(1, 1)}, {MsgWait(0, 2)}});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  auto r = Replay(p, hw, *topo);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(),
              HasSubstr("chip 0, stream 0, instruction 1 (MsgWait): waits for "
                        "1 message(s) on qp 1, has 0"));
  EXPECT_THAT(r.status().message(),
              HasSubstr("chip 1, stream 0, instruction 0 (MsgWait): waits for "
                        "2 message(s) on qp 0, has 1"));
}

TEST(EngineTest, SendWithoutReceiveIsADeadlock) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip({{SendTo(0, 1, 288)}, {}});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  auto r = Replay(p, hw, *topo);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("waits for a matching Receive on chip 1"));
}

TEST(EngineTest, MaxEventsStopsARun) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip({{Transfer(0, 1, 100000)}, {}});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  ReplayOptions opt;
  opt.max_events = 10;
  auto r = Replay(p, hw, *topo, opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

// The progress hook sees the events so far every progress_every events, in
// time order, and changes nothing; with a max_events below the next report
// the run still stops exactly there.
TEST(EngineTest, ProgressIsReportedEveryNEventsAndChangesNothing) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip({{Transfer(0, 1, 100000)}, {}});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  auto plain = Replay(p, hw, *topo);
  ASSERT_TRUE(plain.ok()) << plain.status();
  // With coalescing, a folded event counts when it is folded, so the count
  // may pass a multiple between two reports (below); the per-packet path
  // counts one event at a time.
  ReplayOptions opt;
  opt.coalesce = false;
  opt.progress_every = 7;
  std::vector<uint64_t> at;
  TimePs last;
  opt.on_progress = [&](uint64_t events, TimePs now) {
    EXPECT_GE(now, last);
    last = now;
    at.push_back(events);
  };
  auto watched = Replay(p, hw, *topo, opt);
  ASSERT_TRUE(watched.ok()) << watched.status();
  EXPECT_EQ(watched->makespan, plain->makespan);
  EXPECT_EQ(watched->events, plain->events);
  // Reported before the 8th, 15th, ... event: at 7, 14, ... events done.
  ASSERT_EQ(at.size(), (plain->events - 1) / 7);
  for (size_t i = 0; i < at.size(); ++i) EXPECT_EQ(at[i], 7 * (i + 1));
  opt.max_events = 10;
  at.clear();
  last = TimePs();
  auto stopped = Replay(p, hw, *topo, opt);
  ASSERT_FALSE(stopped.ok());
  EXPECT_THAT(stopped.status().message(), HasSubstr("stopped after 10 events"));
  EXPECT_EQ(at, std::vector<uint64_t>{7});

  // Coalesced (arrivals fold here): a report at least every 7
  // events, each at least 7 after the one before, and the same result.
  opt.coalesce = true;
  opt.max_events = 0;
  at.clear();
  last = TimePs();
  auto folded = Replay(p, hw, *topo, opt);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(folded->makespan, plain->makespan);
  EXPECT_EQ(folded->events, plain->events);
  EXPECT_GT(folded->coalesced_events, 0u);
  ASSERT_FALSE(at.empty());
  EXPECT_GE(at[0], 7u);
  for (size_t i = 1; i < at.size(); ++i) EXPECT_GE(at[i], at[i - 1] + 7);
  EXPECT_LT(at.back(), plain->events);
}

TEST(EngineTest, StartupOverlapsEarlierDataUnlessOutstandingIsBounded) {
  HwConfig hw = OneEngineTps186();
  // Three back-to-back 2880-byte Transfers on one engine: 45000 ps of data
  // each at 64 GB/s.
  const Program p = OneStreamPerChip(
      {{Transfer(0, 1, 2880), Transfer(0, 1, 2880), Transfer(0, 1, 2880)}, {}});
  const int64_t data = CdmaPs(2880);
  ReplayResult r = MustReplay(p, hw, TopologyKind::kRing);
  // Unbounded: all three startups run from time 0; data phases follow back to
  // back.
  EXPECT_EQ(r.instrs[1].start.ps(), 290000 + data);
  EXPECT_EQ(r.instrs[2].start.ps(), 290000 + 2 * data);
  // max_outstanding = 1: the next startup begins only when the previous
  // instruction starts moving data.
  hw.cdma_max_outstanding = 1;
  r = MustReplay(p, hw, TopologyKind::kRing);
  EXPECT_EQ(r.instrs[1].start.ps(), 290000 + 290000);
  EXPECT_EQ(r.instrs[2].start.ps(), 3 * 290000);
}

TEST(EngineTest, BytesAreConservedAndRunsAreDeterministic) {
  HwConfig hw = DefaultTps186();
  // Every chip of 5 on a ring sends 10000 bytes to each other chip.
  std::vector<std::vector<Instr>> chips(5);
  for (uint32_t i = 0; i < 5; ++i) {
    for (uint32_t k = 1; k < 5; ++k) {
      chips[i].push_back(Transfer(MakeQp(k % 8, 0), (i + k) % 5, 10000));
    }
    chips[i].push_back(Fence());
  }
  const Program p = OneStreamPerChip(chips);
  const ReplayResult a = MustReplay(p, hw, TopologyKind::kRing);
  const ReplayResult b = MustReplay(p, hw, TopologyKind::kRing);
  const uint64_t sent =
      std::accumulate(a.bytes_sent.begin(), a.bytes_sent.end(), uint64_t{0});
  const uint64_t received = std::accumulate(
      a.bytes_received.begin(), a.bytes_received.end(), uint64_t{0});
  EXPECT_EQ(sent, 5u * 4u * 10000u);
  EXPECT_EQ(received, sent);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(a.bytes_received[i], 4u * 10000u);
  }
  ASSERT_EQ(a.instrs.size(), b.instrs.size());
  for (size_t i = 0; i < a.instrs.size(); ++i) {
    EXPECT_EQ(a.instrs[i].start, b.instrs[i].start);
    EXPECT_EQ(a.instrs[i].complete, b.instrs[i].complete);
  }
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.makespan, b.makespan);
}

}  // namespace
}  // namespace ccreplay

namespace ccreplay {
namespace {

// 8 engines each write 4 KiB to chip 1: 32 KiB in 8 x 15 packets (14 of 288
// bytes and a 64-byte tail) over a link of 4 lane groups.
Program ThirtyTwoKiBOverEightEngines() {
  std::vector<Instr> chip0;
  for (uint32_t j = 0; j < 8; ++j) {
    Instr t = Transfer(MakeQp(j, 0), 1, 4096);
    t.src_addr = t.dst_addr = j * 4096;
    chip0.push_back(t);
  }
  return OneStreamPerChip({chip0, {}});
}

TimePs LastLanded(const ReplayResult& r) {
  TimePs t;
  for (const InstrTiming& i : r.instrs) t = Max(t, i.landed);
  return t;
}

TEST(LaneGroupTest, HashCollidesOnSmallMessagesRoundRobinDoesNot) {
  HwConfig hw = DefaultTps186();
  hw.interleave = InterleaveKind::kHash;  // the option this test is about
  ASSERT_EQ(hw.lane_groups, 4u);
  const Program p = ThirtyTwoKiBOverEightEngines();

  // The hash's share of each lane group, worked out from the packets'
  // global addresses (chip 1 in bits 48+).
  std::vector<uint64_t> expected(4, 0);
  for (uint64_t a = 0; a < 32768; a += 4096) {
    for (uint64_t off = 0; off < 4096; off += 288) {
      expected[InterleaveHash(GlobalAddress(1, a + off), 4)]++;
    }
  }
  const ReplayResult hashed = MustReplay(p, hw, TopologyKind::kRing);
  EXPECT_EQ(hashed.links[0].lg_packets, expected);
  const uint64_t busiest = *std::max_element(expected.begin(), expected.end());
  EXPECT_GT(busiest, 30u) << "these 120 packets collide on some lane group";

  hw.interleave = InterleaveKind::kRoundRobin;
  const ReplayResult rr = MustReplay(p, hw, TopologyKind::kRing);
  EXPECT_EQ(rr.links[0].lg_packets, std::vector<uint64_t>(4, 30));
  // The busiest lane group finishes last: the collision costs time.
  EXPECT_GT(LastLanded(hashed), LastLanded(rr));
}

TEST(LaneGroupTest, LargeMessagesEvenOut) {
  HwConfig hw = DefaultTps186();
  // 8 x 256 KiB = 2 MiB: 911 packets per engine, 7,288 in all; the busiest
  // lane group carries within 3% of the mean.
  std::vector<Instr> chip0;
  for (uint32_t j = 0; j < 8; ++j) {
    Instr t = Transfer(MakeQp(j, 0), 1, 262144);
    t.dst_addr = j * 262144;
    chip0.push_back(t);
  }
  const ReplayResult r =
      MustReplay(OneStreamPerChip({chip0, {}}), hw, TopologyKind::kRing);
  const auto& lg = r.links[0].lg_packets;
  const double mean = static_cast<double>(r.links[0].packets) / 4;
  for (uint64_t c : lg) EXPECT_LT(static_cast<double>(c) / mean, 1.03);
}

// A port's arbiter finds the next input with a packet in a row, from a
// given input on and wrapping around: the first at or after `from`, else
// the first of all, else "none" (num_inputs()). Checked against a plain
// scan for every start, with one word of inputs (64 or fewer: no loop) and
// several, and rows left empty.
TEST(PortTest, NextWaitingIsTheFirstInputWithAPacketFromTheStartOn) {
  for (uint32_t inputs : {1u, 5u, 64u, 65u, 130u}) {
    Port port(inputs, /*lane_groups=*/1, /*lg_queues=*/1, /*vcs=*/2,
              /*buffer_bytes=*/0);
    PacketPool pool;
    std::vector<bool> has(inputs, false);
    uint64_t x = inputs;
    for (int step = 0; step < 40; ++step) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const uint32_t input = static_cast<uint32_t>(x >> 40) % inputs;
      port.Enqueue(input, /*row=*/0, pool.New(Packet{}), pool);
      has[input] = true;
      for (uint32_t from = 0; from < inputs; ++from) {
        uint32_t want = inputs;
        for (uint32_t k = 0; k < inputs && want == inputs; ++k) {
          if (has[(from + k) % inputs]) want = (from + k) % inputs;
        }
        ASSERT_EQ(port.NextWaiting(0, from), want)
            << inputs << " inputs, from " << from;
        ASSERT_EQ(port.NextWaiting(1, from), inputs) << "row 1 is empty";
      }
    }
  }
}

// Serialisation time is bytes x 1e12 / rate picoseconds, rounded up,
// whether the product fits in 64 bits (computed so) or not (in 128).
TEST(UnitsTest, SerializationTimeRoundsUpInBothRanges) {
  EXPECT_EQ(SerializationTime(288, 400'000'000'000).ps(), 720);  // 2.5 ps/B
  EXPECT_EQ(SerializationTime(1, 3).ps(), 333'333'333'334);
  EXPECT_EQ(SerializationTime(0, 7).ps(), 0);
  const auto want = [](uint64_t bytes, uint64_t rate) {
    const unsigned __int128 num =
        static_cast<unsigned __int128>(bytes) * 1'000'000'000'000ULL;
    return static_cast<int64_t>((num + rate - 1) / rate);
  };
  // About 2^64 / 1e12 = 18,446,744 bytes: the 64-bit product's limit (at
  // 3 B/s and up the time still fits a TimePs).
  for (uint64_t rate : {3ull, 50'000'000'000ull, 400'000'000'000ull,
                        999'999'999'999ull, 4'000'000'000'000ull}) {
    for (uint64_t bytes = 18'446'700; bytes < 18'446'800; ++bytes) {
      ASSERT_EQ(SerializationTime(bytes, rate).ps(), want(bytes, rate))
          << bytes << " bytes at " << rate << " B/s";
    }
    for (uint64_t bytes : {1ull, 292ull, 65'536ull, 1ull << 22}) {
      ASSERT_EQ(SerializationTime(bytes, rate).ps(), want(bytes, rate))
          << bytes << " bytes at " << rate << " B/s";
    }
  }
}

TEST(LaneGroupTest, XorInterleaveIsTheXorOfTheBlockNumbersFields) {
  // By hand: block 0b10'01'11 (39) of 64-byte blocks over 4 lane groups
  // (2-bit fields 11, 01, 10): 3 ^ 1 ^ 2 = 0; over 8 (3-bit fields 111,
  // 100): 7 ^ 4 = 3; over 2 (bits 1, 1, 1, 0, 0, 1): 0.
  EXPECT_EQ(XorInterleave(39 * 64 + 5, 64, 4), 0u);
  EXPECT_EQ(XorInterleave(39 * 64 + 5, 64, 8), 3u);
  EXPECT_EQ(XorInterleave(39 * 64 + 5, 64, 2), 0u);
  EXPECT_EQ(XorInterleave(12345, 288, 1), 0u);
  // The definition, field by field, against every width the interleaver
  // takes (powers of two folded in halves, others field by field), on
  // addresses with the chip in the high bits (GlobalAddress).
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 2000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    for (uint32_t lanes : {2u, 4u, 8u, 16u, 32u, 256u, 65536u}) {
      for (uint64_t block : {1ull, 64ull, 288ull, 4096ull}) {
        const uint32_t bits = static_cast<uint32_t>(__builtin_ctz(lanes));
        uint64_t b = x / block;
        uint64_t want = 0;
        for (; b != 0; b >>= bits) want ^= b & (lanes - 1);
        ASSERT_EQ(XorInterleave(x, block, lanes), want)
            << "address " << x << ", block " << block << ", " << lanes
            << " lane groups";
      }
    }
  }
}

// XOR interleave of 288-byte segments (the TPS186 default): 8 engines each
// write 64 KiB of one contiguous, aligned 512 KiB region to chip 1.
TEST(LaneGroupTest, XorSpreadsALargeAlignedTransferEvenly) {
  HwConfig hw = DefaultTps186();
  ASSERT_EQ(hw.interleave, InterleaveKind::kXor);
  ASSERT_EQ(hw.interleave_block_bytes, 288u);
  constexpr uint64_t kPerEngine = 65536;
  std::vector<Instr> chip0;
  for (uint32_t j = 0; j < 8; ++j) {
    Instr t = Transfer(MakeQp(j, 0), 1, kPerEngine);
    t.src_addr = t.dst_addr = j * kPerEngine;
    chip0.push_back(t);
  }
  const ReplayResult r =
      MustReplay(OneStreamPerChip({chip0, {}}), hw, TopologyKind::kRing);
  // 65536 = 227 x 288 + 160: 228 packets per engine, 1,824 in all.
  const uint64_t packets = 8 * 228;
  ASSERT_EQ(r.links[0].packets, packets);
  // Within each engine's run of 228 consecutive segments every aligned
  // group of 4 covers the 4 lane groups once: at most 2 packets per LG
  // from the partial groups at the ends of each run.
  for (uint64_t c : r.links[0].lg_packets) {
    EXPECT_LE(c, packets / 4 + 2 * 8);
    EXPECT_GE(c + 2 * 8, packets / 4);
  }
  // Data phase: from the end of the 290 ns startup to the last byte in
  // chip 1's memory, less one flight (200 ns latency + 25 ns propagation).
  // At u * beta = 288/320 x 400 GB/s = 360 GB/s, 512 KiB take
  // 524288 / 360e9 s = 1,456,356 ps.
  const int64_t startup = 290000, flight = 225000;
  const double ideal_ps = 524288.0 / 360e9 * 1e12;
  const double phase_ps =
      static_cast<double>(LastLanded(r).ps() - startup - flight);
  EXPECT_GE(ideal_ps / phase_ps, 0.98)
      << "data phase " << phase_ps << " ps vs " << ideal_ps << " ps at u*beta";
  // The MurmurHash interleave of the same transfer is slower: its lane
  // groups' loads differ by a few percent and the busiest finishes last.
  hw.interleave = InterleaveKind::kHash;
  const ReplayResult hashed =
      MustReplay(OneStreamPerChip({chip0, {}}), hw, TopologyKind::kRing);
  EXPECT_GT(LastLanded(hashed), LastLanded(r));
}

// Small, unaligned transfers: 16 writes of 3,000 bytes (11 segments: 10 x
// 288 + 120) from one engine, each starting 1,000 bytes after a 4 KiB
// boundary. Short runs cover only part of a 4-block group, so the XOR
// interleave loads some lane groups more: the collision SPEC notes for
// small messages, visible in the per-LG counts that `--links` reports.
TEST(LaneGroupTest, XorStillCollidesOnSmallUnalignedTransfers) {
  HwConfig hw = OneEngineTps186();
  hw.lane_groups = 4;
  ASSERT_EQ(hw.interleave, InterleaveKind::kXor);
  std::vector<Instr> chip0;
  std::vector<uint64_t> expected(4, 0);
  for (uint32_t k = 0; k < 16; ++k) {
    Instr t = Transfer(0, 1, 3000);
    t.src_addr = t.dst_addr = k * 4096 + 1000;
    chip0.push_back(t);
    for (uint64_t off = 0; off < 3000; off += 288) {
      expected[XorInterleave(GlobalAddress(1, t.dst_addr + off), 288, 4)]++;
    }
  }
  const ReplayResult r =
      MustReplay(OneStreamPerChip({chip0, {}}), hw, TopologyKind::kRing);
  EXPECT_EQ(r.links[0].lg_packets, expected);
  const uint64_t busiest = *std::max_element(expected.begin(), expected.end());
  const uint64_t idlest = *std::min_element(expected.begin(), expected.end());
  EXPECT_GT(busiest, idlest) << "16 x 11 packets do not spread evenly";
  EXPECT_GT(
      r.links[0].lg_busy[std::max_element(expected.begin(), expected.end()) -
                         expected.begin()],
      r.links[0].lg_busy[std::min_element(expected.begin(), expected.end()) -
                         expected.begin()]);
}

TEST(LaneGroupTest, MessageIsNotCountedBeforeTheDataItFollows) {
  // With 4 lane groups the 36-byte message can overtake the data on the
  // wire; the receiver still counts it only once the data has landed.
  const HwConfig hw = DefaultTps186();
  const Program p = OneStreamPerChip(
      {{Transfer(0, 1, 2880), RemoteMsg(0, 1, 0)}, {MsgWait(0, 1)}});
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kRing);
  EXPECT_GE(r.instrs[1].landed, r.instrs[0].landed);
  EXPECT_EQ(r.instrs[2].end, r.instrs[1].landed);
}

TEST(CreditTest, AFullBufferStallsTheSenderInsteadOfDropping) {
  HwConfig hw = OneEngineTps186();
  hw.link_buffer_bytes = 320;  // room for exactly one full packet
  // 864 bytes = 3 packets of 288.
  const ReplayResult r = MustReplay(
      OneStreamPerChip({{Transfer(0, 1, 864)}, {}}), hw, TopologyKind::kRing);
  const int64_t flight = 225000;
  const int64_t ser = LinkPs(320);  // 800 ps
  // Packet 1: read at 290000 + 4500, sent, lands; its credit needs another
  // flight to come back before packet 2 may start.
  const int64_t p1_end = 290000 + CdmaPs(288) + ser;
  const int64_t p2_end = p1_end + 2 * flight + ser;
  const int64_t p3_end = p2_end + 2 * flight + ser;
  EXPECT_EQ(r.instrs[0].landed.ps(), p3_end + flight);
  EXPECT_EQ(r.instrs[0].landed.ps(), 1421900);
  // Packet 2 waited for credit from when it was read (299000) to p1's
  // credit coming back (p1_end + 2 flights = 745300); packet 3 from p2's
  // end to p2's credit.
  EXPECT_EQ(r.links[0].credit_stall.ps(),
            (p1_end + 2 * flight - (290000 + CdmaPs(576))) + (2 * flight));
  EXPECT_EQ(r.links[0].packets, 3u);
  EXPECT_EQ(r.bytes_received[1], 864u);
}

// Virtual channels (docs/hardware-model.md, "Virtual channels"). Four chips
// on a one-way ring, each sending 4 packets two hops ahead, with receive
// buffers of one packet: with one channel every buffer fills with a packet
// that must be relayed into the next, full, buffer: a cycle of credit
// waits. With two, a packet crossing the ring's dateline (chip 3 -> chip 0)
// moves to channel 1, whose buffers hold only such packets, and the cycle
// is broken.
Program TwoHopsRoundARing() {
  std::vector<std::vector<Instr>> chips(4);
  for (uint32_t c = 0; c < 4; ++c) {
    chips[c].push_back(Transfer(0, (c + 2) % 4, 4 * 288));
  }
  return OneStreamPerChip(chips);
}

TEST(VirtualChannelTest, OneChannelDeadlocksARingOfRelaysAndTwoDoNot) {
  HwConfig hw = OneEngineTps186();
  hw.link_buffer_bytes = 320;  // one full packet
  auto topo = Topology::Build(TopologyKind::kRingUni, 4);
  ASSERT_TRUE(topo.ok());
  ASSERT_EQ(topo->DatelineClasses(), 2u);
  const Program p = TwoHopsRoundARing();
  hw.link_vcs = 1;  // channels switched off
  auto one = Replay(p, hw, *topo);
  ASSERT_FALSE(one.ok());
  EXPECT_THAT(one.status().message(), HasSubstr("network deadlock"));
  EXPECT_THAT(one.status().message(), HasSubstr("chip 0 -> chip 1"));
  EXPECT_THAT(one.status().message(),
              ::testing::Not(HasSubstr("and so deadlock")));
  EXPECT_THAT(one.status().message(),
              HasSubstr("set link.virtual_channels to 2"));
  hw.link_vcs = 2;
  auto two = Replay(p, hw, *topo);
  ASSERT_TRUE(two.ok()) << two.status();
  for (uint32_t c = 0; c < 4; ++c) EXPECT_EQ(two->bytes_received[c], 4u * 288);
  // The default, 0, takes as many channels as the routes need: 2.
  hw.link_vcs = 0;
  auto need = Replay(p, hw, *topo);
  ASSERT_TRUE(need.ok()) << need.status();
  EXPECT_EQ(need->makespan, two->makespan);
}

TEST(VirtualChannelTest, ChannelsChangeNothingWithoutContention) {
  // One transfer between neighbours: its packets stay on channel 0 and
  // their timing is that of one channel, packet for packet.
  HwConfig hw = OneEngineTps186();
  hw.link_buffer_bytes = 320;
  hw.link_vcs = 1;
  const Program p = OneStreamPerChip({{Transfer(0, 1, 864)}, {}});
  const ReplayResult one = MustReplay(p, hw, TopologyKind::kRing);
  hw.link_vcs = 2;
  const ReplayResult two = MustReplay(p, hw, TopologyKind::kRing);
  EXPECT_EQ(two.instrs[0].landed, one.instrs[0].landed);
  EXPECT_EQ(two.instrs[0].complete, one.instrs[0].complete);
  EXPECT_EQ(two.links[0].credit_stall, one.links[0].credit_stall);
}

TEST(VirtualChannelTest, TooFewChannelsForTheRoutesAreRefused) {
  HwConfig hw = OneEngineTps186();
  hw.link_vcs = 2;  // a torus needs 3: an x and a y dateline
  auto topo = Topology::Build(TopologyKind::kTorus2D, 16);
  ASSERT_TRUE(topo.ok());
  auto r =
      Replay(OneStreamPerChip(std::vector<std::vector<Instr>>(16)), hw, *topo);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("link.virtual_channels: 2 channels"));
  EXPECT_THAT(r.status().message(), HasSubstr("need 3"));
}

// Switch input buffering (docs/hardware-model.md, "Switch input
// buffering").
TEST(SwitchInputTest, FifoInputsEqualVoqsWithoutContention) {
  HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip({{Transfer(0, 1, 64 * 288)}, {}});
  const ReplayResult voq = MustReplay(p, hw, TopologyKind::kSwitch);
  hw.switch_input_fifo = true;
  const ReplayResult fifo = MustReplay(p, hw, TopologyKind::kSwitch);
  EXPECT_EQ(fifo.instrs[0].landed, voq.instrs[0].landed);
  EXPECT_EQ(fifo.instrs[0].complete, voq.instrs[0].complete);
}

TEST(SwitchInputTest, AFifoInputBlocksBehindABusyOutput) {
  // Chip 0 sends to chip 2 (engine 0) and to chip 3 (engine 1) at once,
  // each at half its uplink (200 GB/s); chips 1, 4 and 5 also send to chip
  // 2, so the switch's output to chip 2 gives each of its 4 inputs 100 GB/s
  // and chip 0's packets for it back up in the switch. With one FIFO per
  // input, chip 0's packets for the idle output to chip 3 wait behind
  // them; with virtual output queues they pass.
  HwConfig hw = OneEngineTps186();
  hw.cdma_engines = 2;
  hw.cdma_bytes_per_s = hw.link_bytes_per_s;  // an engine can fill a link
  const uint64_t bytes = 256 * 288;
  const Program p = OneStreamPerChip(
      {{Transfer(MakeQp(0, 0), 2, bytes), Transfer(MakeQp(1, 0), 3, bytes)},
       {Transfer(MakeQp(0, 0), 2, bytes)},
       {},
       {},
       {Transfer(MakeQp(0, 0), 2, bytes)},
       {Transfer(MakeQp(0, 0), 2, bytes)}});
  const ReplayResult voq = MustReplay(p, hw, TopologyKind::kSwitch);
  hw.switch_input_fifo = true;
  const ReplayResult fifo = MustReplay(p, hw, TopologyKind::kSwitch);
  // Instruction 1 is chip 0's transfer to chip 3.
  EXPECT_GT(fifo.instrs[1].landed, voq.instrs[1].landed);
  // With VOQs it runs at half the uplink (it shares chip 0's link with the
  // transfer to chip 2): 256 packets of 320 wire bytes at 200 GB/s take
  // 409.6 ns, and it cannot land before that.
  EXPECT_GE(voq.instrs[1].landed.ps(), 290000 + 2 * 256 * LinkPs(320));
  // Everything arrives either way.
  EXPECT_EQ(fifo.bytes_received[2], 4 * bytes);
  EXPECT_EQ(fifo.bytes_received[3], bytes);
}

TEST(CreditTest, AFullSwitchBufferStallsTheSender) {
  HwConfig hw = OneEngineTps186();
  hw.link_buffer_bytes = 320;  // every receive buffer holds one packet
  // Two packets from chip 0 to chip 1 through the switch.
  const ReplayResult r = MustReplay(
      OneStreamPerChip({{Transfer(0, 1, 576)}, {}}), hw, TopologyKind::kSwitch);
  const int64_t flight = 225000;  // chip 0's link: latency + propagation
  const int64_t port_flight =
      hw.switch_port_latency.ps() + hw.switch_port_propagation.ps();  // 0
  const int64_t ser = LinkPs(320);
  const int64_t fwd = 1000000;
  // Packet 1 fills the switch's input buffer until it has left the switch:
  // uplink, flight, forwarding, downlink serialisation.
  const int64_t p1_up_end = 290000 + CdmaPs(288) + ser;
  const int64_t p1_left_switch = p1_up_end + flight + fwd + ser;
  // Only then does credit go back to chip 0, one flight of its cable later;
  // packet 2 (read at 299000) waited for it.
  const int64_t p2_up_start = p1_left_switch + flight;
  const int64_t p2_landed =
      p2_up_start + ser + flight + fwd + ser + port_flight;
  EXPECT_EQ(r.instrs[0].landed.ps(), p2_landed);
  EXPECT_EQ(p2_landed, 2972700);
  // Cables are added as chip 0 -> switch (link 0), switch -> chip 0, ...
  EXPECT_EQ(r.links[0].credit_stall.ps(), p2_up_start - (290000 + CdmaPs(576)));
  EXPECT_EQ(r.links[0].packets, 2u + 0u);  // the ack goes the other way
}

TEST(EngineTest, FenceAfterTwoTransfersWaitsForTheLaterAcknowledgement) {
  const HwConfig hw = OneEngineTps186();
  HwConfig two = hw;
  two.cdma_engines = 2;
  const Program p = OneStreamPerChip({{Transfer(MakeQp(0, 0), 1, 288),
                                       Transfer(MakeQp(1, 0), 1, 576), Fence()},
                                      {}});
  const ReplayResult r = MustReplay(p, two, TopologyKind::kRing);
  // Both start after the startup; engine 1 reads 576 bytes: packets at
  // +4500 and +9000. Engine 0's packet goes first on the link.
  const int64_t flight = 225000;
  const int64_t ack = LinkPs(36) + flight;
  const int64_t first = 290000 + CdmaPs(288) + LinkPs(320) + flight;
  EXPECT_EQ(r.instrs[0].complete.ps(), first + ack);
  // Engine 1's first packet waits behind engine 0's (same instant, engine 0
  // queued first): starts at 294500 + 800; its second is read at 299000.
  const int64_t second = 290000 + CdmaPs(576) + LinkPs(320) + flight;
  EXPECT_EQ(r.instrs[1].landed.ps(), second);
  EXPECT_EQ(r.instrs[2].end.ps(), std::max(first + ack, second + ack));
}

TEST(TopologyReplayTest, ThreeHopsAcrossBoardsPayEachHop) {
  HwConfig hw = OneEngineTps186();
  // 64 chips as 8 boards of 8 in a ring of boards: chip 0 to chip 17 is
  // 3 hops (0 -> 1 in board 0, then board 0 -> 1 -> 2 on the ring).
  std::vector<std::vector<Instr>> chips(64);
  chips[0].push_back(Transfer(0, 17, 288));
  const Program p = OneStreamPerChip(chips);
  const ReplayResult r = MustReplay(p, hw, TopologyKind::kBoardRing);
  const int64_t hop = LinkPs(320) + 225000;  // serialise + fly, per hop
  EXPECT_EQ(r.instrs[0].landed.ps(), 290000 + CdmaPs(288) + 3 * hop);
  uint64_t links_used = 0;
  for (const LinkStats& l : r.links) links_used += l.packets > 0;
  EXPECT_EQ(links_used, 3u + 3u);  // 3 hops there, 3 for the ack
}

// Invariants on every topology: bytes conserved end to end, nothing lost,
// no lane group busier than 100%, causality, determinism.
TEST(TopologyReplayTest, InvariantsHoldOnEveryTopology) {
  const HwConfig hw = DefaultTps186();
  for (TopologyKind kind :
       {TopologyKind::kRing, TopologyKind::kRingUni, TopologyKind::kSwitch,
        TopologyKind::kFullMesh, TopologyKind::kBoardRing,
        TopologyKind::kBoardFatTree, TopologyKind::kBoardDragonfly,
        TopologyKind::kTorus2D}) {
    const uint32_t n = kind == TopologyKind::kFullMesh ? 8 : 16;
    std::vector<std::vector<Instr>> chips(n);
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t k = 1; k < n; ++k) {
        Instr t = Transfer(MakeQp(k % 8, 0), (i + k) % n, 5000 + 7 * k);
        t.dst_addr = i * 8192;
        chips[i].push_back(t);
      }
      chips[i].push_back(Fence());
    }
    const Program p = OneStreamPerChip(chips);
    auto topo = Topology::Build(kind, n);
    ASSERT_TRUE(topo.ok()) << TopologyName(kind) << ": " << topo.status();
    auto r = Replay(p, hw, *topo);
    ASSERT_TRUE(r.ok()) << TopologyName(kind) << ": " << r.status();
    uint64_t sent = 0, received = 0;
    for (uint32_t i = 0; i < n; ++i) {
      sent += r->bytes_sent[i];
      received += r->bytes_received[i];
    }
    uint64_t expected = 0;
    for (uint32_t k = 1; k < n; ++k) expected += n * (5000 + 7 * k);
    EXPECT_EQ(sent, expected) << TopologyName(kind);
    EXPECT_EQ(received, expected) << TopologyName(kind);
    for (uint32_t g = 0; g < r->instrs.size(); ++g) {
      const InstrTiming& t = r->instrs[g];
      if (r->InstrOf(p, g).kind != OpKind::kTransfer) continue;
      // Causality: it lands one flight after it started at the earliest.
      EXPECT_GE(t.landed.ps(), t.start.ps() + 225000) << TopologyName(kind);
      EXPECT_GT(t.complete, t.landed);
    }
    for (const LinkStats& l : r->links) {
      for (uint32_t lg = 0; lg < l.lg_busy.size(); ++lg) {
        // A lane group serialises one packet at a time.
        EXPECT_LE(l.lg_busy[lg], l.lg_last_end[lg]) << TopologyName(kind);
      }
    }
    auto again = Replay(p, hw, *topo);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->makespan, r->makespan) << TopologyName(kind);
    EXPECT_EQ(again->events, r->events) << TopologyName(kind);
  }
}

}  // namespace
}  // namespace ccreplay

#include "absl/strings/str_cat.h"
#include "replay/breakdown.h"
#include "replay/fluid_engine.h"
#include "tests/path_check.h"

namespace ccreplay {
namespace {

TEST(BreakdownTest, WriteThenMessageSplitsIntoItsMechanisms) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip(
      {{Transfer(0, 1, 1000), RemoteMsg(0, 1, 0)}, {MsgWait(0, 1)}});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  auto r = Replay(p, hw, *topo);
  ASSERT_TRUE(r.ok());
  auto b = CriticalPathBreakdown(p, *r, hw, *topo);
  ASSERT_TRUE(b.ok()) << b.status();
  // Chip 1's MsgWait <- the message (network) <- the engine finishing the
  // Transfer's data phase <- the Transfer's startup <- time 0.
  EXPECT_EQ(b->total.ps(), 531135);
  EXPECT_EQ((*b)[PathCause::kStartup].ps(), 290000);
  EXPECT_EQ((*b)[PathCause::kEngineRead].ps(), CdmaPs(1000));  // 15625
  EXPECT_EQ((*b)[PathCause::kLatency].ps(), 225000);
  EXPECT_EQ((*b)[PathCause::kSerialisation].ps(), LinkPs(36));  // 90
  // The message waited behind the Transfer's 168-byte tail on the link.
  EXPECT_EQ((*b)[PathCause::kQueueing].ps(), LinkPs(168));  // 420
  EXPECT_EQ((*b)[PathCause::kOther].ps(), 0);
}

// Network::FlowOf answers from a memo of the two flows each chip looked up
// last: any sequence of lookups, with repeats and evictions, gives the
// topology's hash and first link. On a fat-tree most pairs have several
// routes, so the hash picks among them.
TEST(NetworkTest, FlowOfIsTheTopologysHashAndFirstLink) {
  const HwConfig hw = DefaultTps186();
  auto topo = Topology::Build(TopologyKind::kBoardFatTree, 32);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EventQueue q;
  const Network net(hw, *topo, q);
  std::mt19937 rng(30);
  for (int i = 0; i < 4000; ++i) {
    const uint32_t src = rng() % 32;
    // Three peers and two queue pairs per chip: six flows for two ways.
    const uint32_t dst = (src + 1 + 8 * (rng() % 3)) % 32;
    const uint32_t qp = rng() % 2;
    const uint32_t hash = Topology::FlowHash(src, dst, qp);
    const FlowPath f = net.FlowOf(src, dst, qp);
    ASSERT_EQ(f.hash, hash) << i;
    ASSERT_EQ(f.port, topo->NextLink(src, dst, hash)) << i;
  }
}

// PathCosts keeps what a write's size gives (its reads, its serialisation,
// its last packet) for the size it saw last: a size costed after others
// splits as it does on a fresh PathCosts, and the backlog at the write's
// start is all of its wire time plus its first packet's read.
TEST(BreakdownTest, PathCostsOfASizeDoNotDependOnTheSizesBefore) {
  const HwConfig hw = OneEngineTps186();  // payload 288 B, header 32 B
  auto topo = Topology::Build(TopologyKind::kRing, 4);
  ASSERT_TRUE(topo.ok());
  const int64_t sizes[] = {1000, 288, 5, int64_t{1} << 20, 1000, 576};
  PathCosts warm(hw, *topo);
  const TimePs start(1000);
  const TimePs end = start + TimePs(400000);
  const TimePs landed = end + TimePs(300000);
  for (const int64_t bytes : sizes) {
    SCOPED_TRACE(bytes);
    const Instr in = Transfer(0, 2, static_cast<uint64_t>(bytes));
    const PathCosts fresh(hw, *topo);
    PathCosts::Causes w{}, f{};
    warm.LastPacket(w, 0, in, start, end, landed);
    fresh.LastPacket(f, 0, in, start, end, landed);
    EXPECT_EQ(w, f);
    w = {};
    f = {};
    warm.DataPhase(w, in, /*local=*/false, TimePs(500000));
    fresh.DataPhase(f, in, /*local=*/false, TimePs(500000));
    EXPECT_EQ(w, f);
    // Rounded up: 2.5 ps a byte on the link, 15.625 on the engine.
    const int64_t packets = (bytes + 287) / 288;
    const int64_t wire_ps = ((bytes + 32 * packets) * 5 + 1) / 2;
    const int64_t read_ps = (std::min<int64_t>(bytes, 288) * 15625 + 999) / 1000;
    EXPECT_EQ(warm.OwnBacklog(in, start, start).ps(), wire_ps + read_ps);
  }
}

// The breakdown the replay sums as it runs equals the walk over the
// records (tests/path_check.h) for every kind of instruction and every
// cause the walk follows: a Send held for its Receive's clear-to-send, a
// Receive's landing, local copies and local messages, Fences that wait, a
// message held for its write (four lane groups let it overtake), the
// handshake latency, two streams on a chip, with both engines. The
// collectives' sweeps (deadlock_sweep_test, coalesce_test) check it on every
// lowered algorithm and config.
TEST(BreakdownTest, RunningSumsEqualTheWalkOnEveryInstructionKind) {
  std::vector<Program> programs;
  // The Receive is posted late: the Send waits for its clear-to-send.
  programs.push_back(OneStreamPerChip(
      {{SendTo(0, 1, 5000), Fence(), RemoteMsg(0, 1, 0)},
       {Transfer(0, 0, 3000), ReceiveFrom(0, 0, 5000), Fence(), MsgWait(0, 1)}}));
  // A local copy and a local message, then a Fence over two qps.
  programs.push_back(OneStreamPerChip(
      {{Transfer(0, 0, 4000), LocalMsg(0, 1), MsgWait(1, 1), Transfer(1, 1, 900),
        Transfer(0, 1, 2000), Fence(), RemoteMsg(0, 1, 0)},
       {MsgWait(0, 1), Transfer(0, 0, 100), Fence()}}));
  // Writes followed by their messages, both ways, a Fence that never waits.
  programs.push_back(OneStreamPerChip(
      {{Fence(), Transfer(0, 1, 20000), RemoteMsg(0, 1, 0), MsgWait(0, 1)},
       {Transfer(0, 0, 7000), RemoteMsg(0, 0, 0), MsgWait(0, 1),
        Transfer(0, 0, 10)}}));
  // Two streams on chip 0.
  Program two = OneStreamPerChip(
      {{Transfer(0, 1, 3000), RemoteMsg(0, 1, 0)}, {MsgWait(0, 2)}});
  two.chips[0].streams.push_back(
      StreamProgram{1, {Transfer(1, 1, 6000), RemoteMsg(1, 1, 0), Fence()}});
  programs.push_back(two);
  int checked = 0;
  for (const HwConfig& base : {OneEngineTps186(), DefaultTps186()}) {
    for (TimePs handshake : {TimePs::Zero(), TimePs::Ns(40)}) {
      HwConfig hw = base;
      hw.msg_remote_latency = handshake;
      for (size_t i = 0; i < programs.size(); ++i) {
        for (TopologyKind kind : {TopologyKind::kRing, TopologyKind::kSwitch}) {
          SCOPED_TRACE(absl::StrCat("program ", i, " on ", TopologyName(kind),
                                    ", ", hw.lane_groups, " lane groups, ",
                                    handshake.ps(), " ps handshake"));
          auto topo = Topology::Build(kind, programs[i].num_chips);
          ASSERT_TRUE(topo.ok());
          ReplayOptions every;
          every.sum_critical_path = every.every_stream_path = true;
          ReplayOptions per_packet = every;
          per_packet.coalesce = false;
          for (auto r : {Replay(programs[i], hw, *topo, every),
                         Replay(programs[i], hw, *topo, per_packet),
                         ReplayFluid(programs[i], hw, *topo, every)}) {
            ASSERT_TRUE(r.ok()) << r.status();
            EXPECT_EQ(ccreplay_test::PathMismatch(programs[i], *r, hw, *topo),
                      "");
            ++checked;
          }
          // Lean (no timing records), both engines: the same breakdown
          // (the fluid engine, which reports none, sums it only when
          // asked; without, it gives the same results but the breakdown).
          ReplayOptions lean;
          lean.keep_records = false;
          ReplayOptions lean_sums = lean;
          lean_sums.sum_critical_path = true;
          auto walk = Replay(programs[i], hw, *topo);
          auto fluid_walk = ReplayFluid(programs[i], hw, *topo);
          auto sums = Replay(programs[i], hw, *topo, lean);
          auto fluid_sums = ReplayFluid(programs[i], hw, *topo, lean_sums);
          auto fluid_lean = ReplayFluid(programs[i], hw, *topo, lean);
          ASSERT_TRUE(walk.ok() && fluid_walk.ok() && sums.ok() &&
                      fluid_sums.ok() && fluid_lean.ok());
          EXPECT_FALSE(fluid_lean->critical_path.has_value());
          EXPECT_EQ(fluid_lean->makespan, fluid_sums->makespan);
          EXPECT_EQ(fluid_lean->drained, fluid_sums->drained);
          EXPECT_EQ(fluid_lean->chip_finish, fluid_sums->chip_finish);
          EXPECT_EQ(fluid_lean->events, fluid_sums->events);
          for (const auto& [w, l] :
               {std::pair{&*walk, &*sums}, std::pair{&*fluid_walk, &*fluid_sums}}) {
            auto b = CriticalPathBreakdown(programs[i], *w, hw, *topo);
            auto c = CriticalPathBreakdown(programs[i], *l, hw, *topo);
            // Both refuse a trace whose last stream ends by issuing a
            // write (program 2), or both agree.
            ASSERT_EQ(b.ok(), c.ok()) << b.status() << c.status();
            EXPECT_TRUE(l->instrs.empty());
            if (b.ok()) {
              EXPECT_EQ(b->by_cause, c->by_cause);
              EXPECT_EQ(b->steps, c->steps);
            }
            EXPECT_EQ(w->makespan, l->makespan);
            EXPECT_EQ(w->events, l->events);
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 2 * 4 * 2 * 3);
}

TEST(BreakdownTest, SwitchForwardingIsNamed) {
  const HwConfig hw = OneEngineTps186();
  const Program p = OneStreamPerChip(
      {{Transfer(0, 1, 288), RemoteMsg(0, 1, 0)}, {MsgWait(0, 1)}});
  auto topo = Topology::Build(TopologyKind::kSwitch, 2);
  auto r = Replay(p, hw, *topo);
  ASSERT_TRUE(r.ok());
  auto b = CriticalPathBreakdown(p, *r, hw, *topo);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)[PathCause::kSwitch].ps(), hw.switch_forwarding.ps());
  // One chip link (200 ns + 25 ns) and one switch port (0 + 0 at TPS186).
  EXPECT_EQ((*b)[PathCause::kLatency].ps(),
            hw.link_latency.ps() + hw.link_propagation.ps() +
                hw.switch_port_latency.ps() + hw.switch_port_propagation.ps());
  TimePs sum;
  for (TimePs t : b->by_cause) sum += t;
  EXPECT_EQ(sum, r->makespan);
}

}  // namespace
}  // namespace ccreplay

namespace ccreplay {
namespace {

TEST(MessageTest, HandshakeLatencyDelaysTheCountAndIsNamedOnThePath) {
  HwConfig hw = OneEngineTps186();
  hw.msg_remote_latency = TimePs::Ns(40);
  const Program p = OneStreamPerChip({{RemoteMsg(0, 1, 0)}, {MsgWait(0, 1)}});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  auto r = Replay(p, hw, *topo);
  ASSERT_TRUE(r.ok());
  // 36 wire bytes (90 ps), one flight, then the 40 ns handshake.
  EXPECT_EQ(r->instrs[0].arrived.ps(), LinkPs(36) + 225000);
  EXPECT_EQ(r->instrs[1].end.ps(), LinkPs(36) + 225000 + 40000);
  auto b = CriticalPathBreakdown(p, *r, hw, *topo);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)[PathCause::kLatency].ps(), 225000 + 40000);
  EXPECT_EQ((*b)[PathCause::kSerialisation].ps(), LinkPs(36));
}

}  // namespace
}  // namespace ccreplay
