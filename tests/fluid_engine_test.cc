// The fluid replay engine (replay/fluid_engine.h): timings worked out by
// hand from the hardware parameters set in each test, and agreement with the
// packet engine on the topologies of the models' accuracy sweep.
#include "replay/fluid_engine.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/max_min.h"
#include "cli/run.h"
#include "collectives/lower.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/network.h"
#include "hw/port.h"
#include "hw/topology.h"
#include "replay/flow_net.h"
#include "run_cli.h"

namespace ccreplay {
namespace {

Instr Xfer(uint32_t qp, uint32_t dst, uint64_t bytes) {
  return {.kind = OpKind::kTransfer,
          .qp_id = qp,
          .peer = dst,
          .src_addr = 0,
          .dst_addr = 0,
          .bytes = bytes};
}
Instr Notify(uint32_t qp, uint32_t dst, uint32_t counter) {
  return {.kind = OpKind::kRemoteMsgSend,
          .qp_id = qp,
          .peer = dst,
          .dst_qp = counter,
          .dst_addr = 0};
}
Instr WaitFor(uint32_t counter, uint32_t count) {
  return {.kind = OpKind::kMsgWait, .dst_qp = counter, .count = count};
}

Program Chips(std::vector<std::vector<Instr>> streams) {
  Program p;
  p.num_chips = static_cast<uint32_t>(streams.size());
  p.chips.resize(p.num_chips);
  for (uint32_t c = 0; c < p.num_chips; ++c) {
    if (!streams[c].empty()) p.chips[c].streams.push_back({0, streams[c]});
  }
  return p;
}

ReplayResult MustReplayFluid(const Program& p, const HwConfig& hw,
                             TopologyKind kind, const ReplayOptions& opt = {}) {
  auto topo = Topology::Build(kind, p.num_chips);
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto r = ReplayFluid(p, hw, *topo, opt);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : ReplayResult{};
}

// ps to move `bytes` at `bytes_per_s`, exact in the cases below.
int64_t Ps(double bytes, double bytes_per_s) {
  return std::llround(bytes / bytes_per_s * 1e12);
}

// One flow over one link, the link the bottleneck (the engine reads in no
// time): startup + wire bytes / link bandwidth + the last packet's hop.
TEST(FluidEngineTest, OneFlowOverOneLink) {
  HwConfig hw = DefaultTps186();
  hw.cdma_bytes_per_s = 0;  // unbounded engine
  const uint64_t bytes = 1'000'000;
  const Program p = Chips({{Xfer(0, 1, bytes), Notify(0, 1, 0)},  //
                           {WaitFor(0, 1)}});
  const ReplayResult r = MustReplayFluid(p, hw, TopologyKind::kRing);
  // 1e6 B = 3472 packets of 288 B and a tail of 64 B; 32 B header each.
  const double payload = hw.packet_payload_bytes;
  const double header = hw.packet_header_bytes;
  const double packets = std::ceil(bytes / payload);
  const double wire = bytes + packets * header;
  const double tail = bytes - (packets - 1) * payload + header;
  const double link = static_cast<double>(hw.link_bytes_per_s);
  const int64_t startup = hw.cdma_startup.ps();
  const int64_t hop = (hw.link_latency + hw.link_propagation).ps();
  const int64_t end = startup + Ps(wire, link);
  ASSERT_EQ(end, 290'000 + 2'777'840);
  EXPECT_EQ(r.instrs[0].start.ps(), startup);
  // The engine is free once the rest fits its staging queues at the port:
  // 2 packets per lane group.
  const double staged =
      hw.cdma_staging_packets * hw.lane_groups * (payload + header);
  const int64_t engine_free = startup + Ps(wire - staged, link);
  EXPECT_EQ(r.instrs[0].end.ps(), engine_free);
  const int64_t landed = end + Ps(tail, link) + hop;
  EXPECT_EQ(r.instrs[0].landed.ps(), landed);
  // The acknowledgement: one message word and its header back, a packet
  // serialised on one lane group (at link / lane_groups).
  const int64_t word =
      Ps((hw.message_payload_bytes + header) * hw.lane_groups, link);
  EXPECT_EQ(r.instrs[0].complete.ps(), landed + word + hop);
  // The message leaves behind the data (from the free engine) and arrives
  // first, so it is held until the data has landed: write + msg.
  EXPECT_EQ(r.instrs[1].arrived.ps(), engine_free + word + hop);
  EXPECT_EQ(r.instrs[1].landed.ps(), landed);
  EXPECT_EQ(r.instrs[1].held_by, 0u);
  EXPECT_EQ(r.makespan.ps(), landed);
  // The message word crossed link 0 as a packet (a control packet is one,
  // ReplayOptions::fluid_packet_max); the flow's bytes are counted at its
  // start, the message's as it crosses.
  EXPECT_EQ(r.links[0].payload_bytes, bytes + hw.message_payload_bytes);
}

// A transfer of one packet crosses as a packet: read by its engine, then
// each lane group of each link serves the packets that reach it first come,
// first served, store-and-forward, at link / lane_groups. Three engines of
// chip 0 each send one 288-byte packet to chip 1 at the same time (ring of
// 2; chip 1 sends nothing): the first two to address 0, so to one lane
// group, where the second waits for the first; the third to the next
// interleave block, another lane group, where it waits for nothing.
TEST(FluidEngineTest, PacketsShareALaneGroupFirstComeFirstServed) {
  HwConfig hw = DefaultTps186();
  const uint64_t bytes = hw.packet_payload_bytes;
  Instr other = Xfer(8, 1, bytes);
  other.dst_addr = hw.interleave_block_bytes;
  ASSERT_NE(AddressLaneGroup(hw, GlobalAddress(1, 0)),
            AddressLaneGroup(hw, GlobalAddress(1, other.dst_addr)));
  const Program p = Chips({{Xfer(0, 1, bytes), Xfer(4, 1, bytes), other}, {}});
  const ReplayResult r = MustReplayFluid(p, hw, TopologyKind::kRing);
  const double link = static_cast<double>(hw.link_bytes_per_s);
  const int64_t startup = hw.cdma_startup.ps();
  // 288 B at 64 GB/s: 4.5 ns; 320 wire bytes at 400 / 4 GB/s: 3.2 ns.
  const int64_t read = Ps(bytes, static_cast<double>(hw.cdma_bytes_per_s));
  const int64_t ser =
      Ps((bytes + hw.packet_header_bytes) * hw.lane_groups, link);
  ASSERT_EQ(read, 4'500);
  ASSERT_EQ(ser, 3'200);
  const int64_t hop = (hw.link_latency + hw.link_propagation).ps();
  // Every engine starts after the startup (issued at 0 on idle engines) and
  // is free once its packet is read and on its link's queue.
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.instrs[i].end.ps(), startup + read) << i;
  }
  // Read at the same picosecond: engine 0's packet goes first.
  const int64_t first = startup + read + ser + hop;
  const int64_t second = startup + read + 2 * ser + hop;
  EXPECT_EQ(r.instrs[0].landed.ps(), first);
  EXPECT_EQ(r.instrs[1].landed.ps(), second);
  EXPECT_EQ(r.instrs[2].landed.ps(), first);
  EXPECT_EQ(r.links[0].queued.ps(), ser);  // the second waited one packet
  // Each acknowledgement is a packet back over link 1 -> 0, on the lane
  // group of the end of its write (address 288 for the first two, 576 for
  // the third): the first two share one, and the first is through before
  // the second is sent.
  ASSERT_NE(AddressLaneGroup(hw, GlobalAddress(0, bytes)),
            AddressLaneGroup(hw, GlobalAddress(0, 2 * bytes)));
  const int64_t ack =
      Ps((hw.message_payload_bytes + hw.packet_header_bytes) * hw.lane_groups,
         link) +
      hop;
  EXPECT_EQ(r.instrs[0].complete.ps(), first + ack);
  EXPECT_EQ(r.instrs[1].complete.ps(), second + ack);
  EXPECT_EQ(r.instrs[2].complete.ps(), first + ack);
  EXPECT_EQ(r.packets, 6u);  // 3 data, 3 acknowledgements
  EXPECT_EQ(r.links[0].packets, 3u);
  EXPECT_EQ(r.links[0].payload_bytes, 3 * bytes);
  // With every transfer a flow (fluid_packet_max 0), the three share the
  // link's rate and end together; messages take no share of it.
  ReplayOptions flows;
  flows.fluid_packet_max = 0;
  const ReplayResult f = MustReplayFluid(p, hw, TopologyKind::kRing, flows);
  EXPECT_EQ(f.packets, 0u);
  EXPECT_EQ(f.instrs[0].landed, f.instrs[1].landed);
  EXPECT_EQ(f.instrs[0].landed, f.instrs[2].landed);
}

// With round-robin interleaving a packet takes the lane group of each link
// that is free first (the lowest of those free together): the two packets
// to one address that wait for each other above (a lane group by address)
// cross side by side here, and land together.
TEST(FluidEngineTest, RoundRobinInterleavingTakesTheLaneGroupFreeFirst) {
  HwConfig hw = DefaultTps186();
  hw.interleave = InterleaveKind::kRoundRobin;
  const uint64_t bytes = hw.packet_payload_bytes;
  const Program p = Chips({{Xfer(0, 1, bytes), Xfer(4, 1, bytes)}, {}});
  const ReplayResult r = MustReplayFluid(p, hw, TopologyKind::kRing);
  const int64_t landed = hw.cdma_startup.ps() +
                         Ps(bytes, static_cast<double>(hw.cdma_bytes_per_s)) +
                         Ps((bytes + hw.packet_header_bytes) * hw.lane_groups,
                            static_cast<double>(hw.link_bytes_per_s)) +
                         (hw.link_latency + hw.link_propagation).ps();
  EXPECT_EQ(r.instrs[0].landed.ps(), landed);
  EXPECT_EQ(r.instrs[1].landed.ps(), landed);
  EXPECT_EQ(r.links[0].queued.ps(), 0);
}

// A train of packets (fluid_packet_max 4) from chip 0 to chip 2 through
// chip 1 (one-way ring of 3): the engine reads its packets one after
// another and each goes on as soon as it is read, store-and-forward at
// every hop. Its three packets (288, 288, 128 bytes) go to consecutive
// interleave blocks, so to three lane groups, and wait for none; the short
// last one overtakes the one before, and the transfer lands with the
// latest of them.
TEST(FluidEngineTest, ATrainIsReadAndForwardedPacketByPacket) {
  HwConfig hw = DefaultTps186();
  const uint64_t full = hw.packet_payload_bytes;
  const uint64_t tail = 128;
  ASSERT_EQ(hw.interleave_block_bytes, full);
  std::vector<uint32_t> lgs;
  for (uint64_t k = 0; k < 3; ++k) {
    lgs.push_back(AddressLaneGroup(hw, GlobalAddress(2, k * full)));
  }
  ASSERT_NE(lgs[0], lgs[1]);
  ASSERT_NE(lgs[1], lgs[2]);
  ASSERT_NE(lgs[0], lgs[2]);
  const Program p = Chips({{Xfer(0, 2, 2 * full + tail)}, {}, {}});
  ReplayOptions opt;
  opt.fluid_packet_max = 4;
  const ReplayResult r = MustReplayFluid(p, hw, TopologyKind::kRingUni, opt);
  const double cdma = static_cast<double>(hw.cdma_bytes_per_s);
  const double link = static_cast<double>(hw.link_bytes_per_s);
  const int64_t startup = hw.cdma_startup.ps();
  const int64_t hop = (hw.link_latency + hw.link_propagation).ps();
  // Read: 4.5, 4.5 and 2 ns.
  const int64_t read_full = Ps(full, cdma);
  const int64_t read_tail = Ps(tail, cdma);
  ASSERT_EQ(read_tail, 2'000);
  const int64_t read[3] = {startup + read_full, startup + 2 * read_full,
                           startup + 2 * read_full + read_tail};
  EXPECT_EQ(r.instrs[0].end.ps(), read[2]);
  // Per hop, a packet's serialisation on its lane group and the crossing.
  const int64_t full_hop =
      Ps((full + hw.packet_header_bytes) * hw.lane_groups, link) + hop;
  const int64_t tail_hop =
      Ps((tail + hw.packet_header_bytes) * hw.lane_groups, link) + hop;
  const int64_t second = read[1] + 2 * full_hop;  // 9 + 6.4 ns + 2 crossings
  const int64_t last = read[2] + 2 * tail_hop;    // 11 + 3.2 ns + 2 crossings
  ASSERT_GT(second, last);
  EXPECT_EQ(r.instrs[0].landed.ps(), second);
  EXPECT_EQ(r.packets, 3u + 1u);  // and the acknowledgement
  EXPECT_EQ(r.links[0].packets, 3u);
  EXPECT_EQ(r.links[1].packets, 3u);
}

// A packet's path longer than a train keeps in its own record (9 links on a
// one-way ring of 10 chips, chip 0 to chip 9): store-and-forward on each,
// nothing else on the way.
TEST(FluidEngineTest, APacketCrossesALongPath) {
  HwConfig hw = DefaultTps186();
  const uint64_t bytes = 100;
  std::vector<std::vector<Instr>> chips(10);
  chips[0] = {Xfer(0, 9, bytes)};
  const ReplayResult r =
      MustReplayFluid(Chips(chips), hw, TopologyKind::kRingUni);
  const double link = static_cast<double>(hw.link_bytes_per_s);
  const int64_t per_hop =
      Ps((bytes + hw.packet_header_bytes) * hw.lane_groups, link) +
      (hw.link_latency + hw.link_propagation).ps();
  // The read: 100 B at 64 GB/s, 1.5625 ns, rounded up to the picosecond.
  ASSERT_EQ(hw.CdmaReadTime(bytes).ps(), 1'563);
  const int64_t landed = hw.cdma_startup.ps() + 1'563 + 9 * per_hop;
  EXPECT_EQ(r.instrs[0].landed.ps(), landed);
  // The data crossed links 0 -> 1 ... 8 -> 9; the acknowledgement comes
  // back over 9 -> 0, one link.
  for (uint32_t l = 0; l < 10; ++l) EXPECT_EQ(r.links[l].packets, 1u) << l;
  EXPECT_EQ(r.instrs[0].complete.ps(),
            landed +
                Ps((hw.message_payload_bytes + hw.packet_header_bytes) *
                       hw.lane_groups,
                   link) +
                (hw.link_latency + hw.link_propagation).ps());
}

// An engine reads ahead of its link by what the port's staging queue for
// the link and the packet's lane group holds: it hands a packet it has read
// to the queue, and reads on, only once fewer than cdma.staging_packets
// (here 8, one lane group) of its packets wait there. With an unbounded
// engine and 20 packets, packet k starts on the link k serialisations after
// the startup, and the engine hands over its last, packet 19, and is free,
// when packet 11 starts (then 7 wait: 12 to 18).
TEST(FluidEngineTest, AnEngineReadsAheadByItsStagingQueues) {
  HwConfig hw = DefaultTps186();
  hw.cdma_bytes_per_s = 0;  // unbounded engine: reads in no time
  hw.lane_groups = 1;       // the link one lane group
  hw.cdma_staging_packets = 8;
  const uint64_t full = hw.packet_payload_bytes;
  const Program p = Chips({{Xfer(0, 1, 20 * full)}, {}});
  ReplayOptions opt;
  opt.fluid_packet_max = 20;
  const ReplayResult r = MustReplayFluid(p, hw, TopologyKind::kRing, opt);
  const double link = static_cast<double>(hw.link_bytes_per_s);
  const int64_t startup = hw.cdma_startup.ps();
  const int64_t ser = Ps(full + hw.packet_header_bytes, link);
  const uint32_t staged = hw.cdma_staging_packets * hw.lane_groups;
  ASSERT_EQ(staged, 8u);
  EXPECT_EQ(r.instrs[0].end.ps(), startup + (20 - staged - 1) * ser);
  EXPECT_EQ(r.instrs[0].landed.ps(),
            startup + 20 * ser + (hw.link_latency + hw.link_propagation).ps());
  // The flow frees the engine one packet later, when the bytes left fit in
  // the staging queues (the packet on the wire counted among them), and
  // lands one serialisation later: a flow's last packet is
  // store-and-forwarded once its bytes have passed (docs/models.md,
  // "Formulas").
  ReplayOptions flows;
  flows.fluid_packet_max = 0;
  const ReplayResult f = MustReplayFluid(p, hw, TopologyKind::kRing, flows);
  EXPECT_EQ(f.instrs[0].end.ps(), r.instrs[0].end.ps() + ser);
  EXPECT_EQ(f.instrs[0].landed.ps(), r.instrs[0].landed.ps() + ser);
}

// The staging queues are per link and lane group: an engine whose packets
// wait behind a congested link still hands a packet for another link over
// at once. On a ring of 3 with one lane group and slow links, engines 1-7
// of chip 0 fill link 0 -> 1 with 16-packet transfers; engine 0 then sends
// A (one packet) to chip 1, behind them, and B (one packet) to chip 2 over
// the idle link 0 -> 2. B is handed over as soon as it is read (the engine
// reads in no time), lands and completes long before A starts; its data
// phase ends at its start. Every instruction's times stay in order, with
// the critical path summed as the replay runs and in a lean replay too.
TEST(FluidEngineTest, AnEngineStagesPerLinkAndLaneGroup) {
  HwConfig hw = DefaultTps186();
  hw.cdma_bytes_per_s = 0;
  hw.lane_groups = 1;
  hw.link_bytes_per_s = 2'000'000'000;
  const uint64_t full = hw.packet_payload_bytes;
  std::vector<Instr> s;
  for (uint32_t e = 1; e < hw.cdma_engines; ++e) {
    s.push_back(Xfer(4 * e, 1, 16 * full));
  }
  const size_t a = s.size();
  s.push_back(Xfer(0, 1, full));
  s.push_back(Xfer(0, 2, full));
  const Program p = Chips({s, {}, {}});
  const ReplayResult r = MustReplayFluid(p, hw, TopologyKind::kRing);
  const InstrTiming& b = r.instrs[a + 1];
  EXPECT_EQ(b.end, b.start);
  EXPECT_LT(b.complete, r.instrs[a].landed);
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_LE(r.instrs[i].start, r.instrs[i].end) << i;
    EXPECT_LE(r.instrs[i].end, r.instrs[i].landed) << i;
    EXPECT_LE(r.instrs[i].landed, r.instrs[i].complete) << i;
  }
  for (const bool records : {true, false}) {
    ReplayOptions opt;
    opt.sum_critical_path = true;
    opt.keep_records = records;
    const ReplayResult summed =
        MustReplayFluid(p, hw, TopologyKind::kRing, opt);
    EXPECT_EQ(summed.makespan, r.makespan) << records;
  }
}

// Four flows, two bottlenecks, engines capped at 300 GB/s, on a one-way ring
// of 3 chips (links 0->1, 1->2, 2->0; every route unique): A, B, D leave
// chip 0 on engines 0, 1, 2; A and D go to chip 1, B to chip 2 (over 0->1
// and 1->2); C goes from chip 1 to chip 2. No headers, so wire = payload.
TEST(FluidEngineTest, MaxMinSharesWithTwoBottlenecksByHand) {
  HwConfig hw = DefaultTps186();
  hw.packet_header_bytes = 0;
  hw.packet_payload_bytes = 250;
  hw.cdma_bytes_per_s = 300'000'000'000;
  const double link = 400e9;  // hw.link_bytes_per_s
  ASSERT_EQ(hw.link_bytes_per_s, 400'000'000'000u);
  const Program p = Chips(
      {{Xfer(0, 1, 400'000), Xfer(4, 2, 1'200'000), Xfer(8, 1, 2'000'000)},
       {Xfer(0, 2, 1'600'000)},
       {}});
  const ReplayResult r = MustReplayFluid(p, hw, TopologyKind::kRingUni);
  // Phase 1, from the startup: 0->1 carries A, B, D: 400/3 GB/s each (below
  // the engines' 300); 1->2 carries B (fixed at 400/3) and C: C gets the
  // 800/3 GB/s left (below 300). A's 400 kB end after 3 us; by then B and D
  // have 800 kB left and C 1.6 MB - 800 kB = 800 kB.
  // Phase 2: 0->1 carries B, D: 200 each; 1->2 carries B, C: 200 each.
  // B, C end 800 kB / 200 GB/s = 4 us later; D has 800 kB left.
  // Phase 3: D alone on 0->1: min(400, engine 300) = 300 GB/s: 8/3 us.
  const int64_t t0 = hw.cdma_startup.ps();
  const int64_t a_end = t0 + Ps(400e3, link / 3);
  const int64_t bc_end = a_end + Ps(800e3, 200e9);
  const int64_t d_end =
      bc_end + static_cast<int64_t>(std::ceil(800e3 / 300e9 * 1e12));
  // A's engine is free when 2 packets per lane group of A are left (A runs
  // below its engine's rate, so the engine reads ahead); D's only at its
  // end, since it runs at its engine's rate then.
  const double staged = hw.cdma_staging_packets * hw.lane_groups * 250.0;
  EXPECT_EQ(r.instrs[0].end.ps(), t0 + Ps(400e3 - staged, link / 3));
  EXPECT_EQ(r.instrs[2].end.ps(), d_end);
  // Landed: the last 250-byte packet's serialisation and crossing per hop.
  const int64_t hop =
      Ps(250, link) + (hw.link_latency + hw.link_propagation).ps();
  EXPECT_EQ(r.instrs[0].landed.ps(), a_end + hop);
  EXPECT_EQ(r.instrs[1].landed.ps(), bc_end + 2 * hop);
  EXPECT_EQ(r.instrs[3].landed.ps(), bc_end + hop);
  EXPECT_EQ(r.instrs[2].landed.ps(), d_end + hop);
}

// A message on another qp than the data is not held behind it; one on the
// same qp is (write + msg), and the receiver's MsgWait is released by the
// later of its two counts.
TEST(FluidEngineTest, OnlyAMessageOnTheDataQpWaitsForTheData) {
  HwConfig hw = DefaultTps186();
  const Program p =
      Chips({{Xfer(0, 1, 4'000'000), Notify(4, 1, 4), Notify(0, 1, 0)},
             {WaitFor(4, 1), WaitFor(0, 1)}});
  const ReplayResult r = MustReplayFluid(p, hw, TopologyKind::kRing);
  const int64_t hop = (hw.link_latency + hw.link_propagation).ps();
  // A message is a packet serialised on one lane group.
  const int64_t msg =
      Ps((hw.message_payload_bytes + hw.packet_header_bytes) * hw.lane_groups,
         static_cast<double>(hw.link_bytes_per_s)) +
      hop;
  // The other qp's engine is idle: its message leaves at issue (no startup).
  EXPECT_EQ(r.instrs[1].start.ps(), 0);
  EXPECT_EQ(r.instrs[1].landed.ps(), msg);
  EXPECT_EQ(r.instrs[1].held_by, kNoCause);
  // The data qp's message leaves when the engine is done, and counts when
  // the data has landed.
  EXPECT_EQ(r.instrs[2].start, r.instrs[0].end);
  EXPECT_EQ(r.instrs[2].landed, r.instrs[0].landed);
  EXPECT_EQ(r.instrs[2].held_by, 0u);
  EXPECT_EQ(r.instrs[3].end.ps(), msg);            // first MsgWait
  EXPECT_EQ(r.instrs[4].end, r.instrs[0].landed);  // second
  EXPECT_EQ(r.makespan, r.instrs[0].landed);
}

TEST(FluidEngineTest, AWaitNeverSatisfiedIsADeadlockNamingIt) {
  const Program p = Chips({{}, {WaitFor(0, 1)}});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  auto r = ReplayFluid(p, DefaultTps186(), *topo);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("chip 1, stream 0, instruction 0"),
            std::string::npos)
      << r.status();
}

// FlowNet's local updates give the global max-min rates: flows over
// 2-3 of 8 links (a fixed pseudo-random pattern), some capped, added,
// removed and re-capped, checked against MaxMinRates over all live flows.
TEST(FlowNetTest, LocalUpdatesEqualTheGlobalAllocation) {
  constexpr double kCap = 100;
  FlowNet net(8, kCap);
  std::vector<std::vector<uint32_t>> links;
  std::vector<double> demand;
  std::vector<uint32_t> ids;
  std::vector<bool> live;
  uint32_t x = 12345;
  const auto next = [&x](uint32_t m) {
    x = x * 1103515245u + 12345u;
    return (x >> 16) % m;
  };
  const auto check = [&](const char* when) {
    net.Reallocate();
    std::vector<FluidFlow> all;
    std::vector<uint32_t> which;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!live[i]) continue;
      all.push_back({links[i], demand[i], 0});
      which.push_back(static_cast<uint32_t>(i));
    }
    const std::vector<double> want =
        MaxMinRates(std::vector<double>(8, kCap), all);
    for (size_t k = 0; k < which.size(); ++k) {
      EXPECT_NEAR(net.rate(ids[which[k]]), want[k], 1e-6)
          << when << ": flow " << which[k];
    }
  };
  for (int i = 0; i < 30; ++i) {
    std::vector<uint32_t> l = {next(8)};
    while (l.size() < 2 + next(2)) {
      const uint32_t c = next(8);
      if (std::find(l.begin(), l.end(), c) == l.end()) l.push_back(c);
    }
    links.push_back(l);
    demand.push_back(next(3) == 0 ? 5.0 + next(20) : 0.0);
    ids.push_back(net.Add(l, demand.back()));
    live.push_back(true);
    if (i % 7 == 6) check("after adding");
  }
  check("all added");
  for (size_t i = 0; i < ids.size(); i += 3) {
    net.Remove(ids[i]);
    live[i] = false;
    if (i % 9 == 0) check("while removing");
  }
  check("a third removed");
  for (size_t i = 1; i < ids.size(); i += 4) {
    if (!live[i]) continue;
    demand[i] = demand[i] > 0 ? 0.0 : 3.0;
    net.SetDemand(ids[i], demand[i]);
  }
  check("demands changed");
}

// The same on a larger random net where a change reaches few flows, one
// change per Reallocate, so most updates solve only part of the flows (the
// test counts them). Flows cross 1-3 links of one of 12 groups
// of 5, a third of them one link of the next group too, and a sixth of
// them one link in each of 5 groups further (they couple the groups).
TEST(FlowNetTest, RandomSingleChangesEqualTheGlobalAllocation) {
  constexpr double kCap = 100;
  constexpr uint32_t kLinks = 60;
  FlowNet net(kLinks, kCap);
  struct Live {
    uint32_t id;
    std::vector<uint32_t> links;
    double demand;
  };
  std::vector<Live> flows;
  uint32_t x = 777;
  const auto next = [&x](uint32_t m) {
    x = x * 1103515245u + 12345u;
    return (x >> 16) % m;
  };
  int local = 0;
  for (int step = 0; step < 600; ++step) {
    const uint32_t op = next(10);
    if (flows.size() < 40 || op < 5) {
      const uint32_t group = next(12) * 5;
      std::vector<uint32_t> l = {group + next(5)};
      while (l.size() < 1 + next(3)) {
        const uint32_t c = group + next(5);
        if (std::find(l.begin(), l.end(), c) == l.end()) l.push_back(c);
      }
      if (next(3) == 0) l.push_back((group + 5 + next(5)) % kLinks);
      if (next(6) == 0) {  // a long flow: one link in 5 more groups
        for (uint32_t g = 2; g < 7; ++g) l.push_back((group + 5 * g) % kLinks);
      }
      const double demand = next(3) == 0 ? 2.0 + next(30) : 0.0;
      flows.push_back({net.Add(l, demand), l, demand});
    } else if (op < 8) {
      const size_t k = next(static_cast<uint32_t>(flows.size()));
      net.Remove(flows[k].id);
      flows.erase(flows.begin() + static_cast<ptrdiff_t>(k));
    } else {
      Live& f = flows[next(static_cast<uint32_t>(flows.size()))];
      f.demand = f.demand > 0 ? 0.0 : 1.0 + next(40);
      net.SetDemand(f.id, f.demand);
    }
    const uint64_t solved = net.solved_flows();
    net.Reallocate();
    if (net.solved_flows() - solved < flows.size()) ++local;
    std::vector<FluidFlow> all;
    for (const Live& f : flows) all.push_back({f.links, f.demand, 0});
    const std::vector<double> want =
        MaxMinRates(std::vector<double>(kLinks, kCap), all);
    for (size_t k = 0; k < flows.size(); ++k) {
      ASSERT_NEAR(net.rate(flows[k].id), want[k], 1e-9 * kCap)
          << "step " << step << ": flow " << flows[k].id;
    }
  }
  EXPECT_GT(local, 300);
}

// Send waits for its Receive's clear-to-send (its own startup overlapping
// the wait), then moves its data; the Receive lands with it. Sizes that
// differ are an error naming both.
TEST(FluidEngineTest, SendStartsWhenTheClearToSendArrives) {
  HwConfig hw = DefaultTps186();
  const Instr send = {.kind = OpKind::kSend,
                      .peer = 1,
                      .src_addr = 0,
                      .dst_addr = 0,
                      .bytes = 64'000};
  Instr recv = {.kind = OpKind::kReceive,
                .peer = 0,
                .src_addr = 0,
                .dst_addr = 0,
                .bytes = 64'000};
  const ReplayResult r =
      MustReplayFluid(Chips({{send}, {recv}}), hw, TopologyKind::kRing);
  const int64_t startup = hw.cdma_startup.ps();
  // The clear-to-send: a packet serialised on one lane group.
  const int64_t cts =
      Ps((hw.message_payload_bytes + hw.packet_header_bytes) * hw.lane_groups,
         static_cast<double>(hw.link_bytes_per_s)) +
      (hw.link_latency + hw.link_propagation).ps();
  EXPECT_EQ(r.instrs[1].start.ps(), startup);  // the Receive
  EXPECT_EQ(r.instrs[0].start.ps(), startup + cts);
  EXPECT_GT(r.instrs[0].landed, r.instrs[0].start);
  EXPECT_EQ(r.instrs[1].landed, r.instrs[0].landed);
  EXPECT_EQ(r.instrs[1].complete, r.instrs[0].landed);
  recv.bytes = 1000;
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  auto bad = ReplayFluid(Chips({{send}, {recv}}), hw, *topo);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expects 1000"), std::string::npos)
      << bad.status();
}

struct Case {
  const char* op;
  const char* algo;
  const char* topology = "";
  uint64_t bytes = 0;
};

// Lowers `c` at 8 chips and replays it on both engines on `hw`; returns
// the fluid time over the packet time, minus 1, and the fluid's events.
double FluidError(const Case& c, HwConfig hw, uint64_t* fluid_events) {
  auto topo = ParseTopologySpec(c.topology, hw.topology_params);
  EXPECT_TRUE(topo.ok()) << topo.status();
  hw.topology_params = topo->second;
  CollectiveSpec spec;
  spec.op = *ParseCollectiveOp(c.op);
  spec.n = 8;
  spec.bytes = c.bytes;
  spec.algorithm = c.algo;
  spec.topology = topo->first;
  auto trace = LowerCollective(spec, hw);
  EXPECT_TRUE(trace.ok()) << trace.status();
  auto packet = ReplayTrace(*trace, hw, spec.topology, {}, {}, &Replay);
  auto fluid = ReplayTrace(*trace, hw, spec.topology, {}, {}, &ReplayFluid);
  EXPECT_TRUE(packet.ok()) << packet.status();
  EXPECT_TRUE(fluid.ok()) << fluid.status();
  if (!packet.ok() || !fluid.ok()) return 1e9;
  *fluid_events = fluid->result.events;
  return fluid->result.makespan.us() / packet->result.makespan.us() - 1;
}

void ExpectWithinTenPercent(const Case& c, const HwConfig& hw) {
  uint64_t events = 0;
  const double err = FluidError(c, hw, &events);
  EXPECT_LT(std::abs(err), 0.10)
      << c.op << " " << c.algo << " on " << c.topology << ", " << c.bytes
      << " bytes: fluid off the packet engine by " << err * 100 << "%";
  EXPECT_GT(events, 0u);
}

const Case kOps[] = {{"allreduce", "ring"},
                     {"allreduce", "hd"},
                     {"allgather", "ring"},
                     {"alltoall", "pairwise"}};

// Within 10% of the packet engine for messages >= 1 MB on the topologies of
// the sweep (board-fattree at 8 chips is one board; cpb=2 makes 4 boards
// under the spines). The ring's multi-hop algorithms are below: there the
// packet engine's chips relay with round-robin arbitration over inputs.
// docs/models.md, "Fluid engine", has the table up to 16 MB.
TEST(FluidEngineAgreementTest, WithinTenPercentOfPacketsFromOneMegabyte) {
  const char* const topologies[] = {"ring", "fullmesh", "switch",
                                    "board-fattree", "board-fattree:cpb=2"};
  for (const char* topo : topologies) {
    for (Case c : kOps) {
      const bool relays =
          std::string(topo) == "ring" && std::string(c.algo) != "ring";
      if (relays) continue;
      for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{4} << 20}) {
        c.topology = topo;
        c.bytes = bytes;
        ExpectWithinTenPercent(c, DefaultTps186());
      }
    }
  }
}

// The known miss, by its cause: on a ring, HD and pairwise send over
// several hops, and a relaying chip's port serves its inputs (each engine,
// each incoming link) round-robin, so relayed traffic gets one input's share
// instead of one share per flow (fluid 11-12% slower at 1 MB, up to 38%
// faster at 16 MB). With FIFO arbitration (the packet queued first goes
// first, which is fair per packet, so per flow) they agree.
TEST(FluidEngineAgreementTest, RingRelaysAgreeWithFifoArbitration) {
  HwConfig hw = DefaultTps186();
  hw.switch_fifo = true;
  for (Case c : {kOps[1], kOps[3]}) {
    for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{4} << 20}) {
      c.topology = "ring";
      c.bytes = bytes;
      ExpectWithinTenPercent(c, hw);
    }
  }
}

// The arbiter behind that miss, in isolation. One-way ring of 3 chips:
// chip 0 sends 1 MB to chip 2 from each of its 8 engines (relayed by chip
// 1), chip 1 sends 1 MB to chip 2 from each of its 8. Chip 1's port to
// chip 2 has 9 inputs with packets (its 8 engines, the link from chip 0)
// and serves them in turn: chip 1's flows get 8/9 of the link until they
// are done, the 8 relayed flows share 1/9, then the whole link. Per-flow
// max-min (the fluid engine) gives all 16 flows 1/16 and ends them
// together. Within 1% of the figures worked out from the parameters.
TEST(FluidEngineAgreementTest, RoundRobinServesARelayOneInputShare) {
  const HwConfig hw = DefaultTps186();
  std::vector<Instr> chip0, chip1;
  for (uint32_t e = 0; e < 8; ++e) {
    chip0.push_back(Xfer(e << 2, 2, 1'000'000));
    chip1.push_back(Xfer(e << 2, 2, 1'000'000));
  }
  const Program p = Chips({chip0, chip1, {}});
  auto topo = Topology::Build(TopologyKind::kRingUni, 3);
  ASSERT_TRUE(topo.ok());
  auto packet = Replay(p, hw, *topo);
  ASSERT_TRUE(packet.ok()) << packet.status();
  const ReplayResult fluid = MustReplayFluid(p, hw, TopologyKind::kRingUni);
  // 1e6 B = 3473 packets with a 32-byte header each, per transfer.
  const double per_flow = 1e6 + std::ceil(1e6 / 288) * 32;
  const double link = 400e9;
  const double t0 = hw.cdma_startup.ps() * 1e-12;
  const double hop = (hw.link_latency + hw.link_propagation).ps() * 1e-12;
  const double local = t0 + 8 * per_flow / (link * 8 / 9) + hop;
  const double relayed = t0 + 16 * per_flow / link + 2 * hop;
  for (uint32_t i = 0; i < 16; ++i) {
    const double expected = i < 8 ? relayed : local;
    EXPECT_NEAR(packet->instrs[i].landed.ps() * 1e-12, expected,
                0.01 * expected)
        << i;
    // The fluid engine ends chip 1's flows with the relayed ones.
    EXPECT_NEAR(fluid.instrs[i].landed.ps() * 1e-12, relayed, 0.01 * relayed)
        << i;
  }
}

TEST(FluidEngineTest, SameInputsSameResult) {
  const Case c{"alltoall", "pairwise", "board-fattree:cpb=2", 1 << 20};
  uint64_t e1 = 0;
  uint64_t e2 = 0;
  EXPECT_EQ(FluidError(c, DefaultTps186(), &e1),
            FluidError(c, DefaultTps186(), &e2));
  EXPECT_EQ(e1, e2);
}

// The command line: `replay --engine fluid` says so, writes the same JSON
// twice, and refuses an engine it does not know (usage error).
TEST(FluidEngineCliTest, ReplayEngineFluidIsDeterministicAndNamed) {
  using ccreplay_test::RunCcreplay;
  const std::string dir = ::testing::TempDir();
  const std::string trace = dir + "/fluid_cli.pb";
  ASSERT_EQ(RunCcreplay("lower --op allreduce --n 4 --bytes 64K -o " + trace)
                .exit_code,
            0);
  const auto a = RunCcreplay("replay " + trace + " --engine fluid --json " +
                             dir + "/fluid_a.json");
  const auto b = RunCcreplay("replay " + trace + " --engine fluid --json " +
                             dir + "/fluid_b.json");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_NE(a.out.find("fluid engine"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("n/a with the fluid engine"), std::string::npos);
  EXPECT_EQ(a.out, b.out);
  const auto same = ccreplay_test::RunShell("cmp " + dir + "/fluid_a.json " +
                                            dir + "/fluid_b.json");
  EXPECT_EQ(same.exit_code, 0) << same.out;
  const auto json = ccreplay_test::RunShell(
      "grep -c '\"engine\": *\"fluid\"' " + dir + "/fluid_a.json");
  EXPECT_EQ(json.exit_code, 0) << json.out;
  EXPECT_EQ(RunCcreplay("replay " + trace + " --engine flow").exit_code, 2);
  // --fluid-packets: the fluid engine's, named in the summary; 0 = flows
  // only; out of range or with the packet engine, a usage error.
  EXPECT_NE(a.out.find("packets for transfers of at most 16 packets)"),
            std::string::npos)
      << a.out;
  const auto flows =
      RunCcreplay("replay " + trace + " --engine fluid --fluid-packets 0");
  ASSERT_EQ(flows.exit_code, 0) << flows.out;
  EXPECT_NE(flows.out.find("fluid engine (flows, no packets)"),
            std::string::npos)
      << flows.out;
  EXPECT_NE(flows.out.find(" 0 packets"), std::string::npos) << flows.out;
  EXPECT_EQ(RunCcreplay("replay " + trace + " --fluid-packets 2").exit_code, 2);
  EXPECT_EQ(
      RunCcreplay("replay " + trace + " --engine fluid --fluid-packets 65536")
          .exit_code,
      2);
}

}  // namespace
}  // namespace ccreplay
