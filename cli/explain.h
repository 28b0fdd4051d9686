// `ccreplay hw explain`: every hardware parameter with its value and where it
// comes from (hw/provenance.h), and how much each baseline row's replay time
// moves when the parameter moves.
#ifndef CCREPLAY_CLI_EXPLAIN_H_
#define CCREPLAY_CLI_EXPLAIN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/table.h"
#include "collectives/workload.h"
#include "hw/config.h"

namespace ccreplay {

// One row per parameter: parameter, value, origin (spec / derived / chosen),
// note (the reference figure, the formula or the reason).
absl::StatusOr<Table> ExplainTable(const HwConfig& hw);

struct SensitivityResult {
  // Per variant: parameter, origin, variant ("-25%", "+25%", "alt", or the
  // enum value), the value tried, the signed change of each row's replay
  // time in percent, and the largest absolute change.
  Table table;
  // Variants the config validation rejects ("link.lane_groups = 3:
  // INTERLEAVE_XOR needs a power-of-two link.lane_groups, got 3").
  std::vector<std::string> rejected;
  // The same numbers unrounded: the base replay time of each row, and per
  // table row "parameter variant" with each row's replay time.
  std::vector<TimePs> base;
  std::vector<std::string> variants;
  std::vector<std::vector<TimePs>> replay;
};

// Moves each numeric parameter by -25% and +25% (a parameter that is 0 is
// set to its documented alternative instead, if it has one; one that must be
// a power of two is halved and doubled) and sets each
// enum to each of its other values, one at a time, and replays `rows` on
// each variant. REQUIRES: rows non-empty.
absl::StatusOr<SensitivityResult> Sensitivity(
    const HwConfig& hw, const std::vector<WorkloadRow>& rows);

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_EXPLAIN_H_
