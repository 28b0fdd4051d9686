// ccreplay compare, end to end through the binary.
#include <sys/wait.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/run_cli.h"

namespace {

using ::testing::HasSubstr;

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

}  // namespace
