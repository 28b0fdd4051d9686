// libFuzzer target over the whole input path of a trace: the reader (binary
// and text, with locations; the chip-by-chip reader checked against it),
// the validator, every check rule including the
// happens-before analysis, and a bounded replay behind the replay budget
// (hw/budget.h), ninja's manifest_fuzzer style. Any crash, hang, leak or
// sanitizer report is a bug; every status is fine. Run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "check/check.h"
#include "hw/budget.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "replay/engine.h"
#include "replay/fluid_engine.h"
#include "trace/decode.h"
#include "trace/trace_io.h"

namespace {

bool SamePrograms(const ccreplay::Program& a, const ccreplay::Program& b) {
  if (a.num_chips != b.num_chips || a.chips.size() != b.chips.size()) {
    return false;
  }
  for (size_t c = 0; c < a.chips.size(); ++c) {
    const auto& x = a.chips[c].streams;
    const auto& y = b.chips[c].streams;
    if (x.size() != y.size()) return false;
    for (size_t s = 0; s < x.size(); ++s) {
      if (x[s].id != y[s].id || x[s].instrs.size() != y[s].instrs.size()) {
        return false;
      }
      for (size_t i = 0; i < x[s].instrs.size(); ++i) {
        if (!ccreplay::SameInstr(x[s].instrs[i], y[s].instrs[i])) return false;
      }
    }
  }
  return true;
}

// Bounds that keep one input fast: the fuzzer should explore shapes, not
// spend seconds replaying one large trace.
constexpr uint32_t kMaxFuzzChips = 64;
constexpr uint64_t kMaxFuzzInstructions = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccreplay;  // NOLINT: a fuzz entry point
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The hardware: TPS186.
  HwConfig hw = DefaultTps186();
  // The chip-by-chip reader takes on only what the whole path parses, and
  // then agrees with it: the same program or the same first error.
  std::optional<DecodedTrace> streamed =
      StreamValidateAndDecode(bytes, hw.Target());
  TraceLocations locations;
  absl::StatusOr<v1::Trace> trace =
      ParseTraceWithLocations(bytes, "fuzz", &locations);
  if (streamed) {
    if (!trace.ok()) std::abort();
    const absl::StatusOr<Program> whole =
        ValidateAndDecode(*trace, hw.Target());
    if (whole.status() != streamed->program.status()) std::abort();
    if (whole.ok() && !SamePrograms(*whole, *streamed->program)) std::abort();
  }
  if (!trace.ok()) return 0;
  uint64_t instructions = 0;
  for (const v1::ChipProgram& c : trace->chips()) {
    for (const v1::Stream& s : c.streams())
      instructions += s.instructions_size();
  }
  CheckOptions options;
  options.file_name = "fuzz";
  options.race.max_clock_entries = uint64_t{1} << 20;
  options.race.max_pairs = uint64_t{1} << 20;
  const std::vector<Finding> findings =
      CheckTrace(*trace, hw, locations, options);
  for (const Finding& f : findings) (void)FormatFinding(f, "fuzz");
  (void)FindingsJson(findings, "fuzz");
  absl::StatusOr<Program> program = ValidateAndDecode(*trace, hw.Target());
  if (!program.ok()) return 0;
  if (program->num_chips > kMaxFuzzChips ||
      instructions > kMaxFuzzInstructions) {
    return 0;
  }
  for (const TopologyKind kind : {TopologyKind::kRing, TopologyKind::kSwitch}) {
    absl::StatusOr<Topology> topology =
        Topology::Build(kind, program->num_chips);
    if (!topology.ok()) continue;
    // As ReplayTrace does: a trace whose times would pass the clock, or
    // whose events the budget refuses, is not replayed.
    if (!CheckReplayBudget(*program, hw, *topology, ResourceBudget{}).ok()) {
      continue;
    }
    ReplayOptions replay;
    replay.max_events = 200000;
    (void)Replay(*program, hw, *topology, replay);
    // The fluid engine: flows, and its short transfers and control packets
    // as packets (ReplayOptions::fluid_packet_max).
    (void)ReplayFluid(*program, hw, *topology, replay);
  }
  return 0;
}
