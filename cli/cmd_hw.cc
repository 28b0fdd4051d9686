#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/explain.h"
#include "collectives/workload.h"

namespace ccreplay {
namespace {

struct HwExplainArgs {
  CommonFlags common;
  bool sensitivity = false;
};

int RunHwExplain(const HwExplainArgs& a) {
  const CommonFlags& c = a.common;
  if (auto s = c.CheckCsvJson(); !s.ok()) return Fail(s);
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  auto table = ExplainTable(*hw);
  if (!table.ok()) return Fail(table.status());
  // Printed only once the outputs are written.
  std::ostringstream out;
  out << "# hardware " << hw->name
      << ": every parameter, its value and where it comes from "
         "(docs/hardware-model.md)\n"
      << table->ToText();
  if (!a.sensitivity) {
    auto s = c.WriteCsvJson(table->ToCsv(), table->ToJson());
    if (!s.ok()) return Fail(s);
    std::cout << out.str();
    return kExitOk;
  }
  auto sens = Sensitivity(*hw, Tps186Workload());
  if (!sens.ok()) return Fail(sens.status());
  out << "# sensitivity: each baseline row's replay time, percent "
         "change when one parameter moves by -25% / +25% (a 0 to its "
         "alternative; an enum to each other value)\n"
      << sens->table.ToText();
  for (const std::string& r : sens->rejected) {
    out << "# not a valid config, skipped: " << r << "\n";
  }
  auto s = c.WriteCsvJson(sens->table.ToCsv(), sens->table.ToJson());
  if (!s.ok()) return Fail(s);
  std::cout << out.str();
  return kExitOk;
}

}  // namespace

void AddHwCommand(CLI::App& app, int* exit_code) {
  CLI::App* hw = app.add_subcommand("hw", "hardware config tools");
  hw->require_subcommand(1);
  auto args = std::make_shared<HwExplainArgs>();
  CLI::App* cmd = hw->add_subcommand(
      "explain",
      "print every hardware parameter with its value and its source "
      "(reference figure, derivation or choice)");
  args->common.AddHw(cmd);
  args->common.AddCsvJson(cmd);
  cmd->add_flag("--sensitivity", args->sensitivity,
                "also replay the baseline with each parameter moved by "
                "+-25% (or to each alternative) and print each row's change; "
                "--csv/--json then write this table");
  cmd->callback([args, exit_code] { *exit_code = RunHwExplain(*args); });
}

}  // namespace ccreplay
