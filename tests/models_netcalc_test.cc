// Network calculus: rate-latency concatenation and delay bounds by hand.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/network.h"
#include "hw/port.h"
#include "hw/topology.h"
#include "models/net_params.h"
#include "models/netcalc.h"

namespace ccreplay {
namespace {

TEST(NetCalcTest, ConcatenationOverThreeHops) {
  // R = min(400, 100, 200) GB/s = 100 GB/s; T = 0.2 + 1.0 + 0.3 = 1.5 us.
  const RateLatency s = Concatenate({{400e9, 0.2}, {100e9, 1.0}, {200e9, 0.3}});
  EXPECT_DOUBLE_EQ(s.rate_bps, 100e9);
  EXPECT_NEAR(s.latency_us, 1.5, 1e-12);
  // sigma = 1e6 bytes: d = 1.5 + 1e6 / 100e9 s = 1.5 + 10 = 11.5 us.
  EXPECT_NEAR(DelayBoundUs({1e6, 50e9}, s), 11.5, 1e-9);
  // rho above R: the backlog grows without bound.
  EXPECT_TRUE(std::isinf(DelayBoundUs({1e6, 150e9}, s)));
}

// TPS186 with its blocks hashed over the 4 lane groups (a flow may get only
// one) instead of its XOR fold.
NetParams HashedTps186() {
  NetParams net = NetParamsFromHw(DefaultTps186());
  net.interleave = InterleaveKind::kHash;
  return net;
}

// Two flows into chip 2 through a switch: on the downlink R = 360 / 4 / 2
// GB/s with hashed lane groups.
TEST(NetCalcTest, FlowServersThroughASwitch) {
  const NetParams net = HashedTps186();
  const Topology topo = *Topology::Build(TopologyKind::kSwitch, 3);
  Step s;
  for (uint32_t src : {0u, 1u}) {
    s.flows.push_back({src, 2, 1'800'000, 8, topo.Path(src, 2)});
  }
  const std::vector<RateLatency> h = NcFlowServers(s, 0, topo, net);
  ASSERT_EQ(h.size(), 3u);                 // injection, uplink, downlink
  EXPECT_DOUBLE_EQ(h[0].rate_bps, 512e9);  // min(512e9 / 1, 8 * 64e9)
  EXPECT_DOUBLE_EQ(h[0].latency_us, 0.29);
  EXPECT_DOUBLE_EQ(h[1].rate_bps, 360e9 / 4);  // uplink: one flow
  // T = one crossing + one 320-byte packet on one 100 GB/s lane group.
  const double lane_packet = 320 / 100e9 * 1e6;  // 0.0032 us
  EXPECT_NEAR(h[1].latency_us, 0.225 + lane_packet, 1e-12);
  EXPECT_DOUBLE_EQ(h[2].rate_bps, 360e9 / 4 / 2);  // downlink: two flows
  // Leaving the switch: + forwarding and the store-and-forwarded packet.
  EXPECT_NEAR(h[2].latency_us, 0.225 + lane_packet + 1.0 + lane_packet, 1e-12);
  // T = 0.29 + 0.2282 + 1.2314 = 1.7496; the arrival notice behind the data
  // takes one lane packet per hop (2); sigma / R = 1.8e6 / 45e9 s = 40 us.
  const double t = 0.29 + 0.2282 + 1.2314;
  EXPECT_NEAR(NcStepBoundUs(s, topo, net), t + 2 * lane_packet + 40, 1e-9);
  // Spread round-robin, a flow is guaranteed the whole link's share, and
  // its last packet still crosses one lane group at 1/4 of it: one more
  // lane packet per hop.
  NetParams rr = net;
  rr.interleave = InterleaveKind::kRoundRobin;
  EXPECT_NEAR(NcStepBoundUs(s, topo, rr),
              t + 2 * lane_packet + 2 * lane_packet + 10, 1e-9);
}

// A chip's engines serve its Transfers in order: chip 0's two flows of a
// full mesh, each on its own link, may pass one after another, each at its
// own guaranteed rate (hashed: one lane group of its link, 360 / 4 GB/s),
// so the later one is through only after both.
TEST(NetCalcTest, AChipsFlowsPassInOrder) {
  const NetParams net = HashedTps186();
  const Topology topo = *Topology::Build(TopologyKind::kFullMesh, 3);
  Step s;
  for (uint32_t dst : {1u, 2u}) {
    s.flows.push_back({0, dst, 1'800'000, 8, topo.Path(0, dst)});
  }
  // Per flow: R = min(512e9 / 2, 8 * 64e9, 90e9) = 90 GB/s, 20 us for its
  // 1.8e6 bytes; T = the busiest engine's 2 startups (16 Transfers over 8
  // engines) + one crossing and one packet on one 100 GB/s lane group.
  const double lane_packet = 320 / 100e9 * 1e6;  // 0.0032 us
  const double t = 2 * 0.29 + 0.225 + lane_packet;
  const std::vector<RateLatency> h = NcFlowServers(s, 0, topo, net);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_DOUBLE_EQ(Concatenate(h).rate_bps, 90e9);
  // In order: both flows at 90 GB/s, 40 us, then the arrival notice's lane
  // packet on the one hop.
  EXPECT_NEAR(NcStepBoundUs(s, topo, net), t + 40 + lane_packet, 1e-9);
  // A flow alone on its chip is bounded as before: 20 us.
  s.flows.pop_back();
  EXPECT_NEAR(NcStepBoundUs(s, topo, net),
              0.29 + 0.225 + lane_packet + 20 + lane_packet, 1e-9);
}

// Fair shares charge a large flow for every small one beside it: chip 0's
// 1.8 MB and nine chips' 4 KiB into chip 10 through a switch, blocks spread
// round-robin. The downlink's fair share is 360 / 10 GB/s (50 us), but all
// the step's work on the flow's servers is much less: its busiest engine's
// 225,000 bytes at 64 GB/s, its uplink's 1.8 MB and its downlink's
// 1.8 MB + 9 x 4 KiB at 360 GB/s.
TEST(NetCalcTest, NoLongerThanBehindAllTheStepsWork) {
  NetParams net = NetParamsFromHw(DefaultTps186());
  net.interleave = InterleaveKind::kRoundRobin;
  const Topology topo = *Topology::Build(TopologyKind::kSwitch, 11);
  Step s;
  s.flows.push_back({0, 10, 1'800'000, 8, topo.Path(0, 10), 1'800'000 / 8});
  for (uint32_t src = 1; src <= 9; ++src) {
    s.flows.push_back({src, 10, 4096, 8, topo.Path(src, 10), 512});
  }
  // The fair share: 1.8e6 / 36e9 s = 50 us.
  EXPECT_DOUBLE_EQ(Concatenate(NcFlowServers(s, 0, topo, net)).rate_bps,
                   360e9 / 10);
  const double lane_packet = 320 / 100e9 * 1e6;  // 0.0032 us
  // T = startup + (crossing + packet) + (crossing + packet + forwarding +
  // packet), as in FlowServersThroughASwitch, and round-robin's own last
  // packet on one lane group per hop.
  const double t = 0.29 + (0.225 + 2 * lane_packet) +
                   (0.225 + 2 * lane_packet + 1.0 + lane_packet);
  // In wire bytes at the link's 400 GB/s: a flow of b bytes in 8 stripes
  // is at most b / 288 + 8 packets, each with a 32-byte header.
  const double wire_big = 1.8e6 + 32 * (1.8e6 / 288 + 8);  // 2,000,256
  const double wire_small = 4096 + 32 * (4096.0 / 288 + 8);
  const double work = 225000 / 64e9 * 1e6 +                       // 3.515625
                      wire_big / 400e9 * 1e6 +                    // 5.00064
                      (wire_big + 9 * wire_small) / 400e9 * 1e6;  // 5.1088
  // Then the arrival notice: one lane packet per hop.
  EXPECT_NEAR(NcStepBoundUs(s, topo, net), t + work + 2 * lane_packet, 1e-9);
  // Without the engines' split the step view gives, the flow counts as on
  // one engine: 1.8e6 / 64e9 s = 28.125 us.
  s.flows[0].busiest_engine_bytes = 0;
  EXPECT_NEAR(NcStepBoundUs(s, topo, net),
              t + work - 3.515625 + 28.125 + 2 * lane_packet, 1e-9);
  // Chip 0 also sends 1.8 MB to chip 9, whose downlink carries nothing
  // else: its two pairs take their turns. The turn to 9: 3.515625 us on the
  // engine, 5 on the uplink (the chip's other pair takes its own turn), 5
  // on the downlink; the chip's 16 Transfers on 8 engines: 2 startups.
  s.flows[0].busiest_engine_bytes = 1'800'000 / 8;
  s.flows.push_back({0, 9, 1'800'000, 8, topo.Path(0, 9), 1'800'000 / 8});
  const double turn_to_9 = 3.515625 + 2 * wire_big / 400e9 * 1e6;
  EXPECT_NEAR(NcStepBoundUs(s, topo, net),
              t + 0.29 + work + turn_to_9 + 2 * lane_packet, 1e-9);
}

// TPS186 folds block numbers by XOR (4 lane groups, blocks of one 288-byte
// payload): a flow's busiest lane group carries little more than a quarter
// of it, so the step's work on a link is near the link's bytes at its full
// rate (the fair-share servers keep one lane group: LaneDivisor).
TEST(NetCalcTest, XorSpreadsALargeFlowOverTheLaneGroups) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
  ASSERT_EQ(net.interleave, InterleaveKind::kXor);
  ASSERT_EQ(net.interleave_block_bytes, 288u);
  // 1.8e6 bytes in 8 stripes: blocks = (1.8e6 / 288 + 2 * 8 + 8 * 3) / 4 + 8
  // = (6250 + 40) / 4 + 8 = 1580.5 on the busiest lane group, one packet of
  // 288 + 32 wire bytes each: 505,760 bytes.
  EXPECT_DOUBLE_EQ(WorstLaneWireBytes(net, 1.8e6, 8), 1580.5 * 320);
  const Topology topo = *Topology::Build(TopologyKind::kFullMesh, 2);
  Step s;
  s.flows.push_back({0, 1, 1'800'000, 8, topo.Path(0, 1), 1'800'000 / 8});
  const std::vector<RateLatency> h = NcFlowServers(s, 0, topo, net);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_DOUBLE_EQ(h[1].rate_bps, 360e9 / 4);    // fair share: one lane group
  const double lane_packet = 320 / 100e9 * 1e6;  // 0.0032 us
  const double t = 0.29 + 0.225 + lane_packet;
  // The servers give 1.8e6 / 90e9 s = 20 us; the work: the busiest engine's
  // 225,000 bytes at 64 GB/s, then 505,760 wire bytes at one lane group's
  // 100 GB/s: 3.515625 + 5.0576 us.
  const double work = 225000 / 64e9 * 1e6 + 505760 / 100e9 * 1e6;
  EXPECT_NEAR(NcStepBoundUs(s, topo, net), t + work + lane_packet, 1e-9);
  // 4 KiB in 8 stripes: (14.2 + 40) / 4 + 8 = 21.6 blocks, more than the
  // flow's at most 4096 / 288 + 8 packets: all of it may be on one lane
  // group, as hashed; the servers' 4096 / 90e9 s is then the smaller.
  EXPECT_DOUBLE_EQ(WorstLaneWireBytes(net, 4096, 8),
                   4096 + 32 * (4096.0 / 288 + 8));
  s.flows[0].bytes = 4096;
  s.flows[0].busiest_engine_bytes = 512;
  EXPECT_NEAR(NcStepBoundUs(s, topo, net), t + 4096 / 90e9 * 1e6 + lane_packet,
              1e-9);
  // Blocks of two payloads (512 and 256 bytes), one stripe of 64 KiB:
  // (128 + 2 + 3) / 4 + 1 = 34.25 blocks of at most 2 packets' starts, of
  // 256 + 32 wire bytes each.
  NetParams wide = net;
  wide.interleave_block_bytes = 512;
  wide.packet_payload_bytes = 256;
  EXPECT_DOUBLE_EQ(WorstLaneWireBytes(wide, 65536, 1), 34.25 * 2 * 288);
  // Round-robin: an even quarter of the at most 256 + 1 packets' wire
  // bytes; a hash: all of them.
  const double wire = 65536 + 32 * (256 + 1);
  wide.interleave = InterleaveKind::kRoundRobin;
  EXPECT_DOUBLE_EQ(WorstLaneWireBytes(wide, 65536, 1), wire / 4);
  wide.interleave = InterleaveKind::kHash;
  EXPECT_DOUBLE_EQ(WorstLaneWireBytes(wide, 65536, 1), wire);
}

// WorstLaneWireBytes holds for the lane groups the replay gives a Transfer's
// packets (AddressLaneGroup of each packet's global address, as CdmaUnit
// emits them): at every start offset and size tried, no lane group gets
// more of a stripe's payload than the bound.
TEST(NetCalcTest, XorBoundHoldsForTheReplaysLaneGroups) {
  for (const uint32_t lanes : {2u, 4u, 8u}) {
    for (const uint32_t block : {288u, 512u, 128u}) {
      HwConfig hw = DefaultTps186();
      hw.lane_groups = lanes;
      hw.interleave_block_bytes = block;
      const NetParams net = NetParamsFromHw(hw);
      const uint64_t pay = hw.packet_payload_bytes;
      for (const uint64_t bytes : {1ull, 300ull, 1000ull, 4096ull, 65536ull,
                                   100'000ull, 1'048'576ull}) {
        for (const uint64_t start : {0ull, 1ull, 287ull, 1000ull, 123'457ull}) {
          std::vector<uint64_t> lane(hw.lane_groups, 0);
          for (uint64_t off = 0; off < bytes; off += pay) {
            lane[AddressLaneGroup(hw, GlobalAddress(3, start + off))] +=
                std::min(pay, bytes - off) + hw.packet_header_bytes;
          }
          const uint64_t most = *std::max_element(lane.begin(), lane.end());
          EXPECT_LE(static_cast<double>(most),
                    WorstLaneWireBytes(net, static_cast<double>(bytes), 1))
              << lanes << " lane groups, block " << block << ", " << bytes
              << " bytes from " << start;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ccreplay
