// M/D/1 waiting time by hand, and its validity warning.
#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "models/fluid.h"
#include "models/md1.h"
#include "models/net_params.h"

namespace ccreplay {
namespace {

TEST(Md1Test, HalfLoaded) {
  // rho = 0.5: W_q = 0.5 / (2 * 0.5) * 1/mu = 0.5 * 0.0008 us.
  EXPECT_DOUBLE_EQ(Md1WaitUs(0.5, 0.0008), 0.0004);
  // rho = 0.9: 0.9 / 0.2 = 4.5 service times.
  EXPECT_NEAR(Md1WaitUs(0.9, 0.0008), 4.5 * 0.0008, 1e-15);
}

// One 3.6 MB flow through a switch keeps the downlink busy 10 us out of the
// fluid step's 0.29 + 10 + 1.2258 us: rho = 10 / 11.5158 = 0.868, past the
// 0.8 validity limit, so the port is reported.
TEST(Md1Test, BusyPortIsReportedPastValidity) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
  const Topology topo = *Topology::Build(TopologyKind::kSwitch, 2);
  StepView v;
  Step s;
  s.flows.push_back({0, 1, 3'600'000, 8, topo.Path(0, 1)});
  v.steps.push_back(s);
  // The chip's link 0.225, the switch output's 0 (switch_config.port_*).
  const double window = 0.29 + 10 + 0.225 + net.switch_hop_us + 1.0 + 0.0008;
  ASSERT_NEAR(FluidStepUs(s, topo, net), window, 1e-9);
  const Md1Result r = Md1Schedule(v, topo, net);
  const double rho = 10 / window;
  EXPECT_NEAR(r.max_rho, rho, 1e-12);
  EXPECT_EQ(r.ports_over_limit, 1u);  // the switch -> chip 1 port
  EXPECT_TRUE(r.valid);
  EXPECT_NEAR(r.queueing_us, rho / (2 * (1 - rho)) * 0.0008, 1e-15);
}

}  // namespace
}  // namespace ccreplay
