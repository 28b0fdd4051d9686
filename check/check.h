// Static conformance check of a trace against the spec (SPEC.md §4,
// proto/trace.proto, docs/instructions.md) and the hardware it will run on.
// Unlike ValidateAndDecode(), which stops at the first error, the check
// reports every finding, each with a stable rule id, a severity and its place
// (chip, stream, instruction and, for text traces, file:line:col). The rules
// are listed in docs/conformance.md and by CheckRules().
#ifndef CCREPLAY_CHECK_CHECK_H_
#define CCREPLAY_CHECK_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "hw/config.h"
#include "proto/trace.pb.h"
#include "check/race.h"
#include "trace/trace_io.h"

namespace ccreplay {

enum class Severity : uint8_t { kError, kWarning };
absl::string_view SeverityName(Severity s);  // "error", "warning"

// Where a finding is. -1 = not applicable (e.g. a header finding has no
// chip; a chip finding has no stream).
struct FindingPlace {
  int64_t chip = -1;
  int64_t stream = -1;    // the stream's id (as in the trace)
  int64_t instr = -1;     // 0-based index in the stream
  std::string kind;       // "Transfer", ...; empty without an instruction
  TextLocation location;  // line 0 = unknown (binary trace)

  // "chip 3, stream 0, instruction 12 (Transfer)", "chip 3", "" ...
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

struct RuleInfo {
  absl::string_view id;
  Severity severity;  // the usual severity (write-msg and race have both)
  absl::string_view summary;
};
// Every rule CheckTrace() can report, in documentation order.
const std::vector<RuleInfo>& CheckRules();

}  // namespace ccreplay

#endif  // CCREPLAY_CHECK_CHECK_H_
