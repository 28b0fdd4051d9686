// Hostile inputs the corpus cannot hold (FIFOs, symlink loops, standard
// input, 300k streams) and a sample of every class of issue 10 run under
// `ulimit -v` (1 GiB of address space) and `timeout`: each must finish
// with exit 1 or 2 and a message, never a crash, a hang or a std::bad_alloc
// abort. The time limits are hang guards, not measurements.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/run_cli.h"
#include "trace/trace_io.h"

namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kCorpus =
    std::string(CCREPLAY_SOURCE_DIR) + "/tests/data/corpus";

class HostileCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ccreplay_hostile_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ / name; }
  // ccreplay under a 20 s hang guard (timeout exits 124).
  static ccreplay_test::CliResult Run(const std::string& args,
                                      const std::string& limits = "") {
    return ccreplay_test::RunShell(limits + "timeout -s KILL 20 " +
                                   std::string(CCREPLAY_BINARY) + " " + args);
  }
  std::filesystem::path dir_;
};

TEST_F(HostileCliTest, AFifoWithNoWriterIsRefusedWithoutBlocking) {
  const std::string fifo = Path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& args :
       {"check " + fifo, "replay " + fifo,
        "check " + kCorpus + "/good.txtpb --hw " + fifo}) {
    const auto r = Run(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(fifo + ": a FIFO, not a regular file"));
  }
}

TEST_F(HostileCliTest, ASymlinkLoopIsNamedAsOne) {
  std::filesystem::create_symlink(Path("b"), Path("a"));
  std::filesystem::create_symlink(Path("a"), Path("b"));
  const auto r = Run("check " + Path("a"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr(Path("a") + ": a symlink loop"));
  EXPECT_THAT(r.out, Not(HasSubstr("does not exist")));
}

TEST_F(HostileCliTest, StandardInputIsReadForDash) {
  const auto r = Run("replay - < " + kCorpus + "/good.txtpb");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("trace - on TPS186"));
}

// 300k streams, all but one empty: checking and replaying stay linear (the
// duplicate-stream rule was quadratic: 100k streams took 17 s, so 300k
// would take minutes; a second here, a few under the sanitizers).
constexpr uint32_t kStreams = 300000;

TEST_F(HostileCliTest, ManyEmptyStreamsCheckAndReplay) {
  absl::StatusOr<ccreplay::v1::Trace> good =
      ccreplay::ReadTraceFile(kCorpus + "/good.txtpb");
  ASSERT_TRUE(good.ok()) << good.status();
  ccreplay::v1::ChipProgram* chip = good->mutable_chips(0);
  for (uint32_t id = 1; id < kStreams; ++id) chip->add_streams()->set_id(id);
  const std::string path = Path("streams.pb");
  ASSERT_TRUE(ccreplay::WriteTraceFile(path, *good).ok());
  for (const char* cmd : {"check ", "replay "}) {
    const auto r = Run(cmd + path);
    EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.out;
  }
  chip->mutable_streams(kStreams - 1)->set_id(3);  // a duplicate, found last
  ASSERT_TRUE(ccreplay::WriteTraceFile(path, *good).ok());
  const auto r = Run("check " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("stream id 3 listed twice (streams[3] and "
                               "streams[" +
                               std::to_string(kStreams - 1) + "])"));
}

// Whether the binary starts at all under `ulimit -v` (a build with
// AddressSanitizer reserves terabytes of shadow address space and cannot).
bool StartsUnderAddressSpaceLimit() {
  return ccreplay_test::RunShell("ulimit -v 1048576; " +
                                 std::string(CCREPLAY_BINARY) +
                                 " math > /dev/null")
             .exit_code == 0;
}

