// The ccreplay commands. Each command lives in its own cmd_*.cc file and
// registers itself with one Add*Command function; its callback stores the
// exit code. Exit codes: 0 ok, 1 the input is wrong, 2 usage.
#ifndef CCREPLAY_CLI_COMMANDS_H_
#define CCREPLAY_CLI_COMMANDS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/file_util.h"
#include "hw/budget.h"
#include "hw/config.h"
#include "models/plogp.h"
#include "proto/models.pb.h"
#include "proto/trace.pb.h"

namespace ccreplay {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

// Prints "ccreplay: <message>" to stderr; returns kExitBadInput.
int Fail(const absl::Status& s);

// An output file: the flag that names it, its path (empty: not asked for)
// and its whole content.
struct OutputFile {
  std::string flag;
  std::string path;
  std::string contents;
};

// Flags every command shares: --hw, --csv, --json.
struct CommonFlags {
  std::string hw_path;
  std::string csv_path;
  std::string json_path;

  // The config named by --hw, or the built-in TPS186.
  absl::StatusOr<HwConfig> Hw() const;
  void AddHw(CLI::App* cmd);
  void AddCsvJson(CLI::App* cmd);
  // The input files: `more` (the command's own) and --hw, for WriteOutputs.
  std::vector<NamedPath> Inputs(std::vector<NamedPath> more = {}) const;
  // CheckOutputs of --csv and --json against Inputs(more_inputs): called
  // before the work, so a refused output costs no run.
  absl::Status CheckCsvJson(std::vector<NamedPath> more_inputs = {}) const;
  // WriteOutputs of the --csv and --json contents.
  absl::Status WriteCsvJson(std::string csv, std::string json,
                            std::vector<NamedPath> more_inputs = {}) const;
};

// Adds an option naming an output file; the parser refuses an empty path
// (usage error: "--json: empty output path").
CLI::Option* AddOutputOption(CLI::App* cmd, const std::string& name,
                             std::string& path, const std::string& help);

// The parser's check for input file arguments: "-" (standard input) or a
// path that stat(2) reaches and is not a directory; otherwise a usage error
// naming why ("t.pb: No such file or directory", "l: a symlink loop"). What
// the file is (a FIFO, a device) is judged when it is read
// (ReadFileToString), which never blocks on it.
CLI::Validator InputFile();

// The parser's check for unsigned integer flags: a decimal integer from 0 to
// `max`, so a sign, a fraction, an exponent or a value that would wrap
// (`--peer 4294967298`, `--max-events -1`) is a usage error (exit 2).
CLI::Validator UnsignedUpTo(uint64_t max);

// Adds an unsigned integer option checked by UnsignedUpTo(T's maximum).
template <typename T>
CLI::Option* AddUnsignedOption(CLI::App* cmd, const std::string& name, T& value,
                               const std::string& help) {
  static_assert(std::is_unsigned_v<T>);
  return cmd->add_option(name, value, help)
      ->check(UnsignedUpTo(std::numeric_limits<T>::max()));
}

// --max-events and --max-memory, on every command that replays
// (docs/limits.md): the up-front budget of each replay, and the event count
// at which a running replay stops.
struct BudgetFlags {
  uint64_t max_events = 0;  // 0 = the default, kDefaultMaxEvents
  std::string max_memory;   // a byte size; "" = the machine's memory

  void Add(CLI::App* cmd);
  // The budget; an unreadable --max-memory is an error naming it.
  absl::StatusOr<ResourceBudget> Budget() const;
};

// --engine and --fluid-packets, on every command that replays a collective
// (replay, sweep, compare): the packet engine (replay/engine.h) or the fluid
// engine (replay/fluid_engine.h; docs/models.md, "Fluid engine"), which has
// no critical-path breakdown.
struct EngineFlags {
  static constexpr uint32_t kNotGiven = std::numeric_limits<uint32_t>::max();
  std::string engine = "packet";
  uint32_t fluid_packets = kNotGiven;  // ReplayOptions::fluid_packet_max

  void Add(CLI::App* cmd);
  bool fluid() const { return engine == "fluid"; }
  // --fluid-packets, or the engine's default.
  uint32_t FluidPackets() const;
  // --fluid-packets without --engine fluid: an error naming it (a usage
  // error, exit 2, for the caller).
  absl::Status Check() const;
};

// Prints "ccreplay: <message>" to stderr; returns kExitUsage.
int FailUsage(const absl::Status& s);

// -j/--jobs: independent replays run at once (0 = one per hardware
// thread); the output is the serial run's, byte for byte.
CLI::Option* AddJobsOption(CLI::App* cmd, unsigned& jobs,
                           const std::string& what);

// Flags of commands that accept MSCCL-IR XML (cmd_import.cc): the collective
// size and the engines per channel of the import.
struct MscclFlags {
  std::string bytes = "1M";
  uint32_t engines_per_channel = 0;

