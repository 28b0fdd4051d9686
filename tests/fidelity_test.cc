// Hardware fidelity end to end (docs/hardware-model.md): what the replay's
// breakdown attributes on machines simple enough to work out by hand.

#include "cli/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/trace_io.h"
#include "absl/strings/str_cat.h"
#include "replay/breakdown.h"
#include "tests/alpha_beta.h"

namespace ccreplay {
namespace {

TEST(BreakdownFidelityTest, ARingStepsBytesAreSerialisation) {
  const HwConfig hw = PureAlphaBeta();
  auto run = RunRing(hw, v1::ALLREDUCE, 8, 65536);
  ASSERT_TRUE(run.ok()) << run.status();
  auto b = CriticalPathBreakdown(run->program, run->result, hw, *run->topology);
  ASSERT_TRUE(b.ok()) << b.status();
  // Ring AllReduce, N = 8: s = 2 (N - 1) = 14 steps of M / N = 65536 bytes,
  // each a write plus its 4-byte message, after one ready message (the
  // rendezvous: docs/lowering.md). Per step the link serialises 65536 bytes
  // at 50 GB/s, 1,310,720 ps, and the message's 4 bytes, 80 ps; before
  // that the engine reads the first 288-byte packet at 64 GB/s (4,500 ps),
  // which the link waits for.
  const int64_t steps = 14;
  const int64_t block_ps = 65536 * 1000 / 50;  // bytes / (50 B/ns) in ps
  const int64_t msg_ps = 4 * 1000 / 50;
  const int64_t first_read_ps = 288 * 1000 / 64;
  EXPECT_EQ((*b)[PathCause::kSerialisation].ps(),
            steps * block_ps + (steps + 1) * msg_ps);
  EXPECT_EQ((*b)[PathCause::kEngineRead].ps(), steps * first_read_ps);
  // One crossing per step and one for the rendezvous.
  EXPECT_EQ((*b)[PathCause::kLatency].ps(), (steps + 1) * 500'000);
  EXPECT_EQ((*b)[PathCause::kQueueing].ps(), 0);
  EXPECT_EQ((*b)[PathCause::kBackpressure].ps(), 0);
  EXPECT_EQ((*b)[PathCause::kOther].ps(), 0);
  EXPECT_EQ(b->total, run->result.makespan);
}

// Each ring step's fixed cost from named mechanisms (docs/hardware-model.md,
// "Per-step synchronisation"): the step's Transfer pays its CDMA startup,
// the engine reads the first packet, the link serialises the block and the
// 4-byte message behind it, the message crosses the link once and the A4S
// handshake counts it. One ready message (the rendezvous) precedes step 1.
struct StepCosts {
  int64_t startup, first_read, block, msg, crossing, handshake;
  int64_t Step() const {
    return startup + first_read + block + msg + crossing + handshake;
  }
  int64_t Rendezvous() const { return msg + crossing + handshake; }
};

StepCosts CostsOf(const HwConfig& hw, uint64_t block_bytes) {
  return StepCosts{
      hw.cdma_startup.ps(),
      SerializationTime(hw.packet_payload_bytes, hw.cdma_bytes_per_s).ps(),
      SerializationTime(block_bytes, hw.link_bytes_per_s).ps(),
      SerializationTime(hw.message_payload_bytes, hw.link_bytes_per_s).ps(),
      (hw.link_latency + hw.link_propagation).ps(),
      hw.msg_remote_latency.ps()};
}

HwConfig AlphaBetaWithStartupAndHandshake() {
  HwConfig hw = PureAlphaBeta();
  hw.cdma_startup = TimePs::Ns(290);
  hw.msg_remote_latency = TimePs::Ns(40);
  return hw;
}

void ExpectRingSteps(v1::CollectiveOp op, uint32_t n, int64_t steps) {
  const HwConfig hw = AlphaBetaWithStartupAndHandshake();
  auto run = RunRing(hw, op, n, 65536);
  ASSERT_TRUE(run.ok()) << run.status();
  const StepCosts c = CostsOf(hw, 65536);
  // 290,000 + 4,500 + 1,310,720 + 80 + 500,000 + 40,000 ps per step.
  EXPECT_EQ(c.Step(), 2'145'300);
  EXPECT_EQ(run->result.makespan.ps(), c.Rendezvous() + steps * c.Step());
  auto b = CriticalPathBreakdown(run->program, run->result, hw, *run->topology);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)[PathCause::kStartup].ps(), steps * c.startup);
  EXPECT_EQ((*b)[PathCause::kEngineRead].ps(), steps * c.first_read);
  EXPECT_EQ((*b)[PathCause::kSerialisation].ps(),
            steps * c.block + (steps + 1) * c.msg);
  EXPECT_EQ((*b)[PathCause::kLatency].ps(),
            (steps + 1) * (c.crossing + c.handshake));
}

TEST(StepCostTest, TwoStepRingAllReduce) {
  ExpectRingSteps(v1::ALLREDUCE, 2, 2);  // s = 2 (N - 1)
}

TEST(StepCostTest, SevenStepRingAllGather) {
  ExpectRingSteps(v1::ALLGATHER, 8, 7);  // s = N - 1
}

// A 2-chip exchange through one switch: one step, whose message and whose
// rendezvous each traverse chip link, switch and switch port. Its fixed
// cost is startup + 2 x (c2c_lat + cable + switch_delay + port latency +
// port cable): with the reference's figures (switch port 0 + 0) exactly
// Math's alpha_start + alpha_switch.
TEST(StepCostTest, TwoChipExchangeThroughOneSwitch) {
  HwConfig hw = AlphaBetaWithStartupAndHandshake();
  hw.switch_forwarding = TimePs::Ns(1000);
  hw.switch_port_latency = TimePs::Ns(30);
  hw.switch_port_propagation = TimePs::Ns(7);
  CollectiveSpec spec;
  spec.op = v1::ALLTOALL;
  spec.n = 2;
  spec.bytes = 2 * 65536;
  spec.algorithm = "pairwise";
  spec.topology = TopologyKind::kSwitch;
  auto run = LowerAndReplay(spec, hw, ReplayOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  const StepCosts c = CostsOf(hw, 65536);
  const int64_t traversal =
      c.crossing + hw.switch_forwarding.ps() +
      (hw.switch_port_latency + hw.switch_port_propagation).ps();
  // Each message (the ready one and the data's) is serialised on both
  // links; at the switch the data's message waits behind the data's last
  // packet being serialised on the switch output (store and forward).
  const int64_t last_packet =
      SerializationTime(hw.packet_payload_bytes, hw.link_bytes_per_s).ps();
  const int64_t fixed = c.startup + c.first_read +
                        2 * (traversal + c.handshake) + 4 * c.msg +
                        (last_packet - c.msg);
  EXPECT_EQ(run->result.makespan.ps(), fixed + c.block);
  auto b = CriticalPathBreakdown(run->program, run->result, hw, *run->topology);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)[PathCause::kSwitch].ps(), 2 * hw.switch_forwarding.ps());
  EXPECT_EQ((*b)[PathCause::kLatency].ps(),
            2 * (traversal - hw.switch_forwarding.ps() + c.handshake));
  EXPECT_EQ((*b)[PathCause::kQueueing].ps(), last_packet - c.msg);
}

