// The ccreplay command, run as a user would: outputs, exit codes, files.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/run_cli.h"
#include "tests/scratch_dir.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using CmdResult = ccreplay_test::CliResult;
CmdResult Ccreplay(const std::string& args) {
  return ccreplay_test::RunCcreplay(args);
}

class CliTest : public ccreplay_test::ScratchDirTest {
 protected:
  CliTest() : ScratchDirTest("cli_test") {}
  static std::string Slurp(const std::string& path) {
    return ccreplay_test::Slurp(path);
  }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
};

TEST_F(CliTest, MathReproducesTheSelfCheckTable) {
  const CmdResult r = Ccreplay("math --legacy");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // docs/spec-notes.md §2: corrected and legacy columns, 4 decimals.
  EXPECT_THAT(r.out, HasSubstr("Dense_MLP  allreduce        458752     "
                               "1.9643        2.6543"));
  EXPECT_THAT(r.out, HasSubstr("2.3284"));
  EXPECT_THAT(r.out, HasSubstr("0.7355"));
  EXPECT_THAT(r.out, HasSubstr("5.2886"));
  EXPECT_THAT(r.out, HasSubstr("7.8372"));
}

// Parses the baseline CSV: the replay/Math ratio of every row.
TEST_F(CliTest, BaselineRunsOnTheDefaultAndEveryRowIsNearMath) {
  const std::string csv = Path("baseline.csv");
  const std::string json = Path("baseline.json");
  const CmdResult r = Ccreplay("baseline --csv " + csv + " --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("one model pass"));
  std::istringstream lines(Slurp(csv));
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line,
            "module,operator,primitive,N,topology,bytes,math_us,replay_us,"
            "replay/math,busbw_GBps,repeat");
  int rows = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 11u) << line;
    const double math = std::stod(f[6]);
    const double replay = std::stod(f[7]);
    EXPECT_GE(replay / math, 0.95) << line;
    EXPECT_LE(replay / math, 1.25) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 8);
  EXPECT_THAT(Slurp(json), HasSubstr("\"total_replay_us\":"));
}

TEST_F(CliTest, LowerThenReplayWritesATimelineAndReportsBandwidth) {
  const std::string trace = Path("ar.txtpb");
  const std::string timeline = Path("ar.json");
  CmdResult r = Ccreplay("lower --op allreduce --n 4 --bytes 64K -o " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("allreduce ring, N=4, 65536 bytes"));
  r = Ccreplay("replay " + trace + " --timeline " + timeline);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("topology ring"));
  EXPECT_THAT(r.out, HasSubstr("allreduce N=4 65536 bytes: algbw"));
  const std::string tl = Slurp(timeline);
  EXPECT_THAT(tl, HasSubstr("\"traceEvents\""));
  EXPECT_THAT(tl, HasSubstr("\"name\":\"cdma 0\""));
  EXPECT_THAT(tl, HasSubstr("MsgWait qp"));
}

TEST_F(CliTest, ReplayingTheSameTraceTwiceGivesIdenticalOutputs) {
  const std::string trace = Path("a2a.pb");
  ASSERT_EQ(Ccreplay("lower --op alltoall --n 8 --bytes 100000 --topology "
                     "switch -o " +
                     trace)
                .exit_code,
            0);
  const CmdResult a = Ccreplay("replay " + trace + " --timeline " +
                               Path("1.json") + " --json " + Path("1r.json"));
  const CmdResult b = Ccreplay("replay " + trace + " --timeline " +
                               Path("2.json") + " --json " + Path("2r.json"));
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(Slurp(Path("1.json")), Slurp(Path("2.json")));
  EXPECT_GT(Slurp(Path("1.json")).size(), 1000u);
  EXPECT_EQ(Slurp(Path("1r.json")), Slurp(Path("2r.json")));
}

