// The trace-level conformance rules: the one place where what a valid trace
// is gets written down. Each rule has a stable id (docs/conformance.md).
// Two callers run the same rules:
//  - ValidateAndDecode() (trace/decode.h) stops at the first error, so the
//    replay never sees an invalid Program;
//  - CheckTrace() (check/check.h) collects every finding and adds the rules
//    that need more than the trace's structure (message counts, races, wait
//    cycles, write + msg).
#ifndef CCREPLAY_TRACE_RULES_H_
#define CCREPLAY_TRACE_RULES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/trace.pb.h"
#include "trace/program.h"

namespace ccreplay {

enum class Severity : uint8_t { kError, kWarning };
absl::string_view SeverityName(Severity s);  // "error", "warning"

struct RuleInfo {
  absl::string_view id;
  Severity severity;  // the usual severity (write-msg and race have both)
  absl::string_view summary;
};

// The rules RunTraceRules() applies, in documentation order. All are errors.
const std::vector<RuleInfo>& TraceRules();

// The name of an instruction's kind: OpKindName() of its OpKind, "no kind"
// when none is set. The one table of kind names is OpKindName().
absl::string_view InstructionKindName(const v1::Instruction& in);

// The conditions of the per-instruction rules, for the rules below (which
// word the errors) and for the binary decoder's fast path
// (trace/wire_chip.h, which takes an instruction only if it passes them
// all and leaves every other to the rules).
// qp-encoding: the qp's engine exists.
inline bool QpInRange(const TraceTarget& hw, uint32_t qp) {
  return CdmaOfQp(qp) < hw.cdma_engines;
}
// counter-range: a message counter is a qp id of the chip.
inline bool CounterInRange(const TraceTarget& hw, uint32_t id) {
  return id < hw.num_qps();
}
// range-overflow: "addr + bytes" must leave the range's end representable.
inline bool RangeOverflows(uint64_t addr, uint64_t bytes) {
  return bytes > ~uint64_t{0} - addr;
}
// reduce-op: a known ReduceOp.
inline bool ReduceOpKnown(int value) { return v1::ReduceOp_IsValid(value); }

// A place in a v1::Trace, by index into its repeated fields (not by chip or
// stream id). -1 = coarser: {-1, -1, -1} is the whole trace (or its header
// when `header` is set), {c, -1, -1} is trace.chips(c).
struct TracePlace {
  int chip = -1;    // index in trace.chips
  int stream = -1;  // index in trace.chips(chip).streams
  int instr = -1;   // index in that stream's instructions
  bool header = false;

  static TracePlace Header() {
    TracePlace p;
    p.header = true;
    return p;
  }
};

// "chip 3, stream 1, instruction 12 (Transfer)", "chip 3", "" for the trace
// or its header: PlaceText() of trace/program.h with the trace's ids.
// REQUIRES: the indices of `p` exist in `trace`.
std::string TracePlaceText(const v1::Trace& trace, const TracePlace& p);

// Where the rules report to. The runner calls Report() for each violation in
// a fixed order (header, collective, chips in trace order with their streams
// and instructions, then Send/Receive matching by ordered chip pair) and
// stops as soon as Done() is true.
class RuleSink {
 public:
  virtual ~RuleSink() = default;
  // A violation of rule `rule` (an id of TraceRules()) at `place`, whose
  // text is `place_text` (TracePlaceText() of it; "" above a stream).
  // `message` does not repeat the place. `related` (or null) is the other
  // place of a duplicate or a Send/Receive pair.
  virtual void Report(absl::string_view rule, const TracePlace& place,
                      absl::string_view place_text, std::string message,
                      const TracePlace* related) = 0;
  // True when no further finding is wanted (the first error, for decode).
  virtual bool Done() const { return false; }
  // Appended where a message names another place: "" by default, " at
  // t.txtpb:40:5" for a text trace in `ccreplay check`.
  virtual std::string Where(const TracePlace& p) const {
    (void)p;
    return "";
  }
};

struct RuleOptions {
  // Also report fields the schema does not define (rules unknown-field and
  // msg-data-fields). Off for the replay, which ignores them as protobuf
  // does (a newer writer's extra field must not stop an older replayer);
  // `ccreplay check` turns it on.
  bool schema_strict = false;
};

// Runs every rule of TraceRules() on `trace` against `target`. Returns true
// if the header passed (format, num_chips, hardware): only then are chips,
// instructions and matching checked.
bool RunTraceRules(const v1::Trace& trace, const TraceTarget& target,
                   const RuleOptions& options, RuleSink* sink);

// The same rules fed a piece at a time, for a reader that never holds the
// whole trace (trace/stream_decode.h): Begin() with the header, Chip() for
// each entry of trace.chips in order (the chip message need only live
// during the call), End() for the Send/Receive matching. The findings and
// their order are RunTraceRules()'s.
class TraceRuleRunner {
 public:
  // `header` is null when the trace has none. `whole` (or null) is the
  // trace, for the rule on its own unknown fields. `target` and `options`
  // are copied; `header`, `sink` and `whole` must outlive the runner.
  TraceRuleRunner(const v1::TraceHeader* header, const TraceTarget& target,
                  const RuleOptions& options, RuleSink* sink,
                  const v1::Trace* whole = nullptr);
  ~TraceRuleRunner();
  TraceRuleRunner(const TraceRuleRunner&) = delete;
  TraceRuleRunner& operator=(const TraceRuleRunner&) = delete;

  // The header's rules; true if the chips can be checked (as RunTraceRules
  // returns).
  bool Begin();
  // trace.chips(index), after Begin() returned true.
  void Chip(int index, const v1::ChipProgram& chip);
  // For trace.chips(index), which the caller found to pass every rule of a
  // chip, its streams and its instructions except the ones on the chip's id
  // (the binary decoder's fast path, trace/wire_chip.h), and which has no
  // Send or Receive (those feed the matching): records it as chip `chip_id`
  // and returns true, where Chip() would have found nothing. Returns false,
  // recording nothing, where Chip() would report the id (out of range,
  // listed before) or the sink is done: the caller then hands the chip to
  // Chip().
  bool TakeCheckedChip(int index, uint32_t chip_id);
  void End();
  // The sink wants no more findings.
  bool Done() const;

 private:
  class Rules;
  std::unique_ptr<Rules> rules_;
};

}  // namespace ccreplay

#endif  // CCREPLAY_TRACE_RULES_H_
