// The bad-input corpus (tests/data/corpus): every input through the command
// line, with the exit code and message its expectations block names, no
// crash, no hang and no partial output file.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

const std::string kDir =
    std::string(CCREPLAY_SOURCE_DIR) + "/tests/data/corpus";

struct Case {
  int line = 0;  // in expectations.txt
  std::string input, run, expect;
  int exit = -1;
};

std::vector<Case> ReadCases() {
  std::ifstream f(kDir + "/expectations.txt");
  std::vector<Case> cases;
  std::string line;
  int n = 0;
  Case c;
  auto flush = [&] {
    if (!c.input.empty()) cases.push_back(c);
    c = Case();
  };
  while (std::getline(f, line)) {
    ++n;
    if (absl::StartsWith(line, "#")) continue;
    if (line.empty()) {
      flush();
      continue;
    }
    absl::string_view v = line;
    if (absl::ConsumePrefix(&v, "input: ")) {
      c.input = std::string(v);
      c.line = n;
    } else if (absl::ConsumePrefix(&v, "run: ")) {
      c.run = std::string(v);
    } else if (absl::ConsumePrefix(&v, "exit: ")) {
      c.exit = std::stoi(std::string(v));
    } else if (absl::ConsumePrefix(&v, "expect: ")) {
      c.expect = std::string(v);
    } else {
      ADD_FAILURE() << "expectations.txt:" << n << ": unknown line: " << line;
    }
  }
  flush();
  return cases;
}

// Names the case in failure output instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.input; }

struct Result {
  int exit = -1;
  bool signaled = false;
  std::string out;
};

// Runs ccreplay from the corpus directory (so messages name the bare file),
// killed after 20 s: `timeout` exits 124 then.
Result RunCcreplay(const std::string& args) {
  const std::string cmd = "cd '" + kDir + "' && timeout -s KILL 20 " +
                          std::string(CCREPLAY_BINARY) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, got);
  const int status = pclose(p);
  if (WIFEXITED(status)) r.exit = WEXITSTATUS(status);
  r.signaled =
      WIFSIGNALED(status) || r.exit == 124 || r.exit == 137 || r.exit >= 128;
  return r;
}

class CorpusTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    scratch_ = std::filesystem::temp_directory_path() /
               ("ccreplay_corpus_" + std::to_string(getpid()) + "_" +
                std::to_string(GetParam().line));
    std::filesystem::create_directories(scratch_);
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }
  std::filesystem::path scratch_;
};

TEST_P(CorpusTest, GivesTheExpectedErrorAndNoOutput) {
  const Case& c = GetParam();
  ASSERT_TRUE(std::filesystem::exists(kDir + "/" + c.input)) << c.input;
  const std::string out = (scratch_ / "out").string();
  const std::string out2 = (scratch_ / "out2.json").string();
  const std::string args = absl::StrReplaceAll(
      c.run,
      {{"{in}", c.input}, {"{dir}", kDir}, {"{out}", out}, {"{out2}", out2}});
  const Result r = RunCcreplay(args);
  SCOPED_TRACE("expectations.txt:" + std::to_string(c.line) + ": ccreplay " +
               args + "\n" + r.out);
  EXPECT_FALSE(r.signaled) << "crashed, killed or timed out";
  EXPECT_EQ(r.exit, c.exit);
  EXPECT_THAT(r.out, ::testing::HasSubstr(c.expect));
  EXPECT_FALSE(std::filesystem::exists(out)) << "partial output left";
  // No temporary files from an atomic write left behind either.
  for (const auto& e : std::filesystem::directory_iterator(scratch_)) {
    EXPECT_EQ(e.path(), out2) << "stray file " << e.path();
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(ReadCases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string s = "line" +
                                           std::to_string(i.param.line) + "_" +
                                           i.param.input;
                           for (char& ch : s) {
                             if (!isalnum(static_cast<unsigned char>(ch))) {
                               ch = '_';
                             }
                           }
                           return s;
                         });

// 62 inputs from the first two rounds, 40 more from issue 10's third.
TEST(CorpusSizeTest, AtLeastOneHundredDistinctBadInputs) {
  std::set<std::string> bad;
  for (const Case& c : ReadCases()) {
    if (c.exit != 0) bad.insert(c.input);
  }
  EXPECT_GE(bad.size(), 100u);
}

TEST(CorpusSizeTest, EveryFileHasAnExpectation) {
  std::set<std::string> used;
  for (const Case& c : ReadCases()) used.insert(c.input);
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    const std::string name = e.path().filename().string();
    if (name == "expectations.txt" || name == "README.md") continue;
    EXPECT_TRUE(used.count(name)) << name << " has no expectations block";
  }
}

}  // namespace
