// Resource budgets (hw/budget.h, docs/limits.md): the estimates bound what
// real replays use, the refusals name the place, the limit and the flag,
// Topology::CountLinks is what Build cables, and base/checked.h's
// operations catch every wrap.
#include "hw/budget.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/checked.h"
#include "cli/run.h"
#include "collectives/lower.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "replay/engine.h"
#include "tests/one_transfer.h"
#include "trace/decode.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

static_assert(sizeof(InstrTiming) <= kInstrTimingEstimateBytes,
              "hw/budget.cc under-counts the replay's per-instruction result");

TEST(CheckedTest, AddAndMulCatchEveryWrap) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(CheckedAdd<uint64_t>(kMax - 1, 1), kMax);
  EXPECT_FALSE(CheckedAdd<uint64_t>(kMax, 1).has_value());
  EXPECT_EQ(CheckedMul<uint64_t>(uint64_t{1} << 32, (uint64_t{1} << 32) - 1),
            kMax - (uint64_t{1} << 32) + 1);
  EXPECT_FALSE(CheckedMul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32));
  EXPECT_FALSE(CheckedAdd<int64_t>(std::numeric_limits<int64_t>::max(), 1));
}

TEST(CheckedTest, SumRemembersAnOverflowEvenIfLaterTermsWouldWrapBack) {
  // 2^63 + 2^63 + 64 is 64 modulo 2^64: the AllGather sizes of issue 10.
  CheckedSum<uint64_t> s;
  s.Add(uint64_t{1} << 63).Add(uint64_t{1} << 63).Add(64);
  EXPECT_TRUE(s.overflow());
  EXPECT_FALSE(s.value().has_value());
  CheckedSum<uint64_t> t;
  t.AddProduct(3, 7).Add(1);
  EXPECT_EQ(t.value(), 22u);
  t.AddProduct(uint64_t{1} << 40, uint64_t{1} << 40);
  EXPECT_TRUE(t.overflow());
}

TEST(CountLinksTest, IsWhatBuildCablesForEveryKindAndShape) {
  struct Shape {
    TopologyKind kind;
    uint32_t n;
    TopologyParams params;
  };
  std::vector<Shape> shapes;
  for (uint32_t n : {1u, 2u, 3u, 8u, 12u, 64u}) {
    shapes.push_back({TopologyKind::kRing, n, {}});
    shapes.push_back({TopologyKind::kRingUni, n, {}});
    shapes.push_back({TopologyKind::kSwitch, n, {}});
    shapes.push_back({TopologyKind::kFullMesh, n, {}});
    shapes.push_back({TopologyKind::kTorus2D, n, {}});
  }
  for (uint32_t cpb : {1u, 2u, 4u}) {
    for (uint32_t boards : {1u, 2u, 3u, 8u, 9u}) {
      TopologyParams p;
      p.chips_per_board = cpb;
      for (uint32_t spines : {0u, 1u, 3u}) {
        p.fat_tree_spines = spines;
        shapes.push_back({TopologyKind::kBoardFatTree, cpb * boards, p});
      }
      p.fat_tree_spines = 0;
      shapes.push_back({TopologyKind::kBoardRing, cpb * boards, p});
      shapes.push_back({TopologyKind::kBoardDragonfly, cpb * boards, p});
    }
  }
  for (const Shape& s : shapes) {
    absl::StatusOr<Topology> t = Topology::Build(s.kind, s.n, s.params);
    ASSERT_TRUE(t.ok()) << TopologyName(s.kind) << " " << s.n << ": "
                        << t.status();
    EXPECT_EQ(Topology::CountLinks(s.kind, s.n, t->params()), t->links().size())
        << TopologySpecString(s.kind, t->params()) << " on " << s.n;
    EXPECT_EQ(Topology::CountNodes(s.kind, s.n, t->params()), t->num_nodes())
        << TopologySpecString(s.kind, t->params()) << " on " << s.n;
  }
}

TEST(CountLinksTest, AFullMeshTooLargeIsRefusedBeforeCabling) {
  // 8192 chips fully meshed: 67 M links, refused from the count alone.
  absl::StatusOr<Topology> t = Topology::Build(TopologyKind::kFullMesh, 8192);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr("67100672 links x 8192 chips is more routing work"));
}

struct Lowered {
  Program program;
  Topology topology;
};

