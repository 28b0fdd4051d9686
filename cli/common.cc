#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "cli/commands.h"
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

}  // namespace ccreplay
