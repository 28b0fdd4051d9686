#include <iostream>
#include <memory>

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
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  auto table = ExplainTable(*hw);
  if (!table.ok()) return Fail(table.status());
  std::cout << "# hardware " << hw->name
            << ": every parameter, its value and where it comes from "
               "(docs/hardware-model.md)\n"
            << table->ToText();
  if (!a.sensitivity) {
    auto s = WriteOutputs(
        {{c.csv_path, table->ToCsv()}, {c.json_path, table->ToJson()}});
    return s.ok() ? kExitOk : Fail(s);
  }
  auto sens = Sensitivity(*hw, Tps186Workload());
  if (!sens.ok()) return Fail(sens.status());
  std::cout << "# sensitivity: each baseline row's replay time, percent "
               "change when one parameter moves by -25% / +25% (a 0 to its "
               "alternative; an enum to each other value)\n"
            << sens->table.ToText();
  for (const std::string& r : sens->rejected) {
    std::cout << "# not a valid config, skipped: " << r << "\n";
  }
  auto s = WriteOutputs({{c.csv_path, sens->table.ToCsv()},
                         {c.json_path, sens->table.ToJson()}});
  return s.ok() ? kExitOk : Fail(s);
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
  cmd->callback(
      [args, exit_code] { *exit_code = RunHwExplain(*args); });
}

}  // namespace ccreplay
