// The whole command line as a function: main() calls it, and so does the
// argument-vector fuzzer (tests/fuzz/argv_fuzzer.cc), in process.
#ifndef CCREPLAY_CLI_APP_H_
#define CCREPLAY_CLI_APP_H_

namespace ccreplay {

// Parses `argv` (argv[0] is the program name) and runs the command it
// names. Returns the exit code: 0 ok, 1 the input is wrong, 2 usage.
int RunCcreplay(int argc, const char* const* argv);

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_APP_H_
