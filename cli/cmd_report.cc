// ccreplay report: one self-contained HTML page (inline SVG and CSS, no
// script, nothing fetched) with the baseline table and its critical-path
// bars, a sweep's plots and table (`sweep --json` output), and the models'
// accuracy table (`models --sweep --json` output). docs/reports.md.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file_util.h"
#include "base/json.h"
#include "cli/commands.h"
#include "cli/plots.h"
#include "cli/run.h"
#include "cli/sweep.h"
#include "collectives/workload.h"
#include "report/html.h"
#include "report/svg.h"

namespace ccreplay {
namespace {

struct ReportArgs {
  std::string sweep_path;
  std::string models_path;
  std::string output;
};

absl::StatusOr<Json> ReadJson(const std::string& flag,
                              const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": not JSON"));
  }
  return j;
}

absl::StatusOr<std::vector<HtmlSection>> BaselineSections(const HwConfig& hw) {
  auto b = RunBaseline(Tps186Workload(), hw);
  if (!b.ok()) return b.status();
  auto table = BaselineTable(*b);
  if (!table.ok()) return table.status();
  auto breakdown = BaselineBreakdownTable(*b);
  if (!breakdown.ok()) return breakdown.status();
  auto rows = HtmlTableFromCsv(table->ToCsv());
  if (!rows.ok()) return rows.status();
  auto path_rows = HtmlTableFromCsv(breakdown->ToCsv());
  if (!path_rows.ok()) return path_rows.status();
  auto bars = BaselineBars(*b, SvgOptions{false});
  if (!bars.ok()) return bars.status();
  HtmlSection rows_section{
      "Baseline: Math vs instruction-level replay",
      XmlEscape(absl::StrFormat(
          "The TPS186 workload, one collective per row. One model pass (time "
          "x repeat, summed): Math %.4f us, replay %.4f us, replay/Math %.3f.",
          b->total_math_us, b->total_replay_us,
          b->total_replay_us / b->total_math_us)),
      *rows};
  HtmlSection path_section{
      "Where each replay's time goes",
      "Each row's critical path, walked back from the last stream to finish, "
      "every picosecond given to one mechanism (us).",
      absl::StrCat("<figure>\n", *bars, "</figure>\n", *path_rows)};
  return std::vector<HtmlSection>{rows_section, path_section};
}

absl::StatusOr<HtmlSection> SweepSection(const std::string& path) {
  auto j = ReadJson("--sweep", path);
  if (!j.ok()) return j.status();
  auto r = SweepFromJson(*j);
  if (!r.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--sweep ", path, ": ", r.status().message()));
  }
  auto plots = SweepPlots(*r, SvgOptions{false});
  if (!plots.ok()) return plots.status();
  auto table = SweepTable(*r);
  if (!table.ok()) return table.status();
  auto rows = HtmlTableFromCsv(table->ToCsv());
  if (!rows.ok()) return rows.status();
  std::string body;
  for (const std::string& svg : *plots) {
    absl::StrAppend(&body, "<figure>\n", svg, "</figure>\n");
  }
  absl::StrAppend(&body, *rows);
  return HtmlSection{
      "Sweep: bus bandwidth and time against size",
      "Solid: the replay; dashed, same colour: Math for the same algorithm "
      "and topology (none where Math has no formula). nccl-tests columns.",
      body};
}

absl::StatusOr<HtmlSection> ModelsSection(const std::string& path) {
  auto j = ReadJson("--models", path);
  if (!j.ok()) return j.status();
  const Json& rows =
      j->is_object() && j->contains("summary") ? (*j)["summary"] : *j;
  auto table = HtmlTableFromJson(rows);
  if (!table.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--models ", path, ": ", table.status().message()));
  }
  return HtmlSection{"Analytic models against the replay",
                     "Each model's signed error against the replay over the "
                     "grid of <code>ccreplay models --sweep</code>.",
                     *table};
}

int RunReport(const CommonFlags& c, const ReportArgs& a) {
  const std::vector<NamedPath> inputs =
      c.Inputs({{"--sweep", a.sweep_path}, {"--models", a.models_path}});
  if (auto s = CheckOutputs(inputs, {{"-o", a.output, ""}}); !s.ok()) {
    return Fail(s);
  }
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  // The inputs first: a bad one costs no baseline run.
  std::vector<HtmlSection> more;
  if (!a.sweep_path.empty()) {
    auto s = SweepSection(a.sweep_path);
    if (!s.ok()) return Fail(s.status());
    more.push_back(*std::move(s));
  }
  if (!a.models_path.empty()) {
    auto s = ModelsSection(a.models_path);
    if (!s.ok()) return Fail(s.status());
    more.push_back(*std::move(s));
  }
  auto sections = BaselineSections(*hw);
  if (!sections.ok()) return Fail(sections.status());
  for (HtmlSection& s : more) sections->push_back(std::move(s));
  const std::string page = HtmlPage(
      absl::StrCat("ccreplay report: ", hw->name),
      "Instruction-level replay of collective communication beside the "
      "alpha-beta Math baseline.",
      *sections);
  if (auto s = WriteOutputs(inputs, {{"-o", a.output, page}}); !s.ok()) {
    return Fail(s);
  }
  std::cout << "wrote " << a.output << ": " << sections->size() << " sections, "
            << page.size() << " bytes\n";
  return kExitOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    ReportArgs report;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "one self-contained HTML page: baseline, critical paths, a sweep's "
      "plots, the models' accuracy");
  args->common.AddHw(cmd);
  cmd->add_option("--sweep", args->report.sweep_path,
                  "a `ccreplay sweep --json` output to plot and tabulate")
      ->check(CLI::ExistingFile);
  cmd->add_option("--models", args->report.models_path,
                  "a `ccreplay models --sweep --json` output to tabulate")
      ->check(CLI::ExistingFile);
  AddOutputOption(cmd, "-o,--output", args->report.output, "the HTML page")
      ->required();
  cmd->callback([args, exit_code] {
    *exit_code = RunReport(args->common, args->report);
  });
}

}  // namespace ccreplay
