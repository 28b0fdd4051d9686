// LogGP / LoGPC on lowered schedules, against hand-computed times and the
// seed's ring AllReduce closed form (docs/spec-notes.md §6).
#include <algorithm>

#include "collectives/collective.h"
#include "collectives/lower.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "models/loggp.h"
#include "models/net_params.h"
#include "models/steps.h"
#include "trace/decode.h"

namespace ccreplay {
namespace {

StepView Lowered(v1::CollectiveOp op, const char* algo, uint32_t n,
                 uint64_t bytes, TopologyKind kind, Topology* topo_out) {
  const HwConfig& hw = DefaultTps186();
  CollectiveSpec spec;
  spec.op = op;
  spec.n = n;
  spec.bytes = bytes;
  spec.algorithm = algo;
  spec.topology = kind;
  auto trace = LowerCollective(spec, hw);
  EXPECT_TRUE(trace.ok()) << trace.status();
  auto program = ValidateAndDecode(*trace, hw.Target());
  EXPECT_TRUE(program.ok()) << program.status();
  auto topo = Topology::Build(kind, n);
  EXPECT_TRUE(topo.ok()) << topo.status();
  auto view = BuildStepView(*program, *topo);
  EXPECT_TRUE(view.ok()) << view.status();
  *topo_out = *std::move(topo);
  return *std::move(view);
}

TEST(NetParamsTest, Tps186) {
  const NetParams p = NetParamsFromHw(DefaultTps186());
  EXPECT_DOUBLE_EQ(p.link_payload_bps, 400e9 * 288 / 320);  // 360 GB/s
  EXPECT_DOUBLE_EQ(p.inject_bps, 8 * 64e9);                 // 512 GB/s
  EXPECT_DOUBLE_EQ(p.startup_us, 0.29);
  EXPECT_DOUBLE_EQ(p.hop_us, 0.200 + 0.025);
  EXPECT_DOUBLE_EQ(p.switch_us, 1.0);
  EXPECT_DOUBLE_EQ(p.packet_us, 320 / 400e9 * 1e6);  // 0.0008 us
  const LogGpParams g = LogGpParamsFromNet(p);
  EXPECT_DOUBLE_EQ(g.o_us, (0.29 + 0) / 2);
  EXPECT_DOUBLE_EQ(g.G_us_per_byte, 1e6 / 360e9);  // min(360, 512) GB/s
}

TEST(StepViewTest, RingAllReduceHasTwoPhasesOfNMinusOneSteps) {
  Topology topo = *Topology::Build(TopologyKind::kRing, 2);
  const StepView v =
      Lowered(v1::ALLREDUCE, "ring", 8, 8 << 20, TopologyKind::kRing, &topo);
  ASSERT_EQ(v.steps.size(), 14u);  // 2 (N - 1)
  for (size_t k = 0; k < v.steps.size(); ++k) {
    EXPECT_EQ(v.steps[k].reduce, k < 7) << k;
    ASSERT_EQ(v.steps[k].flows.size(), 8u);  // every chip sends to next
    // Only step 0 opens with a rendezvous (each chip to its prev).
    EXPECT_EQ(v.steps[k].sync.size(), k == 0 ? 8u : 0u);
    for (const Flow& f : v.steps[k].flows) {
      EXPECT_EQ(f.dst, (f.src + 1) % 8);
      EXPECT_EQ(f.bytes, (8u << 20) / 8);  // one chunk, M / N
      EXPECT_EQ(f.stripes, 8u);            // over the 8 CDMA engines
      EXPECT_EQ(f.busiest_engine_bytes, (8u << 20) / 8 / 8);  // one stripe
      EXPECT_EQ(f.links.size(), 1u);       // a neighbour: one hop
    }
  }
}

TEST(StepViewTest, PairwiseAllToAllIsOneStepOfAllPairs) {
  Topology topo = *Topology::Build(TopologyKind::kRing, 2);
  const StepView v =
      Lowered(v1::ALLTOALL, "pairwise", 4, 4096, TopologyKind::kSwitch, &topo);
  ASSERT_EQ(v.steps.size(), 1u);
  // 4 * 3 remote blocks and every chip's own block, copied locally.
  EXPECT_EQ(v.steps[0].flows.size(), 16u);
  for (const Flow& f : v.steps[0].flows) {
    EXPECT_EQ(f.bytes, 1024u);  // M / N
    // Striped over the 8 engines: 128 bytes each.
    EXPECT_EQ(f.busiest_engine_bytes, 128u);
    // chip -> switch -> chip; a local copy crosses nothing.
    EXPECT_EQ(f.links.size(), f.src == f.dst ? 0u : 2u);
  }
  // The rendezvous: every chip tells its 3 senders that its slots are free.
  EXPECT_EQ(v.steps[0].sync.size(), 12u);
}

// One engine (qp 0 and qp 1 are both CDMA engine 0) sending one pair two
// Transfers whose flow hashes take different spines: two sub-flows, and
// each carries the engine's whole load for the pair (2 x 1000 bytes), since
// that engine serves both.
TEST(StepViewTest, AnEngineServesAllOfItsPairsSubFlows) {
  TopologyParams params;
  params.chips_per_board = 8;
  const Topology topo =
      *Topology::Build(TopologyKind::kBoardFatTree, 16, params);
  // A destination on the other board and two VCs of engine 0 on different
  // paths.
  uint32_t dst = 0, qp_a = 0, qp_b = 0;
  for (uint32_t d = 8; d < 16 && dst == 0; ++d) {
    for (uint32_t q = 1; q < 4 && dst == 0; ++q) {
      if (topo.Path(0, d, Topology::FlowHash(0, d, 0)) !=
          topo.Path(0, d, Topology::FlowHash(0, d, q))) {
        dst = d;
        qp_b = q;
      }
    }
  }
  ASSERT_NE(dst, 0u) << "no two VCs of engine 0 on different spines";
  Program program;
  program.num_chips = 16;
  program.chips.resize(16);
  for (const uint32_t qp : {qp_a, qp_b}) {
    StreamProgram stream;
    stream.id = qp;
    Instr t;
    t.kind = OpKind::kTransfer;
    t.qp_id = qp;
    t.peer = dst;
    t.bytes = 1000;
    stream.instrs.push_back(t);
    program.chips[0].streams.push_back(std::move(stream));
  }
  const StepView v = *BuildStepView(program, topo);
  ASSERT_EQ(v.steps.size(), 1u);
  ASSERT_EQ(v.steps[0].flows.size(), 2u);
  for (const Flow& f : v.steps[0].flows) {
    EXPECT_EQ(f.bytes, 1000u);
    EXPECT_EQ(f.busiest_engine_bytes, 2000u);
  }
}

// The closed form of docs/spec-notes.md §6 equals the schedule-driven LoGPC where every
// ring neighbour has its own link (F = 1): on a full mesh and on a ring.
TEST(LoGpcTest, RingAllReduceClosedFormEqualsScheduleOnMeshAndRing) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
  const LogGpParams p = LogGpParamsFromNet(net);
  const uint64_t m = 8 << 20;  // 1 MiB per chunk
  // By hand: o = 0.145, L = 0.225 (one hop), g = 0.0008,
  // (M/N) G = 1048576 / 360e9 s = 2.912711 us.
  const double block = 1048576 / 360e9 * 1e6;
  const double by_hand = 2 * ((2 * 0.145 + 0.225 + block) + 6 * block);
  EXPECT_NEAR(LoGpcRingAllReduceUs(m, 8, 0.225, p, p.G_us_per_byte), by_hand,
              1e-9);
  for (TopologyKind kind : {TopologyKind::kFullMesh, TopologyKind::kRing}) {
    Topology topo = *Topology::Build(TopologyKind::kRing, 2);
    const StepView v = Lowered(v1::ALLREDUCE, "ring", 8, m, kind, &topo);
    EXPECT_DOUBLE_EQ(LoGpcWorstFactor(v, topo), 1.0);
    EXPECT_NEAR(LogGpScheduleUs(v, topo, net, true), by_hand, 1e-9)
        << TopologyName(kind);
    // F = 1: LoGPC degenerates to LogGP.
    EXPECT_NEAR(LogGpScheduleUs(v, topo, net, false), by_hand, 1e-9);
  }
}

// Two flows into chip 2 through one switch share its downlink: F/C = 2/1.
TEST(LoGpcTest, SharedSwitchDownlinkDoublesG) {
  const NetParams net = NetParamsFromHw(DefaultTps186());
  const Topology topo = *Topology::Build(TopologyKind::kSwitch, 3);
  StepView v;
  v.num_chips = 3;
  Step s;
  for (uint32_t src : {0u, 1u}) {
    Flow f;
    f.src = src;
    f.dst = 2;
    f.bytes = 1'000'000;
    f.stripes = 8;
    f.links = topo.Path(src, 2);
    s.flows.push_back(f);
  }
  v.steps.push_back(s);
  EXPECT_DOUBLE_EQ(LoGpcWorstFactor(v, topo), 2.0);
  // L = the chip's link 0.225 + the switch output's latency and cable
  // (switch_config.port_*: 0 at TPS186) + switch 1.0 + one packet 0.0008
  // = 1.2258 us.
  ASSERT_EQ(net.switch_hop_us, 0.0);
  const double l = 0.225 + net.switch_hop_us + 1.0 + 0.0008;
  // LogGP: 2o + L + M G = 0.29 + 1.4508 + 1e6 / 360e9 s.
  EXPECT_NEAR(LogGpScheduleUs(v, topo, net, false),
              0.29 + l + 1e6 / 360e9 * 1e6, 1e-9);
  // LoGPC: G_eff = G * max(1, 2 / 1) = 2G.
  EXPECT_NEAR(LogGpScheduleUs(v, topo, net, true),
              0.29 + l + 2 * 1e6 / 360e9 * 1e6, 1e-9);
}

}  // namespace
}  // namespace ccreplay
