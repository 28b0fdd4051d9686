#include "collectives/math.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/collective.h"
#include "collectives/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hw/config.h"

namespace ccreplay {
namespace {

std::string Us4(double us) { return absl::StrFormat("%.4f", us); }

MathParams Tps186Params() { return MathParamsFromHw(DefaultTps186()); }

TEST(MathParamsTest, DerivedFromTps186Config) {
  const HwConfig& hw = DefaultTps186();
  const MathParams p = MathParamsFromHw(hw);
  // beta = link.bandwidth_bytes_per_s = 400 GB/s.
  EXPECT_DOUBLE_EQ(p.beta_bytes_per_s, 400e9);
  // u = 288 / (288 + 32) = 0.9.
  EXPECT_EQ(hw.packet_payload_bytes, 288u);
  EXPECT_EQ(hw.packet_header_bytes, 32u);
  EXPECT_DOUBLE_EQ(p.u, 0.9);
  // alpha_start = 290000 ps + 2 * 200000 ps = 690000 ps = 0.69 us.
  EXPECT_DOUBLE_EQ(p.alpha_start_us, 0.69);
  // alpha_switch = 2 * (1000000 ps + 25000 ps) = 2050000 ps = 2.05 us.
  EXPECT_DOUBLE_EQ(p.alpha_switch_us, 2.05);
}

TEST(MathParamsTest, FollowsEveryConfigField) {
  HwConfig hw = DefaultTps186();
  hw.link_bytes_per_s = 100'000'000'000;  // 100 GB/s
  hw.packet_payload_bytes = 192;          // u = 192 / 256 = 0.75
  hw.packet_header_bytes = 64;
  hw.cdma_startup = TimePs::Ns(100);  // 100 ns + 2 * 50 ns = 0.2 us
  hw.link_latency = TimePs::Ns(50);
  hw.switch_forwarding = TimePs::Ns(400);  // 2 * (400 + 100) ns = 1.0 us
  hw.link_propagation = TimePs::Ns(100);
  const MathParams p = MathParamsFromHw(hw);
  EXPECT_DOUBLE_EQ(p.beta_bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(p.u, 0.75);
  EXPECT_DOUBLE_EQ(p.alpha_start_us, 0.2);
  EXPECT_DOUBLE_EQ(p.alpha_switch_us, 1.0);
}

// One row of docs/spec-notes.md §2's self-check table.
struct SelfCheckRow {
  const char* module;
  const char* op_name;
  uint64_t bytes;
  const char* legacy_us;
  const char* corrected_us;
};

// docs/spec-notes.md §2, in workload order. One deviation: the MLA
// reducescatter corrected value is 2.1464 here where the reference
// prints 2.1457 (docs/spec-notes.md §2); see
// SpecReduceScatterCorrectedValueIsATypo below and docs/math.md.
constexpr SelfCheckRow kSelfCheck[] = {
    {"Dense_MLP", "allreduce", 458752, "1.9643", "2.6543"},
    {"MLA", "allgather", 1179648, "3.9668", "2.3284"},
    {"MLA", "reducescatter", 1048576, "3.6027", "2.1464"},
    {"MLA", "allreduce", 458752, "1.9643", "2.6543"},
    {"DSA", "topk_allgather", 32768, "0.7810", "0.7355"},
    {"MoE", "dispatch", 917504, "5.2886", "5.2886"},
    {"MoE", "combine", 1835008, "7.8372", "7.8372"},
    {"LMHead", "allreduce", 458752, "1.9643", "2.6543"},
};

TEST(MathTimeTest, ReproducesSelfCheckTable) {
  const MathParams p = Tps186Params();
  const std::vector<WorkloadRow> rows = Tps186Workload();
  ASSERT_EQ(rows.size(), std::size(kSelfCheck));
  for (size_t i = 0; i < rows.size(); ++i) {
    const WorkloadRow& r = rows[i];
    const SelfCheckRow& want = kSelfCheck[i];
    SCOPED_TRACE(absl::StrFormat("row %d: %s %s", i, r.module, r.op_name));
    EXPECT_EQ(r.module, want.module);
    EXPECT_EQ(r.op_name, want.op_name);
    EXPECT_EQ(r.bytes, want.bytes);
    absl::StatusOr<double> corrected =
        MathTimeUs(r.op, r.n, r.bytes, r.topology, p);
    ASSERT_TRUE(corrected.ok()) << corrected.status();
    EXPECT_EQ(Us4(*corrected), want.corrected_us);
    absl::StatusOr<double> legacy =
        LegacyMathTimeUs(r.op, r.n, r.bytes, r.topology, p);
    ASSERT_TRUE(legacy.ok()) << legacy.status();
    EXPECT_EQ(Us4(*legacy), want.legacy_us);
  }
}

TEST(MathTimeTest, AllReduceArithmetic) {
  // AR, N = 2, M = 458752 B, beta*u = 400e9 * 0.9 = 360e9 B/s:
  //   2 * (1/2) * 458752 / 360e9 s = 1.274311 us
  //   + 2 * (2-1) * 0.69 us        = 1.38 us
  //   = 2.654311 us
  const double wire_us = 2.0 * (1.0 / 2.0) * 458752 / (400e9 * 0.9) * 1e6;
  EXPECT_NEAR(wire_us, 1.274311, 1e-6);
  const double want = wire_us + 2.0 * (2 - 1) * 0.69;
  absl::StatusOr<double> t =
      MathTimeUs(v1::ALLREDUCE, 2, 458752, TopologyKind::kRing, Tps186Params());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(*t, want, 1e-9);
  EXPECT_EQ(Us4(*t), "2.6543");
  // Legacy: (N-1) * alpha only: 1.274311 + 0.69 = 1.964311 us.
  absl::StatusOr<double> old = LegacyMathTimeUs(
      v1::ALLREDUCE, 2, 458752, TopologyKind::kRing, Tps186Params());
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_NEAR(*old, wire_us + 0.69, 1e-9);
  EXPECT_EQ(Us4(*old), "1.9643");
}

TEST(MathTimeTest, AllGatherArithmetic) {
  // AG, N = 2, M = 1179648 B: (1/2) * 1179648 / 360e9 s = 1.6384 us,
  // + 0.69 us = 2.3284 us. Legacy: (N-1) * M = 1179648 B -> 3.2768 us
  // + 0.69 us = 3.9668 us.
  const MathParams p = Tps186Params();
  absl::StatusOr<double> t =
      MathTimeUs(v1::ALLGATHER, 2, 1179648, TopologyKind::kRing, p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(*t, 1.6384 + 0.69, 1e-9);
  absl::StatusOr<double> old =
      LegacyMathTimeUs(v1::ALLGATHER, 2, 1179648, TopologyKind::kRing, p);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_NEAR(*old, 3.2768 + 0.69, 1e-9);
}

TEST(MathTimeTest, SpecReduceScatterCorrectedValueIsATypo) {
  // docs/spec-notes.md §2 prints 2.1457 us for MLA reducescatter (M = 1048576
  // B, N = 2). The formula gives (1/2) * 1048576 / 360e9 s = 1.456356 us, +
  // 0.69 us = 2.146356 us -> "2.1464". The legacy column of the same
  // row, 3.6027 us = 1048576 / 360e9 s (2.912711 us) + 0.69 us, confirms M =
  // 1048576. 2.1457 would need M = (2.1457 - 0.69) us * 360e9 B/s * 2 ~ 1048104
  // B, which is no size in the workload: the printed value is a typo.
  const MathParams p = Tps186Params();
  absl::StatusOr<double> t =
      MathTimeUs(v1::REDUCESCATTER, 2, 1048576, TopologyKind::kRing, p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(*t, 1048576.0 / 2 / 360e9 * 1e6 + 0.69, 1e-9);
  EXPECT_EQ(Us4(*t), "2.1464");
  EXPECT_NE(Us4(*t), "2.1457");
  absl::StatusOr<double> old =
      LegacyMathTimeUs(v1::REDUCESCATTER, 2, 1048576, TopologyKind::kRing, p);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(Us4(*old), "3.6027");
}

TEST(MathTimeTest, AllToAllThroughSwitch) {
  // MoE dispatch, N = 64, M = 917504 B per chip, one step through the switch:
  // 917504 / 360e9 s = 2.548622 us, + 0.69 + 2.05 us = 5.288622 us.
  const MathParams p = Tps186Params();
  absl::StatusOr<double> t =
      MathTimeUs(v1::ALLTOALL, 64, 917504, TopologyKind::kSwitch, p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(*t, 917504 / 360e9 * 1e6 + 0.69 + 2.05, 1e-9);
  // The legacy tool had no AllToAll bug.
  absl::StatusOr<double> old =
      LegacyMathTimeUs(v1::ALLTOALL, 64, 917504, TopologyKind::kSwitch, p);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_DOUBLE_EQ(*old, *t);
  // AllToAllv (same per-chip send volume) uses the same formula.
  absl::StatusOr<double> v =
      MathTimeUs(v1::ALLTOALLV, 64, 917504, TopologyKind::kSwitch, p);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_DOUBLE_EQ(*v, *t);
}

TEST(MathTimeTest, AllToAllWithoutSwitchIsOurExtension) {
  // Not in the reference (docs/spec-notes.md §2): no switch pass, so no
  // alpha_switch: 917504 / 360e9 s = 2.548622 us, + 0.69 us = 3.238622 us.
  absl::StatusOr<double> t =
      MathTimeUs(v1::ALLTOALL, 64, 917504, TopologyKind::kRing, Tps186Params());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(*t, 917504 / 360e9 * 1e6 + 0.69, 1e-9);
  EXPECT_EQ(Us4(*t), "3.2386");
}

TEST(MathTimeTest, LargerGroupsScaleAlphaWithSteps) {
  // AR, N = 8, M = 8 MB: 2 * 7/8 * 8e6 / 360e9 s = 38.888889 us,
  // + 2 * 7 * 0.69 us = 9.66 us -> 48.548889 us.
  absl::StatusOr<double> t = MathTimeUs(v1::ALLREDUCE, 8, 8'000'000,
                                        TopologyKind::kRing, Tps186Params());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(*t, 2.0 * 7 / 8 * 8e6 / 360e9 * 1e6 + 2 * 7 * 0.69, 1e-9);
  EXPECT_EQ(Us4(*t), "48.5489");
}

TEST(MathTimeTest, RejectsOpsWithoutFormula) {
  const MathParams p = Tps186Params();
  for (v1::CollectiveOp op :
       {v1::COLLECTIVE_OP_UNSPECIFIED, v1::BROADCAST, v1::REDUCE, v1::P2P}) {
    absl::StatusOr<double> t = MathTimeUs(op, 2, 1024, TopologyKind::kRing, p);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument)
        << CollectiveOpName(op);
    EXPECT_EQ(
        LegacyMathTimeUs(op, 2, 1024, TopologyKind::kRing, p).status().code(),
        absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(
      std::string(MathTimeUs(v1::BROADCAST, 2, 1024, TopologyKind::kRing, p)
                      .status()
                      .message()),
      ::testing::HasSubstr("no formula for 'broadcast'"));
}

TEST(MathTimeTest, RejectsBadArguments) {
  const MathParams good = Tps186Params();
  EXPECT_EQ(MathTimeUs(v1::ALLREDUCE, 1, 1024, TopologyKind::kRing, good)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MathTimeUs(v1::ALLREDUCE, 0, 1024, TopologyKind::kRing, good)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  MathParams zero_beta = good;
  zero_beta.beta_bytes_per_s = 0;
  EXPECT_FALSE(
      MathTimeUs(v1::ALLGATHER, 2, 1024, TopologyKind::kRing, zero_beta).ok());
  MathParams big_u = good;
  big_u.u = 1.5;
  EXPECT_FALSE(
      MathTimeUs(v1::ALLGATHER, 2, 1024, TopologyKind::kRing, big_u).ok());
  MathParams negative_alpha = good;
  negative_alpha.alpha_switch_us = -1;
  EXPECT_FALSE(
      MathTimeUs(v1::ALLTOALL, 2, 1024, TopologyKind::kSwitch, negative_alpha)
          .ok());
  // A hand-built config with empty packets gives u = 0, rejected here.
  HwConfig no_packets = DefaultTps186();
  no_packets.packet_payload_bytes = 0;
  no_packets.packet_header_bytes = 0;
  EXPECT_FALSE(MathTimeUs(v1::ALLGATHER, 2, 1024, TopologyKind::kRing,
                          MathParamsFromHw(no_packets))
                   .ok());
}

TEST(BusBwTest, FactorsFollowNcclConvention) {
  // docs/spec-notes.md §2: AR 2(N-1)/N, AG and RS (N-1)/N, AllToAll (N-1)/N,
  // P2P 1.
  EXPECT_DOUBLE_EQ(BusBwFactor(v1::ALLREDUCE, 2), 1.0);        // 2 * 1/2
  EXPECT_DOUBLE_EQ(BusBwFactor(v1::ALLREDUCE, 8), 1.75);       // 2 * 7/8
  EXPECT_DOUBLE_EQ(BusBwFactor(v1::ALLGATHER, 2), 0.5);        // 1/2
  EXPECT_DOUBLE_EQ(BusBwFactor(v1::REDUCESCATTER, 8), 0.875);  // 7/8
  EXPECT_DOUBLE_EQ(BusBwFactor(v1::ALLTOALL, 64), 63.0 / 64);
  EXPECT_DOUBLE_EQ(BusBwFactor(v1::P2P, 2), 1.0);
}

TEST(BusBwTest, AlgBwAndBusBwInDecimalGBps) {
  // algbw = M / T: 458752 B / 2.654311 us = 458752 / 2654.311 GB/s
  // = 172.8328 GB/s; busbw (AR, N = 2, f = 1) is the same.
  absl::StatusOr<double> t =
      MathTimeUs(v1::ALLREDUCE, 2, 458752, TopologyKind::kRing, Tps186Params());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(AlgBwGBps(458752, *t), 458752 / (*t * 1e3), 1e-9);
  EXPECT_EQ(absl::StrFormat("%.4f", AlgBwGBps(458752, *t)), "172.8328");
  EXPECT_DOUBLE_EQ(BusBwGBps(v1::ALLREDUCE, 2, 458752, *t),
                   AlgBwGBps(458752, *t));
  // 1e9 B in 1e6 us = 1 s: 1 GB/s algbw; AG N = 4: busbw = 3/4 GB/s.
  EXPECT_DOUBLE_EQ(AlgBwGBps(1'000'000'000, 1e6), 1.0);
  EXPECT_DOUBLE_EQ(BusBwGBps(v1::ALLGATHER, 4, 1'000'000'000, 1e6), 0.75);
  // No time, no bandwidth.
  EXPECT_EQ(AlgBwGBps(1024, 0.0), 0.0);
  EXPECT_EQ(BusBwGBps(v1::ALLREDUCE, 2, 1024, -1.0), 0.0);
  EXPECT_EQ(BusBwGBps(v1::ALLREDUCE, 0, 1024, 1.0), 0.0);
}

}  // namespace
}  // namespace ccreplay
