#include "base/file_util.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/release_memory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccreplay {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A fresh empty directory per test.
class FileUtilTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "file_util_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& f : List(dir_)) {
      ::unlink((dir_ + "/" + f).c_str());
    }
    ::rmdir(dir_.c_str());
  }

  static std::vector<std::string> List(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }

  static bool Exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  }

  std::string dir_;
};

TEST_F(FileUtilTest, ReadsBinaryContentExactly) {
  const std::string content("a\0b\xff\n", 5);
  const std::string path = dir_ + "/f.bin";
  {
    std::ofstream f(path, std::ios::binary);
    f << content;
  }
  absl::StatusOr<std::string> got = ReadFileToString(path);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, content);
  EXPECT_EQ(got->size(), 5u);
}

TEST_F(FileUtilTest, ReadsEmptyFile) {
  const std::string path = dir_ + "/empty";
  std::ofstream(path).close();
  absl::StatusOr<std::string> got = ReadFileToString(path);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "");
}

TEST_F(FileUtilTest, ReadsFileLargerThanOneBuffer) {
  // 64 KiB buffer in the reader: 200000 bytes needs four reads.
  std::string content(200000, 'x');
  for (size_t i = 0; i < content.size(); i += 997) content[i] = 'y';
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/big", content).ok());
  absl::StatusOr<std::string> got = ReadFileToString(dir_ + "/big");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, content);
}

TEST_F(FileUtilTest, MissingFileIsNotFoundAndNamesThePath) {
  const std::string path = dir_ + "/nope.pb";
  absl::StatusOr<std::string> got = ReadFileToString(path);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
  EXPECT_EQ(std::string(got.status().message()),
            absl::StrCat(path, ": No such file or directory"));
}

TEST_F(FileUtilTest, ReadingADirectoryFails) {
  absl::StatusOr<std::string> got = ReadFileToString(dir_);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(std::string(got.status().message()),
            absl::StrCat(dir_,
                         ": a directory, not a regular file (give a "
                         "file, or - for standard input)"));
}

TEST_F(FileUtilTest, WriteCreatesFileAndLeavesNoTempBehind) {
  const std::string path = dir_ + "/out.pb";
  ASSERT_TRUE(WriteFileAtomically(path, std::string("x\0y", 3)).ok());
  EXPECT_THAT(List(dir_), ElementsAre("out.pb"));
  absl::StatusOr<std::string> got = ReadFileToString(path);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, std::string("x\0y", 3));
}

TEST_F(FileUtilTest, WriteReplacesExistingContentWhole) {
  const std::string path = dir_ + "/out.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "a much longer first version\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "short\n").ok());
  absl::StatusOr<std::string> got = ReadFileToString(path);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "short\n");  // truncated, not overwritten in place
  EXPECT_THAT(List(dir_), ElementsAre("out.txt"));
}

TEST_F(FileUtilTest, WriteEmptyContent) {
  const std::string path = dir_ + "/empty";
  ASSERT_TRUE(WriteFileAtomically(path, "").ok());
  absl::StatusOr<std::string> got = ReadFileToString(path);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "");
}

TEST_F(FileUtilTest, WriteIntoMissingDirectoryFailsAndCreatesNothing) {
  const std::string missing = dir_ + "/no_such_dir";
  const std::string path = missing + "/out.pb";
  absl::Status s = WriteFileAtomically(path, "data");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_EQ(std::string(s.message()),
            absl::StrCat(path, ": cannot create temporary file ", path, ".tmp.",
                         ::getpid(), ": No such file or directory"));
  EXPECT_FALSE(Exists(path));
  EXPECT_FALSE(Exists(missing));
  EXPECT_THAT(List(dir_), IsEmpty());
}

TEST_F(FileUtilTest, DirectoryTargetIsRefusedAndKept) {
  const std::string path = dir_ + "/target";
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomically(path + "/keep", "k").ok());
  absl::Status s = WriteFileAtomically(path, "data");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()),
            absl::StrCat(path,
                         ": exists and is a directory; refusing to "
                         "write an output there"));
  EXPECT_THAT(List(dir_), ElementsAre("target"));  // no temp file left
  EXPECT_THAT(List(path), ElementsAre("keep"));
  ::unlink((path + "/keep").c_str());
  ::rmdir(path.c_str());
}

TEST_F(FileUtilTest, FifoTargetIsRefusedNotReplaced) {
  const std::string path = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  absl::Status s = WriteFileAtomically(path, "data");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("exists and is a FIFO"));
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THAT(List(dir_), ElementsAre("fifo"));
}

TEST_F(FileUtilTest, SymlinkToRegularFileIsWrittenThrough) {
  const std::string file = dir_ + "/real.txt";
  const std::string link = dir_ + "/link.txt";
  ASSERT_TRUE(WriteFileAtomically(file, "old\n").ok());
  ASSERT_EQ(::symlink("real.txt", link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(link, "new\n").ok());
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(*ReadFileToString(file), "new\n");
  EXPECT_THAT(List(dir_), ElementsAre("link.txt", "real.txt"));
}

TEST_F(FileUtilTest, SymlinkToDeviceOrLoopIsRefused) {
  const std::string dev = dir_ + "/null";
  const std::string loop = dir_ + "/loop";
  ASSERT_EQ(::symlink("/dev/null", dev.c_str()), 0);
  ASSERT_EQ(::symlink("loop", loop.c_str()), 0);
  absl::Status s = WriteFileAtomically(dev, "data");
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(": a symlink to /dev/null, a character device; "
                        "refusing"));
  s = WriteFileAtomically(loop, "data");
  EXPECT_THAT(std::string(s.message()), HasSubstr(": a symlink loop;"));
  EXPECT_THAT(List(dir_), ElementsAre("loop", "null"));
}

