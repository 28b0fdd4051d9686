// The pictures of ccreplay's reports (report/svg.h): a sweep's busbw and
// time against size, and the baseline's critical paths as stacked bars.
#ifndef CCREPLAY_CLI_PLOTS_H_
#define CCREPLAY_CLI_PLOTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/run.h"
#include "cli/sweep.h"
#include "report/svg.h"

namespace ccreplay {

// Per (op, N) of the sweep, in sweep order: a busbw plot and a time plot,
// each with one replay series per (algorithm, topology) and its Math series
// (dashed, same colour) where Math has a formula.
absl::StatusOr<std::vector<std::string>> SweepPlots(const SweepReport& r,
                                                    const SvgOptions& o);
// The critical path of each baseline row by mechanism.
absl::StatusOr<std::string> BaselineBars(const Baseline& b,
                                         const SvgOptions& o);
// SweepPlots or BaselineBars as one .svg file.
absl::StatusOr<std::string> SweepSvg(const SweepReport& r);
absl::StatusOr<std::string> BaselineSvg(const Baseline& b);

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_PLOTS_H_