TEST_F(CliTest, TextTypoNamesLineAndColumnAndExitsOne) {
  const std::string trace = Path("typo.txtpb");
  Write(trace,
        "header { format_version: FORMAT_VERSION_1 num_chips: 2 }\n"
        "chips { chip: 0 streams { id: 0 instructions {\n"
        "  transfer { qp_id: 0 dst_chp: 1 bytes: 8 } } } }\n");
  const CmdResult r = Ccreplay("replay " + trace);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("typo.txtpb:3:"));
  EXPECT_THAT(r.out, HasSubstr("dst_chp"));
}

TEST_F(CliTest, OutOfRangeChipNamesTheInstructionAndWritesNoOutput) {
  const std::string trace = Path("bad.txtpb");
  const std::string timeline = Path("bad.json");
  Write(trace,
        "header { format_version: FORMAT_VERSION_1 num_chips: 2 }\n"
        "chips { chip: 1 streams { id: 0 instructions {\n"
        "  transfer { qp_id: 0 dst_chip: 7 bytes: 8 } } } }\n");
  const CmdResult r = Ccreplay("replay " + trace + " --timeline " + timeline);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("chip 1, stream 0, instruction 0 (Transfer): "
                               "dst_chip 7 out of range [0, 2)"));
  EXPECT_FALSE(std::filesystem::exists(timeline));
}

TEST_F(CliTest, DeadlockedTraceEndsWithTheStuckStreamAndNoOutput) {
  const std::string trace = Path("dead.txtpb");
  const std::string timeline = Path("dead.json");
  Write(trace,
        "header { format_version: FORMAT_VERSION_1 num_chips: 2 }\n"
        "chips { chip: 0 streams { id: 3 instructions {\n"
        "  msg_wait { qp_id: 0 count: 1 } } } }\n");
  const CmdResult r = Ccreplay("replay " + trace + " --timeline " + timeline);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("deadlock"));
  EXPECT_THAT(r.out, HasSubstr("chip 0, stream 3, instruction 0 (MsgWait): "
                               "waits for 1 message(s) on qp 0, has 0"));
  EXPECT_FALSE(std::filesystem::exists(timeline));
}

TEST_F(CliTest, NotATraceSaysSo) {
  const std::string junk = Path("junk.pb");
  Write(junk, std::string("\xff\xff\xff\x07garbage", 11));
  const CmdResult r = Ccreplay("replay " + junk);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("not a ccreplay trace"));
}

TEST_F(CliTest, BadHardwareConfigNamesTheField) {
  const std::string hw = Path("hw.txtpb");
  std::string text =
      Slurp(std::string(CCREPLAY_SOURCE_DIR) + "/traces/tps186.hw.txtpb");
  const std::string from = "bandwidth_bytes_per_s: 400000000000";
  text.replace(text.find(from), from.size(), "bandwidth_bytes_per_s: 0");
  Write(hw, text);
  const CmdResult r = Ccreplay("baseline --hw " + hw);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("link.bandwidth_bytes_per_s: must be > 0"));
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Ccreplay("").exit_code, 2);
  EXPECT_EQ(Ccreplay("frobnicate").exit_code, 2);
  EXPECT_EQ(Ccreplay("lower --op allreduce").exit_code, 2);  // no -o
  EXPECT_EQ(Ccreplay("replay /nonexistent/trace.pb").exit_code, 2);
  const CmdResult help = Ccreplay("replay --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--timeline"));
}

