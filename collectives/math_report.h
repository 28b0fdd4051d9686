// The Math self-check table of docs/spec-notes.md §2: the TPS186 workload timed
// by the Math model derived from a hardware configuration. `ccreplay math`
// prints it.
#ifndef CCREPLAY_COLLECTIVES_MATH_REPORT_H_
#define CCREPLAY_COLLECTIVES_MATH_REPORT_H_

#include "absl/status/statusor.h"
#include "base/table.h"
#include "hw/config.h"

namespace ccreplay {

// Columns: module, operator, M (bytes), [legacy (us) when `legacy`],
// corrected (us); one row per Tps186Workload() row, times in microseconds
// with 4 decimals. Errors: the Math model rejects the parameters derived from
// `hw` (e.g. a hand-built HwConfig with zero link bandwidth).
absl::StatusOr<Table> MathSelfCheckTable(const HwConfig &hw, bool legacy);

}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_MATH_REPORT_H_
