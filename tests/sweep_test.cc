// ccreplay sweep through the binary, its JSON read back, and the thread pool
// it runs points on.
#include "cli/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/thread_pool.h"
#include "cli/point.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/run_cli.h"
#include "tests/same_on_threads.h"
#include "tests/scratch_dir.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Result = ccreplay_test::CliResult;

using ccreplay_test::Slurp;

class SweepTest : public ccreplay_test::ScratchDirTest {
 protected:
  SweepTest() : ScratchDirTest("sweep_test") {}
  // The data rows of the text table (lines not starting with '#').
  static std::vector<std::string> Rows(const std::string& out) {
    std::vector<std::string> rows;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != '#') rows.push_back(line);
    }
    return rows;
  }
};

TEST_F(SweepTest, ParallelRunWritesTheSerialRunsBytes) {
  const std::string grid =
      "sweep --op allreduce -b 1K -e 64K -f 8 --algo ring,hd,rd --n 4,8 "
      "--topology ring,fullmesh ";
  std::vector<Result> runs;
  for (const char* j : {"1", "2", "4"}) {
    const std::string p = Path(std::string("j") + j);
    runs.push_back(ccreplay_test::RunCcreplay(grid + "-j " + j + " --csv " + p +
                                              ".csv --json " + p + ".json"));
    ASSERT_EQ(runs.back().exit_code, 0) << runs.back().out;
  }
  // 2 topologies x 3 algorithms x 2 N x 3 sizes (1K, 8K, 64K).
  EXPECT_EQ(Rows(runs[0].out).size(), 36u) << runs[0].out;
  const std::string csv = Slurp(Path("j1.csv"));
  const std::string json = Slurp(Path("j1.json"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 37);
  for (const char* j : {"j2", "j4"}) {
    EXPECT_EQ(Slurp(Path(std::string(j) + ".csv")), csv) << j;
    EXPECT_EQ(Slurp(Path(std::string(j) + ".json")), json) << j;
  }
  EXPECT_EQ(runs[1].out, runs[0].out);
  EXPECT_EQ(runs[2].out, runs[0].out);
}

// compare's cells and baseline's rows run on the same pool as sweep's points.
TEST_F(SweepTest, CompareAndBaselineInParallelWriteTheSerialRunsBytes) {
  const std::vector<std::string> commands = {
      "compare --op allgather --n 8 --bytes 256K --algo ring,rd,hd "
      "--topology ring,fullmesh,switch ",
      "baseline "};
  for (const std::string& c : commands) {
    std::vector<Result> runs;
    for (const char* j : {"1", "2"}) {
      const std::string p = Path(std::string("j") + j);
      runs.push_back(ccreplay_test::RunCcreplay(c + "-j " + j + " --csv " + p +
                                                ".csv --json " + p + ".json"));
      ASSERT_EQ(runs.back().exit_code, 0) << runs.back().out;
    }
    EXPECT_EQ(runs[1].out, runs[0].out) << c;
    EXPECT_EQ(Slurp(Path("j2.csv")), Slurp(Path("j1.csv"))) << c;
    EXPECT_EQ(Slurp(Path("j2.json")), Slurp(Path("j1.json"))) << c;
    EXPECT_THAT(Slurp(Path("j1.csv")), HasSubstr("busbw")) << c;
  }
}

// MPI ranks' shares (cli/point.h PointsOfRank): a partition of the points,
// balanced by estimated work even when sizes grow 4x a step, where i mod K
// would give the last rank of each K most of it.
TEST(PointsOfRankTest, PartitionBalancedByEstimatedWork) {
  std::vector<PointSpec> specs;
  for (uint32_t n : {8u, 16u}) {
    for (uint64_t b = 8; b <= (64u << 20); b *= 4) {  // 12 sizes, 8 B..32 MB
      PointSpec p;
      p.n = n;
      p.bytes = b;
      specs.push_back(p);
    }
  }
  // The estimate the function states: bytes (at least 64 KiB) times chips.
  auto cost = [&](size_t i) {
    return static_cast<double>(std::max<uint64_t>(specs[i].bytes, 64 << 10)) *
           specs[i].n;
  };
  double total = 0, largest = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    total += cost(i);
    largest = std::max(largest, cost(i));
  }
  for (int ranks : {1, 2, 3, 5}) {
    std::vector<int> owner(specs.size(), -1);
    double most = 0;
    for (int r = 0; r < ranks; ++r) {
      const std::vector<size_t> mine = PointsOfRank(specs, r, ranks);
      EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
      double load = 0;
      for (size_t i : mine) {
        ASSERT_LT(i, specs.size());
        EXPECT_EQ(owner[i], -1) << "point " << i << " given twice";
        owner[i] = r;
        load += cost(i);
      }
      most = std::max(most, load);
    }
    for (size_t i = 0; i < specs.size(); ++i) {
      EXPECT_NE(owner[i], -1) << "point " << i << " given to no rank";
    }
    // Greedy longest-first: no rank exceeds the mean by more than the
    // largest point (here the 32 MB points on 16 chips dominate).
    EXPECT_LE(most, total / ranks + largest) << ranks << " ranks";
    if (ranks == 2) {
      // Round-robin would put every larger size of a pair on rank 1: about
      // 4/5 of the work. The greedy shares are within 1% of half.
      EXPECT_LT(most, 0.51 * total);
    }
  }
}

