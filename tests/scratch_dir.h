// A fresh scratch directory per test (removed after it) and whole-file
// reading, for the tests that run the ccreplay binary on files.
#ifndef CCREPLAY_TESTS_SCRATCH_DIR_H_
#define CCREPLAY_TESTS_SCRATCH_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace ccreplay_test {

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// dir_ = <tmp>/ccreplay_<prefix>_<pid>_<test name>, made before each test.
class ScratchDirTest : public ::testing::Test {
 protected:
  explicit ScratchDirTest(const std::string& prefix) : prefix_(prefix) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ccreplay_" + prefix_ + "_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ / name; }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace ccreplay_test

#endif  // CCREPLAY_TESTS_SCRATCH_DIR_H_
