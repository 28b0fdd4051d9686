// The algorithm library: headers, options, errors, AllToAllv volumes, and
// replay properties (N = 2 identity, stream independence).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/alltoallv.h"
#include "collectives/groups.h"
#include "collectives/lower.h"
#include "check/semantics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "cli/run.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

CollectiveSpec Spec(v1::CollectiveOp op, const std::string& algo, uint32_t n,
                    uint64_t bytes) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = algo;
  s.n = n;
  s.bytes = bytes;
  return s;
}

std::string Message(const CollectiveSpec& s, HwConfig hw = DefaultTps186()) {
  absl::StatusOr<v1::Trace> t = LowerCollective(s, hw);
  return t.ok() ? "ok" : std::string(t.status().message());
}

// docs/spec-notes.md §5: at N = 2 on a ring every algorithm degenerates to one pair
// exchange, so ring / ring_2port / rh / rd / hd take exactly the same time
// (max - min = 0 ps) at 1 MB, for each of AllReduce, AllGather and
// ReduceScatter; they lower to byte-identical programs.
TEST(LowerAlgoTest, TwoChipsAllAlgorithmsIdentical) {
  const HwConfig hw = DefaultTps186();
  for (v1::CollectiveOp op :
       {v1::ALLREDUCE, v1::ALLGATHER, v1::REDUCESCATTER}) {
    std::vector<int64_t> ps;
    std::string ring_programs;
    for (const char* algo : {"ring", "ring_2port", "rh", "rd", "hd"}) {
      CollectiveSpec s = Spec(op, algo, 2, 1 << 20);
      absl::StatusOr<RunOutcome> run = LowerAndReplay(s, hw, ReplayOptions{});
      ASSERT_TRUE(run.ok()) << algo << ": " << run.status();
      ps.push_back(run->result.makespan.ps());
      v1::Trace t = *LowerCollective(s, hw);
      std::string programs;
      for (const auto& chip : t.chips()) programs += chip.SerializeAsString();
      if (ring_programs.empty()) ring_programs = programs;
      EXPECT_EQ(programs, ring_programs) << algo;
    }
    const auto [lo, hi] = std::minmax_element(ps.begin(), ps.end());
    EXPECT_EQ(*hi - *lo, 0) << CollectiveOpName(op);
    EXPECT_GT(*lo, 0);
  }
}

// Moving instructions to other streams changes neither their qp ids nor the
// replay time: here each chip's ready message goes to a stream of its own
// (it depends on nothing), for an 8-chip ring and hd AllReduce.
TEST(LowerAlgoTest, StreamOfAnInstructionDoesNotChangeTheTime) {
  const HwConfig hw = DefaultTps186();
  for (const char* algo : {"ring", "hd"}) {
    const v1::Trace t =
        *LowerCollective(Spec(v1::ALLREDUCE, algo, 8, 1 << 20), hw);
    v1::Trace moved = t;
    for (v1::ChipProgram& chip : *moved.mutable_chips()) {
      auto* s0 = chip.mutable_streams(0)->mutable_instructions();
      ASSERT_TRUE((*s0)[0].has_remote_msg_send());
      v1::Stream* s1 = chip.add_streams();
      s1->set_id(7);
      *s1->add_instructions() = (*s0)[0];
      s0->DeleteSubrange(0, 1);
      EXPECT_EQ(s1->instructions(0).remote_msg_send().qp_id(), MakeQp(0, 1));
    }
    absl::StatusOr<RunOutcome> a = ReplayTrace(t, hw, TopologyKind::kRing, {});
    absl::StatusOr<RunOutcome> b =
        ReplayTrace(moved, hw, TopologyKind::kRing, {});
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    EXPECT_EQ(a->result.makespan.ps(), b->result.makespan.ps()) << algo;
    EXPECT_TRUE(VerifySemantics(moved).ok()) << algo;
  }
}

TEST(LowerAlgoTest, HeaderRecordsTheChoices) {
  CollectiveSpec s = Spec(v1::ALLREDUCE, "ring", 8, 4096);
  s.group_size = 2;
  s.chunk_bytes = 256;
  s.cdma_engines = 4;
  const v1::Trace t = *LowerCollective(s, DefaultTps186());
  const v1::CollectiveInfo& c = t.header().collective();
  EXPECT_EQ(t.header().num_chips(), 8u);
  EXPECT_EQ(c.n(), 8u);
  EXPECT_EQ(c.group_size(), 2u);
  EXPECT_EQ(c.chunk_bytes(), 256u);
  EXPECT_EQ(c.cdma_engines_used(), 4u);
  EXPECT_EQ(c.sync(), "write+msg");
  // Group 3 = chips 6, 7: chip 7 (rank 1) writes only to chip 6.
  for (const auto& in : t.chips(7).streams(0).instructions()) {
    if (in.has_transfer()) {
      EXPECT_EQ(in.transfer().dst_chip(), 6u);
    }
    if (in.has_remote_msg_send()) {
      EXPECT_EQ(in.remote_msg_send().dst_chip(), 6u);
    }
  }
}

TEST(LowerAlgoTest, GroupTimesAreTheSlowestChipOfEachGroup) {
  const std::vector<TimePs> finish = {TimePs(5), TimePs(9), TimePs(4),
                                      TimePs(3)};
  const std::vector<TimePs> g = GroupTimes(finish, 2);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].ps(), 9);  // max(5, 9)
  EXPECT_EQ(g[1].ps(), 4);  // max(4, 3)
  EXPECT_EQ(GroupTimes(finish, 0)[0].ps(), 9);
}