Lowered Lower(v1::CollectiveOp op, const std::string& algo, uint32_t n,
              uint64_t bytes, TopologyKind kind, const HwConfig& hw) {
  CollectiveSpec spec;
  spec.op = op;
  spec.algorithm = algo;
  spec.n = n;
  spec.bytes = bytes;
  absl::StatusOr<v1::Trace> trace = LowerCollective(spec, hw);
  EXPECT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<Program> p = ValidateAndDecode(*trace, hw.Target());
  EXPECT_TRUE(p.ok()) << p.status();
  absl::StatusOr<Topology> t = Topology::Build(kind, n, hw.topology_params);
  EXPECT_TRUE(t.ok()) << t.status();
  return {*std::move(p), *std::move(t)};
}

// The estimate is an upper bound of the real run (events and time), and for
// the ring AllReduce the budgets were tuned on, within a small factor of it
// (so legitimate large workloads are not refused).
TEST(EstimateTest, BoundsRealReplaysAndStaysClose) {
  const HwConfig& hw = DefaultTps186();
  struct Case {
    v1::CollectiveOp op;
    const char* algo;
    uint32_t n;
    uint64_t bytes;
    TopologyKind kind;
  };
  const Case cases[] = {
      {v1::ALLREDUCE, "ring", 8, 1 << 20, TopologyKind::kRing},
      {v1::ALLREDUCE, "ring", 16, 1 << 16, TopologyKind::kRing},
      {v1::ALLREDUCE, "rh", 8, 1 << 18, TopologyKind::kSwitch},
      {v1::ALLTOALL, "pairwise", 16, 1 << 18, TopologyKind::kBoardFatTree},
      {v1::ALLGATHER, "ring", 16, 1 << 18, TopologyKind::kTorus2D},
      {v1::REDUCESCATTER, "hd", 8, 1 << 18, TopologyKind::kFullMesh},
  };
  for (const Case& c : cases) {
    const Lowered l = Lower(c.op, c.algo, c.n, c.bytes, c.kind, hw);
    const ReplayEstimate e = EstimateReplay(l.program, hw, l.topology);
    absl::StatusOr<ReplayResult> r = Replay(l.program, hw, l.topology);
    ASSERT_TRUE(r.ok()) << r.status();
    SCOPED_TRACE(std::string(c.algo) + " on " +
                 std::string(TopologyName(c.kind)));
    EXPECT_GE(e.events, r->events);
    EXPECT_GE(e.serial_ps, static_cast<uint64_t>(r->drained.ps()));
    EXPECT_GT(e.memory_bytes, 0u);
    if (c.op == v1::ALLREDUCE && std::string(c.algo) == "ring") {
      EXPECT_LE(e.events, 4 * r->events);
    }
    EXPECT_TRUE(CheckReplayBudget(l.program, hw, l.topology, {}).ok());
  }
}

using ccreplay_test::OneTransfer;

// SumCosts costs a stream's instructions through a memo of the last one of
// each kind (same peer and size: same cost). A stream that repeats, mixes
// and changes shapes must estimate what its instructions do one by one.
TEST(EstimateTest, AStreamEstimatesTheSumOfItsInstructionsAlone) {
  const HwConfig& hw = DefaultTps186();
  const Topology topo = *Topology::Build(TopologyKind::kRing, 8);
  const std::vector<Instr> stream = {
      TransferInstr(0, 1, 0, 0, 4096, false),
      RemoteMsgSendInstr(0, 1, 0),
      MsgWaitInstr(0, 1),
      TransferInstr(0, 1, 0, 0, 4096, false),  // a repeat
      TransferInstr(0, 3, 0, 0, 4096, false),  // another peer: 3 hops
      TransferInstr(0, 3, 0, 0, 1 << 20, false),  // another size
      TransferInstr(0, 0, 0, 0, 1 << 20, false),  // local
      RemoteMsgSendInstr(0, 4, 0),
      RemoteMsgSendInstr(0, 1, 0),
      SendInstr(0, 2, 0, 8192),
      ReceiveInstr(0, 2, 0, 8192),
      FenceInstr(),
      MsgWaitInstr(0, 1),
  };
  auto program_of = [](const std::vector<Instr>& instrs) {
    Program p;
    p.num_chips = 8;
    p.chips.resize(8);
    p.chips[0].streams.push_back({0, instrs});
    return p;
  };
  uint64_t events = 0, ps = 0;
  const ReplayEstimate none = EstimateReplay(program_of({}), hw, topo);
  for (const Instr& in : stream) {
    const ReplayEstimate one = EstimateReplay(program_of({in}), hw, topo);
    events += one.events;
    ps += one.serial_ps;
  }
  const ReplayEstimate all = EstimateReplay(program_of(stream), hw, topo);
  EXPECT_EQ(none.events, 0u);
  EXPECT_EQ(all.events, events);
  EXPECT_EQ(all.serial_ps, ps);
}

