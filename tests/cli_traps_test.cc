// The command-line traps of issue 11 item 5, each as a new user would meet
// it: every test here failed on the behaviour before the fix.
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/run_cli.h"
#include "tests/scratch_dir.h"

namespace {

using ccreplay_test::RunCcreplay;
using ccreplay_test::Slurp;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

class CliTrapsTest : public ccreplay_test::ScratchDirTest {
 protected:
  CliTrapsTest() : ScratchDirTest("cli_traps") {}
};

// Was: lower silently used 2 chips and compare 8.
TEST_F(CliTrapsTest, MissingNIsOneDefaultAndSaysSo) {
  auto r = RunCcreplay("lower --op allreduce --bytes 64K -o " + Path("t.pb"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ccreplay lower: --n not given: 8 chips"));
  EXPECT_THAT(r.out, HasSubstr("N=8,"));
  r = RunCcreplay("compare --op allreduce --bytes 64K");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ccreplay compare: --n not given: 8 chips"));
  r = RunCcreplay("sweep --op allreduce -b 64K -e 64K");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ccreplay sweep: --n not given: 8 chips"));
  EXPECT_THAT(r.out, HasSubstr("N=8"));
  // Given, nothing is said.
  r = RunCcreplay("compare --op allreduce --bytes 64K --n 4");
  EXPECT_THAT(r.out, Not(HasSubstr("not given")));
}

// Was: compare, sweep, models and calibrate ran on a ring of 8 chips (2 for
// calibrate) whatever --hw said, and lower wrote an 8-chip trace for a
// config of 64 chips, whose replay then refused it. Now a command without
// --n or --topology takes the config's (tps186-switch: 64 chips, one
// switch); the ring config keeps 8 (MissingNIsOneDefaultAndSaysSo).
TEST_F(CliTrapsTest, DefaultsAreTheHardwareConfigsSystem) {
  const std::string hw = " --hw " + std::string(CCREPLAY_SOURCE_DIR) +
                         "/traces/tps186-switch.hw.txtpb";
  const std::string said = "--n not given: 64 chips, the hardware config's";
  auto r = RunCcreplay("lower --bytes 4K -o " + Path("t.pb") + hw);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ccreplay lower: " + said));
  EXPECT_THAT(r.out, HasSubstr("N=64,"));
  r = RunCcreplay("replay " + Path("t.pb") + hw);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("topology switch\n"));

  r = RunCcreplay("compare --bytes 4K --json " + Path("c.json") + hw);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ccreplay compare: " + said));
  const Json c = Json::parse(Slurp(Path("c.json")));
  EXPECT_EQ(c["n"], 64);
  EXPECT_EQ(c["rows"][0]["topology"], "switch");

  r = RunCcreplay("sweep -b 4K -e 4K --json " + Path("s.json") + hw);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ccreplay sweep: " + said));
  const Json s = Json::parse(Slurp(Path("s.json")));
  EXPECT_EQ(s["results"][0]["n"], 64);
  EXPECT_EQ(s["results"][0]["topology"], "switch");
  // The same replay either way.
  EXPECT_EQ(s["results"][0]["out_of_place"]["time"], c["rows"][0]["replay_us"]);

  r = RunCcreplay("models --bytes 4K --no-calibration" + hw);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ccreplay models: " + said));
  EXPECT_THAT(r.out, HasSubstr("# allreduce ring, N=64, 4096 bytes on switch, "
                               "TPS186-switch"));

  r = RunCcreplay("calibrate -o " + Path("cal.txtpb") + hw);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("on TPS186-switch, switch\n"));
  EXPECT_THAT(Slurp(Path("cal.txtpb")), HasSubstr("num_chips: 64"));
  // Given, they win: 8 chips on a ring refused by the 64-chip config.
  r = RunCcreplay("compare --bytes 4K --n 8 --topology ring" + hw);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("the trace has 8 chips"));
}