// TP = 2 groups on 64 chips: the 32 groups are alike and use disjoint links
// of the ring, so every group takes about the time of a lone 2-chip run
// (2.668 us). Not exactly: the replay's address-hash interleaving and the
// 64-chip ring's routing of acknowledgements spread the groups over
// 2.618..2.755 us here, within 5%.
TEST(LowerAlgoTest, IndependentGroupsTakeTheTimeOfOne) {
  const HwConfig hw = DefaultTps186();
  CollectiveSpec s = Spec(v1::ALLREDUCE, "ring", 64, 458752);
  s.group_size = 2;
  absl::StatusOr<RunOutcome> all = LowerAndReplay(s, hw, {});
  ASSERT_TRUE(all.ok()) << all.status();
  absl::StatusOr<RunOutcome> one =
      LowerAndReplay(Spec(v1::ALLREDUCE, "ring", 2, 458752), hw, {});
  ASSERT_TRUE(one.ok()) << one.status();
  const std::vector<TimePs> g = GroupTimes(all->result.chip_finish, 2);
  ASSERT_EQ(g.size(), 32u);
  const double lone = static_cast<double>(one->result.makespan.ps());
  for (TimePs x : g)
    EXPECT_NEAR(static_cast<double>(x.ps()), lone, 0.05 * lone);
  EXPECT_EQ(all->result.makespan.ps(),
            std::max_element(g.begin(), g.end())->ps());
}

TEST(LowerAlgoTest, Errors) {
  EXPECT_THAT(Message(Spec(v1::ALLTOALL, "rh", 4, 64)),
              HasSubstr("unsupported collective 'alltoall' with algorithm "
                        "'rh' (supported: allreduce, allgather, "
                        "reducescatter with 'ring', 'ring_2port', 'rh'"));
  CollectiveSpec s = Spec(v1::ALLREDUCE, "ring", 8, 64);
  s.group_size = 3;
  EXPECT_THAT(Message(s), HasSubstr("group_size 3 must be in [2, n] and "
                                    "divide n = 8"));
  s = Spec(v1::ALLREDUCE, "hd", 8, 64);
  s.chunk_bytes = 16;
  EXPECT_THAT(Message(s), HasSubstr("chunk_bytes is supported by ring"));
  // One engine gives 3 ready counters; hd over 16 chips needs log2 16 = 4.
  HwConfig one = DefaultTps186();
  one.cdma_engines = 1;
  EXPECT_THAT(Message(Spec(v1::ALLREDUCE, "hd", 16, 64), one),
              HasSubstr("needs 4 ready counters, more than the 3"));
  EXPECT_EQ(Message(Spec(v1::ALLREDUCE, "hd", 7, 64), one), "ok");  // 2 + fold
  s = Spec(v1::P2P, "direct", 4, 64);
  s.peer = 0;
  EXPECT_THAT(Message(s), HasSubstr("p2p peer 0 must be in [0, 4) and differ "
                                    "from root 0"));
  s = Spec(v1::ALLTOALLV, "pairwise", 2, 10);
  s.alltoallv_bytes = {5, 5, 6, 5};
  EXPECT_THAT(Message(s), HasSubstr("alltoallv_bytes row 1 sums to 11 bytes, "
                                    "want bytes = 10"));
}

TEST(AllToAllvTest, RowsKeepTheEpVolume) {
  // TPS186 dispatch: 917504 bytes per chip over 8 peers.
  AllToAllvDist d = *ParseAllToAllvDist("zipf:1.2:7");
  EXPECT_EQ(AllToAllvDistName(d), "zipf:1.2:7");
  const std::vector<uint64_t> v = *AllToAllvMatrix(d, 8, 917504);
  for (uint32_t i = 0; i < 8; ++i) {
    uint64_t row = 0, max = 0, min = ~uint64_t{0};
    for (uint32_t p = 0; p < 8; ++p) {
      row += v[i * 8 + p];
      max = std::max(max, v[i * 8 + p]);
      min = std::min(min, v[i * 8 + p]);
    }
    EXPECT_EQ(row, 917504u);
    // Zipf 1.2 over 8: H = sum_{k=1..8} 1/k^1.2 = 2.333, so the top peer
    // gets 917504 / 2.333 = 393k bytes (42.9%) and the last
    // 917504 * 0.0825 / 2.333 = 32.4k (3.5%).
    EXPECT_NEAR(static_cast<double>(max), 393300.0, 500.0);
    EXPECT_NEAR(static_cast<double>(min), 32430.0, 100.0);
  }
  EXPECT_EQ(*AllToAllvMatrix(d, 8, 917504), v);  // deterministic
  // Uniform is the AllToAll split: 10 = 4 + 3 + 3.
  const std::vector<uint64_t> u =
      *AllToAllvMatrix(*ParseAllToAllvDist("uniform"), 3, 10);
  EXPECT_EQ(u, (std::vector<uint64_t>{4, 3, 3, 4, 3, 3, 4, 3, 3}));
  EXPECT_THAT(std::string(ParseAllToAllvDist("zipf:-1").status().message()),
              HasSubstr("bad distribution 'zipf:-1'"));
  EXPECT_FALSE(
      AllToAllvMatrix(*ParseAllToAllvDist("file:/nonexistent"), 2, 8).ok());
}

}  // namespace
}  // namespace ccreplay
