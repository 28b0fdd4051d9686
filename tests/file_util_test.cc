#include "base/file_util.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
            absl::StrCat(dir_, ": read failed: Is a directory"));
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

TEST_F(FileUtilTest, FailedRenameRemovesTempAndKeepsTarget) {
  // The target is a non-empty directory: rename(2) of a file over it fails
  // after the temporary file was written completely.
  const std::string path = dir_ + "/target";
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomically(path + "/keep", "k").ok());
  absl::Status s = WriteFileAtomically(path, "data");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(absl::StrCat(path, ": cannot rename ", path, ".tmp.",
                                     ::getpid(), " into place: ")));
  EXPECT_THAT(List(dir_), ElementsAre("target"));  // no temp file left
  EXPECT_THAT(List(path), ElementsAre("keep"));
  ::unlink((path + "/keep").c_str());
  ::rmdir(path.c_str());
}

}  // namespace
}  // namespace ccreplay