TEST_F(CliTest, BadSizesAreInputErrors) {
  CmdResult r =
      Ccreplay("lower --op allreduce --bytes 1.3K -o " + Path("x.pb"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("bad byte size '1.3K'"));
  r = Ccreplay("lower --op allreduce --bytes 0 -o " + Path("x.pb"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(Path("x.pb")));
  r = Ccreplay("lower --op allreduce --n 1 -o " + Path("x.pb"));
  EXPECT_EQ(r.exit_code, 1);
  r = Ccreplay("lower --op allreduce --topology torus -o " + Path("x.pb"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("unknown topology 'torus'"));
}

}  // namespace

namespace {

TEST_F(CliTest, CheckSemanticsProvesALoweredTraceAndCatchesABrokenOne) {
  const std::string trace = Path("hd6.txtpb");
  ASSERT_EQ(
      Ccreplay("lower --op allreduce --algo hd --n 6 --bytes 1000 -o " + trace)
          .exit_code,
      0);
  CmdResult r = Ccreplay("check --semantics " + trace);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("every chip's output is the collective's"));
  // Turn the first reduce-on-write into a plain write: one chip's
  // contribution is lost.
  std::string text = Slurp(trace);
  text.replace(text.find("REDUCE_SUM"), 10, "REDUCE_NONE");
  Write(trace, text);
  r = Ccreplay("check --semantics " + trace);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("allreduce chip 0 output [334, 376)"));
}

}  // namespace

namespace {

// Names that JSON must escape: a quote, a backslash and a tab, in a file name
// and in a hardware config's name. Every JSON output must parse and give the
// names back unchanged (regression: the replay and baseline JSON inserted
// them unescaped).
TEST_F(CliTest, JsonOutputsEscapeFileAndHardwareNames) {
  const std::string hw_name = "TPS \"186\" \\ 2\tboards";
  std::string hw_text =
      Slurp(std::string(CCREPLAY_SOURCE_DIR) + "/traces/tps186.hw.txtpb");
  const std::string from = "name: \"TPS186\"";
  ASSERT_NE(hw_text.find(from), std::string::npos);
  hw_text.replace(hw_text.find(from), from.size(),
                  "name: \"TPS \\\"186\\\" \\\\ 2\\tboards\"");
  const std::string hw = Path("hw.txtpb");
  Write(hw, hw_text);
  const std::string trace = Path("a \"quoted\" \\ trace.txtpb");
  // Single quotes keep the shell away from the quote and the backslash.
  const std::string q = "'" + trace + "'";
  CmdResult r = Ccreplay("lower --op allreduce --n 2 --bytes 4K -o " + q);
  ASSERT_EQ(r.exit_code, 0) << r.out;

  r = Ccreplay("replay " + q + " --hw " + hw + " --json " + Path("r.json") +
               " --timeline " + Path("t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto replay = nlohmann::json::parse(Slurp(Path("r.json")), nullptr,
                                            /*allow_exceptions=*/false);
  ASSERT_FALSE(replay.is_discarded()) << Slurp(Path("r.json"));
  EXPECT_EQ(replay["trace"], trace);
  EXPECT_EQ(replay["hw"], hw_name);
  EXPECT_FALSE(nlohmann::json::parse(Slurp(Path("t.json")), nullptr, false)
                   .is_discarded());

  r = Ccreplay("baseline --hw " + hw + " --json " + Path("b.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto baseline =
      nlohmann::json::parse(Slurp(Path("b.json")), nullptr, false);
  ASSERT_FALSE(baseline.is_discarded()) << Slurp(Path("b.json"));
  EXPECT_EQ(baseline["hw"], hw_name);

  r = Ccreplay("check " + q + " --json " + Path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto check =
      nlohmann::json::parse(Slurp(Path("c.json")), nullptr, false);
  ASSERT_FALSE(check.is_discarded()) << Slurp(Path("c.json"));
  EXPECT_EQ(check["file"], trace);
}

// Outputs that never destroy (issue 10, item 3). Each case checks that the
// file that would have been destroyed is unchanged and no temporary is left.
class OutputSafetyTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    trace_ = Path("t.txtpb");
    const CmdResult r =
        Ccreplay("lower --op allreduce --n 4 --bytes 64K -o " + trace_);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    trace_text_ = Slurp(trace_);
  }
  // The names in the test's directory that look like our temporaries.
  std::vector<std::string> Temporaries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      const std::string name = e.path().filename();
      if (name.find(".tmp.") != std::string::npos) out.push_back(name);
    }
    return out;
  }
  std::string trace_;
  std::string trace_text_;
};

TEST_F(OutputSafetyTest, CheckJsonOverItsOwnTraceIsRefused) {
  const CmdResult r = Ccreplay("check " + trace_ + " --json " + trace_);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--json " + trace_ +
                               " is the same file as "
                               "input trace " +
                               trace_ + "; refusing to overwrite it"));
  EXPECT_THAT(r.out, Not(HasSubstr("error(s)")));  // no report either
  EXPECT_EQ(Slurp(trace_), trace_text_);
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

