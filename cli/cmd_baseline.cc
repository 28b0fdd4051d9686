#include <iostream>
#include <memory>
#include <sstream>

#include "absl/strings/str_format.h"
#include "base/json.h"
#include "cli/commands.h"
#include "cli/plots.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "collectives/workload.h"

namespace ccreplay {
namespace {

struct BaselineArgs {
  std::string svg_path;
  bool quiet = false;
  unsigned jobs = 0;
  BudgetFlags budget;
};

int RunBaselineCommand(const CommonFlags& c, const BaselineArgs& a) {
  const std::string& svg_path = a.svg_path;
  std::vector<OutputFile> outputs = {{"--csv", c.csv_path, ""},
                                     {"--json", c.json_path, ""},
                                     {"--svg", svg_path, ""}};
  if (auto s = CheckOutputs(c.Inputs(), outputs); !s.ok()) return Fail(s);
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  const std::vector<WorkloadRow> workload = Tps186Workload();
  auto budget = a.budget.Budget();
  if (!budget.ok()) return Fail(budget.status());
  Progress bar(workload.size(), a.quiet, "rows");
  auto b = RunBaseline(
      workload, *hw, [&bar](uint64_t events) { bar.Done(events); }, a.jobs,
      *budget);
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
  outputs[0].contents = table->ToCsv();
  outputs[1].contents = json;
  if (!svg_path.empty()) {
    auto svg = BaselineSvg(*b);
    if (!svg.ok()) return Fail(svg.status());
    outputs[2].contents = *std::move(svg);
  }
  if (auto s = WriteOutputs(c.Inputs(), outputs); !s.ok()) return Fail(s);
  std::cout << out.str();
  return kExitOk;
}

}  // namespace

void AddBaselineCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    BaselineArgs baseline;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd =
      app.add_subcommand("baseline",
                         "replay the TPS186 workload (docs/spec-notes.md "
                         "section 1) and compare with Math");
  args->common.AddHw(cmd);
  args->common.AddCsvJson(cmd);
  BaselineArgs& a = args->baseline;
  AddOutputOption(cmd, "--svg", a.svg_path,
                  "also write each row's critical path as stacked bars (SVG)");
  cmd->add_flag("-q,--quiet", a.quiet,
                "no progress bar on standard error (shown only on a terminal)");
  AddJobsOption(cmd, a.jobs, "rows");
  a.budget.Add(cmd);
  cmd->callback([args, exit_code] {
    *exit_code = RunBaselineCommand(args->common, args->baseline);
  });
}

}  // namespace ccreplay
