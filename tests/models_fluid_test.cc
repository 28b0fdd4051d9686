// Fluid max-min: progressive filling and finish times worked out by hand.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "models/fluid.h"
#include "models/net_params.h"
#include "models/steps.h"

namespace ccreplay {
namespace {

// Resource A (10 units/s) carries f1 and f2; resource B (6 units/s) carries
// f2, f3 and f4; f4 demands at most 1.
std::vector<FluidFlow> FourFlows() {
  return {{{0}, 0, 15}, {{0, 1}, 0, 5}, {{1}, 0, 10}, {{1}, 1e6, 1}};
}
const std::vector<double> kCaps = {10e6, 6e6};

TEST(MaxMinTest, HeterogeneousFlowsTwoBottlenecks) {
  // Filling by hand (units of 1e6 bytes/s):
  //  round 1: f4 reaches its demand 1 (every flow at 1; A left 8, B left 3);
  //  round 2: B's 3 shared by f2, f3: +1.5 each -> 2.5, B full (A left 5);
  //  round 3: f1 alone on A: +5 -> 7.5, A full.
  const std::vector<double> r = MaxMinRates(kCaps, FourFlows());
  ASSERT_EQ(r.size(), 4u);
  EXPECT_NEAR(r[0], 7.5e6, 1);
  EXPECT_NEAR(r[1], 2.5e6, 1);
  EXPECT_NEAR(r[2], 2.5e6, 1);
  EXPECT_NEAR(r[3], 1e6, 1);
}

TEST(MaxMinTest, FinishTimesRecomputeRatesWhenAFlowEnds) {
  // t = 0..1 us at (7.5, 2.5, 2.5, 1): f4's 1 byte is done at 1 us; left
  //   f1 7.5, f2 2.5, f3 7.5.
  // New rates: B's 6 to f2, f3 (3 each), A's remaining 7 to f1.
  //   f2 is done after 2.5 / 3 = 0.8333 us (t = 1.8333); left f1 7.5 - 7 *
  //   0.8333 = 1.6667, f3 7.5 - 2.5 = 5.
  // Alone: f1 at 10 takes 0.16667 (t = 2.0), f3 at 6 takes 0.8333
  //   (t = 2.6667).
  const std::vector<double> t = FluidFinishTimesUs(kCaps, FourFlows());
  ASSERT_EQ(t.size(), 4u);
  EXPECT_NEAR(t[3], 1.0, 1e-9);
  EXPECT_NEAR(t[1], 1.0 + 2.5 / 3, 1e-9);
  EXPECT_NEAR(t[0], 2.0, 1e-9);
  EXPECT_NEAR(t[2], 1.0 + 2.5 / 3 + 5.0 / 6, 1e-9);
}

// On a step: two flows into chip 2 through a switch share its downlink
// (360 GB/s of payload), 180 GB/s each.
// Unbounded rates (the alpha-beta machine's engines, local copies without a
// link): such a flow is done at once, and one sharing a finite resource
// beside it still takes its time; a flow with no rate at all never ends.
// (inf * 0 made the remaining bytes NaN and `models` looped for ever.)
TEST(MaxMinTest, UnboundedAndZeroRatesEnd) {
  const double inf = std::numeric_limits<double>::infinity();
  // f0: 100 bytes on the unbounded resource 0, demand unbounded.
  // f1: 1e6 bytes on resource 1 (1e6 bytes/s): 1 s = 1e6 us.
  const std::vector<FluidFlow> flows = {{{0}, 0, 100}, {{1}, 0, 1e6}};
  const std::vector<double> t = FluidFinishTimesUs({inf, 1e6}, flows);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], 0.0);
  EXPECT_NEAR(t[1], 1e6, 1e-3);
  const std::vector<double> stuck = FluidFinishTimesUs({0.0}, {{{0}, 0, 5}});
  ASSERT_EQ(stuck.size(), 1u);
  EXPECT_TRUE(std::isinf(stuck[0]));
}

TEST(FluidStepTest, SharedDownlinkHalvesEachFlow) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
  const Topology topo = *Topology::Build(TopologyKind::kSwitch, 3);
  Step s;
  for (uint32_t src : {0u, 1u}) {
    s.flows.push_back({src, 2, 1'800'000, 8, topo.Path(src, 2)});
  }
  // startup 0.29 + 1.8e6 B / 180e9 B/s (10 us) + the chip's link 0.225 +
  // the switch output's latency and cable (switch_config.port_*: 0 at
  // TPS186) + forwarding 1.0 + one packet slot 0.0008.
  ASSERT_EQ(net.switch_hop_us, 0.0);
  EXPECT_NEAR(FluidStepUs(s, topo, net),
              0.29 + 10 + 0.225 + net.switch_hop_us + 1.0008, 1e-9);
}

// One stripe caps a flow at one engine's 64 GB/s, below the link's 360.
TEST(FluidStepTest, OneStripeFlowRunsAtOneEngine) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
  const Topology topo = *Topology::Build(TopologyKind::kRing, 4);
  Step s;
  s.flows.push_back({0, 1, 640'000, 1, topo.Path(0, 1)});
  // 0.29 + 640000 / 64e9 s (10 us) + 0.225.
  EXPECT_NEAR(FluidStepUs(s, topo, net), 0.29 + 10 + 0.225, 1e-9);
}

}  // namespace
}  // namespace ccreplay