TEST_F(OutputSafetyTest, ReplayCsvOverTheHardwareConfigViaASymlinkIsRefused) {
  const std::string hw = Path("h.txtpb");
  const std::string hw_text =
      Slurp(std::string(CCREPLAY_SOURCE_DIR) + "/traces/tps186.hw.txtpb");
  Write(hw, hw_text);
  std::filesystem::create_symlink("h.txtpb", Path("alias.json"));
  // Refused before the run: a run that would stop after one event is not
  // started.
  CmdResult r = Ccreplay("replay " + trace_ + " --max-events 1 --hw " + hw +
                         " --csv " + hw);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--csv " + hw +
                               " is the same file as input --hw " + hw));
  EXPECT_THAT(r.out, Not(HasSubstr("events")));
  r = Ccreplay("replay " + trace_ + " --hw " + hw + " --timeline " +
               Path("alias.json"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--timeline " + Path("alias.json") +
                               " is the same file as input --hw " + hw));
  EXPECT_EQ(Slurp(hw), hw_text);
  EXPECT_TRUE(std::filesystem::is_symlink(Path("alias.json")));
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

TEST_F(OutputSafetyTest, LongCommandsRefuseBeforeTheyRun) {
  // Each input is junk: the refusal comes before anything reads it.
  const std::string junk = "not a config\n";
  Write(Path("h.txtpb"), junk);
  Write(Path("p.txtpb"), junk);
  Write(Path("a.xml"), junk);
  const std::string hw = Path("h.txtpb");
  for (const auto& [args, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"baseline --hw " + hw + " --json " + hw,
            "--json " + hw + " is the same file as input --hw " + hw},
           {"calibrate --hw " + hw + " -o " + hw,
            "-o " + hw + " is the same file as input --hw " + hw},
           {"models --params " + Path("p.txtpb") + " --csv " + Path("p.txtpb"),
            "--csv " + Path("p.txtpb") + " is the same file as input --params"},
           {"compare --algo msccl:" + Path("a.xml") + " --json " +
                Path("a.xml"),
            "--json " + Path("a.xml") + " is the same file as input --algo"}}) {
    const CmdResult r = Ccreplay(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(message)) << args;
  }
  EXPECT_EQ(Slurp(hw), junk);
  EXPECT_EQ(Slurp(Path("p.txtpb")), junk);
  EXPECT_EQ(Slurp(Path("a.xml")), junk);
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

TEST_F(OutputSafetyTest, TwoOutputsOnOneFileAreRefusedAndNeitherWritten) {
  const CmdResult r = Ccreplay("replay " + trace_ + " --csv " + Path("o") +
                               " --json " + dir_.string() + "/./o");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--json " + dir_.string() + "/./o and --csv " +
                               Path("o") + " are the same file"));
  EXPECT_FALSE(std::filesystem::exists(Path("o")));
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

