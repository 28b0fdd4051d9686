// The critical-path breakdown the replay sums as it runs
// (ReplayResult::critical_path, replay/critical_path.h) against the walk
// back over the timing records (WalkCriticalPath): the same times by
// mechanism, the same steps, the same refusal when no stream ends at the
// makespan. Used by every test that replays a sweep of traces.
#ifndef CCREPLAY_TESTS_PATH_CHECK_H_
#define CCREPLAY_TESTS_PATH_CHECK_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "replay/breakdown.h"
#include "replay/engine.h"
#include "trace/program.h"

namespace ccreplay_test {

// "" when they agree, else what differs.
inline std::string PathMismatch(const ccreplay::Program& program,
                                const ccreplay::ReplayResult& result,
                                const ccreplay::HwConfig& hw,
                                const ccreplay::Topology& topology) {
  using ccreplay::Breakdown;
  const auto walk = ccreplay::WalkCriticalPath(program, result, hw, topology);
  const auto& sums = result.critical_path;
  if (!walk.ok() || !sums.has_value()) {
    if (!walk.ok() && !sums.has_value()) return "";
    return absl::StrCat("walk: ", walk.ok() ? "ok" : walk.status().ToString(),
                        "; running sums: ",
                        sums.has_value() ? "a breakdown" : "none");
  }
  std::string diff;
  // Every stream's own path, where the replay kept them: the critical one
  // is only one of them.
  for (size_t s = 0; s < result.stream_paths.size(); ++s) {
    const uint32_t first = result.stream_first[s];
    const uint32_t end = s + 1 < result.stream_first.size()
                             ? result.stream_first[s + 1]
                             : static_cast<uint32_t>(result.instrs.size());
    if (end == first) continue;
    const auto from =
        ccreplay::WalkPathFrom(program, result, hw, topology, end - 1);
    if (!from.ok()) return absl::StrCat("stream ", s, ": ", from.status().ToString());
    const Breakdown& mine = result.stream_paths[s];
    if (from->by_cause != mine.by_cause || from->steps != mine.steps) {
      absl::StrAppend(&diff, " stream ", s, " (steps ", from->steps, " vs ",
                      mine.steps, ")");
    }
  }
  if (walk->total != sums->total) {
    absl::StrAppend(&diff, " total ", walk->total.ps(), " vs ",
                    sums->total.ps());
  }
  for (int c = 0; c < ccreplay::kNumPathCauses; ++c) {
    if (walk->by_cause[c] == sums->by_cause[c]) continue;
    absl::StrAppend(
        &diff, " ",
        ccreplay::PathCauseName(static_cast<ccreplay::PathCause>(c)), " ",
        walk->by_cause[c].ps(), " vs ", sums->by_cause[c].ps());
  }
  if (walk->steps != sums->steps) {
    absl::StrAppend(&diff, " steps ", walk->steps, " vs ", sums->steps);
  }
  return diff.empty() ? "" : absl::StrCat("walk vs running sums:", diff);
}

}  // namespace ccreplay_test

#endif  // CCREPLAY_TESTS_PATH_CHECK_H_
