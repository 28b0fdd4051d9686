// Machines of the alpha-beta model for the fidelity tests
// (tests/fidelity_test.cc, tests/scale_test.cc).
#ifndef CCREPLAY_TESTS_ALPHA_BETA_H_
#define CCREPLAY_TESTS_ALPHA_BETA_H_

#include <cstdint>

#include "cli/run.h"
#include "gtest/gtest.h"
#include "hw/config.h"

namespace ccreplay {

// The machine of the alpha-beta model: one engine with no startup, packets
// with no header, one lane group, B = 50 GB/s, alpha = 500 ns per crossing.
inline HwConfig PureAlphaBeta() {
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

// Exact alpha-beta mode (docs/hardware-model.md): with engines that read in
// no time, no startup, no header, a message of no bytes and no handshake,
// and the lowering's rendezvous left out, a ring AllReduce takes exactly
// 2 (N - 1) (L + (M / N) / B), the alpha-beta formula, to the picosecond.
inline HwConfig ExactAlphaBeta() {
  HwConfig hw = PureAlphaBeta();
  hw.cdma_bytes_per_s = 0;  // unbounded
  hw.message_payload_bytes = 0;
  hw.packet_payload_bytes = 1u << 20;  // the largest packet
  hw.link_buffer_bytes = 0;            // unbounded
  return hw;
}

// Lowers a ring `op` of `block` bytes per chip over n chips and replays it
// on `hw`.
inline absl::StatusOr<RunOutcome> RunRing(const HwConfig& hw,
                                          v1::CollectiveOp op, uint32_t n,
                                          uint64_t block,
                                          bool no_rendezvous = false) {
  CollectiveSpec spec;
  spec.op = op;
  spec.n = n;
  spec.bytes = n * block;
  spec.algorithm = "ring";
  spec.no_rendezvous = no_rendezvous;
  return LowerAndReplay(spec, hw, ReplayOptions{});
}

inline void ExpectAlphaBetaFormula(uint32_t n, uint64_t block) {
  const HwConfig hw = ExactAlphaBeta();
  auto run = RunRing(hw, v1::ALLREDUCE, n, block, /*no_rendezvous=*/true);
  ASSERT_TRUE(run.ok()) << run.status();
  const int64_t latency_ps = 500'000;
  const int64_t block_ps = static_cast<int64_t>(block) * 20;  // 50 B/ns
  EXPECT_EQ(run->result.makespan.ps(),
            2 * (int64_t{n} - 1) * (latency_ps + block_ps));
}

}  // namespace ccreplay

#endif  // CCREPLAY_TESTS_ALPHA_BETA_H_
