// ccreplay sweep: nccl-tests' size sweep (-b/-e/-f or -i) over several ops,
// algorithms, topologies and system sizes, each point replayed beside Math
// (cli/point.h), printed as nccl-tests prints its table, with one CSV and
// one JSON (keyed as nccl-tests' -J output) for the whole sweep. Points run
// on a thread pool (-j); the output does not depend on -j.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/json.h"
#include "base/table.h"
#include "cli/commands.h"
#include "cli/plots.h"
#include "cli/point.h"
#include "cli/run.h"
#include "cli/spread.h"
#include "cli/sweep.h"
#include "collectives/collective.h"
#include "collectives/lower.h"

namespace ccreplay {
namespace {

struct SweepArgs {
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  std::string step_bytes = "1M";
  uint64_t step_factor = 1;
  std::string datatype = "float";
  std::vector<std::string> ops = {"allreduce"};
  std::vector<std::string> algos;  // empty: each op's baseline algorithm
  // Empty: the hardware config's topology (DefaultTopology) and chip count
  // (DefaultChips).
  std::vector<std::string> topologies;
  std::vector<uint32_t> ns;
  uint32_t cdma = 0;
  EngineFlags engine;
  unsigned jobs = 0;
  BudgetFlags budget;
  bool quiet = false;
  std::string svg_path;
};

// The element types of nccl-tests' -d and their sizes.
const std::map<std::string, uint32_t>& DataTypes() {
  static const auto* const types = new std::map<std::string, uint32_t>{
      {"int8", 1},  {"uint8", 1}, {"half", 2},   {"bfloat16", 2},
      {"float", 4}, {"int32", 4}, {"uint32", 4}, {"double", 8},
      {"int64", 8}, {"uint64", 8}};
  return *types;
}

// Ops whose buffer nccl-tests splits into N equal parts: their count is
// rounded down to a multiple of N (as nccl-tests does).
bool SplitsByRank(v1::CollectiveOp op) {
  return op == v1::ALLGATHER || op == v1::REDUCESCATTER || op == v1::ALLTOALL ||
         op == v1::ALLTOALLV;
}
absl::StatusOr<std::vector<SweepPoint>> Points(
    const SweepArgs& a, const std::vector<uint64_t>& sizes) {
  const uint32_t type_bytes = DataTypes().at(a.datatype);
  std::vector<SweepPoint> points;
  for (const std::string& op_name : a.ops) {
    auto op = ParseCollectiveOp(op_name);
    if (!op.ok()) return op.status();
    std::vector<std::string> algos = a.algos;
    if (algos.empty())
      algos = {*op == v1::P2P ? "direct" : BaselineAlgorithm(*op)};
    for (const std::string& topo : a.topologies) {
      for (const std::string& algo : algos) {
        // With several ops, an algorithm applies to the ops that have it.
        const bool msccl = absl::StartsWith(algo, "msccl:");
        if (!msccl && a.ops.size() > 1 && !HasLowering(*op, algo)) continue;
        for (uint32_t n : a.ns) {
          for (uint64_t size : sizes) {
            uint64_t count = size / type_bytes;
            if (SplitsByRank(*op)) count = count / n * n;
            if (count == 0) continue;  // under one element per rank
            SweepPoint p;
            p.spec.op = *op;
            p.spec.n = n;
            p.spec.bytes = count * type_bytes;
            p.spec.cdma = a.cdma;
            p.spec.algorithm = algo;
            p.spec.topology_text = topo;
            p.spec.fluid = a.engine.fluid();
            p.spec.fluid_packets = a.engine.FluidPackets();
            p.count = count;
            points.push_back(std::move(p));
          }
        }
      }
    }
  }
  if (points.empty()) {
    return absl::InvalidArgumentError(
        "sweep: no point: every size is under one element per rank, or no "
        "--algo has a lowering for any --op");
  }
  return points;
}

// Runs every point on `jobs` threads (RunPoints).
absl::Status RunSweepPoints(const HwConfig& hw, const SweepArgs& a,
                            std::vector<SweepPoint>* points) {
  std::vector<PointSpec> specs;
  specs.reserve(points->size());
  for (const SweepPoint& p : *points) specs.push_back(p.spec);
  auto budget = a.budget.Budget();
  if (!budget.ok()) return budget.status();
  auto results = RunPoints(hw, specs, a.jobs, a.quiet, "points", *budget);
  if (!results.ok()) return results.status();
  if (!ReportsResults()) return absl::OkStatus();  // an MPI rank other than 0
  for (size_t i = 0; i < points->size(); ++i) {
    (*points)[i].result = std::move((*results)[i]);
  }
  return absl::OkStatus();
}

// The sweep's sizes: min, then times the factor (f > 1) or plus the step,
// up to max.
absl::StatusOr<std::vector<uint64_t>> Sizes(const SweepArgs& a) {
  auto lo = ParseByteSize(a.min_bytes);
  if (!lo.ok()) return lo.status();
  auto hi = ParseByteSize(a.max_bytes);
  if (!hi.ok()) return hi.status();
  auto step = ParseByteSize(a.step_bytes);
  if (!step.ok()) return step.status();
  if (*lo == 0 || *hi < *lo) {
    return absl::InvalidArgumentError(
        absl::StrCat("sweep: -b ", a.min_bytes, " -e ", a.max_bytes,
                     ": need 0 < minimum <= maximum"));
  }
  if (a.step_factor <= 1 && *step == 0) {
    return absl::InvalidArgumentError("sweep: -i 0 without -f > 1");
  }
  std::vector<uint64_t> sizes;
  for (uint64_t s = *lo; s <= *hi;) {
    sizes.push_back(s);
    const uint64_t next = a.step_factor > 1 ? s * a.step_factor : s + *step;
    if (next <= s || (a.step_factor > 1 && next / a.step_factor != s)) break;
    s = next;
  }
  return sizes;
}

// What sweep writes, the contents filled in after the run.
std::vector<OutputFile> Outputs(const CommonFlags& c, const SweepArgs& a) {
  return {{"--csv", c.csv_path, ""},
          {"--json", c.json_path, ""},
          {"--svg", a.svg_path, ""}};
}

int RunSweep(const CommonFlags& c, SweepArgs a) {
  const std::vector<NamedPath> xml = MscclInputs(a.algos);
  if (auto s = CheckOutputs(c.Inputs(xml), Outputs(c, a)); !s.ok()) {
    return Fail(s);
  }
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  if (a.ns.empty()) a.ns = {DefaultChips(*hw, "sweep")};
  if (a.topologies.empty()) a.topologies = {DefaultTopology(*hw)};
  auto sizes = Sizes(a);
  if (!sizes.ok()) return Fail(sizes.status());
  auto points = Points(a, *sizes);
  if (!points.ok()) return Fail(points.status());
  if (auto s = RunSweepPoints(*hw, a, &*points); !s.ok()) {
    return Fail(s);
  }
  if (!ReportsResults()) return kExitOk;  // rank 0 writes (cli/spread.h)
  SweepReport report;
  report.hw = hw->name;
  if (a.engine.fluid()) report.fluid_packets = a.engine.FluidPackets();
  report.datatype = a.datatype;
  report.min_bytes = sizes->front();
  report.max_bytes = sizes->back();
  report.step_factor = a.step_factor > 1 ? a.step_factor : 0;
  report.step_bytes = a.step_factor > 1 ? 0 : *ParseByteSize(a.step_bytes);
  report.points = *std::move(points);
  auto table = SweepTable(report);
  if (!table.ok()) return Fail(table.status());
  std::vector<OutputFile> outputs = Outputs(c, a);
  outputs[0].contents = table->ToCsv();
  outputs[1].contents = JsonText(SweepJson(report));
  if (!a.svg_path.empty()) {
    auto svg = SweepSvg(report);
    if (!svg.ok()) return Fail(svg.status());
    outputs[2].contents = *std::move(svg);
  }
  if (auto s = WriteOutputs(c.Inputs(xml), outputs); !s.ok()) return Fail(s);
  std::cout << SweepText(report);
  return kExitOk;
}

void AddSweepFlags(CLI::App* cmd, SweepArgs& a) {
  cmd->add_option("-b,--minbytes", a.min_bytes,
                  "smallest size (binary units: 1K = 1024, 1M, 1MB, 1.5M)")
      ->capture_default_str();
  cmd->add_option("-e,--maxbytes", a.max_bytes, "largest size")
      ->capture_default_str();
  cmd->add_option("-i,--stepbytes", a.step_bytes,
                  "size increment when -f is not > 1")
      ->capture_default_str();
  AddUnsignedOption(cmd, "-f,--stepfactor", a.step_factor,
                    "size multiplication factor (> 1 wins over -i)")
      ->capture_default_str();
  std::vector<std::string> type_names;
  for (const auto& [name, size] : DataTypes()) type_names.push_back(name);
  cmd->add_option("-d,--datatype", a.datatype,
                  "element type, for the count column")
      ->check(CLI::IsMember(type_names, CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--op", a.ops, "comma-separated collectives (any case)")
      ->delimiter(',')
      ->transform(CollectiveOpValidator())
      ->capture_default_str();
  cmd->add_option("--algo", a.algos,
                  "comma-separated algorithms (default: each op's baseline); "
                  "with several --op, each algorithm runs for the ops it "
                  "supports")
      ->delimiter(',')
      ->transform(AlgorithmListValidator());
  cmd->add_option("--topology", a.topologies,
                  "comma-separated topologies (default: the hardware "
                  "config's)")
      ->delimiter(',');
  cmd->add_option("--n", a.ns,
                  "comma-separated chip counts (default: the hardware "
                  "config's topology.num_chips, else 8)")
      ->delimiter(',')
      ->check(CLI::Range(2u, 65536u));
  AddUnsignedOption(cmd, "--cdma", a.cdma,
                    "CDMA engines to stripe over (0 = all)")
      ->capture_default_str();
  a.engine.Add(cmd);
  AddJobsOption(cmd, a.jobs, "points");
  a.budget.Add(cmd);
  cmd->add_flag("-q,--quiet", a.quiet, "no progress bar on standard error");
  AddOutputOption(cmd, "--svg", a.svg_path,
                  "also write busbw and time vs size plots, Math beside "
                  "each replay curve (SVG)");
}

}  // namespace

void AddSweepCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    SweepArgs sweep;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "nccl-tests style size sweep over ops, algorithms, topologies and N, "
      "beside Math");
  args->common.AddHw(cmd);
  args->common.AddCsvJson(cmd);
  AddSweepFlags(cmd, args->sweep);
  cmd->callback([args, exit_code] {
    if (auto s = args->sweep.engine.Check(); !s.ok()) {
      *exit_code = FailUsage(s);
      return;
    }
    args->sweep.datatype = absl::AsciiStrToLower(args->sweep.datatype);
    *exit_code = RunSweep(args->common, args->sweep);
  });
}

}  // namespace ccreplay
