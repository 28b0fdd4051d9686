// A lean replay (ReplayOptions::keep_records = false) reports what a replay
// with timing records does; PreferLeanReplay picks it where it holds less
// memory, and the command line uses it then (coalesce_test compares every
// result of both on every config and workload; this checks the choice and
// the command's outputs).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/run.h"
#include "collectives/lower.h"
#include "gmock/gmock.h"
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

// `replay` gives back the pages of the file's chips as it decodes them (so
// the file and the program are not resident in full together). A chip that
// does not parse, after many pages went back, is reported as when nothing
// went back (standard input, which keeps its bytes): the whole file is read
// again for the whole-message path's message.
TEST_F(LeanReplayCliTest, AChipThatDoesNotParseAfterPagesWentBack) {
  auto r = ccreplay_test::RunCcreplay(
      "lower --op allreduce --algo ring --n 64 --bytes 4M -o " + Path("t.pb"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::string bytes = ccreplay_test::Slurp(Path("t.pb"));
  ASSERT_GT(bytes.size(), size_t{1} << 20);  // pages of many chips go back
  // One more chips entry (field 2, 2 bytes) whose first tag has wire type
  // 7: the file's framing is whole, the last chip does not parse.
  bytes += std::string("\x12\x02\x0f\x00", 4);
  {
    std::ofstream out(Path("bad.pb"), std::ios::binary);
    out << bytes;
  }
  const auto file = ccreplay_test::RunCcreplay("replay " + Path("bad.pb") +
                                               " -q --json " + Path("r.json"));
  const auto in = ccreplay_test::RunCcreplay(
      "replay - -q --json " + Path("r.json") + " < " + Path("bad.pb"));
  EXPECT_EQ(file.exit_code, 1) << file.out;
  EXPECT_EQ(in.exit_code, 1) << in.out;
  EXPECT_THAT(file.out, testing::HasSubstr("invalid wire type 7"));
  EXPECT_EQ(file.out, "ccreplay: " + Path("bad.pb") +
                          in.out.substr(std::string("ccreplay: -").size()));
  EXPECT_FALSE(std::filesystem::exists(Path("r.json")));
}

}  // namespace
}  // namespace ccreplay
