#include "cli/app.h"

#include <iostream>
#include <new>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "cli/spread.h"

namespace ccreplay {

int RunCcreplay(int argc, const char* const* argv) {
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
  if (const Rank me = ThisRank(); me.size > 1) {
    // Under mpirun: only the commands that spread their points (rank 0
    // writes) may run; any other would run K times over the same outputs.
    const std::string command = argc > 1 ? argv[1] : "";
    if (!CommandSpreads(command)) {
      if (me.rank == 0) {
        std::cerr << "ccreplay: under mpirun with " << me.size
                  << " processes only `sweep` and `compare` run (their points "
                     "spread over the ranks); run `"
                  << command << "` as one process\n";
      }
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // An unknown command or flag: our message names the command and the
    // nearest known name, so CLI11's own ("The following arguments were
    // not expected: ...") would only repeat it less clearly.
    if (e.get_exit_code() != 0) {
      if (const std::string hint = UsageHint(app, argc, argv); !hint.empty()) {
        std::cerr << hint << "\n";
        return kExitUsage;
      }
    }
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const std::bad_alloc&) {
    // What the budgets (hw/budget.h) did not foresee: a clean failure, not
    // an abort. Outputs are written only at the end, so none is partial.
    std::cerr << "ccreplay: out of memory (the machine's, or the "
                 "address-space limit of ulimit -v); docs/limits.md lists "
                 "the sizes that drive memory\n";
    return kExitBadInput;
  }
  return exit_code;
}

}  // namespace ccreplay
