// PLogP tables: interpolation between calibrated sizes, alpha(n)-beta(n)
// pieces, and schedule times by hand.
#include "gtest/gtest.h"
#include "models/plogp.h"

namespace ccreplay {
namespace {

PlogpTable TwoSizes() {
  // bytes, L, os, or, g (us)
  return *PlogpTable::Create(
      {{1024, 1.0, 0.3, 0.1, 0.5}, {4096, 1.0, 0.4, 0.1, 1.1}}, "test");
}

TEST(PlogpTest, InterpolatesBetweenCalibratedSizes) {
  const PlogpTable t = TwoSizes();
  // 2048 is a third of the way from 1024 to 4096: w = 1024 / 3072.
  const PlogpPoint p = t.At(2048);
  EXPECT_NEAR(p.os_us, 0.3 + 0.1 / 3, 1e-12);
  EXPECT_NEAR(p.g_us, 0.5 + 0.6 / 3, 1e-12);
  EXPECT_NEAR(p.L_us, 1.0, 1e-12);
  // At a calibrated size, its own values.
  EXPECT_NEAR(t.At(4096).g_us, 1.1, 1e-12);
  // Below the smallest: the smallest; above the largest: the last line,
  // w = (8192 - 1024) / 3072 = 7/3.
  EXPECT_NEAR(t.At(8).os_us, 0.3, 1e-12);
  EXPECT_NEAR(t.At(8192).g_us, 0.5 + 0.6 * 7 / 3, 1e-12);
}

TEST(PlogpTest, RejectsUnsortedSizes) {
  auto t = PlogpTable::Create({{4096, 1, 0, 0, 0}, {1024, 1, 0, 0, 0}}, "x");
  EXPECT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("point 1 (1024 bytes)"),
            std::string::npos);
}

TEST(PlogpTest, AlphaBetaPieces) {
  // T1 = os + L + or: 1.4 us at 1024, 1.5 us at 4096.
  // beta = 3072 B / 0.1 us = 30.72e9 B/s; alpha = 1.4 - 1024 / 30720 us.
  const std::vector<AlphaBetaPiece> p = AlphaBetaPieces(TwoSizes());
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NEAR(p[0].beta_bps, 30.72e9, 1);
  EXPECT_NEAR(p[0].alpha_us, 1.4 - 1024.0 / 30720, 1e-12);
}

TEST(PlogpTest, ScheduleTimes) {
  const PlogpTable t = TwoSizes();
  StepView v;
  Step s;
  // Chip 0 sends two 2048-byte messages, chip 1 one 4096-byte message.
  s.flows.push_back({0, 1, 2048, 1, {}});
  s.flows.push_back({0, 2, 2048, 1, {}});
  s.flows.push_back({1, 2, 4096, 1, {}});
  v.steps.push_back(s);
  v.steps.push_back(s);
  // Chip 0: g(2048) + T1(2048) = 0.7 + (0.3333 + 1.0 + 0.1) = 2.1333;
  // chip 1: T1(4096) = 1.5. Two such steps.
  EXPECT_NEAR(PlogpScheduleUs(v, t), 2 * (0.7 + 0.3 + 0.1 / 3 + 1.1), 1e-9);
  // alpha(n)-beta(n) per chip's total: 4096 bytes each -> T1(4096) = 1.5.
  EXPECT_NEAR(AlphaBetaNScheduleUs(v, t), 2 * 1.5, 1e-9);
}

}  // namespace
}  // namespace ccreplay
