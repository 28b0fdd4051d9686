// Network calculus: rate-latency concatenation and delay bounds by hand.
#include <cmath>

#include "gtest/gtest.h"
#include "hw/config.h"
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

// Two flows into chip 2 through a switch: on the downlink R = 360 / 4 / 2
// GB/s (TPS186 hashes blocks over 4 lane groups: a flow may get only one).
TEST(NetCalcTest, FlowServersThroughASwitch) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
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
  // Spread round-robin, a flow is guaranteed the whole link's share.
  NetParams rr = net;
  rr.hashed_lanes = false;
  EXPECT_NEAR(NcStepBoundUs(s, topo, rr), t + 2 * lane_packet + 10, 1e-9);
}

// A chip's engines serve its Transfers in order: chip 0's two flows of a
// full mesh, each on its own link, may pass one after another, each at its
// own guaranteed rate (one lane group of its link: 360 / 4 GB/s), so the
// later one is through only after both.
TEST(NetCalcTest, AChipsFlowsPassInOrder) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
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

}  // namespace
}  // namespace ccreplay
