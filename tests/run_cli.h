// Runs the ccreplay binary (CCREPLAY_BINARY, set by tests/CMakeLists.txt) for
// the tests that drive the command line, capturing its exit code and its
// standard output and error together.
#ifndef CCREPLAY_TESTS_RUN_CLI_H_
#define CCREPLAY_TESTS_RUN_CLI_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace ccreplay_test {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs `command` with /bin/sh, e.g. to set a resource limit first.
inline CliResult RunShell(const std::string& command) {
  const std::string cmd = "(" + command + ") 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t got = 0;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, got);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `args` is appended to the binary's path on a shell command line.
inline CliResult RunCcreplay(const std::string& args) {
  return RunShell(std::string(CCREPLAY_BINARY) + " " + args);
}

}  // namespace ccreplay_test

#endif  // CCREPLAY_TESTS_RUN_CLI_H_
