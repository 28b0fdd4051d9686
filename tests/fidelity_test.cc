// Hardware fidelity end to end (docs/hardware-model.md): what the replay's
// breakdown attributes on machines simple enough to work out by hand.

#include "cli/run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "replay/breakdown.h"

namespace ccreplay {
namespace {

// The machine of the alpha-beta model: one engine with no startup, packets
// with no header, one lane group, B = 50 GB/s, alpha = 500 ns per crossing.
HwConfig PureAlphaBeta() {
  HwConfig hw = DefaultTps186();
  hw.cdma_engines = 1;
  hw.cdma_startup = TimePs::Zero();
  hw.packet_header_bytes = 0;
  hw.lane_groups = 1;
  hw.link_bytes_per_s = 50'000'000'000;
  hw.link_latency = TimePs::Ns(500);
  hw.link_propagation = TimePs::Zero();
  return hw;
}

TEST(BreakdownFidelityTest, ARingStepsBytesAreSerialisation) {
  const HwConfig hw = PureAlphaBeta();
  CollectiveSpec spec;
  spec.op = v1::ALLREDUCE;
  spec.n = 8;
  spec.bytes = 8 * 65536;
  spec.algorithm = "ring";
  auto run = LowerAndReplay(spec, hw, ReplayOptions{});
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

}  // namespace
}  // namespace ccreplay
