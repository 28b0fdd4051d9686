// Static conformance check of a trace against the spec (docs/spec-notes.md §4,
// proto/trace.proto, docs/instructions.md) and the hardware it will run on.
// It runs the structural rules of trace/rules.h (the ones ValidateAndDecode()
// stops at the first error of) and reports every finding, each with a stable
// rule id, a severity and its place (chip, stream, instruction and, for text
// traces, file:line:col); then the rules that need the decoded program. The
// rules are listed in docs/conformance.md and by CheckRules().
#ifndef CCREPLAY_CHECK_CHECK_H_
#define CCREPLAY_CHECK_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "check/race.h"
#include "hw/config.h"
#include "proto/trace.pb.h"
#include "trace/rules.h"
#include "trace/trace_io.h"

namespace ccreplay {

// Where a finding is. -1 = not applicable (e.g. a header finding has no
// chip; a chip finding has no stream).
struct FindingPlace {
  int64_t chip = -1;
  int64_t stream = -1;    // the stream's id (as in the trace)
  int64_t instr = -1;     // 0-based index in the stream
  std::string kind;       // "Transfer", ...; empty without an instruction
  TextLocation location;  // line 0 = unknown (binary trace)

  // PlaceText(): "chip 3, stream 0, instruction 12 (Transfer)", "chip 3",
  // "" ...
  std::string Text() const;
};

struct Finding {
  std::string rule;  // stable id, e.g. "qp-encoding"
  Severity severity = Severity::kError;
  FindingPlace place;
  std::string message;
  bool has_related = false;  // the other instruction of a race or cycle
  FindingPlace related;
};

struct CheckOptions {
  // Named in messages that point at another place of the same file.
  std::string file_name;
  bool happens_before = true;  // races and wait cycles
  RaceOptions race;
};

// Checks `trace` against `hw`. `locations` may be empty (binary trace).
// Findings are sorted by place (trace-wide first), then rule. Never fails:
// whatever the trace holds becomes findings.
std::vector<Finding> CheckTrace(const v1::Trace& trace, const HwConfig& hw,
                                const TraceLocations& locations,
                                const CheckOptions& options = {});

// "t.txtpb:12:7: chip 3, stream 0, instruction 12 (Transfer): error
// [qp-encoding]: ..." (without a location: "t.pb: chip 3, ...").
std::string FormatFinding(const Finding& f, const std::string& file);

// {"file": ..., "errors": n, "warnings": n, "findings": [...]}.
std::string FindingsJson(const std::vector<Finding>& findings,
                         const std::string& file);

size_t CountSeverity(const std::vector<Finding>& findings, Severity s);

// Every rule CheckTrace() can report, in documentation order: TraceRules()
// of trace/rules.h, then the rules on the decoded program.
const std::vector<RuleInfo>& CheckRules();

}  // namespace ccreplay

#endif  // CCREPLAY_CHECK_CHECK_H_
