// cli/wire.h: what an MPI rank sends rank 0 decodes to the very outcomes it
// encoded (doubles bit for bit, errors with code and message), and a
// truncated or corrupted message is an error naming the byte, never a crash.
#include "cli/wire.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

std::vector<PointOutcome> Sample() {
  PointResult a;
  a.label = "msccl:allreduce_ring.xml";
  a.topology = "fattree:k=4";
  a.group = 64;
  a.groups = 3;
  a.bytes = uint64_t{1} << 40;
  a.replay_us = 0.1 + 0.2;  // not a short decimal
  a.fastest_group_us = std::numeric_limits<double>::denorm_min();
  a.math_us = -0.0;
  a.algbw_gbps = std::nextafter(1.0, 2.0);
  a.busbw_gbps = std::numeric_limits<double>::quiet_NaN();
  a.events = UINT64_MAX;
  a.breakdown.total = TimePs(INT64_MAX);
  for (int i = 0; i < kNumPathCauses; ++i) {
    a.breakdown.by_cause[i] = TimePs(1000 * i - 3);
  }
  a.breakdown.steps = UINT32_MAX;
  PointResult b;  // no Math: math_us stays empty
  b.label = "ring";
  std::vector<PointOutcome> v(3);
  v[0] = {7, a};
  v[1] = {2, absl::ResourceExhaustedError("hd on ring: over --max-events 10")};
  v[2] = {0, b};
  return v;
}

TEST(WireTest, OutcomesRoundTripBitForBit) {
  const std::vector<PointOutcome> in = Sample();
  auto out = DecodeOutcomes(EncodeOutcomes(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].index, 7u);
  EXPECT_EQ((*out)[1].index, 2u);
  EXPECT_EQ((*out)[2].index, 0u);
  const PointResult& a = *in[0].result;
  ASSERT_TRUE((*out)[0].result.ok());
  const PointResult& x = *(*out)[0].result;
  EXPECT_EQ(x.label, a.label);
  EXPECT_EQ(x.topology, a.topology);
  EXPECT_EQ(x.group, a.group);
  EXPECT_EQ(x.groups, a.groups);
  EXPECT_EQ(x.bytes, a.bytes);
  EXPECT_EQ(Bits(x.replay_us), Bits(a.replay_us));
  EXPECT_EQ(Bits(x.fastest_group_us), Bits(a.fastest_group_us));
  ASSERT_TRUE(x.math_us.has_value());
  EXPECT_EQ(Bits(*x.math_us), Bits(-0.0));
  EXPECT_EQ(Bits(x.algbw_gbps), Bits(a.algbw_gbps));
  EXPECT_EQ(Bits(x.busbw_gbps), Bits(a.busbw_gbps));
  EXPECT_EQ(x.events, a.events);
  EXPECT_EQ(x.breakdown.total, a.breakdown.total);
  EXPECT_EQ(x.breakdown.by_cause, a.breakdown.by_cause);
  EXPECT_EQ(x.breakdown.steps, a.breakdown.steps);
  EXPECT_EQ((*out)[1].result.status(), in[1].result.status());
  ASSERT_TRUE((*out)[2].result.ok());
  EXPECT_FALSE((*out)[2].result->math_us.has_value());
  // An empty share (a rank with no points) is a valid message too.
  auto none = DecodeOutcomes(EncodeOutcomes({}));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST(WireTest, EveryTruncationIsAnErrorNamingTheByte) {
  const std::string bytes = EncodeOutcomes(Sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto out = DecodeOutcomes(absl::string_view(bytes).substr(0, n));
    ASSERT_FALSE(out.ok()) << n;
    EXPECT_THAT(out.status().message(), HasSubstr("wire: byte ")) << n;
  }
  auto longer = DecodeOutcomes(bytes + "x");
  ASSERT_FALSE(longer.ok());
  EXPECT_THAT(longer.status().message(),
              HasSubstr("bytes after the last outcome"));
}

TEST(WireTest, CorruptedFieldsAreErrors) {
  const std::string good = EncodeOutcomes(Sample());
  std::string bad = good;
  bad[0] ^= 1;  // magic
  EXPECT_THAT(DecodeOutcomes(bad).status().message(),
              HasSubstr("wire: byte 8: not a ccreplay outcome list"));
  bad = good;
  bad[15] = '\x7f';  // count: 2^63-ish outcomes
  EXPECT_THAT(DecodeOutcomes(bad).status().message(), HasSubstr("outcomes in"));
  bad = good;
  bad[24] = '\x63';  // status code 99
  EXPECT_THAT(DecodeOutcomes(bad).status().message(),
              HasSubstr("wire: byte 32: status code 99"));
  // Every single flipped byte either decodes (a bit of a number) or fails
  // with the offset; the flips in lengths, flags and codes must fail.
  int failed = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    bad = good;
    bad[i] ^= 0x80;
    auto out = DecodeOutcomes(bad);
    if (!out.ok()) {
      ++failed;
      EXPECT_THAT(out.status().message(), HasSubstr("wire: byte ")) << i;
    }
  }
  EXPECT_GT(failed, 0);
}

}  // namespace
}  // namespace ccreplay
