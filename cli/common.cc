#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/file_util.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "collectives/collective.h"
#include "collectives/lower.h"
#include "hw/config_io.h"
#include "trace/trace_io.h"

namespace ccreplay {

int Fail(const absl::Status& s) {
  std::cerr << "ccreplay: " << s.message() << "\n";
  return kExitBadInput;
}

absl::StatusOr<HwConfig> CommonFlags::Hw() const {
  if (hw_path.empty()) return DefaultTps186();
  return ReadHwConfigFile(hw_path);
}

void CommonFlags::AddHw(CLI::App* cmd) {
  cmd->add_option("--hw", hw_path,
                  "hardware config (text or binary HardwareConfig); default: "
                  "built-in TPS186")
      ->check(InputFile());
}

void CommonFlags::AddCsvJson(CLI::App* cmd) {
  AddOutputOption(cmd, "--csv", csv_path, "also write the table as CSV");
  AddOutputOption(cmd, "--json", json_path, "also write the result as JSON");
}

std::vector<NamedPath> CommonFlags::Inputs(std::vector<NamedPath> more) const {
  more.push_back({"--hw", hw_path});
  return more;
}

absl::Status CommonFlags::CheckCsvJson(
    std::vector<NamedPath> more_inputs) const {
  return CheckOutputs(Inputs(std::move(more_inputs)),
                      {{"--csv", csv_path, ""}, {"--json", json_path, ""}});
}

absl::Status CommonFlags::WriteCsvJson(
    std::string csv, std::string json,
    std::vector<NamedPath> more_inputs) const {
  return WriteOutputs(Inputs(std::move(more_inputs)),
                      {{"--csv", csv_path, std::move(csv)},
                       {"--json", json_path, std::move(json)}});
}

CLI::Option* AddOutputOption(CLI::App* cmd, const std::string& name,
                             std::string& path, const std::string& help) {
  return cmd->add_option(name, path, help)
      ->check(CLI::Validator(
          [](std::string& s) {
            return s.empty() ? std::string("empty output path") : std::string();
          },
          "FILE"));
}

CLI::Validator InputFile() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s == "-") return "";
        struct stat st;
        if (::stat(s.c_str(), &st) != 0) {
          const int err = errno;
          if (err == ELOOP) return s + ": a symlink loop";
          return s + ": " + std::strerror(err);
        }
        if (S_ISDIR(st.st_mode)) return s + ": a directory, not a file";
        return "";
      },
      "FILE");
}

void BudgetFlags::Add(CLI::App* cmd) {
  AddUnsignedOption(cmd, "--max-events", max_events,
                    "refuse a replay estimated to need more events, and "
                    "stop one that reaches it (0 = the default, 1e10)");
  cmd->add_option("--max-memory", max_memory,
                  "refuse a replay estimated to need more memory, e.g. 8G "
                  "(default: the machine's memory)");
}

absl::StatusOr<ResourceBudget> BudgetFlags::Budget() const {
  ResourceBudget b;
  b.max_events = max_events;
  if (!max_memory.empty()) {
    auto bytes = ParseByteSize(max_memory);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max-memory: ", bytes.status().message()));
    }
    b.max_memory_bytes = *bytes;
  }
  return b;
}

void EngineFlags::Add(CLI::App* cmd) {
  cmd->add_option("--engine", engine,
                  "packet (default: packet-level) or fluid (flows sharing "
                  "links max-min fairly; docs/models.md, \"Fluid engine\"): "
                  "no critical-path breakdown")
      ->check(CLI::IsMember({"packet", "fluid"}));
  cmd->add_option("--fluid-packets", fluid_packets,
                  "fluid engine: transfers of at most this many packets "
                  "cross as packets, first come first served per link, and "
                  "so do messages and acknowledgements; 0 = every transfer "
                  "a flow (default 16; docs/models.md, \"Packets in the "
                  "fluid engine\")")
      ->check(CLI::Range(0u, 65535u));
}

uint32_t EngineFlags::FluidPackets() const {
  return fluid_packets == kNotGiven ? ReplayOptions{}.fluid_packet_max
                                    : fluid_packets;
}

absl::Status EngineFlags::Check() const {
  if (fluid_packets != kNotGiven && !fluid()) {
    return absl::InvalidArgumentError(
        "--fluid-packets applies to --engine fluid only");
  }
  return absl::OkStatus();
}

int FailUsage(const absl::Status& s) {
  std::cerr << "ccreplay: " << s.message() << "\n";
  return kExitUsage;
}

CLI::Option* AddJobsOption(CLI::App* cmd, unsigned& jobs,
                           const std::string& what) {
  return AddUnsignedOption(cmd, "-j,--jobs", jobs,
                           what +
                               " replayed at once (0 = one per hardware "
                               "thread; output identical to -j 1)")
      ->capture_default_str();
}

CLI::Validator UnsignedUpTo(uint64_t max) {
  return CLI::Validator(
      [max](std::string& s) {
        uint64_t v = 0;
        if (s.empty() || s.find_first_not_of("0123456789") != s.npos ||
            !absl::SimpleAtoi(s, &v) || v > max) {
          return absl::StrCat("'", s, "' is not an integer from 0 to ", max);
        }
        return std::string();
      },
      "");
}