  void Add(CLI::App* cmd);
  // Imports `path` (docs/import-msccl.md).
  absl::StatusOr<v1::Trace> Import(
      const std::string& path, const HwConfig& hw,
      std::optional<std::pair<TopologyKind, TopologyParams>> topology) const;
};

// One default system size for every command that takes --n: the hardware
// config's topology.num_chips where it fixes one (a trace of any other size
// would not replay on it), else 8 chips. A command that falls back to it
// says so on standard error ("ccreplay compare: --n not given: 8 chips"), so
// a forgotten --n is never silent.
inline constexpr uint32_t kDefaultChips = 8;
// `fallback` is the count where the config fixes none (calibrate: the
// fewest chips its topology can shape).
uint32_t DefaultChips(const HwConfig& hw, const std::string& command,
                      uint32_t fallback = kDefaultChips);
// The topology of a command whose --topology is not given: the hardware
// config's, as the spec ParseTopologySpec reads back ("ring",
// "board-fattree:spines=8"), as replay and lower take it.
std::string DefaultTopology(const HwConfig& hw);

// --op: a collective's name in any case (stored in lower case); anything
// else is a usage error naming the nearest name.
CLI::Validator CollectiveOpValidator();
// --algo: a comma-separated list of lowering names in any case (stored in
// lower case) or msccl:PATH.xml (kept as given); usage error otherwise.
CLI::Validator AlgorithmListValidator();
// The name in `names` nearest to `text` (edit distance), or "" when none is
// near enough to be a plausible misspelling.
std::string NearestName(const std::string& text,
                        const std::vector<std::string>& names);
// For a command line CLI11 refused: "ccreplay: unknown command 'x'; did you
// mean 'y'? (known: ...)" or "ccreplay compare: unknown flag '--bytess'; did
// you mean '--bytes'? ...", or "" when no argument is unknown.
std::string UsageHint(const CLI::App& app, int argc, const char* const* argv);

// Writes every output with a non-empty path, each atomically, after
// CheckOutputPaths (base/file_util.h) found none that is one of `inputs` or
// another output. All contents are computed before this is called, so a
// failed run writes none; a refused one writes nothing at all. Callers print
// their report only when this succeeds.
absl::Status WriteOutputs(const std::vector<NamedPath>& inputs,
                          const std::vector<OutputFile>& outputs);
// WriteOutputs' check alone, for commands that refuse before a long run.
absl::Status CheckOutputs(const std::vector<NamedPath>& inputs,
                          const std::vector<OutputFile>& outputs);

void AddBaselineCommand(CLI::App& app, int* exit_code);
void AddMathCommand(CLI::App& app, int* exit_code);
void AddLowerCommand(CLI::App& app, int* exit_code);
void AddReplayCommand(CLI::App& app, int* exit_code);
void AddCheckCommand(CLI::App& app, int* exit_code);
void AddCompareCommand(CLI::App& app, int* exit_code);
void AddImportCommand(CLI::App& app, int* exit_code);
void AddModelsCommand(CLI::App& app, int* exit_code);
void AddCalibrateCommand(CLI::App& app, int* exit_code);

// cmd_calibrate.cc (docs/models.md, "Calibration"): PLogP measured on the
// replay, a P2P from chip 0 to chip 1 of `n` chips joined by `kind`.
struct CalibrationSetup {
  TopologyKind kind = TopologyKind::kRing;
  TopologyParams params;
  uint32_t n = 2;
  std::vector<uint64_t> sizes;   // bytes, strictly increasing
  uint32_t stream_messages = 4;  // >= 2
  ResourceBudget budget;         // of each replay
};
// 64 B to 64 MiB in powers of 2 (K = 21).
std::vector<uint64_t> DefaultCalibrationSizes();
absl::StatusOr<v1::PlogpCalibration> CalibrateOnReplay(
    const HwConfig& hw, const CalibrationSetup& setup);
// The table the models read; InvalidArgument naming `name` and both hardware
// names when the calibration's hardware is not `workload_hw`.
absl::StatusOr<PlogpTable> PlogpTableFromCalibration(
    const v1::PlogpCalibration& cal, const std::string& name,
    const HwConfig& workload_hw);
// Text format; errors as path:line:col.
absl::StatusOr<v1::PlogpCalibration> ReadCalibrationFile(
    const std::string& path);
void AddHwCommand(CLI::App& app, int* exit_code);
void AddSweepCommand(CLI::App& app, int* exit_code);
void AddReportCommand(CLI::App& app, int* exit_code);

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_COMMANDS_H_
