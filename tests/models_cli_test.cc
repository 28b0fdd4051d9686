// The ladder against the replay: calibration round trip, the network-calculus
// bound over a small grid, and the command line's errors.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "collectives/collective.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "models/plogp.h"
#include "models/steps.h"
#include "tests/run_cli.h"
#include "tests/same_on_threads.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

using Result = ccreplay_test::CliResult;
Result RunCli(const std::string& args) {
  return ccreplay_test::RunCcreplay(args);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "." + std::to_string(getpid())))
      .string();
}

// Calibrate on TPS186, write and read back the text format, and predict
// with PLogP the replay's own P2P at every calibrated size: within 2%.
TEST(CalibrationTest, RoundTripPredictsThePingWithinTwoPercent) {
  const HwConfig& hw = DefaultTps186();
  CalibrationSetup setup;
  setup.sizes = DefaultCalibrationSizes();
  auto cal = CalibrateOnReplay(hw, setup);
  ASSERT_TRUE(cal.ok()) << cal.status();
  ASSERT_EQ(cal->points_size(), 21);
  const std::string path = TempPath("models_cal.txtpb");
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(*cal, &text));
  std::ofstream(path) << text;
  auto back = ReadCalibrationFile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(back.ok()) << back.status();
  auto table = PlogpTableFromCalibration(*back, path, hw);
  ASSERT_TRUE(table.ok()) << table.status();
  for (uint64_t m : setup.sizes) {
    CollectiveSpec spec;
    spec.op = v1::P2P;
    spec.algorithm = "direct";
    spec.n = 2;
    spec.bytes = m;
    auto run = LowerAndReplay(spec, hw, ReplayOptions{});
    ASSERT_TRUE(run.ok()) << run.status();
    auto view = BuildStepView(run->program, *run->topology);
    ASSERT_TRUE(view.ok()) << view.status();
    const double replay = run->result.makespan.us();
    const double plogp = PlogpScheduleUs(*view, *table);
    EXPECT_NEAR(plogp, replay, 0.02 * replay) << m << " bytes";
    const double abn = AlphaBetaNScheduleUs(*view, *table);
    EXPECT_NEAR(abn, replay, 0.02 * replay) << m << " bytes";
  }
}

TEST(CalibrationTest, OtherHardwareIsAnErrorNamingBoth) {
  const HwConfig& hw = DefaultTps186();
  CalibrationSetup setup;
  setup.sizes = {64, 4096};
  auto cal = CalibrateOnReplay(hw, setup);
  ASSERT_TRUE(cal.ok()) << cal.status();
  HwConfig other = hw;
  other.name = "slow";
  other.link_bytes_per_s = 100'000'000'000;
  auto t = PlogpTableFromCalibration(*cal, "p.txtpb", other);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("p.txtpb"));
  EXPECT_THAT(t.status().message(), HasSubstr("'TPS186'"));
  EXPECT_THAT(t.status().message(), HasSubstr("'slow'"));
}

