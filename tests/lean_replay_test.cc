// A lean replay (ReplayOptions::keep_records = false) reports what a replay
// with timing records does; PreferLeanReplay picks it where it holds less
// memory, and the command line uses it then (coalesce_test compares every
// result of both on every config and workload; this checks the choice and
// the command's outputs).
#include <cstdint>
#include <string>

#include "cli/run.h"
#include "collectives/lower.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "replay/engine.h"
#include "run_cli.h"
#include "scratch_dir.h"
#include "trace/decode.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

Program Lowered(v1::CollectiveOp op, const char* algo, uint32_t n,
                uint64_t bytes) {
  const HwConfig hw = DefaultTps186();
  CollectiveSpec spec;
  spec.op = op;
  spec.n = n;
  spec.bytes = bytes;
  spec.algorithm = algo;
  spec.topology = hw.topology;
  auto trace = LowerCollective(spec, hw);
  EXPECT_TRUE(trace.ok()) << trace.status();
  auto program = ValidateAndDecode(*trace, hw.Target());
  EXPECT_TRUE(program.ok()) << program.status();
  return *std::move(program);
}

// The ring's streams wait every step: a few instructions of each are in
// flight at a time, far fewer than it has. Pairwise AllToAll issues a
// chip's writes and messages to every peer before it waits: nearly all are
// in flight at once, and records cost less than their state.
TEST(LeanReplayTest, PreferredWhereFewInstructionsAreInFlight) {
  EXPECT_TRUE(PreferLeanReplay(Lowered(v1::ALLREDUCE, "ring", 64, 4 << 20)));
  EXPECT_FALSE(
      PreferLeanReplay(Lowered(v1::ALLTOALL, "pairwise", 64, 1835008)));
}

class LeanReplayCliTest : public ccreplay_test::ScratchDirTest {
 protected:
  LeanReplayCliTest() : ScratchDirTest("lean_replay") {}
};

// `replay` keeps records only for a timeline: its JSON (breakdown
// included) is byte-identical with and without one.
TEST_F(LeanReplayCliTest, ReportsAreTheSameWithATimeline) {
  auto r = ccreplay_test::RunCcreplay(
      "lower --op allreduce --algo ring --n 16 --bytes 1M -o " + Path("t.pb"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = ccreplay_test::RunCcreplay("replay " + Path("t.pb") + " -q --json " +
                                 Path("lean.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = ccreplay_test::RunCcreplay("replay " + Path("t.pb") + " -q --json " +
                                 Path("kept.json") + " --timeline " +
                                 Path("t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string lean = ccreplay_test::Slurp(Path("lean.json"));
  EXPECT_NE(lean.find("link_latency"), std::string::npos);
  EXPECT_EQ(lean, ccreplay_test::Slurp(Path("kept.json")));
}

}  // namespace
}  // namespace ccreplay
