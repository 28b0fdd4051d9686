#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "collectives/math_report.h"

namespace ccreplay {

void AddMathCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    bool legacy = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "math", "print the Math self-check table (docs/spec-notes.md section 2)");
  args->common.AddHw(cmd);
  args->common.AddCsvJson(cmd);
  cmd->add_flag("--legacy", args->legacy,
                "also print the legacy column (two documented bugs)");
  cmd->callback([args, exit_code] {
    const CommonFlags& c = args->common;
    auto hw = c.Hw();
    if (!hw.ok()) {
      *exit_code = Fail(hw.status());
      return;
    }
    auto table = MathSelfCheckTable(*hw, args->legacy);
    if (!table.ok()) {
      *exit_code = Fail(table.status());
      return;
    }
    if (auto s = c.WriteCsvJson(table->ToCsv(), table->ToJson()); !s.ok()) {
      *exit_code = Fail(s);
      return;
    }
    std::cout << "# Math (alpha-beta) self-check on " << hw->name
              << ": docs/spec-notes.md section 2 formulas\n"
              << table->ToText();
    *exit_code = kExitOk;
  });
}

}  // namespace ccreplay