TEST(CalibrationTest, BadTextNamesLineAndColumn) {
  const std::string path = TempPath("models_bad.txtpb");
  std::ofstream(path) << "topology: \"ring\"\npoints { bytes: x }\n";
  auto cal = ReadCalibrationFile(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(cal.ok());
  EXPECT_THAT(cal.status().message(), HasSubstr(path + ":2:"));
}

// Network calculus is an upper bound: on every point of a small sweep grid
// (every op of the accuracy sweep, N = 8, two sizes, four topologies) its
// bound is at least the replay's time, and on pairwise AllToAll over a full
// mesh at 4 MB, where a bound that shared a chip's engines among its flows
// at once fell 4.3% short (its engines serve the flows in turn), and on
// TPS186 with round-robin lane groups, where a bound at the whole link's
// rate without the last packet's lane group fell up to 0.5% short.
TEST(ModelsSweepTest, NetworkCalculusBoundsTheReplay) {
  const std::string csv = TempPath("models_sweep.csv");
  const std::string rr = TempPath("rr.hw.txtpb");
  {
    std::ifstream in(std::string(CCREPLAY_SOURCE_DIR) +
                     "/traces/tps186.hw.txtpb");
    std::stringstream text;
    text << in.rdbuf();
    std::string config = text.str();
    const std::string xor_line = "interleave: INTERLEAVE_XOR";
    const size_t at = config.find(xor_line);
    ASSERT_NE(at, std::string::npos);
    config.replace(at, xor_line.size(), "interleave: INTERLEAVE_ROUND_ROBIN");
    std::ofstream(rr) << config;
  }
  const struct {
    std::string grid;
    int rows;
  } grids[] = {
      {"--n 8 --sizes 4K,1M --topology "
       "ring,fullmesh,switch,board-fattree:cpb=4",
       4 * 2 * 4},  // ops x sizes x topologies
      {"--n 8 --sizes 4M --topology fullmesh --ops alltoall:pairwise", 1},
      {"--hw " + rr +
           " --n 8 --sizes 64K --topology ring,fullmesh --ops "
           "allreduce:ring,allgather:ring --no-calibration",
       2 * 2},
  };
  for (const auto& g : grids) {
    const Result r = RunCli("models --sweep " + g.grid + " --csv " + csv);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = absl::StrSplit(line, ',');
    int replay_col = -1, nc_col = -1;
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == "replay_us") replay_col = i;
      if (header[i] == "nc_us") nc_col = i;
    }
    ASSERT_GE(replay_col, 0);
    ASSERT_GE(nc_col, 0);
    int rows = 0;
    while (std::getline(in, line)) {
      const std::vector<std::string> cells = absl::StrSplit(line, ',');
      const double replay = std::stod(cells[replay_col]);
      const double nc = std::stod(cells[nc_col]);
      EXPECT_GE(nc, replay) << line;
      ++rows;
    }
    std::filesystem::remove(csv);
    EXPECT_EQ(rows, g.rows) << g.grid;
  }
  std::filesystem::remove(rr);
}

// -j: a sweep's points evaluated on threads (each calibration computed
// once, by whichever thread needs it first) write the serial run's bytes;
// with a point that fails, the error is the serial run's, the first in grid
// order.
TEST(ModelsSweepTest, ThreadsWriteTheSerialRunsBytes) {
  const std::string m1 = TempPath("models_j1.json");
  const std::string m2 = TempPath("models_j2.json");
  const auto [one, json] = ccreplay_test::RunOnOneAndTwoThreads(
      "models --sweep --n 4 --sizes 4K,64K --topology ring,switch "
      "--ops allreduce:ring,alltoall:pairwise",
      m1, m2);
  ASSERT_EQ(one.exit_code, 0) << one.out;
  EXPECT_THAT(json, HasSubstr("\"summary\""));
  std::filesystem::remove(m1);
  std::filesystem::remove(m2);
  // 3 x 3 chips cannot be 8: the torus points fail after the ring's.
  const std::string failing =
      "models --sweep --n 8 --sizes 4K --topology ring,torus2d:3x3 -j ";
  const Result serial = RunCli(failing + "1");
  const Result threads = RunCli(failing + "2");
  EXPECT_EQ(serial.exit_code, 1) << serial.out;
  EXPECT_THAT(serial.out, HasSubstr("torus2d"));
  EXPECT_EQ(threads.exit_code, serial.exit_code);
  EXPECT_EQ(threads.out, serial.out);
}

// The alpha-beta machine's engines are unbounded: a local copy's fluid
// flow has an unbounded rate, which once made the fluid model loop for
// ever (inf * 0 = NaN bytes left). Every model now ends.
TEST(ModelsCliTest, UnboundedEnginesEnd) {
  const Result r = RunCli(std::string("models --hw ") + CCREPLAY_SOURCE_DIR +
                          "/traces/alpha-beta.hw.txtpb --op alltoall --algo "
                          "pairwise --n 4 --bytes 4K --no-calibration");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("fluid max-min"));
  EXPECT_THAT(r.out, HasSubstr("network calculus"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("nan")));
}

TEST(ModelsCliTest, OneCollectivePrintsEveryModelWithSignedErrors) {
  const Result r = RunCli(
      "models --op allreduce --n 8 --bytes 64K --topology ring --advise");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* m : {"replay", "alpha-beta", "alpha(n)-beta(n)", "LogGP",
                        "PLogP", "LoGPC", "fluid max-min", "network calculus",
                        "M/D/1", "recommends:", "measured best:"}) {
    EXPECT_THAT(r.out, HasSubstr(m));
  }
}

TEST(ModelsCliTest, BadInputExitsOneAndUsageTwo) {
  Result r = RunCli("models --op allreduce --n 8 --topology nowhere");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--topology 'nowhere'"));
  r = RunCli("models --sweep --ops allreduce");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("op:algorithm"));
  r = RunCli("models --no-such-flag");
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
}  // namespace ccreplay
