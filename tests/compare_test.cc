// ccreplay compare, end to end through the binary.
#include <sys/wait.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/run_cli.h"
#include "tests/same_on_threads.h"
#include "tests/scratch_dir.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;
using ccreplay_test::Slurp;

using Result = ccreplay_test::CliResult;
Result RunCli(const std::string& args) {
  return ccreplay_test::RunCcreplay(args);
}

TEST(CompareTest, OneRowPerAlgorithmAndTopology) {
  const Result r = RunCli(
      "compare --op allreduce --n 8 --bytes 64K --algo ring,hd "
      "--topology ring,fullmesh");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("algorithm"));
  EXPECT_THAT(r.out, HasSubstr("busbw_GBps"));
  // 2 algorithms x 2 topologies, after the comment and the header line.
  int rows = 0;
  for (const char* algo : {"ring ", "hd "}) {
    for (const char* topo : {"ring", "fullmesh"}) {
      const std::string want = std::string(algo);
      size_t pos = 0;
      while ((pos = r.out.find("\n" + want, pos)) != std::string::npos) {
        const size_t eol = r.out.find('\n', pos + 1);
        if (r.out.substr(pos, eol - pos).find(topo) != std::string::npos) {
          ++rows;
          break;
        }
        ++pos;
      }
    }
  }
  EXPECT_EQ(rows, 4) << r.out;
}

TEST(CompareTest, TwoChipsAllAlgorithmsTie) {
  const Result r = RunCli(
      "compare --op allreduce --n 2 --bytes 1M --algo "
      "ring,ring_2port,rh,rd,hd");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // Rows 3..7 of the output; column 6 is replay_us, equal in every row.
  std::istringstream in(r.out);
  std::string line;
  std::set<std::string> times;
  int rows = 0;
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    std::string algo, topo, n, groups, bytes, us;
    cols >> algo >> topo >> n >> groups >> bytes >> us;
    if (line.empty() || line[0] == '#' || algo == "algorithm") continue;
    times.insert(us);
    ++rows;
  }
  EXPECT_EQ(rows, 5) << r.out;
  EXPECT_EQ(times.size(), 1u) << r.out;
}

TEST(CompareTest, BadAlgorithmIsAnInputError) {
  // A known algorithm the op does not have: the lowering says so.
  Result r = RunCli("compare --op allreduce --n 4 --algo pairwise");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("pairwise on ring: lowering: unsupported"));
  // No such algorithm: a usage error before anything runs.
  r = RunCli("compare --op allreduce --n 4 --algo nope");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("unknown algorithm 'nope'"));
}

class CompareFluidTest : public ccreplay_test::ScratchDirTest {
 protected:
  CompareFluidTest() : ScratchDirTest("compare_test") {}
};

// --engine fluid: every cell on the fluid engine, each time the one
// `replay --engine fluid` gives for the same lowered trace; threads write
// the serial run's bytes; the header and JSON name the engine, and the rows
// have no breakdown (the fluid engine has none).
TEST_F(CompareFluidTest, FluidEngineCellsAsReplayDoes) {
  const Json j = ccreplay_test::RunFluidOnOneAndTwoThreads(
      "compare --op allreduce --n 8 --bytes 1M --algo ring,hd --topology "
      "ring,fullmesh",
      Path("c1.json"), Path("c2.json"));
  ASSERT_EQ(j["rows"].size(), 4u);
  for (const Json& row : j["rows"]) {
    EXPECT_FALSE(row.contains("breakdown")) << row;
    const std::string algo = row["algorithm"];
    const std::string topo = row["topology"];
    const std::string trace = Path(algo + "-" + topo + ".pb");
    const Result lower =
        RunCli("lower --op allreduce --n 8 --bytes 1M --algo " + algo +
               " --topology " + topo + " -o " + trace);
    ASSERT_EQ(lower.exit_code, 0) << lower.out;
    const Result replay =
        RunCli("replay " + trace + " --engine fluid --fluid-packets 4 --json " +
               Path("r.json"));
    ASSERT_EQ(replay.exit_code, 0) << replay.out;
    const Json r = Json::parse(Slurp(Path("r.json")));
    EXPECT_DOUBLE_EQ(row["replay_us"].get<double>(),
                     r["total_us"].get<double>())
        << algo << " on " << topo;
  }
  // The packet engine's rows keep their breakdown and name no engine.
  const Result packets = RunCli(
      "compare --op allreduce --n 8 --bytes 1M --json " + Path("p.json"));
  ASSERT_EQ(packets.exit_code, 0) << packets.out;
  const Json p = Json::parse(Slurp(Path("p.json")));
  EXPECT_FALSE(p.contains("engine"));
  EXPECT_TRUE(p["rows"][0].contains("breakdown"));
  EXPECT_THAT(packets.out, Not(HasSubstr("fluid")));
  // --fluid-packets without the fluid engine, or out of range: usage errors.
  EXPECT_EQ(RunCli("compare --n 8 --fluid-packets 2").exit_code, 2);
  EXPECT_EQ(RunCli("compare --n 8 --engine packet --fluid-packets 2").exit_code,
            2);
  EXPECT_EQ(
      RunCli("compare --n 8 --engine fluid --fluid-packets 70000").exit_code,
      2);
  EXPECT_EQ(RunCli("compare --n 8 --engine flow").exit_code, 2);
}

}  // namespace
