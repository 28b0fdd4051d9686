#include "cli/point.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/thread_pool.h"
#include "cli/progress.h"
#include "cli/spread.h"
#include "cli/wire.h"
#include "collectives/collective.h"
#include "collectives/groups.h"
#include "collectives/lower.h"
#include "collectives/math.h"
#include "hw/budget.h"
#include "hw/topology.h"
#include "import/msccl_import.h"
#include "replay/engine.h"
#include "replay/fluid_engine.h"
#include "trace/decode.h"

namespace ccreplay {
namespace {

using TopoSpec = std::pair<TopologyKind, TopologyParams>;

// --algo msccl:PATH.xml: the imported algorithm, which must be the op and N
// of the point (docs/import-msccl.md).
absl::StatusOr<v1::Trace> ImportForPoint(const std::string& path,
                                         const PointSpec& p, const HwConfig& hw,
                                         const TopoSpec& topo) {
  MscclImportOptions opt;
  opt.bytes = p.bytes;
  opt.engines_per_channel = p.cdma;
  opt.topology = topo;
  auto trace = ImportMscclFile(path, hw, opt);
  if (!trace.ok()) return trace.status();
  const v1::CollectiveInfo& c = trace->header().collective();
  if (c.op() != p.op || c.n() != p.n || p.group_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a ", CollectiveOpName(c.op()), " of ", c.n(),
        " ranks; the comparison is --op ", CollectiveOpName(p.op), " --n ", p.n,
        p.group_size != 0 ? " with groups (not supported for msccl:)" : ""));
  }
  return trace;
}

absl::Status Where(const std::string& where, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(where, s.message()));
}

// The trace of the point, its header and its validated program: lowered
// and decoded chip by chip, or imported for msccl: and decoded whole.
absl::StatusOr<DecodedTrace> PointTrace(const HwConfig& hw, const PointSpec& p,
                                        const TopoSpec& topo) {
  if (absl::StartsWith(p.algorithm, "msccl:")) {
    absl::StatusOr<v1::Trace> imported =
        ImportForPoint(p.algorithm.substr(6), p, hw, topo);
    if (!imported.ok()) return imported.status();
    return DecodeTrace(*imported, hw.Target());
  }
  CollectiveSpec spec;
  spec.op = p.op;
  spec.n = p.n;
  spec.group_size = p.group_size;
  spec.bytes = p.bytes;
  spec.algorithm = p.algorithm;
  spec.topology = topo.first;
  spec.cdma_engines = p.cdma;
  spec.chunk_bytes = p.chunk;
  return LowerAndDecode(spec, hw);
}

}  // namespace

std::optional<double> PointResult::ReplayOverMath() const {
  if (!math_us || *math_us <= 0) return std::nullopt;
  return replay_us / *math_us;
}

double OrNan(const std::optional<double>& v) {
  return v ? *v : std::numeric_limits<double>::quiet_NaN();
}

std::vector<NamedPath> MscclInputs(const std::vector<std::string>& algos) {
  std::vector<NamedPath> out;
  for (const std::string& algo : algos) {
    if (absl::StartsWith(algo, "msccl:")) {
      out.push_back({"--algo", algo.substr(6)});
    }
  }
  return out;
}

Json BreakdownJson(const Breakdown& b) {
  Json j = Json::object();
  for (int c = 0; c < kNumPathCauses; ++c) {
    j[std::string(PathCauseName(static_cast<PathCause>(c)))] =
        b.by_cause[c].us();
  }
  return j;
}