// Was: "A subcommand is required" for --version.
TEST_F(CliTrapsTest, VersionIsTheProjectVersion) {
  const auto r = RunCcreplay("--version");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, std::string("ccreplay ") + CCREPLAY_VERSION + "\n");
}

// Was: "A subcommand is required" / "arguments were not expected", no
// command named, nothing suggested.
TEST_F(CliTrapsTest, UnknownCommandAndFlagSuggestTheNearest) {
  auto r = RunCcreplay("compar --n 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("ccreplay: unknown command 'compar'; did you "
                               "mean 'compare'?"));
  r = RunCcreplay("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("unknown command 'frobnicate' (known: "));
  r = RunCcreplay("compare --op allreduce --n 2 --bytess 1M");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("ccreplay compare: unknown flag '--bytess'; "
                               "did you mean '--bytes'?"));
  r = RunCcreplay("sweep --op allreduce --n 2 --topolgy ring");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("ccreplay sweep: unknown flag '--topolgy'; "
                               "did you mean '--topology'?"));
  // Said once, in our words, not also as CLI11's "arguments were not
  // expected".
  EXPECT_THAT(r.out, Not(HasSubstr("not expected")));
}

// Was: lower refused torus2d:8x8 (name parser) where replay took it.
TEST_F(CliTrapsTest, LowerTakesTopologySpecsAsReplayDoes) {
  auto r = RunCcreplay(
      "lower --op allreduce --n 16 --bytes 64K --topology torus2d:4x4 -o " +
      Path("t.txtpb"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The trace keeps the parameters, and replay runs on them.
  r = RunCcreplay("replay " + Path("t.txtpb"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("topology torus2d:x=4,y=4"));
  const auto given =
      RunCcreplay("replay " + Path("t.txtpb") + " --topology torus2d:4x4");
  ASSERT_EQ(given.exit_code, 0) << given.out;
  EXPECT_EQ(given.out, r.out);
}

// Was: lower wrote a trace for a torus that cannot hold its chips, and only
// its replay said so.
TEST_F(CliTrapsTest, LowerRefusesATopologyThatDoesNotFitN) {
  const auto r = RunCcreplay(
      "lower --op allreduce --n 8 --bytes 64K --topology torus2d:3x3 -o " +
      Path("t.pb"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--topology 'torus2d:3x3' for --n 8: "));
  EXPECT_THAT(r.out, HasSubstr("3 x 3 is not the system's 8 chips"));
  EXPECT_FALSE(std::filesystem::exists(Path("t.pb")));
}

// Was: "unknown collective 'AllReduce'" (exit 1, after reading the config)
// and algorithms checked only when lowering.
TEST_F(CliTrapsTest, OpAndAlgoAnyCaseValidatedUpFront) {
  auto r =
      RunCcreplay("compare --op AllReduce --algo RING,Hd --n 4 --bytes 4K");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\nring "));
  EXPECT_THAT(r.out, HasSubstr("\nhd "));
  r = RunCcreplay("lower --op allreduc --n 4 -o " + Path("t.pb"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("unknown collective 'allreduc'; did you mean "
                               "'allreduce'?"));
  r = RunCcreplay("sweep --op allreduce --algo rign --n 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("unknown algorithm 'rign'; did you mean "
                               "'ring'?"));
  EXPECT_FALSE(std::filesystem::exists(Path("t.pb")));
  // models too (was: "unknown collective 'AllReduce'", exit 1).
  r = RunCcreplay(
      "models --op AllReduce --algo RING --n 4 --bytes 4K --no-calibration");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("# allreduce ring, N=4"));
  r = RunCcreplay("models --op allredcue --n 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("did you mean 'allreduce'?"));
}

// Was: math_us 0.0000 and replay/math 0.000 (and 0 in JSON).
TEST_F(CliTrapsTest, NoMathFormulaIsDashAndNull) {
  const auto r =
      RunCcreplay("compare --op broadcast --n 4 --bytes 64K --json " +
                  Path("c.json") + " --csv " + Path("c.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("        -            -"));
  EXPECT_THAT(r.out, Not(HasSubstr("0.0000")));
  const Json j = Json::parse(Slurp(Path("c.json")));
  EXPECT_TRUE(j["rows"][0]["math_us"].is_null());
  EXPECT_TRUE(j["rows"][0]["replay/math"].is_null());
  EXPECT_THAT(Slurp(Path("c.csv")), HasSubstr(",-,-,"));
}

// Was: compare's JSON held only the table rows; replay's no op, bytes,
// algorithm or bandwidths.
TEST_F(CliTrapsTest, JsonCarriesTheFullDescription) {
  auto r = RunCcreplay(
      "compare --op allreduce --n 4 --bytes 64K --algo ring "
      "--json " +
      Path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Json j = Json::parse(Slurp(Path("c.json")));
  EXPECT_EQ(j["op"], "allreduce");
  EXPECT_EQ(j["n"], 4);
  EXPECT_EQ(j["bytes"], 65536);
  EXPECT_EQ(j["hw"], "TPS186");
  const Json& row = j["rows"][0];
  for (const char* key : {"algorithm", "topology", "algbw_GBps", "busbw_GBps",
                          "math_us", "breakdown"}) {
    EXPECT_TRUE(row.contains(key)) << key;
  }
  double path = 0;
  for (const auto& [cause, us] : row["breakdown"].items())
    path += us.get<double>();
  EXPECT_NEAR(path, row["replay_us"].get<double>(), 1e-6);
  r = RunCcreplay("lower --op allgather --algo hd --n 4 --bytes 64K -o " +
                  Path("t.pb"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RunCcreplay("replay " + Path("t.pb") + " --json " + Path("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  j = Json::parse(Slurp(Path("r.json")));
  EXPECT_EQ(j["collective"]["op"], "allgather");
  EXPECT_EQ(j["collective"]["n"], 4);
  EXPECT_EQ(j["collective"]["bytes"], 65536);
  EXPECT_EQ(j["collective"]["algorithm"], "hd");
  EXPECT_EQ(j["collective"]["topology"], "ring");
  EXPECT_NEAR(j["collective"]["algbw_GBps"].get<double>(),
              65536 / (j["total_us"].get<double>() * 1e3), 1e-9);
  // AllGather's busbw factor (N-1)/N.
  EXPECT_NEAR(j["collective"]["busbw_GBps"].get<double>(),
              j["collective"]["algbw_GBps"].get<double>() * 3 / 4, 1e-9);
}

// Was: "M (bytes),corrected (us)".
TEST_F(CliTrapsTest, CsvHeadersHaveNoSpaces) {
  for (const std::string cmd :
       {"math --legacy", "baseline", "compare --n 4 --bytes 4K",
        "sweep --n 4 -b 4K -e 4K"}) {
    const auto r = RunCcreplay(cmd + " --csv " + Path("t.csv"));
    ASSERT_EQ(r.exit_code, 0) << cmd << r.out;
    const std::string csv = Slurp(Path("t.csv"));
    EXPECT_THAT(csv.substr(0, csv.find('\n')), Not(HasSubstr(" "))) << cmd;
  }
}

// Was: binary protobuf written under the JSON name, exit 0.
TEST_F(CliTrapsTest, LowerRefusesAJsonTraceName) {
  const auto r = RunCcreplay("lower --op allreduce --n 4 -o " + Path("t.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("ccreplay writes no JSON trace"));
  EXPECT_FALSE(std::filesystem::exists(Path("t.json")));
}

// Was: no install rule; cmake --install installed nothing.
TEST_F(CliTrapsTest, InstallPutsCcreplayInBin) {
  const std::string build =
      std::filesystem::path(CCREPLAY_BINARY).parent_path().string();
  const auto r = ccreplay_test::RunShell("cmake --install " + build +
                                         " --prefix " + Path("prefix"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto v =
      ccreplay_test::RunShell(Path("prefix/bin/ccreplay") + " --version");
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_THAT(v.out, HasSubstr("ccreplay "));
}

}  // namespace