// Messages of no wire bytes queued behind a write all leave when it has
// been serialised (a lane group that a zero-time packet leaves free is
// served again at once, with no event): chip 1 counts both messages when
// the write lands, at bytes / B + L.
TEST(AlphaBetaTest, ZeroByteMessagesQueuedBehindAWriteAllLeave) {
  const HwConfig hw = ExactAlphaBeta();
  const uint64_t bytes = 4096;
  auto trace = ParseTrace(absl::StrCat(R"pb(
    header { format_version: FORMAT_VERSION_1 num_chips: 2 }
    chips { chip: 0 streams { id: 0
      instructions { transfer { qp_id: 0 dst_chip: 1 bytes: )pb", bytes, R"pb( } }
      instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } }
      instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } }
    } }
    chips { chip: 1 streams { id: 0
      instructions { msg_wait { qp_id: 0 count: 2 } }
    } })pb"), "two_messages.txtpb");
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto run = ReplayTrace(*trace, hw, TopologyKind::kRing, ReplayOptions{});
  ASSERT_TRUE(run.ok()) << run.status();
  const int64_t serialise_ps = static_cast<int64_t>(bytes) * 20;  // 50 B/ns
  EXPECT_EQ(run->result.chip_finish[1].ps(), serialise_ps + 500'000);
}

TEST(AlphaBetaTest, RingAllReduceIsTheFormulaAtEightChips) {
  ExpectAlphaBetaFormula(8, 65536);
}

TEST(AlphaBetaTest, WithTheRendezvousItIsOneCrossingMore) {
  const HwConfig hw = ExactAlphaBeta();
  auto run = RunRing(hw, v1::ALLREDUCE, 8, 65536);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->result.makespan.ps(),
            500'000 + 2 * 7 * (500'000 + 65536 * 20));
}

}  // namespace
}  // namespace ccreplay
