// ccreplay compare: one collective and size over several algorithms and
// topologies, one row per combination, beside the Math baseline.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/table.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "collectives/collective.h"
#include "collectives/groups.h"
#include "collectives/lower.h"
#include "collectives/math.h"
#include "hw/budget.h"
#include "hw/topology.h"
#include "import/msccl_import.h"
#include "replay/engine.h"
#include "trace/decode.h"

namespace ccreplay {
namespace {

struct CompareArgs {
  std::string op = "allreduce";
  uint32_t n = 8;
  uint32_t group_size = 0;
  std::string bytes = "1M";
  std::string algos;
  std::string topologies = "ring";
  uint32_t cdma = 0;
  std::string chunk = "0";
};

std::vector<std::string> List(const std::string& s) {
  return absl::StrSplit(s, ',', absl::SkipEmpty());
}

// The files --algo msccl:PATH.xml reads: inputs an output must not replace.
std::vector<NamedPath> MscclInputs(const std::string& algos) {
  std::vector<NamedPath> out;
  for (const std::string& algo : List(algos)) {
    if (absl::StartsWith(algo, "msccl:")) {
      out.push_back({"--algo", algo.substr(6)});
    }
  }
  return out;
}

// --algo msccl:PATH.xml: the imported algorithm, which must be the op and N
// of the comparison (docs/import-msccl.md). Its row is named
// "msccl:<file name>".
absl::StatusOr<v1::Trace> ImportForCompare(
    const std::string& path, const CompareArgs& a, v1::CollectiveOp op,
    uint64_t bytes, const HwConfig& hw,
    const std::pair<TopologyKind, TopologyParams>& topo) {
  MscclImportOptions opt;
  opt.bytes = bytes;
  opt.engines_per_channel = a.cdma;
  opt.topology = topo;
  auto trace = ImportMscclFile(path, hw, opt);
  if (!trace.ok()) return trace.status();
  const v1::CollectiveInfo& c = trace->header().collective();
  if (c.op() != op || c.n() != a.n || a.group_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a ", CollectiveOpName(c.op()), " of ", c.n(),
        " ranks; the comparison is --op ", a.op, " --n ", a.n,
        a.group_size != 0 ? " with groups (not supported for msccl:)" : ""));
  }
  return trace;
}

// Replays one (topology, algorithm) cell of the comparison and adds its row.
absl::Status CompareOne(const HwConfig& hw, const CompareArgs& a,
                        v1::CollectiveOp op, uint64_t bytes, uint64_t chunk,
                        const std::pair<TopologyKind, TopologyParams>& topo,
                        const std::string& topo_text, const std::string& algo,
                        const MathParams& mp, Table* t) {
  CollectiveSpec spec;
  spec.op = op;
  spec.n = a.n;
  spec.group_size = a.group_size;
  spec.bytes = bytes;
  spec.algorithm = algo;
  spec.topology = topo.first;
  spec.cdma_engines = a.cdma;
  spec.chunk_bytes = chunk;
  const std::string where = absl::StrCat(algo, " on ", topo_text, ": ");
  const bool imported = absl::StartsWith(algo, "msccl:");
  auto trace = imported
                   ? ImportForCompare(algo.substr(6), a, op, bytes, hw, topo)
                   : LowerCollective(spec, hw);
  if (!trace.ok()) {
    return absl::Status(trace.status().code(),
                        absl::StrCat(where, trace.status().message()));
  }
  auto program = ValidateAndDecode(*trace, hw.Target());
  if (!program.ok()) return program.status();
  auto topology = Topology::Build(topo.first, a.n, topo.second);
  if (!topology.ok()) {
    return absl::Status(topology.status().code(),
                        absl::StrCat(where, topology.status().message()));
  }
  if (auto s = CheckReplayBudget(*program, hw, *topology, {}); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(where, s.message()));
  }
  ReplayOptions options;
  options.max_events = kDefaultMaxEvents;
  auto result = Replay(*program, hw, *topology, options);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat(where, result.status().message()));
  }
  const uint32_t g = spec.GroupSize();
  const std::vector<TimePs> groups = GroupTimes(result->chip_finish, g);
  TimePs fastest = groups.empty() ? TimePs() : groups[0];
  for (TimePs x : groups) fastest = std::min(fastest, x);
  const double us = result->makespan.us();
  auto math = MathTimeUs(op, g, bytes, topo.first, mp);
  const double math_us = math.ok() ? *math : 0.0;
  const std::string label =
      imported ? absl::StrCat("msccl:", trace->header().source().file()) : algo;
  return t->AddRow({label, TopologySpecString(topo.first, topo.second), g,
                    static_cast<uint64_t>(groups.size()), bytes, us,
                    fastest.us(), math_us, math_us > 0 ? us / math_us : 0.0,
                    AlgBwGBps(bytes, us), BusBwGBps(op, g, bytes, us)});
}

