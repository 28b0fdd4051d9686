// Where each hardware parameter's default comes from: the reference
// deployment (docs/spec-notes.md), a derivation (with its formula), or a
// choice of this replayer (with the reason). `ccreplay hw explain` prints it
// beside each value; docs/hardware-model.md has the longer arguments.
#ifndef CCREPLAY_HW_PROVENANCE_H_
#define CCREPLAY_HW_PROVENANCE_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ccreplay {

enum class ParamOrigin : uint8_t {
  kSpec,     // a figure of the reference deployment
  kDerived,  // computed from reference figures (the note gives the formula)
  kChosen,   // no reference figure: chosen here (the note gives the reason)
};

absl::string_view ParamOriginName(ParamOrigin o);

struct ParamSource {
  // The field's path in ccreplay.v1.HardwareConfig, e.g. "link.latency_ps".
  absl::string_view field;
  ParamOrigin origin;
  absl::string_view note;
  // For a sensitivity sweep of a parameter whose default is 0 (where +-25%
  // moves nothing): the value to try instead; 0 = none.
  uint64_t alternative = 0;
  // The parameter must be a power of two (link.lane_groups under the XOR
  // interleave): a sensitivity sweep halves and doubles it instead.
  bool power_of_two = false;
};

// One entry per parameter of ccreplay.v1.HardwareConfig except the name and
// the topology (which every command chooses), in the schema's order.
absl::Span<const ParamSource> ParamSources();
// The entry for `field`, or nullptr.
const ParamSource* FindParamSource(absl::string_view field);

}  // namespace ccreplay

#endif  // CCREPLAY_HW_PROVENANCE_H_
