#include <iostream>
#include <memory>
#include <sstream>

#include "absl/strings/str_format.h"
#include "base/json.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "collectives/workload.h"

namespace ccreplay {
namespace {

int RunBaselineCommand(const CommonFlags& c) {
  if (auto s = c.CheckCsvJson(); !s.ok()) return Fail(s);
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  auto b = RunBaseline(Tps186Workload(), *hw);
  if (!b.ok()) return Fail(b.status());
  auto table = BaselineTable(*b);
  if (!table.ok()) return Fail(table.status());
  // Printed only once the outputs are written.
  std::ostringstream out;
  out << "# TPS186 baseline on " << hw->name
      << ": Math vs instruction-level replay, one collective per row\n"
      << table->ToText();
  out << absl::StrFormat(
      "# one model pass (time x repeat, summed): Math %.4f us, replay %.4f "
      "us, replay/Math %.3f\n",
      b->total_math_us, b->total_replay_us,
      b->total_replay_us / b->total_math_us);
  auto breakdown = BaselineBreakdownTable(*b);
  if (!breakdown.ok()) return Fail(breakdown.status());
  out << "# where each replay's time went: its critical path by "
         "mechanism (us; docs/hardware-model.md)\n"
      << breakdown->ToText();
  const std::string json =
      JsonText({{"hw", hw->name},
                {"rows", table->ToJsonValue()},
                {"critical_path", breakdown->ToJsonValue()},
                {"total_math_us", b->total_math_us},
                {"total_replay_us", b->total_replay_us}});
  if (auto s = c.WriteCsvJson(table->ToCsv(), json); !s.ok()) return Fail(s);
  std::cout << out.str();
  return kExitOk;
}

}  // namespace

void AddBaselineCommand(CLI::App& app, int* exit_code) {
  auto common = std::make_shared<CommonFlags>();
  CLI::App* cmd =
      app.add_subcommand("baseline",
                         "replay the TPS186 workload (docs/spec-notes.md "
                         "section 1) and compare with Math");
  common->AddHw(cmd);
  common->AddCsvJson(cmd);
  cmd->callback(
      [common, exit_code] { *exit_code = RunBaselineCommand(*common); });
}

}  // namespace ccreplay
