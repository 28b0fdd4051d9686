// ccreplay: the command line. Exit codes: 0 ok, 1 the trace, config or
// replay is wrong (the message says where), 2 usage.
#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace ccreplay;  // NOLINT: a .cc file's main
  CLI::App app{
      "ccreplay: instruction-level hardware trace replayer for collective "
      "communication"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every command");
  app.set_version_flag("--version", "ccreplay " CCREPLAY_VERSION);
  int exit_code = kExitUsage;
  AddBaselineCommand(app, &exit_code);
  AddMathCommand(app, &exit_code);
  AddLowerCommand(app, &exit_code);
  AddReplayCommand(app, &exit_code);
  AddCheckCommand(app, &exit_code);
  AddCompareCommand(app, &exit_code);
  AddImportCommand(app, &exit_code);
  AddModelsCommand(app, &exit_code);
  AddCalibrateCommand(app, &exit_code);
  AddHwCommand(app, &exit_code);
  AddSweepCommand(app, &exit_code);
  AddReportCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code == 0) return kExitOk;
    if (const std::string hint = UsageHint(app, argc, argv); !hint.empty()) {
      std::cerr << hint << "\n";
    }
    return kExitUsage;
  }
  return exit_code;
}
