// One point of a comparison or a sweep: a collective of one size lowered (or
// imported from MSCCL-IR XML) for one algorithm, replayed on one topology,
// with the Math baseline beside it. `ccreplay compare` runs one point per
// (topology, algorithm) and `ccreplay sweep` one per (op, topology,
// algorithm, N, size); both tabulate the PointResult.
#ifndef CCREPLAY_CLI_POINT_H_
#define CCREPLAY_CLI_POINT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/file_util.h"
#include "base/json.h"
#include "hw/budget.h"
#include "hw/config.h"
#include "proto/trace.pb.h"
#include "replay/breakdown.h"
#include "replay/engine.h"

namespace ccreplay {

struct PointSpec {
  v1::CollectiveOp op = v1::ALLREDUCE;
  uint32_t n = 8;
  uint32_t group_size = 0;  // 0 = one group of n
  uint64_t bytes = 0;
  uint64_t chunk = 0;
  uint32_t cdma = 0;
  std::string algorithm;      // a lowering's name or msccl:PATH.xml
  std::string topology_text;  // as given on the command line
  // Replayed by the fluid engine (replay/fluid_engine.h), with
  // ReplayOptions::fluid_packet_max = fluid_packets, instead of packets;
  // its result has no breakdown.
  bool fluid = false;
  uint32_t fluid_packets = ReplayOptions{}.fluid_packet_max;
};

struct PointResult {
  std::string label;     // the algorithm, or msccl:<file name>
  std::string topology;  // TopologySpecString of the topology replayed
  uint32_t group = 0;    // chips per group
  uint64_t groups = 0;
  uint64_t bytes = 0;
  double replay_us = 0;
  double fastest_group_us = 0;
  std::optional<double> math_us;  // none where Math has no formula
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  uint64_t events = 0;
  Breakdown breakdown;  // the replay's critical path

  // replay / Math, or none without Math.
  std::optional<double> ReplayOverMath() const;
};

// Lowers (or imports) and replays `p` on `base_hw` with the topology
// p.topology_text. Errors name the algorithm and topology ("hd on ring: ...")
// or the bad --topology text.
// `budget` (--max-events, --max-memory) bounds the replay as on `replay`.
absl::StatusOr<PointResult> RunPoint(const HwConfig& base_hw,
                                     const PointSpec& p,
                                     const ResourceBudget& budget = {});

// RunPoint of every spec on `jobs` threads (0 = one per hardware thread),
// results in spec order; the first error in spec order wins, as in a serial
// run. A progress bar counts `unit` (e.g. "points") unless `quiet`.
absl::StatusOr<std::vector<PointResult>> RunPoints(
    const HwConfig& hw, const std::vector<PointSpec>& specs, unsigned jobs,
    bool quiet, const char* unit, const ResourceBudget& budget = {});

// The points (indices into `specs`, ascending) that rank `rank` of `ranks`
// runs in an MPI job (cli/spread.h): the longest first, each to the rank
// with the least estimated work so far (bytes times chips, small points
// counted as 64 KiB), so that a sweep over sizes growing 4x a step does not
// give one rank most of the work. Every index goes to exactly one rank; one
// rank gets them all.
std::vector<size_t> PointsOfRank(const std::vector<PointSpec>& specs, int rank,
                                 int ranks);

// The files --algo msccl:PATH.xml reads: inputs an output must not replace.
std::vector<NamedPath> MscclInputs(const std::vector<std::string>& algos);

// The critical path by mechanism, {"cdma_startup": us, ...}.
Json BreakdownJson(const Breakdown& b);

// NaN for none: what Table prints as "-" and JSON as null.
double OrNan(const std::optional<double>& v);

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_POINT_H_
