// libFuzzer target over the command line: the input is an argument vector
// (arguments separated by NUL bytes) run in process by RunCcreplay, in a
// scratch directory holding a small trace (t.txtpb) and the TPS186 config
// (hw.txtpb), rewritten before every input. Flags, values, subcommands and
// paths are all fuzzed; any crash, abort, uncaught exception, leak or
// sanitizer report is a bug, every exit code is fine. Run by
// scripts/fuzz.sh argv.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "cli/app.h"
#include "hw/config.h"

namespace {

constexpr size_t kMaxArgs = 24;

constexpr char kTrace[] = R"pb(
  header { format_version: FORMAT_VERSION_1 num_chips: 2 }
  chips {
    chip: 0
    streams {
      id: 0
      instructions { transfer { qp_id: 0 dst_chip: 1 bytes: 64 } }
      instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } }
    }
  }
  chips {
    chip: 1
    streams {
      id: 0
      instructions { msg_wait { qp_id: 0 count: 1 } }
    }
  }
)pb";

void Write(const char* name, absl::string_view text) {
  std::ofstream(name, std::ios::binary) << text;
}

// Inputs that are slow by design, not by a bug: the commands that replay
// whole workloads (baseline, compare, models, calibrate, hw explain
// --sensitivity), and numbers of three digits or more (a ring lowering of
// 999 chips is 16 M instructions, seconds under the sanitizers). The fuzzer
// explores parsing and refusal, not long runs; hw_fuzzer covers the
// budgets of large sizes.
bool Slow(const std::vector<std::string>& args) {
  // `lower` of the default 1 MiB with a small --chunk is a million
  // instructions: sizes must be given, and small.
  const auto has = [&](const char* s) {
    return std::find(args.begin(), args.end(), s) != args.end();
  };
  if (has("lower") && !has("--bytes")) return true;
  for (const std::string& a : args) {
    for (const char* cmd : {"baseline", "compare", "models", "calibrate",
                            "--sensitivity", "--sweep"}) {
      if (a == cmd) return true;
    }
    size_t digits = 0;
    for (char c : a) {
      digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
      if (digits > 2) return true;
    }
    for (const char* suffix : {"K", "M", "G", "T", "k", "m", "g", "t"}) {
      if (a.size() > 1 && absl::EndsWith(a, suffix) && a[a.size() - 2] >= '0' &&
          a[a.size() - 2] <= '9') {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ccreplay_argv_fuzz_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::current_path(dir);
  // "-" reads standard input: an empty one, never a terminal or a pipe
  // that stays open.
  if (std::freopen("/dev/null", "r", stdin) == nullptr) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = absl::StrSplit(bytes, '\0');
  if (args.size() > kMaxArgs || Slow(args)) return 0;
  Write("t.txtpb", kTrace);
  Write("hw.txtpb", ccreplay::Tps186ConfigText());
  std::vector<const char*> argv = {"ccreplay"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  (void)ccreplay::RunCcreplay(static_cast<int>(argv.size()), argv.data());
  return 0;
}
