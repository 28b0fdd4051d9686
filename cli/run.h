// The glue the commands share: lower a collective or read a trace, validate
// and decode it, build the topology, replay, and tabulate. It belongs to the
// top library, cli/ (ccreplay_cli), the one layer that links collectives/,
// check/ and replay/ together: collectives/ and replay/ do not include each
// other, and no library includes cli/ (tests/layering_check.cmake). Callers:
// the cmd_*.cc commands, tests/run_test.cc and tests/lower_algo_test.cc.
#ifndef CCREPLAY_CLI_RUN_H_
#define CCREPLAY_CLI_RUN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/table.h"
#include "collectives/collective.h"
#include "collectives/workload.h"
#include "hw/budget.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "proto/trace.pb.h"
#include "replay/breakdown.h"
#include "replay/engine.h"
#include "trace/decode.h"
#include "trace/program.h"

namespace ccreplay {

struct RunOutcome {
  Program program;
  std::optional<Topology> topology;
  ReplayResult result;
};

// A topology asked for by name: its kind and, when given on the command
// line, its parameters (otherwise the config's topology parameters apply).
struct TopologyChoice {
  TopologyChoice(TopologyKind k) : kind(k) {}  // NOLINT: a kind is a choice
  TopologyChoice(TopologyKind k, TopologyParams p) : kind(k), params(p) {}
  TopologyKind kind;
  std::optional<TopologyParams> params;
};

// Parses --topology: "name" or "name:key=value,..." (ParseTopologySpec).
absl::StatusOr<TopologyChoice> ParseTopologyChoice(absl::string_view text,
                                                   const HwConfig& hw);

// The topology a trace runs on: `override_choice` if given, else the trace
// header's collective.topology if it names one (a name, or name:params as
// `lower --topology` writes them), else the config's; the parameters are the
// choice's own or the config's.
absl::StatusOr<TopologyChoice> ChooseTopology(
    const v1::Trace& trace, const HwConfig& hw,
    std::optional<TopologyChoice> override_choice);

// An engine: Replay (replay/engine.h, packets) or ReplayFluid
// (replay/fluid_engine.h, flows).
using ReplayFn = absl::StatusOr<ReplayResult> (*)(const Program&,
                                                  const HwConfig&,
                                                  const Topology&,
                                                  const ReplayOptions&);

// Validates, decodes and replays `trace` on `engine`, after CheckReplayBudget
// (hw/budget.h) against `budget`, whose event limit defaults to
// options.max_events and then kDefaultMaxEvents (also the run's own stop).
absl::StatusOr<RunOutcome> ReplayTrace(const v1::Trace& trace,
                                       const HwConfig& hw,
                                       std::optional<TopologyChoice> topology,
                                       const ReplayOptions& options,
                                       const ResourceBudget& budget = {},
                                       ReplayFn engine = &Replay);

// Reads `path` (a trace file) for a replay on `hw`: a binary file is
// validated and decoded chip by chip as it is parsed (StreamValidateAndDecode,
// trace/decode.h), so the whole protobuf is never held; a text file (or
// bytes that reader leaves to the whole-message path) is parsed whole onto
// an arena, decoded, and freed at once. Errors: the file's (unreadable, not
// a trace, malformed); the rules' first error is in the result's program.
absl::StatusOr<DecodedTrace> ReadTraceForReplay(const std::string& path,
                                                const HwConfig& hw);

// ReplayTrace of a trace already decoded (its program is taken).
absl::StatusOr<RunOutcome> ReplayDecoded(DecodedTrace& trace,
                                         const HwConfig& hw,
                                         std::optional<TopologyChoice> topology,
                                         const ReplayOptions& options,
                                         const ResourceBudget& budget = {},
                                         ReplayFn engine = &Replay);

// Lowers `spec` and replays it on spec.topology.
absl::StatusOr<RunOutcome> LowerAndReplay(const CollectiveSpec& spec,
                                          const HwConfig& hw,
                                          const ReplayOptions& options,
                                          const ResourceBudget& budget = {});

// The algorithm the baseline uses for an op: ring for AllReduce, AllGather,
// ReduceScatter; pairwise for AllToAll.
std::string BaselineAlgorithm(v1::CollectiveOp op);

struct BaselineRow {
  WorkloadRow work;
  double math_us = 0;
  TimePs replay;
  double busbw_gbps = 0;  // from the replay time
  Breakdown breakdown;    // the replay's critical path
};

struct Baseline {
  std::vector<BaselineRow> rows;
  double total_math_us = 0;    // sum of math_us * repeat
  double total_replay_us = 0;  // sum of replay * repeat
};

// Replays every row of `workload` on `hw`, `jobs` rows at once (0 = one per
// hardware thread; the result is the serial run's), each within `budget`;
// `on_row`, when given, is called after each row with the events its replay
// simulated (a progress bar), from several threads when jobs != 1.
absl::StatusOr<Baseline> RunBaseline(
    const std::vector<WorkloadRow>& workload, const HwConfig& hw,
    const std::function<void(uint64_t events)>& on_row = nullptr,
    unsigned jobs = 1, const ResourceBudget& budget = {});
// The table `ccreplay baseline` prints.
absl::StatusOr<Table> BaselineTable(const Baseline& b);
// Per row: Math, replay and the replay's critical path by mechanism (us).
absl::StatusOr<Table> BaselineBreakdownTable(const Baseline& b);
// One row per mechanism: time on the critical path (us) and share.
absl::StatusOr<Table> BreakdownTable(const Breakdown& b);

// One row per directed link: packets, bytes, utilisation over the run,
// peak queue depth, time queued, time stalled for credit, and how unevenly
// its lane groups were loaded (busiest LG's busy time / mean), and when it
// first and last carried a packet.
absl::StatusOr<Table> LinkTable(const Topology& topo, const ReplayResult& r,
                                const HwConfig& hw);

// Parses a byte count: "1048576", "1M" (= 1048576), "64K", "2G", "1MiB",
// "1MB" (binary too, as in nccl-tests), "1.5M" (= 1572864); a value that is
// not a whole number of bytes ("1.3K") is rejected. Errors name the text.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_RUN_H_