TEST_F(SweepTest, NcclTestsColumnsAndSizes) {
  const Result r = ccreplay_test::RunCcreplay(
      "sweep --op allgather -b 1.5K -e 3KB -i 768 --n 4 -d half");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("#       size         count      type   redop "
                               "   root     time   algbw   busbw     math  "
                               "replay/math"));
  EXPECT_THAT(r.out, HasSubstr("# allgather ring on ring, N=4"));
  const std::vector<std::string> rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;  // 1536, 2304, 3072
  // count = size / 2 (half), a multiple of N = 4 for AllGather.
  EXPECT_THAT(rows[0], ::testing::StartsWith("        1536           768"
                                             "      half    none      -1"));
  EXPECT_THAT(rows[1], ::testing::StartsWith("        2304          1152"));
  EXPECT_THAT(rows[2], ::testing::StartsWith("        3072          1536"));
}

TEST_F(SweepTest, SizesRoundDownToWholeElementsPerRank) {
  // 1000 bytes of float over 8 chips: 250 elements -> 248 (31 per chip).
  const Result r = ccreplay_test::RunCcreplay(
      "sweep --op reducescatter -b 1000 -e 1000 --n 8");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_EQ(Rows(r.out).size(), 1u);
  EXPECT_THAT(Rows(r.out)[0], ::testing::StartsWith("         992           248"
                                                    "     float     sum"));
}

// The point a sweep prints is the cell compare prints: the same code.
TEST_F(SweepTest, PointsAreCompareCells) {
  const Result c = ccreplay_test::RunCcreplay(
      "compare --op allreduce --n 8 --bytes 64K --algo hd --topology fullmesh "
      "--csv " +
      Path("c.csv"));
  ASSERT_EQ(c.exit_code, 0) << c.out;
  const Result s = ccreplay_test::RunCcreplay(
      "sweep --op allreduce -b 64K -e 64K --algo hd --topology fullmesh --n 8 "
      "--json " +
      Path("s.json"));
  ASSERT_EQ(s.exit_code, 0) << s.out;
  auto report = SweepFromJson(Json::parse(Slurp(Path("s.json"))));
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->points.size(), 1u);
  const PointResult& p = report->points[0].result;
  // compare's CSV row: algorithm,topology,N,groups,bytes,replay_us,...
  EXPECT_THAT(
      Slurp(Path("c.csv")),
      HasSubstr(absl::StrFormat("hd,fullmesh,8,1,65536,%.4f,", p.replay_us)));
  ASSERT_TRUE(p.math_us.has_value());
  EXPECT_THAT(Slurp(Path("c.csv")),
              HasSubstr(absl::StrFormat(",%.4f,%.3f,", *p.math_us,
                                        p.replay_us / *p.math_us)));
}