TEST_F(FileUtilTest, EmptyPathIsRefused) {
  absl::Status s = WriteFileAtomically("", "data");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(std::string(s.message()), "empty output path");
}

TEST_F(FileUtilTest, LongestLegalNameIsWritten) {
  // 255 bytes: the temporary name must be derived shorter, not appended to.
  const std::string name(255, 'n');
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/" + name, "x").ok());
  EXPECT_THAT(List(dir_), ElementsAre(name));
}

TEST_F(FileUtilTest, FileSizeLimitFailsWithoutLeavingTheTemporary) {
  const std::string path = dir_ + "/big";
  // In a child: the limit and SIGXFSZ's disposition are per process.
  auto write_over_limit = [&] {
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max = 100;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    absl::Status s = WriteFileAtomically(path, std::string(1000, 'x'));
    const bool ok = absl::StrContains(s.message(), "File too large");
    std::_Exit(ok && List(dir_).empty() ? 0 : 1);
  };
  EXPECT_EXIT(write_over_limit(), ::testing::ExitedWithCode(0), "");
  EXPECT_THAT(List(dir_), IsEmpty());
}

TEST_F(FileUtilTest, TerminationRemovesARegisteredTemporary) {
  const std::string path = dir_ + "/out.tmp.1";
  EXPECT_EXIT(
      {
        std::ofstream(path) << "partial";
        RegisterTempFile(path);
        ::raise(SIGTERM);
      },
      ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_THAT(List(dir_), IsEmpty());
}

TEST_F(FileUtilTest, OutputThatIsAnInputOrAnotherOutputIsRefused) {
  const std::string in = dir_ + "/t.txtpb";
  const std::string link = dir_ + "/alias";
  ASSERT_TRUE(WriteFileAtomically(in, "trace").ok());
  ASSERT_EQ(::symlink("t.txtpb", link.c_str()), 0);
  absl::Status s = CheckOutputPaths({{"trace", in}}, {{"--json", link}});
  EXPECT_EQ(std::string(s.message()),
            absl::StrCat("--json ", link, " is the same file as input trace ",
                         in, "; refusing to overwrite it"));
  // Two outputs, neither existing yet, named differently.
  s = CheckOutputPaths({}, {{"--csv", dir_ + "/o"}, {"--json", dir_ + "/./o"}});
  EXPECT_EQ(std::string(s.message()),
            absl::StrCat("--json ", dir_, "/./o and --csv ", dir_,
                         "/o are the same file; give each output its own "
                         "path"));
  EXPECT_TRUE(CheckOutputPaths({{"trace", in}, {"--hw", ""}},
                               {{"--csv", dir_ + "/o"}, {"--json", ""}})
                  .ok());
  EXPECT_THAT(List(dir_), ElementsAre("alias", "t.txtpb"));
}

// PrefixDropper gives back the pages of a growing consumed prefix up to a
// 2 MiB boundary (H), in steps of at least its step, each from where the
// last stopped: a buffer starting 100 bytes into an H-aligned region of
// 0xab, a step of 4 H.
TEST(PrefixDropperTest, GivesBackConsumedPagesInStepsFromWhereItStopped) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  constexpr size_t H = size_t{2} << 20;
  constexpr size_t kSize = 16 * H;
  void* map = ::mmap(nullptr, kSize + H, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  char* const p = reinterpret_cast<char*>(
      (reinterpret_cast<uintptr_t>(map) + H - 1) & ~uintptr_t{H - 1});
  std::fill(p, p + kSize, '\xab');
  // Every page of [p, p + kSize) reads as zeros exactly where
  // [p + page, p + dropped_to) is (first and last byte: a page goes whole;
  // the first page holds what is before the buffer).
  const auto expect_dropped_to = [&](size_t dropped_to) {
    for (size_t at = 0; at < kSize; at += page) {
      const char want = at >= page && at < dropped_to ? '\0' : '\xab';
      ASSERT_TRUE(p[at] == want && p[at + page - 1] == want)
          << "page at " << at << ", dropped to " << dropped_to;
    }
  };
  PrefixDropper d(p + 100, 4 * H);
  d.Consumed(3 * H);  // to p + 3 H: under a step
  EXPECT_FALSE(d.dropped());
  expect_dropped_to(0);
  d.Consumed(9 * H - 200);  // to p + 9 H - 100: down to p + 8 H
  EXPECT_TRUE(d.dropped());
  expect_dropped_to(8 * H);
  d.Consumed(11 * H);  // 3 H more: under a step
  expect_dropped_to(8 * H);
  d.Consumed(14 * H);  // from where it stopped
  expect_dropped_to(14 * H);
  ::munmap(map, kSize + H);
}

}  // namespace
}  // namespace ccreplay
