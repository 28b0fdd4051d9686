// The results of `ccreplay sweep` and their renderings: nccl-tests' text
// table, one CSV and one JSON for the whole sweep (keyed as nccl-tests' -J
// output), read back by `ccreplay report`.
#ifndef CCREPLAY_CLI_SWEEP_H_
#define CCREPLAY_CLI_SWEEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/json.h"
#include "base/table.h"
#include "cli/point.h"

namespace ccreplay {

struct SweepPoint {
  PointSpec spec;      // spec.bytes: the size, rounded to whole elements
  uint64_t count = 0;  // elements of the report's datatype
  PointResult result;
};

struct SweepReport {
  std::string hw;
  // Replayed by the fluid engine with ReplayOptions::fluid_packet_max this
  // (kNone: the packet engine).
  uint32_t fluid_packets = kNone;
  std::string datatype = "float";
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t step_factor = 0;  // > 1, or 0 when the step is in bytes
  uint64_t step_bytes = 0;
  // In sweep order: op, topology, algorithm, N, size.
  std::vector<SweepPoint> points;
};

// nccl-tests' redop and root columns for `op`: "sum" or "none"; 0 for
// broadcast and reduce, else -1.
std::string SweepRedop(v1::CollectiveOp op);
int SweepRoot(v1::CollectiveOp op);

// One block per (op, topology, algorithm, N), nccl-tests' columns plus Math
// and replay/Math; Math with no formula prints "-".
std::string SweepText(const SweepReport& r);
// Every point, one row each, with op, algorithm, topology and N columns.
absl::StatusOr<Table> SweepTable(const SweepReport& r);
// {"tool", "hw", "config": {...}, "results": [{"size", "count", "type",
// "redop", "root", "out_of_place": {"time", "alg_bw", "bus_bw", "nwrong"},
// ...}], "average_bus_bandwidth": {"bandwidth"}}.
Json SweepJson(const SweepReport& r);
// The report SweepJson wrote (what plots and `ccreplay report` need);
// errors name the missing or mistyped key.
absl::StatusOr<SweepReport> SweepFromJson(const Json& j);

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_SWEEP_H_
