#include "collectives/workload.h"

#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "collectives/collective.h"
#include "gtest/gtest.h"

namespace ccreplay {
namespace {

TEST(EpBytesTest, Tps186DispatchAndCombine) {
  // ceil(1024 * 8 / 64) = 128 tokens; 128 * 7168 = 917504 elements.
  const EpParams ep;
  absl::StatusOr<uint64_t> dispatch = EpBytesPerChip(ep, kDispatchDtypeBytes);
  ASSERT_TRUE(dispatch.ok()) << dispatch.status();
  EXPECT_EQ(*dispatch, 128u * 7168u * 1u);
  EXPECT_EQ(*dispatch, 917504u);
  absl::StatusOr<uint64_t> combine = EpBytesPerChip(ep, kCombineDtypeBytes);
  ASSERT_TRUE(combine.ok()) << combine.status();
  EXPECT_EQ(*combine, 128u * 7168u * 2u);
  EXPECT_EQ(*combine, 1835008u);
}

TEST(EpBytesTest, TokensRoundUp) {
  // 1001 * 8 = 8008 routed tokens over 64 chips = 125.125 -> 126 tokens;
  // 126 * 7168 * 2 B = 1806336 B.
  EpParams ep;
  ep.batch_tokens = 1001;
  absl::StatusOr<uint64_t> bytes = EpBytesPerChip(ep, 2);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 126u * 7168u * 2u);
  // 1000 * 8 = 8000 over 64 = 125 exactly.
  ep.batch_tokens = 1000;
  bytes = EpBytesPerChip(ep, 2);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 125u * 7168u * 2u);
}

TEST(EpBytesTest, RejectsBadParams) {
  EpParams zero_ep;
  zero_ep.ep = 0;
  EXPECT_EQ(EpBytesPerChip(zero_ep, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EpBytesPerChip(EpParams{}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  // (2^32-1)^2 tokens * (2^32-1) * (2^32-1) B is far beyond 2^64.
  EpParams huge;
  huge.batch_tokens = std::numeric_limits<uint32_t>::max();
  huge.top_k = std::numeric_limits<uint32_t>::max();
  huge.ep = 1;
  huge.hidden = std::numeric_limits<uint32_t>::max();
  EXPECT_EQ(EpBytesPerChip(huge, 1).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(WorkloadTest, Tps186MatchesSpecTable) {
  struct Want {
    const char* module;
    const char* op_name;
    const char* primitive;
    v1::CollectiveOp op;
    uint64_t bytes;
    uint32_t repeat;
    const char* group;
    uint32_t n;
    TopologyKind topology;
  };
  constexpr auto kRing = TopologyKind::kRing;
  constexpr auto kSwitch = TopologyKind::kSwitch;
  // docs/spec-notes.md §1, in order.
  const Want want[] = {
      {"Dense_MLP", "allreduce", "allreduce", v1::ALLREDUCE, 458752, 3, "TP=2",
       2, kRing},
      {"MLA", "allgather", "allgather", v1::ALLGATHER, 1179648, 61, "TP=2", 2,
       kRing},
      {"MLA", "reducescatter", "reducescatter", v1::REDUCESCATTER, 1048576, 61,
       "TP=2", 2, kRing},
      {"MLA", "allreduce", "allreduce", v1::ALLREDUCE, 458752, 61, "TP=2", 2,
       kRing},
      {"DSA", "topk_allgather", "allgather", v1::ALLGATHER, 32768, 61, "TP=2",
       2, kRing},
      {"MoE", "dispatch", "alltoall", v1::ALLTOALL, 917504, 58, "EP=64", 64,
       kSwitch},
      {"MoE", "combine", "alltoall", v1::ALLTOALL, 1835008, 58, "EP=64", 64,
       kSwitch},
      {"LMHead", "allreduce", "allreduce", v1::ALLREDUCE, 458752, 1, "TP=2", 2,
       kRing},
  };
  const std::vector<WorkloadRow> rows = Tps186Workload();
  ASSERT_EQ(rows.size(), std::size(want));
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(rows[i].module, want[i].module);
    EXPECT_EQ(rows[i].op_name, want[i].op_name);
    EXPECT_EQ(rows[i].primitive, want[i].primitive);
    EXPECT_EQ(rows[i].primitive, CollectiveOpName(rows[i].op));
    EXPECT_EQ(rows[i].op, want[i].op);
    EXPECT_EQ(rows[i].bytes, want[i].bytes);
    EXPECT_EQ(rows[i].repeat, want[i].repeat);
    EXPECT_EQ(rows[i].group, want[i].group);
    EXPECT_EQ(rows[i].n, want[i].n);
    EXPECT_EQ(rows[i].topology, want[i].topology);
  }
}

}  // namespace
}  // namespace ccreplay