// One input of each class of issue 10 under 1 GiB of address space.
TEST_F(HostileCliTest, EveryClassFailsCleanlyUnderAnAddressSpaceLimit) {
  if (!StartsUnderAddressSpaceLimit()) {
    GTEST_SKIP() << "ccreplay cannot start under ulimit -v (sanitizer build)";
  }
  const std::string limits = "ulimit -v 1048576; cd '" + kCorpus + "' && ";
  struct Sample {
    std::string args;
    std::string expect;
  };
  const std::vector<Sample> samples = {
      // resource bombs
      {"replay /dev/zero", "not a regular file"},
      {"replay good.txtpb --topology board-fattree:cpb=2,spines=65536",
       "(the machine's memory or the address-space limit; --max-memory "
       "raises it)"},
      {"replay good.txtpb --hw hw_engines_65536_lg64_vc8.txtpb --max-memory "
       "512M",
       "more than the budget of 537 MB"},
      {"replay chips_65536.txtpb", "route-table entries"},
      {"replay fullmesh_8192.txtpb --topology fullmesh", "routing work"},
      {"lower --op allreduce --n 4 --chunk 1 --bytes 1T -o " + Path("x.pb"),
       "pieces of at least one instruction each"},
      {"replay transfer_16gib.txtpb --hw hw_payload_1byte.txtpb",
       "--max-events raises it"},
      // wrong answers
      // 2^64 - 1 bytes over 2 chips: ring Transfers of 2^60 bytes, which at
      // TPS186's 64 GB/s CDMA alone take 2^60 / 64e9 s = 1.8e19 ps, past
      // the 2^62 ps = 4.6e18 ps clock.
      {"lower --op allreduce --n 2 --bytes 18446744073709551615 -o " +
           Path("huge.pb"),
       "the lowered trace cannot be timed on TPS186: chip 0, stream 0, "
       "instruction 2 (Transfer): 1152921504606846976 bytes take about"},
      {"replay transfer_9mib.txtpb --hw hw_cdma_1bps.txtpb",
       "past the range of the picosecond clock"},
      {"check transfer_2pow62.txtpb", "error [clock-range]"},
      {"check semantics_allgather_wrap.txtpb --semantics",
       "add up past 2^64 - 1"},
      {"lower --op allreduce --n 2 --bytes 1K --peer -5 -o " + Path("y.pb"),
       "--peer"},
      // outputs that destroy
      {"check good.txtpb --json good.txtpb", "refusing to overwrite it"},
      // odd files
      {"check good.txtpb --hw hw_unknown_field.pb", "<unknown field 99>"},
  };
  for (const Sample& s : samples) {
    const auto r = Run(s.args, limits);
    SCOPED_TRACE(s.args + "\n" + r.out);
    EXPECT_THAT(r.exit_code, AnyOf(1, 2));
    EXPECT_THAT(r.out, HasSubstr(s.expect));
    EXPECT_THAT(r.out, Not(HasSubstr("terminate called")));
    EXPECT_THAT(r.out, Not(HasSubstr("out of memory")));
  }
}

// Every command that replays takes the budget flags of `replay` and checks
// each replay against them before it runs. The smallest replay here (the
// 2-chip calibration P2P, 26 instructions) is estimated at 279 events, so a
// budget of 10 refuses every one; 1K of memory is less than one port.
TEST_F(HostileCliTest, EveryCommandThatReplaysTakesTheBudget) {
  const std::vector<std::string> commands = {
      "compare --n 4",
      "sweep --n 4 -b 1K -e 2K",
      "baseline",
      "models --n 4 --no-calibration",
      "calibrate -o " + Path("cal.txtpb"),
  };
  for (const std::string& c : commands) {
    auto r = Run(c + " --max-events 10");
    EXPECT_EQ(r.exit_code, 1) << c << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("more than the budget of 10 (--max-events "
                                 "raises it)"))
        << c;
    r = Run(c + " --max-memory 1K");
    EXPECT_EQ(r.exit_code, 1) << c << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("(--max-memory raises it)")) << c;
    r = Run(c + " --max-memory 1Q");
    EXPECT_EQ(r.exit_code, 1) << c << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("--max-memory: bad byte size '1Q'")) << c;
    EXPECT_THAT(Run(c + " --max-events -1").exit_code, 2) << c;
  }
  EXPECT_FALSE(std::filesystem::exists(Path("cal.txtpb")));
}

// What the budgets did not foresee still ends cleanly: the engines' queues
// of this config, allowed by --max-memory, exhaust a 512 MiB address space.
TEST_F(HostileCliTest, AnUnforeseenBadAllocIsACleanExit) {
  if (!StartsUnderAddressSpaceLimit()) {
    GTEST_SKIP() << "ccreplay cannot start under ulimit -v (sanitizer build)";
  }
  const auto r =
      Run("replay good.txtpb --hw hw_engines_65536_lg64_vc8.txtpb "
          "--max-memory 1T",
          "ulimit -v 524288; cd '" + kCorpus + "' && ");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("ccreplay: out of memory"));
}

}  // namespace
