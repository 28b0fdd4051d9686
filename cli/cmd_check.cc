#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "check/check.h"
#include "check/semantics.h"
#include "cli/commands.h"
#include "import/msccl_import.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

struct CheckArgs {
  std::string trace;
  uint64_t max_findings = 200;
  bool no_races = false;
  bool semantics = false;
  MscclFlags msccl;  // when the input is MSCCL-IR XML
};

// For an imported trace, which source chunks a semantics message's
// "chip C output [a, b)" covers, so the XML author sees the chunk.
std::string ChunkNote(absl::string_view msg, const v1::Trace& t) {
  const uint64_t chunk = t.header().source().chunk_bytes();
  unsigned long long chip = 0, a = 0, b = 0;  // NOLINT: sscanf's types
  const size_t at = msg.find(" chip ");
  if (chunk == 0 || at == absl::string_view::npos) return "";
  const std::string rest(msg.substr(at));
  if (sscanf(rest.c_str(), " chip %llu output [%llu, %llu)", &chip, &a, &b) !=
          3 ||
      chip >= static_cast<uint64_t>(t.header().collective().buffers_size())) {
    return "";
  }
  const uint64_t base =
      t.header().collective().buffers(static_cast<int>(chip)).output().addr();
  if (a < base || b <= a) return "";
  return absl::StrCat(" [gpu ", chip, " output chunk(s) ", (a - base) / chunk,
                      "..", (b - base - 1) / chunk, " of ", chunk, " bytes]");
}

int RunCheck(const CommonFlags& c, const CheckArgs& a) {
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  TraceLocations locations;
  absl::StatusOr<v1::Trace> trace;
  if (IsMscclXmlPath(a.trace)) {
    // Imported in memory: findings name chip, stream (= tb id) and
    // instruction; the import itself names XML lines.
    trace = a.msccl.Import(a.trace, *hw, std::nullopt);
  } else {
    auto bytes = ReadFileToString(a.trace);
    if (!bytes.ok()) return Fail(bytes.status());
    trace = ParseTraceWithLocations(*bytes, a.trace, &locations);
  }
  if (!trace.ok()) return Fail(trace.status());
  CheckOptions opt;
  opt.file_name = a.trace;
  opt.happens_before = !a.no_races;
  const std::vector<Finding> findings = CheckTrace(*trace, *hw, locations, opt);
  const size_t errors = CountSeverity(findings, Severity::kError);
  const size_t warnings = CountSeverity(findings, Severity::kWarning);
  // Outputs first: a failed write must not leave a half-printed report.
  if (auto s = WriteOutputs(
          {{"trace", a.trace}, {"--hw", c.hw_path}},
          {{"--json", c.json_path, FindingsJson(findings, a.trace)}});
      !s.ok()) {
    return Fail(s);
  }
  std::string out;
  for (size_t i = 0; i < findings.size() && i < a.max_findings; ++i) {
    absl::StrAppend(&out, FormatFinding(findings[i], a.trace), "\n");
  }
  if (findings.size() > a.max_findings) {
    absl::StrAppend(&out, "... ", findings.size() - a.max_findings,
                    " more finding(s) not shown (--max-findings)\n");
  }
  absl::StrAppend(&out, a.trace, ": ", errors, " error(s), ", warnings,
                  " warning(s) on ", hw->name, "\n");
  bool semantics_ok = true;
  if (a.semantics) {
    // Symbolic execution: does every chip end with what the collective in
    // the header defines? Only meaningful once the trace is well formed.
    if (errors > 0) {
      absl::StrAppend(&out, a.trace,
                      ": semantics not checked: fix the errors above first\n");
    } else if (auto s = VerifySemantics(*trace); !s.ok()) {
      semantics_ok = false;
      absl::StrAppend(&out, a.trace, ": ", s.message(),
                      ChunkNote(s.message(), *trace), "\n");
    } else {
      absl::StrAppend(&out, a.trace,
                      ": semantics: every chip's output is the collective's "
                      "result\n");
    }
  }
  std::cout << out;
  return errors > 0 || !semantics_ok ? kExitBadInput : kExitOk;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    CheckArgs check;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "check a trace against the spec: encoding, ranges, Send/Receive "
      "matching, write + msg, message counts, wait cycles and data races "
      "(rules: docs/conformance.md)");
  cmd->add_option("trace", args->check.trace,
                  "trace file (text or binary), or MSCCL-IR .xml")
      ->required()
      ->check(InputFile());
  args->common.AddHw(cmd);
  args->check.msccl.Add(cmd);
  AddOutputOption(cmd, "--json", args->common.json_path,
                  "also write every finding as JSON");
  AddUnsignedOption(cmd, "--max-findings", args->check.max_findings,
                    "print at most this many findings (default 200; the JSON "
                    "has all)");
  cmd->add_flag("--semantics", args->check.semantics,
                "also prove, on symbolic data, that each chip's output is "
                "what the header's collective defines (docs/semantics.md)");
  cmd->add_flag("--no-races", args->check.no_races,
                "skip the happens-before analysis (races, wait cycles)");
  cmd->callback(
      [args, exit_code] { *exit_code = RunCheck(args->common, args->check); });
}

}  // namespace ccreplay