absl::StatusOr<PointResult> RunPoint(const HwConfig& base_hw,
                                     const PointSpec& p,
                                     const ResourceBudget& budget) {
  auto topo = ParseTopologySpec(p.topology_text, base_hw.topology_params);
  if (!topo.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--topology '", p.topology_text, "': ", topo.status().message()));
  }
  HwConfig hw = base_hw;
  hw.topology = topo->first;
  hw.topology_params = topo->second;
  const std::string where =
      absl::StrCat(p.algorithm, " on ", p.topology_text, ": ");
  auto trace = PointTrace(hw, p, *topo);
  if (!trace.ok()) return Where(where, trace.status());
  const absl::StatusOr<Program>& program = trace->program;
  if (!program.ok()) return program.status();
  auto topology = Topology::Build(topo->first, p.n, topo->second);
  if (!topology.ok()) return Where(where, topology.status());
  if (auto s = CheckReplayBudget(*program, hw, *topology, budget); !s.ok()) {
    return Where(where, s);
  }
  ReplayOptions options;
  options.max_events = budget.EventLimit();  // the estimate is not exact
  // No timing records where a lean replay holds less: the breakdown is
  // then summed as it runs.
  options.keep_records = !PreferLeanReplay(*program);
  options.fluid_packet_max = p.fluid_packets;
  auto result = p.fluid ? ReplayFluid(*program, hw, *topology, options)
                        : Replay(*program, hw, *topology, options);
  if (!result.ok()) return Where(where, result.status());
  PointResult r;
  if (!p.fluid) {  // the fluid engine has no breakdown
    auto breakdown = CriticalPathBreakdown(*program, *result, hw, *topology);
    if (!breakdown.ok()) return Where(where, breakdown.status());
    r.breakdown = *breakdown;
  }
  r.group = p.group_size == 0 ? p.n : p.group_size;
  const std::vector<TimePs> groups = GroupTimes(result->chip_finish, r.group);
  TimePs fastest = groups.empty() ? TimePs() : groups[0];
  for (TimePs x : groups) fastest = std::min(fastest, x);
  r.label = absl::StartsWith(p.algorithm, "msccl:")
                ? absl::StrCat("msccl:", trace->header.header().source().file())
                : p.algorithm;
  r.topology = TopologySpecString(topo->first, topo->second);
  r.groups = groups.size();
  r.bytes = p.bytes;
  r.replay_us = result->makespan.us();
  r.fastest_group_us = fastest.us();
  auto math = MathTimeUs(p.op, r.group, p.bytes, topo->first,
                         MathParamsFromHw(base_hw));
  if (math.ok()) r.math_us = *math;
  r.algbw_gbps = AlgBwGBps(p.bytes, r.replay_us);
  r.busbw_gbps = BusBwGBps(p.op, r.group, p.bytes, r.replay_us);
  r.events = result->events;
  return r;
}

std::vector<size_t> PointsOfRank(const std::vector<PointSpec>& specs, int rank,
                                 int ranks) {
  // Estimated cost: the bytes every chip moves, with a floor for the fixed
  // per-instruction work of small points.
  constexpr uint64_t kFloorBytes = 64 << 10;
  std::vector<double> cost(specs.size());
  std::vector<size_t> order(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    cost[i] =
        static_cast<double>(std::max<uint64_t>(specs[i].bytes, kFloorBytes)) *
        std::max<uint32_t>(specs[i].n, 1);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  // Longest first, each to the rank with the least so far (the lowest on a
  // tie): every rank computes the same assignment.
  std::vector<double> load(std::max(ranks, 1), 0.0);
  std::vector<size_t> mine;
  for (size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end());
    *least += cost[i];
    if (least - load.begin() == rank) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

absl::StatusOr<std::vector<PointResult>> RunPoints(
    const HwConfig& hw, const std::vector<PointSpec>& specs, unsigned jobs,
    bool quiet, const char* unit, const ResourceBudget& budget) {
  // This process's share: every point of a single process, a balanced share
  // of an MPI job's (cli/spread.h).
  const Rank me = ThisRank();
  const std::vector<size_t> mine = PointsOfRank(specs, me.rank, me.size);
  std::vector<PointOutcome> outcomes(mine.size());
  Progress bar(mine.size(), quiet || me.rank != 0, unit);
  ThreadPool(jobs).ParallelFor(mine.size(), [&](size_t k) {
    outcomes[k].index = mine[k];
    outcomes[k].result = RunPoint(hw, specs[mine[k]], budget);
    bar.Done(outcomes[k].result.ok() ? outcomes[k].result->events : 0);
  });
  if (me.size > 1) {
    auto shares = GatherAtRoot(EncodeOutcomes(outcomes));
    if (!shares.ok()) return shares.status();
    if (me.rank != 0) return std::vector<PointResult>{};  // !ReportsResults()
    outcomes.clear();
    for (size_t r = 0; r < shares->size(); ++r) {
      auto share = DecodeOutcomes((*shares)[r]);
      if (!share.ok()) {
        return absl::InternalError(
            absl::StrCat("mpi: rank ", r, ": ", share.status().message()));
      }
      for (PointOutcome& o : *share) outcomes.push_back(std::move(o));
    }
  }
  // Each point's outcome by index; the first error in spec order wins, as
  // in a serial run.
  std::vector<absl::StatusOr<PointResult>*> by_index(specs.size(), nullptr);
  for (PointOutcome& o : outcomes) {
    if (o.index >= specs.size() || by_index[o.index] != nullptr) {
      return absl::InternalError(
          absl::StrCat("point ", o.index, " of ", specs.size(),
                       " came back twice or does not exist"));
    }
    by_index[o.index] = &o.result;
  }
  std::vector<PointResult> results(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    if (by_index[i] == nullptr) {
      return absl::InternalError(absl::StrCat("point ", i, " lost"));
    }
    if (!by_index[i]->ok()) return by_index[i]->status();
    results[i] = *std::move(*by_index[i]);
  }
  return results;
}

}  // namespace ccreplay