TEST(CheckReplayBudgetTest, ATimePastTheClockNamesTheInstruction) {
  HwConfig hw = DefaultTps186();
  hw.cdma_bytes_per_s = 1;  // 1 B/s: 9 MiB take 9.4e18 ps > 2^62
  const Topology topo = *Topology::Build(TopologyKind::kRing, 2);
  absl::Status s = CheckReplayBudget(OneTransfer(9 << 20), hw, topo, {});
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("chip 0, stream 0, instruction 0 (Transfer): 9437184 "
                        "bytes take about 9.44e+18 ps"));
  // A stream repeats shapes (each costed once, at its first instruction):
  // the first instruction too long is named, after shorter ones and before
  // its repeats.
  Program p = OneTransfer(1 << 10);
  InstrList& list = p.chips[0].streams[0].instrs;
  list.push_back(TransferInstr(0, 1, 0, 0, 1 << 10, false));
  list.push_back(TransferInstr(0, 1, 0, 0, 9 << 20, false));
  list.push_back(TransferInstr(0, 1, 0, 0, 9 << 20, false));
  s = CheckReplayBudget(p, hw, topo, {});
  EXPECT_THAT(s.message(), HasSubstr("chip 0, stream 0, instruction 3 "
                                     "(Transfer): 9437184 bytes"));
  // The clock limit is 2^62 ps: 4 MiB at 1 B/s (4.2e18 ps) pass alone.
  EXPECT_TRUE(CheckReplayBudget(OneTransfer(4 << 20), hw, topo, {}).ok());
  EXPECT_EQ(InstrTimeProblem(OneTransfer(4 << 20).chips[0].streams[0].instrs[0],
                             0, hw),
            "");
}

TEST(CheckReplayBudgetTest, EventsAndMemoryNameTheirFlags) {
  const HwConfig& hw = DefaultTps186();
  const Topology topo = *Topology::Build(TopologyKind::kRing, 2);
  const Program p = OneTransfer(uint64_t{1} << 30);
  const ReplayEstimate e = EstimateReplay(p, hw, topo);
  ResourceBudget few_events;
  few_events.max_events = e.events - 1;
  absl::Status s = CheckReplayBudget(p, hw, topo, few_events);
  EXPECT_THAT(s.message(), HasSubstr("(--max-events raises it)"));
  few_events.max_events = e.events;
  EXPECT_TRUE(CheckReplayBudget(p, hw, topo, few_events).ok());
  ResourceBudget little_memory;
  little_memory.max_memory_bytes = e.memory_bytes - 1;
  s = CheckReplayBudget(p, hw, topo, little_memory);
  EXPECT_THAT(s.message(), HasSubstr("(--max-memory raises it)"));
  little_memory.max_memory_bytes = e.memory_bytes;
  EXPECT_TRUE(CheckReplayBudget(p, hw, topo, little_memory).ok());
}

TEST(CheckReplayBudgetTest, PortQueuesOfManyEnginesAreCounted) {
  // Each chip port has one input per engine: 65536 engines x 4 lane groups
  // x the ring's virtual channels of queues on each of the 2 ports.
  HwConfig hw = DefaultTps186();
  const Topology topo = *Topology::Build(TopologyKind::kRing, 2);
  const uint64_t base = EstimateReplay(OneTransfer(64), hw, topo).memory_bytes;
  hw.cdma_engines = 65536;
  const uint64_t many = EstimateReplay(OneTransfer(64), hw, topo).memory_bytes;
  EXPECT_GT(many, base + 2 * 65528 * uint64_t{hw.lane_groups} * 80);
  ResourceBudget one_gb;
  one_gb.max_memory_bytes = many - 1;
  EXPECT_THAT(CheckReplayBudget(OneTransfer(64), hw, topo, one_gb).message(),
              HasSubstr("65536 engines per chip, the busiest port chip 0 -> "
                        "chip 1"));
}

}  // namespace
}  // namespace ccreplay