absl::StatusOr<Table> Compare(const HwConfig& base_hw, const CompareArgs& a) {
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
  const MathParams mp = MathParamsFromHw(base_hw);
  for (const std::string& topo_text : topos) {
    auto topo = ParseTopologySpec(topo_text, base_hw.topology_params);
    if (!topo.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--topology '", topo_text, "': ", topo.status().message()));
    }
    HwConfig hw = base_hw;
    hw.topology = topo->first;
    hw.topology_params = topo->second;
    for (const std::string& algo : algos) {
      if (auto s = CompareOne(hw, a, *op, *bytes, *chunk, *topo, topo_text,
                              algo, mp, &t);
          !s.ok()) {
        return s;
      }
    }
  }
  return t;
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
                  "broadcast, reduce, p2p")
      ->capture_default_str();
  AddUnsignedOption(cmd, "--n", a.n, "number of chips (the system)")
      ->capture_default_str();
  AddUnsignedOption(cmd, "--group-size", a.group_size,
                    "chips per communicator group (0 = one group of n)")
      ->capture_default_str();
  cmd->add_option("--bytes", a.bytes, "M; binary units: 1M = 1048576")
      ->capture_default_str();
  cmd->add_option("--algo", a.algos,
                  "comma-separated: ring, ring_2port, rh, rd, hd, pairwise, "
                  "bruck, direct, msccl:PATH.xml (an imported MSCCL-IR "
                  "algorithm; default: the baseline's)");
  cmd->add_option("--topology", a.topologies,
                  "comma-separated topology specs, e.g. ring,fullmesh,"
                  "torus2d:4x2")
      ->capture_default_str();
  AddUnsignedOption(cmd, "--cdma", a.cdma,
                    "CDMA engines to stripe over (0 = all; msccl: engines "
                    "per channel)")
      ->capture_default_str();
  cmd->add_option("--chunk", a.chunk,
                  "pipelining piece size (0 = whole blocks)")
      ->capture_default_str();
  cmd->callback([args, exit_code] {
    const CommonFlags& c = args->common;
    const std::vector<NamedPath> xml = MscclInputs(args->compare.algos);
    if (auto s = c.CheckCsvJson(xml); !s.ok()) {
      *exit_code = Fail(s);
      return;
    }
    auto hw = c.Hw();
    if (!hw.ok()) {
      *exit_code = Fail(hw.status());
      return;
    }
    auto table = Compare(*hw, args->compare);
    if (!table.ok()) {
      *exit_code = Fail(table.status());
      return;
    }
    if (auto s = c.WriteCsvJson(table->ToCsv(), table->ToJson(), xml);
        !s.ok()) {
      *exit_code = Fail(s);
      return;
    }
    std::cout << "# " << args->compare.op << ", " << args->compare.bytes
              << " bytes on " << hw->name << "\n"
              << table->ToText();
    *exit_code = kExitOk;
  });
}

}  // namespace ccreplay