TEST_F(SweepTest, JsonIsKeyedAsNcclTests) {
  const Result r = ccreplay_test::RunCcreplay(
      "sweep --op allreduce,broadcast -b 4K -e 8K -f 2 --n 4 --json " +
      Path("s.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json j = Json::parse(Slurp(Path("s.json")));
  EXPECT_EQ(j["config"]["minimum_bytes"], 4096);
  EXPECT_EQ(j["config"]["maximum_bytes"], 8192);
  EXPECT_EQ(j["config"]["step_factor"], 2);
  ASSERT_EQ(j["results"].size(), 4u);
  double sum = 0;
  for (const Json& p : j["results"]) {
    for (const char* key :
         {"size", "count", "type", "redop", "root", "out_of_place", "op",
          "algorithm", "topology", "n", "math_time", "breakdown"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
    EXPECT_GT(p["out_of_place"]["time"].get<double>(), 0);
    EXPECT_GT(p["out_of_place"]["bus_bw"].get<double>(), 0);
    sum += p["out_of_place"]["bus_bw"].get<double>();
  }
  EXPECT_DOUBLE_EQ(j["average_bus_bandwidth"]["bandwidth"].get<double>(),
                   sum / 4);
  // Math has no Broadcast formula: null in JSON, "-" in the table.
  EXPECT_TRUE(j["results"][0]["math_time"].is_number());
  EXPECT_TRUE(j["results"][2]["math_time"].is_null());
  EXPECT_EQ(j["results"][2]["root"], 0);
  EXPECT_EQ(j["results"][2]["redop"], "none");
  const std::vector<std::string> rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_THAT(rows[2], ::testing::EndsWith("        -            -"));
}

// --engine fluid: every point on the fluid engine, each time the one
// `replay --engine fluid` gives for the same lowered trace; threads write
// the serial run's bytes; the JSON names the engine and is read back.
TEST_F(SweepTest, FluidEngineSweepsAsReplayDoes) {
  const Json j = ccreplay_test::RunFluidOnOneAndTwoThreads(
      "sweep --op alltoall -b 64K -e 256K -f 4 --n 8", Path("f1.json"),
      Path("f2.json"));
  ASSERT_EQ(j["results"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const std::string bytes = i == 0 ? "64K" : "256K";
    const std::string trace = Path("a" + bytes + ".pb");
    ASSERT_EQ(ccreplay_test::RunCcreplay("lower --op alltoall --n 8 --bytes " +
                                         bytes + " -o " + trace)
                  .exit_code,
              0);
    const Result replay = ccreplay_test::RunCcreplay(
        "replay " + trace + " --engine fluid --fluid-packets 4 --json " +
        Path("r.json"));
    ASSERT_EQ(replay.exit_code, 0) << replay.out;
    const Json r = Json::parse(Slurp(Path("r.json")));
    EXPECT_DOUBLE_EQ(j["results"][i]["out_of_place"]["time"].get<double>(),
                     r["total_us"].get<double>())
        << bytes;
  }
  auto back = SweepFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->fluid_packets, 4u);
  // The packet engine's sweep says nothing of an engine.
  const Result packets = ccreplay_test::RunCcreplay(
      "sweep --op alltoall -b 64K -e 64K --n 8 --json " + Path("p.json"));
  ASSERT_EQ(packets.exit_code, 0) << packets.out;
  EXPECT_FALSE(Json::parse(Slurp(Path("p.json"))).contains("engine"));
  EXPECT_THAT(packets.out, Not(HasSubstr("fluid")));
  // --fluid-packets without the fluid engine, or out of range: usage errors.
  EXPECT_EQ(
      ccreplay_test::RunCcreplay("sweep --n 8 --fluid-packets 2").exit_code, 2);
  EXPECT_EQ(ccreplay_test::RunCcreplay(
                "sweep --n 8 --engine packet --fluid-packets 2")
                .exit_code,
            2);
  EXPECT_EQ(ccreplay_test::RunCcreplay(
                "sweep --n 8 --engine fluid --fluid-packets 70000")
                .exit_code,
            2);
}

TEST_F(SweepTest, SeveralOpsRunTheAlgorithmsTheyHave) {
  const Result r = ccreplay_test::RunCcreplay(
      "sweep --op allreduce,alltoall --algo ring,pairwise -b 8K -e 8K --n 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("# allreduce ring on ring, N=4"));
  EXPECT_THAT(r.out, HasSubstr("# alltoall pairwise on ring, N=4"));
  EXPECT_EQ(Rows(r.out).size(), 2u) << r.out;
}

TEST_F(SweepTest, NoProgressBarWhenStandardErrorIsNotATerminal) {
  const Result r = ccreplay_test::RunShell(
      std::string(CCREPLAY_BINARY) +
      " sweep --op allreduce -b 1K -e 4K -f 2 --n 4 2>" + Path("err") +
      " >/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Slurp(Path("err")), "");
}

// Under a pseudo-terminal (util-linux `script`) the bar shows, for sweep's
// points and compare's cells; --quiet hides it.
TEST_F(SweepTest, ProgressBarOnATerminalUnlessQuiet) {
  if (ccreplay_test::RunShell("command -v script").exit_code != 0) {
    GTEST_SKIP() << "no `script` (util-linux) to give the command a terminal";
  }
  const auto on_tty = [&](const std::string& args) {
    return ccreplay_test::RunShell("script -qec '" +
                                   std::string(CCREPLAY_BINARY) + " " + args +
                                   " >/dev/null' /dev/null");
  };
  auto r = on_tty("sweep --op allreduce -b 1K -e 4K -f 2 --n 4 -j 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("] 3/3 points, "));
  EXPECT_THAT(r.out, HasSubstr("M events/s, ETA "));
  r = on_tty("compare --op allreduce --n 4 --bytes 4K --algo ring,hd");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("] 2/2 cells, "));
  r = on_tty("sweep --op allreduce -b 1K -e 4K -f 2 --n 4 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("points")));
  // One replay: events so far (its total is not known), simulated time.
  const std::string trace = Path("r.pb");
  ASSERT_EQ(ccreplay_test::RunCcreplay("lower --n 8 --bytes 1M -o " + trace)
                .exit_code,
            0);
  r = on_tty("replay " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("replaying: "));
  EXPECT_THAT(r.out, HasSubstr(" us simulated, "));
  r = on_tty("replay -q " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("replaying")));
}

TEST_F(SweepTest, BadGridsAreErrors) {
  Result r =
      ccreplay_test::RunCcreplay("sweep --op allreduce -b 8K -e 4K --n 4");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("need 0 < minimum <= maximum"));
  r = ccreplay_test::RunCcreplay("sweep --op allreduce -b 1.3K --n 4");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("bad byte size '1.3K'"));
  r = ccreplay_test::RunCcreplay("sweep --op allreduce --n 1");
  EXPECT_EQ(r.exit_code, 2);
  r = ccreplay_test::RunCcreplay(
      "sweep --op allreduce --n 4 --algo pairwise -b 1K -e 1K");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("pairwise on ring: lowering: unsupported"));
  EXPECT_THAT(r.out, Not(HasSubstr("size")));
}

TEST(ThreadPoolTest, EveryIndexRunsOnce) {
  for (unsigned threads : {1u, 2u, 7u, 0u}) {
    const ThreadPool pool(threads);
    EXPECT_GE(pool.threads(), 1u);
    std::vector<std::atomic<int>> hits(1000);
    pool.ParallelFor(hits.size(), [&](size_t i) { hits[i].fetch_add(1); });
    for (size_t i = 0; i < hits.size(); ++i) {
      ASSERT_EQ(hits[i].load(), 1) << "index " << i << ", " << threads;
    }
    pool.ParallelFor(0, [](size_t) { FAIL() << "no index to run"; });
  }
}

}  // namespace
}  // namespace ccreplay
