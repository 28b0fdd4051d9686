// ccreplay hw explain: provenance of every parameter, and the sensitivity
// sweep's numbers derived from the mechanism they move.
#include "cli/explain.h"

#include <algorithm>

#include "cli/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hw/provenance.h"
#include "replay/breakdown.h"

namespace ccreplay {
namespace {

TEST(ExplainTest, EveryParameterHasAValueAndAnOrigin) {
  auto t = ExplainTable(DefaultTps186());
  ASSERT_TRUE(t.ok()) << t.status();
  const std::string text = t->ToText();
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("no provenance")));
  EXPECT_THAT(text, ::testing::HasSubstr("link.latency_ps"));
  EXPECT_THAT(text, ::testing::HasSubstr("c2c_lat = 200 ns"));
  EXPECT_THAT(text, ::testing::HasSubstr("switch_config.port_latency_ps"));
  // 6 CDMA + 11 link + 5 switch + 2 message parameters.
  EXPECT_EQ(ParamSources().size(), 24u);
  EXPECT_THAT(text, ::testing::HasSubstr("link.virtual_channels"));
  EXPECT_THAT(text, ::testing::HasSubstr("switch_config.input_queues"));
}

// The MLA AllReduce row alone (TP=2 ring, 458,752 bytes): link.latency_ps
// +25% (200 -> 250 ns) adds 50 ns for every link crossing on the critical
// path; the crossings are the critical path's link latency divided by one
// crossing's flight (200 + 25 ns).
TEST(ExplainTest, LinkLatencySensitivityIsFiftyNanosecondsPerCrossing) {
  std::vector<WorkloadRow> rows = Tps186Workload();
  rows.resize(1);  // Dense_MLP allreduce
  const HwConfig hw = DefaultTps186();
  auto base = RunBaseline(rows, hw);
  ASSERT_TRUE(base.ok()) << base.status();
  const int64_t latency_ps = base->rows[0].breakdown[PathCause::kLatency].ps();
  ASSERT_EQ(latency_ps % 225000, 0);
  const int64_t crossings = latency_ps / 225000;
  EXPECT_GE(crossings, 2);

  auto sens = Sensitivity(hw, rows);
  ASSERT_TRUE(sens.ok()) << sens.status();
  EXPECT_EQ(sens->base[0], base->rows[0].replay);
  const auto it = std::find(sens->variants.begin(), sens->variants.end(),
                            "link.latency_ps +25%");
  ASSERT_NE(it, sens->variants.end());
  const TimePs moved = sens->replay[it - sens->variants.begin()][0];
  EXPECT_EQ(moved.ps() - base->rows[0].replay.ps(), crossings * 50000);
  // lane_groups must stay a power of two under the XOR interleave: the
  // sweep halves and doubles it (2 and 8) instead of trying 3 and 5.
  EXPECT_THAT(sens->variants, ::testing::Contains("link.lane_groups /2"));
  EXPECT_THAT(sens->variants, ::testing::Contains("link.lane_groups x2"));
  EXPECT_THAT(sens->rejected, ::testing::Not(::testing::Contains(
                                  ::testing::HasSubstr("link.lane_groups"))));
}

}  // namespace
}  // namespace ccreplay