TEST_F(OutputSafetyTest, NonRegularTargetsAreRefusedNotReplaced) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0644), 0);
  CmdResult r = Ccreplay("lower --op allreduce --n 4 -o " + Path("fifo"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("-o " + Path("fifo") +
                               ": exists and is a FIFO; refusing to write "
                               "an output there"));
  EXPECT_TRUE(std::filesystem::is_fifo(Path("fifo")));
  std::filesystem::create_symlink("/dev/null", Path("null"));
  r = Ccreplay("replay " + trace_ + " --json " + Path("null"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("a symlink to /dev/null, a character device"));
  EXPECT_TRUE(std::filesystem::is_symlink(Path("null")));
  r = Ccreplay("math --csv " + dir_.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("exists and is a directory"));
  EXPECT_THAT(r.out, Not(HasSubstr("self-check on")));
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

TEST_F(OutputSafetyTest, SymlinkToARegularFileIsWrittenThrough) {
  Write(Path("real.csv"), "old\n");
  std::filesystem::create_symlink("real.csv", Path("link.csv"));
  const CmdResult r = Ccreplay("math --csv " + Path("link.csv"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::is_symlink(Path("link.csv")));
  EXPECT_THAT(Slurp(Path("real.csv")), HasSubstr("module,operator,"));
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

TEST_F(OutputSafetyTest, ALongLegalFileNameIsWritten) {
  const std::string name(250, 'n');
  const CmdResult r = Ccreplay("replay " + trace_ + " --json " + Path(name));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(Slurp(Path(name)), HasSubstr("\"total_us\""));
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

TEST_F(OutputSafetyTest, FileSizeLimitFailsCleanlyWithNoReport) {
  // 1 block: the timeline (tens of KB) cannot be written.
  const CmdResult r = ccreplay_test::RunShell(
      "ulimit -f 1; exec " + std::string(CCREPLAY_BINARY) + " replay " +
      trace_ + " --timeline " + Path("tl.json"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("tl.json: write to "));
  EXPECT_THAT(r.out, HasSubstr("failed: File too large"));
  EXPECT_THAT(r.out, Not(HasSubstr("total ")));
  EXPECT_FALSE(std::filesystem::exists(Path("tl.json")));
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

TEST_F(OutputSafetyTest, AFailedWriteAfterTheRunPrintsNoReport) {
  const CmdResult r =
      Ccreplay("replay " + trace_ + " --csv " + Path("no_dir/c.csv"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("no_dir/c.csv: cannot create temporary file"));
  EXPECT_THAT(r.out, Not(HasSubstr("total ")));
  EXPECT_THAT(r.out, Not(HasSubstr("critical path")));
}

TEST_F(OutputSafetyTest, EmptyOutputPathIsAUsageError) {
  CmdResult r = Ccreplay("lower --op allreduce -o ''");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--output: empty output path"));
  r = Ccreplay("check " + trace_ + " --json ''");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--json: empty output path"));
  EXPECT_EQ(Slurp(trace_), trace_text_);
  EXPECT_THAT(Temporaries(), ::testing::IsEmpty());
}

// Numeric flags (issue 10, item 2): the parser refuses what would wrap or be
// silently taken as the default.
TEST_F(CliTest, UnsignedFlagsRefuseSignsFractionsAndWrapping) {
  const std::string out = " -o " + Path("p.pb");
  for (const char* flags :
       {"--op p2p --n 4 --peer 4294967298", "--op p2p --n 4 --peer -5",
        "--op allreduce --n 4.0", "--op allreduce --n 1e1",
        "--op allreduce --n 4 --cdma -1"}) {
    const CmdResult r = Ccreplay(std::string("lower ") + flags + out);
    EXPECT_EQ(r.exit_code, 2) << flags << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("is not an integer from 0 to 4294967295"))
        << flags;
  }
  EXPECT_FALSE(std::filesystem::exists(Path("p.pb")));
  CmdResult r = Ccreplay("replay /dev/null --max-events -1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--max-events: '-1' is not an integer from 0 "
                               "to 18446744073709551615"));
  r = Ccreplay("replay /dev/null --max-events 18446744073709551616");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = Ccreplay("lower --op p2p --n 4 --peer 3" + out);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
