#include <iostream>

#include "cli/commands.h"
#include "base/file_util.h"
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
      ->check(CLI::ExistingFile);
}

void CommonFlags::AddCsvJson(CLI::App* cmd) {
  cmd->add_option("--csv", csv_path, "also write the table as CSV");
  cmd->add_option("--json", json_path, "also write the result as JSON");
}

absl::Status WriteOutputs(
    const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [path, contents] : files) {
    if (path.empty()) continue;
    if (auto s = WriteFileAtomically(path, contents); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace ccreplay
