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

// The schedule walks chip by chip: in step 0 chip 0 sends 1.8 MB to chip 1
// (5 us at the link's 360 GB/s) while chip 1 sends 64 KiB to chip 2; in step
// 1 chip 2 forwards 64 KiB to chip 0. Chip 2 starts its step 1 once chip
// 1's 64 KiB has landed, not after chip 0's 1.8 MB: the schedule ends with
// the 1.8 MB's landing. In lockstep it would be both steps' slowest flows.
TEST(FluidScheduleTest, ChipsStartTheirNextStepWhenTheirDataLanded) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
  const Topology topo = *Topology::Build(TopologyKind::kRing, 3);
  StepView v;
  v.num_chips = 3;
  Step s0;
  s0.flows.push_back({0, 1, 1'800'000, 8, topo.Path(0, 1)});
  s0.flows.push_back({1, 2, 65536, 8, topo.Path(1, 2)});
  Step s1;
  s1.flows.push_back({2, 0, 65536, 8, topo.Path(2, 0)});
  v.steps = {s0, s1};
  // Each flow: startup 0.29 + bytes / 360e9 + one link crossing 0.225.
  const double big = 0.29 + 1.8e6 / 360e9 * 1e6 + 0.225;  // 5.515 us
  const double small = 0.29 + 65536 / 360e9 * 1e6 + 0.225;
  // Chip 2 forwards at `small` (its data landed) and is done at 2 small.
  ASSERT_LT(2 * small, big);
  EXPECT_NEAR(FluidScheduleUs(v, topo, net), big, 1e-9);
  // Lockstep, the sum of the steps: big + small.
  EXPECT_NEAR(FluidStepUs(s0, topo, net) + FluidStepUs(s1, topo, net),
              big + small, 1e-9);
  // Step 1's flow from chip 0 instead: it starts once the 1.8 MB has left
  // chip 0's engines (big less the crossing) and lands `small` later.
  v.steps[1].flows[0] = {0, 2, 65536, 8, topo.Path(0, 2)};
  EXPECT_NEAR(FluidScheduleUs(v, topo, net), big - 0.225 + small, 1e-9);
  // A rendezvous: chip 1 tells chip 0 its buffer is ready (one crossing,
  // 0.225 us, receive_us 0 on TPS186) before chip 0's 64 KiB; chip 2's
  // ready message to chip 1 gates nothing here.
  Step r;
  r.sync.push_back({1, 0, 0, 0, topo.Path(1, 0)});
  r.sync.push_back({2, 1, 0, 0, topo.Path(2, 1)});
  r.flows.push_back({0, 1, 65536, 8, topo.Path(0, 1)});
  v.steps = {r};
  ASSERT_EQ(net.receive_us, 0.0);
  EXPECT_NEAR(FluidScheduleUs(v, topo, net), 0.225 + small, 1e-9);
}

}  // namespace
}  // namespace ccreplay