absl::Status CheckOutputs(const std::vector<NamedPath>& inputs,
                          const std::vector<OutputFile>& outputs) {
  std::vector<NamedPath> paths;
  for (const OutputFile& o : outputs) paths.push_back({o.flag, o.path});
  return CheckOutputPaths(inputs, paths);
}

absl::Status WriteOutputs(const std::vector<NamedPath>& inputs,
                          const std::vector<OutputFile>& outputs) {
  if (auto s = CheckOutputs(inputs, outputs); !s.ok()) return s;
  for (const OutputFile& o : outputs) {
    if (o.path.empty()) continue;
    if (auto s = WriteFileAtomically(o.path, o.contents); !s.ok()) return s;
  }
  return absl::OkStatus();
}

uint32_t DefaultChips(const HwConfig& hw, const std::string& command,
                      uint32_t fallback) {
  const uint32_t n = hw.num_chips != 0 ? hw.num_chips : fallback;
  std::cerr << "ccreplay " << command << ": --n not given: " << n << " chips"
            << (hw.num_chips != 0 ? ", the hardware config's" : "") << "\n";
  return n;
}

std::string DefaultTopology(const HwConfig& hw) {
  return TopologySpecString(hw.topology, hw.topology_params);
}

namespace {

// "-1", "-0.5": a (bad) value, not a flag.
bool IsNumberArg(const std::string& arg) {
  double v = 0;
  return absl::SimpleAtod(arg, &v);
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> OpNames() {
  std::vector<std::string> names;
  for (int i = v1::CollectiveOp_MIN + 1; i <= v1::CollectiveOp_MAX; ++i) {
    names.emplace_back(CollectiveOpName(static_cast<v1::CollectiveOp>(i)));
  }
  return names;
}

std::string Unknown(const std::string& what, const std::string& text,
                    const std::vector<std::string>& names) {
  const std::string near = NearestName(text, names);
  return absl::StrCat(
      "unknown ", what, " '", text, "'",
      near.empty() ? "" : absl::StrCat("; did you mean '", near, "'?"),
      " (known: ", absl::StrJoin(names, ", "), ")");
}

// The subcommand argv names, or null.
const CLI::App* NamedSubcommand(const CLI::App& app, int argc,
                                const char* const* argv, int* at) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == argv[i]) {
        *at = i;
        return sub;
      }
    }
    *at = i;
    return nullptr;
  }
  *at = argc;
  return nullptr;
}

}  // namespace

std::string NearestName(const std::string& text,
                        const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, text.size() / 3) + 1;
  for (const std::string& name : names) {
    const size_t d = EditDistance(absl::AsciiStrToLower(text), name);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

CLI::Validator CollectiveOpValidator() {
  return CLI::Validator(
      [](std::string& s) {
        const std::string lower = absl::AsciiStrToLower(s);
        if (!ParseCollectiveOp(lower).ok()) {
          return Unknown("collective", s, OpNames());
        }
        s = lower;
        return std::string();
      },
      "OP");
}

CLI::Validator AlgorithmListValidator() {
  return CLI::Validator(
      [](std::string& s) {
        std::vector<std::string> out;
        for (absl::string_view part : absl::StrSplit(s, ',')) {
          std::string algo(part);
          if (absl::StartsWithIgnoreCase(algo, "msccl:")) {
            out.push_back("msccl:" + algo.substr(6));
            continue;
          }
          algo = absl::AsciiStrToLower(algo);
          const auto& names = LoweringAlgorithmNames();
          if (std::find(names.begin(), names.end(), algo) == names.end()) {
            return Unknown("algorithm", std::string(part),
                           {names.begin(), names.end()});
          }
          out.push_back(algo);
        }
        s = absl::StrJoin(out, ",");
        return std::string();
      },
      "ALGO");
}

std::string UsageHint(const CLI::App& app, int argc, const char* const* argv) {
  int at = 0;
  const CLI::App* sub = NamedSubcommand(app, argc, argv, &at);
  std::vector<std::string> commands;
  for (const CLI::App* c : app.get_subcommands({})) {
    commands.push_back(c->get_name());
  }
  if (sub == nullptr) {
    return at < argc ? absl::StrCat("ccreplay: ",
                                    Unknown("command", argv[at], commands))
                     : "";
  }
  std::vector<std::string> flags;
  for (const CLI::Option* o : sub->get_options()) {
    for (const std::string& l : o->get_lnames()) flags.push_back("--" + l);
    for (const std::string& n : o->get_snames()) flags.push_back("-" + n);
  }
  for (int i = at + 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!absl::StartsWith(arg, "-") || arg == "-" || arg == "--") continue;
    if (IsNumberArg(arg)) continue;
    // --name=value, -bVALUE
    const std::string flag =
        arg[1] == '-' ? arg.substr(0, arg.find('=')) : arg.substr(0, 2);
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
    const std::string near = NearestName(flag, flags);
    return absl::StrCat(
        "ccreplay ", sub->get_name(), ": unknown flag '", flag, "'",
        near.empty() ? "" : absl::StrCat("; did you mean '", near, "'?"),
        " (ccreplay ", sub->get_name(), " --help lists them)");
  }
  return "";
}

}  // namespace ccreplay
