// ccreplay compare: one collective and size over several algorithms and
// topologies, one row per combination, beside the Math baseline.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/json.h"
#include "base/table.h"
#include "cli/commands.h"
#include "cli/point.h"
#include "cli/run.h"
#include "cli/spread.h"
#include "collectives/collective.h"
#include "replay/fluid_engine.h"

namespace ccreplay {
namespace {

struct CompareArgs {
  std::string op = "allreduce";
  uint32_t n = kDefaultChips;
  bool n_given = false;  // else the config's or kDefaultChips (DefaultChips)
  uint32_t group_size = 0;
  std::string bytes = "1M";
  std::string algos;
  std::string topologies;  // empty: the hardware config's (DefaultTopology)
  uint32_t cdma = 0;
  std::string chunk = "0";
  bool quiet = false;
  unsigned jobs = 0;
  BudgetFlags budget;
  EngineFlags engine;
};

std::vector<std::string> List(const std::string& s) {
  return absl::StrSplit(s, ',', absl::SkipEmpty());
}

// The JSON: what was compared (op, N, bytes, hardware) and each row with
// its critical path by mechanism (us); with the fluid engine, which has no
// breakdown, the engine and its packet limit instead.
std::string CompareJson(const CompareArgs& a, const HwConfig& hw,
                        const Table& t,
                        const std::vector<PointResult>& points) {
  Json rows = t.ToJsonValue();
  for (size_t i = 0; i < points.size() && !a.engine.fluid(); ++i) {
    rows[i]["breakdown"] = BreakdownJson(points[i].breakdown);
  }
  Json j = {{"op", a.op},
            {"n", a.n},
            {"group_size", a.group_size == 0 ? a.n : a.group_size},
            {"bytes", points.empty() ? 0 : points[0].bytes},
            {"hw", hw.name},
            {"rows", rows}};
  if (a.engine.fluid()) {
    j["engine"] = "fluid";
    j["fluid_packets"] = a.engine.FluidPackets();
  }
  return JsonText(j);
}

absl::StatusOr<Table> Compare(const HwConfig& base_hw, const CompareArgs& a,
                              std::vector<PointResult>* points) {
  auto op = ParseCollectiveOp(a.op);
  if (!op.ok()) return op.status();
  auto bytes = ParseByteSize(a.bytes);
  if (!bytes.ok()) return bytes.status();
  auto chunk = ParseByteSize(a.chunk);
  if (!chunk.ok()) return chunk.status();
  std::vector<std::string> algos =
      a.algos.empty() ? std::vector<std::string>{BaselineAlgorithm(*op)}
                      : List(a.algos);
  const std::vector<std::string> topos = List(a.topologies);
  if (algos.empty() || topos.empty()) {
    return absl::InvalidArgumentError(
        "compare: --algo and --topology need a value");
  }
  Table t({Table::Column::String("algorithm"),
           Table::Column::String("topology"), Table::Column::Integer("N"),
           Table::Column::Integer("groups"), Table::Column::Integer("bytes"),
           Table::Column::Double("replay_us", 4),
           Table::Column::Double("fastest_group_us", 4),
           Table::Column::Double("math_us", 4),
           Table::Column::Double("replay/math", 3),
           Table::Column::Double("algbw_GBps", 2),
           Table::Column::Double("busbw_GBps", 2)});
  PointSpec p;
  p.op = *op;
  p.n = a.n;
  p.group_size = a.group_size;
  p.bytes = *bytes;
  p.chunk = *chunk;
  p.cdma = a.cdma;
  p.fluid = a.engine.fluid();
  p.fluid_packets = a.engine.FluidPackets();
  std::vector<PointSpec> cells;  // topology-major, as the table lists them
  for (const std::string& topo_text : topos) {
    p.topology_text = topo_text;
    for (const std::string& algo : algos) {
      p.algorithm = algo;
      cells.push_back(p);
    }
  }
  auto budget = a.budget.Budget();
  if (!budget.ok()) return budget.status();
  auto results = RunPoints(base_hw, cells, a.jobs, a.quiet, "cells", *budget);
  if (!results.ok()) return results.status();
  for (const PointResult& r : *results) {
    auto s = t.AddRow({r.label, r.topology, r.group, r.groups, r.bytes,
                       r.replay_us, r.fastest_group_us, OrNan(r.math_us),
                       OrNan(r.ReplayOverMath()), r.algbw_gbps, r.busbw_gbps});
    if (!s.ok()) return s;
  }
  *points = *std::move(results);
  return t;
}

// The command after parsing: outputs checked first, every cell replayed,
// then (on rank 0 only, cli/spread.h) the table printed and written.
int RunCompare(const CommonFlags& c, CompareArgs a) {
  const std::vector<NamedPath> xml = MscclInputs(List(a.algos));
  if (auto s = c.CheckCsvJson(xml); !s.ok()) return Fail(s);
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  if (!a.n_given) a.n = DefaultChips(*hw, "compare");
  if (a.topologies.empty()) a.topologies = DefaultTopology(*hw);
  std::vector<PointResult> points;
  auto table = Compare(*hw, a, &points);
  if (!table.ok()) return Fail(table.status());
  if (!ReportsResults()) return kExitOk;
  if (auto s = c.WriteCsvJson(table->ToCsv(),
                              CompareJson(a, *hw, *table, points), xml);
      !s.ok()) {
    return Fail(s);
  }
  std::cout << "# " << a.op << ", " << a.bytes << " bytes on " << hw->name
            << (a.engine.fluid()
                    ? ", " + FluidEngineName(a.engine.FluidPackets())
                    : "")
            << "\n"
            << table->ToText();
  return kExitOk;
}

}  // namespace

void AddCompareCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    CompareArgs compare;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "one collective over several algorithms and topologies, beside Math");
  args->common.AddHw(cmd);
  args->common.AddCsvJson(cmd);
  CompareArgs& a = args->compare;
  cmd->add_option("--op", a.op,
                  "allreduce, allgather, reducescatter, alltoall, alltoallv, "
                  "broadcast, reduce, p2p (any case)")
      ->transform(CollectiveOpValidator())
      ->capture_default_str();
  CLI::Option* n = AddUnsignedOption(
      cmd, "--n", a.n,
      "number of chips (the system; default: the hardware config's "
      "topology.num_chips, else 8)");
  AddUnsignedOption(cmd, "--group-size", a.group_size,
                    "chips per communicator group (0 = one group of n)")
      ->capture_default_str();
  cmd->add_option("--bytes", a.bytes, "M; binary units: 1M = 1048576")
      ->capture_default_str();
  cmd->add_option("--algo", a.algos,
                  "comma-separated: ring, ring_2port, rh, rd, hd, pairwise, "
                  "bruck, direct, msccl:PATH.xml (an imported MSCCL-IR "
                  "algorithm; default: the baseline's)")
      ->transform(AlgorithmListValidator());
  cmd->add_option("--topology", a.topologies,
                  "comma-separated topology specs, e.g. ring,fullmesh,"
                  "torus2d:4x2 (default: the hardware config's)");
  AddUnsignedOption(cmd, "--cdma", a.cdma,
                    "CDMA engines to stripe over (0 = all; msccl: engines "
                    "per channel)")
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", a.quiet,
                "no progress bar on standard error (shown only on a terminal)");
  AddJobsOption(cmd, a.jobs, "cells");
  a.budget.Add(cmd);
  a.engine.Add(cmd);
  cmd->add_option("--chunk", a.chunk,
                  "pipelining piece size (0 = whole blocks)")
      ->capture_default_str();
  cmd->callback([args, exit_code, n] {
    args->compare.n_given = n->count() > 0;
    if (auto s = args->compare.engine.Check(); !s.ok()) {
      *exit_code = FailUsage(s);
      return;
    }
    *exit_code = RunCompare(args->common, args->compare);
  });
}

}  // namespace ccreplay
