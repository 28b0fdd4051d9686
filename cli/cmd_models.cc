// ccreplay models: every analytic model of the ladder (docs/models.md) beside
// the replay and Math for one collective, with signed errors; --sweep for the
// accuracy table over a grid; --advise for seed 004's decision tree.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/table.h"
#include "base/thread_pool.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "collectives/collective.h"
#include "models/ladder.h"
#include "models/loggp.h"
#include "models/net_params.h"
#include "models/steps.h"

namespace ccreplay {
namespace {

struct ModelsArgs {
  std::string op = "allreduce";
  std::string algo;
  std::string n;  // empty: ResolveDefaults
  std::string bytes = "1M";
  std::string topology;  // empty: ResolveDefaults
  std::string params;  // --params: a calibration file
  bool no_calibration = false;
  bool sweep = false;
  bool advise = false;
  bool worst_case = false;
  std::string sweep_ops =
      "allreduce:ring,allreduce:hd,allgather:ring,"
      "alltoall:pairwise";
  std::string sweep_sizes = "4K,64K,1M";
  unsigned jobs = 0;  // sweep points evaluated at once (0: every core)
  BudgetFlags budget;
};

std::vector<std::string> List(const std::string& s) {
  return absl::StrSplit(s, ',', absl::SkipEmpty());
}

// One evaluated point: the replay and every model on one collective.
struct Point {
  std::string op_name, algo, topology;
  uint32_t n = 0;
  uint64_t bytes = 0;
  double replay_us = 0;
  std::vector<ModelPrediction> models;
  double max_flow_bytes = 0;  // largest flow of any step (advise)
  double worst_factor = 1;    // LoGPC's worst F/C (advise)
};

double SignedErrorPct(double model_us, double replay_us) {
  return (model_us - replay_us) / replay_us * 100;
}

// Calibrations per (topology spec, n), computed once per run (a failed one
// fails every point that needs it, with the same error). For() may be
// called from several threads (a sweep's points): different calibrations
// are computed at once, and a thread that needs one being computed waits.
class Calibrations {
 public:
  Calibrations(const HwConfig& hw, const ModelsArgs& a,
               const ResourceBudget& budget)
      : hw_(hw), a_(a), budget_(budget) {}

  // Null when calibration is switched off.
  absl::StatusOr<const PlogpTable*> For(TopologyKind kind,
                                        const TopologyParams& params,
                                        uint32_t n) {
    if (a_.no_calibration) return nullptr;
    // --params: one table for every point, read once.
    const std::string key =
        a_.params.empty()
            ? absl::StrCat(TopologySpecString(kind, params), "/", n)
            : std::string();
    Entry* e;
    {
      const std::lock_guard<std::mutex> lock(mu_);
      std::unique_ptr<Entry>& slot = cache_[key];
      if (!slot) slot = std::make_unique<Entry>();
      e = slot.get();
    }
    std::call_once(e->once, [&] {
      e->table = a_.params.empty() ? Calibrate(kind, params, n) : ReadParams();
    });
    if (!e->table.ok()) return e->table.status();
    return &*e->table;
  }

 private:
  const HwConfig& hw_;
  const ModelsArgs& a_;
  const ResourceBudget budget_;
  struct Entry {
    std::once_flag once;
    absl::StatusOr<PlogpTable> table = absl::UnknownError("not computed");
  };
  absl::StatusOr<PlogpTable> ReadParams() const {
    auto cal = ReadCalibrationFile(a_.params);
    if (!cal.ok()) return cal.status();
    return PlogpTableFromCalibration(*cal, a_.params, hw_);
  }
  absl::StatusOr<PlogpTable> Calibrate(TopologyKind kind,
                                       const TopologyParams& params,
                                       uint32_t n) const {
    CalibrationSetup setup{kind, params, n, DefaultCalibrationSizes(),
                           4,    budget_};
    auto cal = CalibrateOnReplay(hw_, setup);
    if (!cal.ok()) return cal.status();
    return PlogpTableFromCalibration(*cal, "calibration", hw_);
  }

  std::mutex mu_;  // guards cache_ (not the entries, each computed once)
  std::map<std::string, std::unique_ptr<Entry>> cache_;  // by (spec, n)
};

absl::StatusOr<Point> Evaluate(const HwConfig& base_hw, Calibrations& cals,
                               const std::string& op_name, std::string algo,
                               uint32_t n, uint64_t bytes,
                               const std::string& topo_text,
                               const ResourceBudget& budget) {
  auto op = ParseCollectiveOp(op_name);
  if (!op.ok()) return op.status();
  if (algo.empty()) algo = BaselineAlgorithm(*op);
  auto topo = ParseTopologySpec(topo_text, base_hw.topology_params);
  if (!topo.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--topology '", topo_text, "': ", topo.status().message()));
  }
  HwConfig hw = base_hw;
  hw.topology = topo->first;
  hw.topology_params = topo->second;
  CollectiveSpec spec;
  spec.op = *op;
  spec.n = n;
  spec.bytes = bytes;
  spec.algorithm = algo;
  spec.topology = topo->first;
  const std::string where = absl::StrCat(op_name, " ", algo, " N=", n, " ",
                                         bytes, " bytes on ", topo_text, ": ");
  auto run = LowerAndReplay(spec, hw, ReplayOptions{}, budget);
  if (!run.ok()) {
    return absl::Status(run.status().code(),
                        absl::StrCat(where, run.status().message()));
  }
  auto view = BuildStepView(run->program, *run->topology);
  if (!view.ok()) return view.status();
  auto cal = cals.For(topo->first, topo->second, n);
  if (!cal.ok()) return cal.status();
  Point p;
  p.op_name = op_name;
  p.algo = algo;
  p.topology = TopologySpecString(topo->first, topo->second);
  p.n = n;
  p.bytes = bytes;
  p.replay_us = run->result.makespan.us();
  LadderInput in;
  in.op = *op;
  in.group = n;
  in.bytes = bytes;
  in.view = &*view;
  in.topology = &*run->topology;
  in.hw = &hw;
  in.calibration = *cal;
  p.models = PredictLadder(in);
  for (const Step& s : view->steps) {
    for (const Flow& f : s.flows) {
      p.max_flow_bytes = std::max(p.max_flow_bytes, double(f.bytes));
    }
  }
  p.worst_factor = LoGpcWorstFactor(*view, *run->topology);
  return p;
}

absl::StatusOr<Table> PointTable(const Point& p) {
  Table t({Table::Column::String("model"), Table::Column::Double("time_us", 4),
           Table::Column::Double("error_%", 2), Table::Column::String("note")});
  auto s = t.AddRow({"replay", p.replay_us, 0.0, "instruction-level"});
  if (!s.ok()) return s;
  for (const ModelPrediction& m : p.models) {
    if (!m.valid) {
      s = t.AddRow({m.model, 0.0, 0.0, absl::StrCat("n/a: ", m.note)});
    } else {
      s = t.AddRow({m.model, m.us, SignedErrorPct(m.us, p.replay_us), m.note});
    }
    if (!s.ok()) return s;
  }
  return t;
}

// Short column names of the sweep table, one per LadderModelNames() entry.
std::string ShortName(const std::string& model) {
  static const std::map<std::string, std::string> kShort = {
      {"alpha-beta", "ab"},       {"alpha(n)-beta(n)", "abn"},
      {"LogGP", "loggp"},         {"PLogP", "plogp"},
      {"LoGPC", "logpc"},         {"fluid max-min", "fluid"},
      {"network calculus", "nc"}, {"M/D/1", "md1"}};
  return kShort.at(model);
}

absl::StatusOr<Table> SweepTable(const std::vector<Point>& points) {
  std::vector<Table::Column> cols = {
      Table::Column::String("op"),       Table::Column::String("algo"),
      Table::Column::String("topology"), Table::Column::Integer("N"),
      Table::Column::Integer("size"),    Table::Column::Double("replay_us", 3)};
  for (const std::string& m : LadderModelNames()) {
    cols.push_back(Table::Column::Double(ShortName(m) + "_us", 3));
  }
  Table t(cols);
  for (const Point& p : points) {
    std::vector<Table::Cell> row = {p.op_name, p.algo,  p.topology,
                                    p.n,       p.bytes, p.replay_us};
    for (const ModelPrediction& m : p.models) {
      row.push_back(m.valid ? m.us : 0.0);  // 0 = outside its validity
    }
    if (auto s = t.AddRow(row); !s.ok()) return s;
  }
  return t;
}

// Per model: mean and worst |error| over the points where it is valid; for
// the bound, how often it held (bound >= replay).
absl::StatusOr<Table> SummaryTable(const std::vector<Point>& points) {
  Table t({Table::Column::String("model"), Table::Column::Integer("points"),
           Table::Column::Double("mean_abs_err_%", 1),
           Table::Column::Double("worst_err_%", 1),
           Table::Column::String("worst_at"),
           Table::Column::String("bound_held")});
  const std::vector<std::string> names = LadderModelNames();
  for (size_t i = 0; i < names.size(); ++i) {
    uint64_t count = 0, held = 0;
    double sum = 0, worst = 0;
    std::string worst_at;
    bool bound = false;
    for (const Point& p : points) {
      const ModelPrediction& m = p.models[i];
      if (!m.valid) continue;
      bound = m.bound;
      const double e = SignedErrorPct(m.us, p.replay_us);
      ++count;
      sum += std::fabs(e);
      held += m.us >= p.replay_us ? 1 : 0;
      if (std::fabs(e) >= std::fabs(worst)) {
        worst = e;
        worst_at = absl::StrCat(p.op_name, " ", p.algo, " ", p.topology,
                                " N=", p.n, " ", p.bytes);
      }
    }
    auto s = t.AddRow({names[i], count, count ? sum / count : 0.0, worst,
                       worst_at, bound ? absl::StrCat(held, "/", count) : "-"});
    if (!s.ok()) return s;
  }
  return t;
}

// Seed 004's model-selection tree (docs/models.md, "Advice") walked for `p`:
// the path taken, in words, and the models it recommends.
struct Advice {
  std::vector<std::string> path;
  std::vector<std::string> models;
};

Advice WalkTree(const Point& p, const PlogpTable* cal, const NetParams& net,
                bool worst_case) {
  Advice a;
  if (worst_case) {
    a.path.push_back("a worst-case guarantee is needed");
    a.models = {"network calculus"};
    return a;
  }
  if (cal == nullptr) {
    a.path.push_back("no measured data; a datasheet (the hw config)");
    a.path.push_back("alpha from its physical parts, beta from the link rate");
    a.models = {"alpha-beta"};
    return a;
  }
  // The knee m*: where the bandwidth term of the largest sizes equals the
  // latency of the smallest message.
  const double alpha0 = cal->points().front().OneWayUs();
  const double beta = AlphaBetaPieces(*cal).back().beta_bps;
  const double knee = alpha0 * beta / 1e6;
  const double m = p.max_flow_bytes;
  a.path.push_back(absl::StrFormat(
      "measured data: yes (calibrated, %d sizes); knee m* = alpha0 * beta = "
      "%.0f bytes, largest message %.0f bytes",
      static_cast<int>(cal->points().size()), knee, m));
  if (m >= knee / 4 && m <= knee * 4) {
    a.path.push_back(
        "message within 4x of the knee: crosses the "
        "latency/bandwidth switch");
    a.models = {"PLogP", "alpha(n)-beta(n)"};
    return a;
  }
  if (m > knee * 4) {
    a.path.push_back("mostly large messages");
    if (p.worst_factor > 1) {
      a.path.push_back(absl::StrFormat("flows share links (worst F/C = %.0f)",
                                       p.worst_factor));
      a.models = {"LoGPC", "fluid max-min"};
    } else {
      a.path.push_back("no link is shared (F/C = 1)");
      a.models = {"LogGP", "alpha-beta"};
    }
    return a;
  }
  a.path.push_back("small messages");
  const LogGpParams lp = LogGpParamsFromNet(net);
  if (lp.o_us >= std::max(lp.g_us, m * lp.G_us_per_byte)) {
    a.path.push_back("overhead o dominates g and m G: CPU-bound");
    a.models = {"LogGP"};  // the tree says LogP; LogGP is LogP plus G
  } else {
    a.path.push_back("overhead o does not dominate");
    a.models = {"alpha-beta"};
  }
  return a;
}

std::string AdviceText(const Point& p, const Advice& a) {
  std::string out = "# decision tree (seed 004):\n";
  for (const std::string& step : a.path)
    absl::StrAppend(&out, "#   ", step, "\n");
  absl::StrAppend(&out, "# recommends: ", absl::StrJoin(a.models, " or "),
                  "\n");
  const ModelPrediction* best = nullptr;
  for (const ModelPrediction& m : p.models) {
    if (!m.valid || m.bound) continue;
    if (best == nullptr ||
        std::fabs(m.us - p.replay_us) < std::fabs(best->us - p.replay_us)) {
      best = &m;
    }
  }
  if (best == nullptr) return out;
  absl::StrAppendFormat(&out, "# measured best: %s (%+.2f%%)\n", best->model,
                        SignedErrorPct(best->us, p.replay_us));
  if (std::find(a.models.begin(), a.models.end(), best->model) ==
      a.models.end()) {
    absl::StrAppend(&out,
                    "# finding: the tree's choice is not the model that "
                    "measured best on this workload\n");
  } else {
    absl::StrAppend(&out, "# the tree and the measurement agree\n");
  }
  return out;
}

absl::StatusOr<std::vector<uint64_t>> Sizes(const std::string& text) {
  std::vector<uint64_t> out;
  for (const std::string& s : List(text)) {
    auto b = ParseByteSize(s);
    if (!b.ok()) return b.status();
    out.push_back(*b);
  }
  return out;
}

absl::StatusOr<std::vector<uint32_t>> Counts(const std::string& text) {
  std::vector<uint32_t> out;
  for (const std::string& s : List(text)) {
    uint32_t v = 0;
    if (!absl::SimpleAtoi(s, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--n: '", s, "' is not a chip count"));
    }
    out.push_back(v);
  }
  return out;
}

// The sweep's points, op-major as the grid is written, evaluated on
// `a.jobs` threads; the first error in grid order is the sweep's, as in a
// serial run.
absl::StatusOr<std::vector<Point>> Sweep(const HwConfig& hw, Calibrations& cals,
                                         const ModelsArgs& a,
                                         const ResourceBudget& budget) {
  auto sizes = Sizes(a.sweep_sizes);
  if (!sizes.ok()) return sizes.status();
  auto ns = Counts(a.n);
  if (!ns.ok()) return ns.status();
  struct Spec {
    std::string op, algo, topology;
    uint32_t n;
    uint64_t bytes;
  };
  std::vector<Spec> specs;
  for (const std::string& op_algo : List(a.sweep_ops)) {
    std::vector<std::string> parts = absl::StrSplit(op_algo, ':');
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--ops: '", op_algo, "' is not op:algorithm (allreduce:ring)"));
    }
    for (const std::string& topo : List(a.topology)) {
      for (uint32_t n : *ns) {
        for (uint64_t b : *sizes) {
          specs.push_back({parts[0], parts[1], topo, n, b});
        }
      }
    }
  }
  std::vector<absl::StatusOr<Point>> evaluated(
      specs.size(), absl::UnknownError("not evaluated"));
  ThreadPool(a.jobs).ParallelFor(specs.size(), [&](size_t i) {
    const Spec& p = specs[i];
    evaluated[i] =
        Evaluate(hw, cals, p.op, p.algo, p.n, p.bytes, p.topology, budget);
  });
  std::vector<Point> points;
  for (absl::StatusOr<Point>& p : evaluated) {
    if (!p.ok()) return p.status();
    points.push_back(*std::move(p));
  }
  return points;
}

// --n and --topology when not given: without --sweep the hardware config's
// (DefaultChips, DefaultTopology); the sweep's default grid (docs/models.md,
// feasible in minutes here) is N = 8 and 64 (the config's N where it fixes
// one) on the ring, the full mesh, one switch and the boards' fat-tree.
void ResolveDefaults(const HwConfig& hw, ModelsArgs& a) {
  if (a.n.empty()) {
    a.n = a.sweep && hw.num_chips == 0
              ? "8,64"
              : absl::StrCat(DefaultChips(hw, "models"));
  }
  if (a.topology.empty()) {
    a.topology =
        a.sweep ? "ring,fullmesh,switch,board-fattree" : DefaultTopology(hw);
  }
}

int RunModels(const CommonFlags& c, ModelsArgs a) {
  const std::vector<NamedPath> params = {{"--params", a.params}};
  if (auto s = c.CheckCsvJson(params); !s.ok()) return Fail(s);
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  ResolveDefaults(*hw, a);
  auto budget = a.budget.Budget();
  if (!budget.ok()) return Fail(budget.status());
  Calibrations cals(*hw, a, *budget);
  if (a.sweep) {
    auto points = Sweep(*hw, cals, a, *budget);
    if (!points.ok()) return Fail(points.status());
    auto table = SweepTable(*points);
    if (!table.ok()) return Fail(table.status());
    auto summary = SummaryTable(*points);
    if (!summary.ok()) return Fail(summary.status());
    auto s = c.WriteCsvJson(
        table->ToCsv(),
        absl::StrCat("{\"points\": ", table->ToJson(),
                     ", \"summary\": ", summary->ToJson(), "}\n"),
        params);
    if (!s.ok()) return Fail(s);
    std::cout << "# model accuracy against the replay on " << hw->name
              << " (times in us; 0 = outside the model's validity)\n"
              << table->ToText() << "\n"
              << summary->ToText();
    return kExitOk;
  }
  auto bytes = ParseByteSize(a.bytes);
  if (!bytes.ok()) return Fail(bytes.status());
  auto ns = Counts(a.n);
  if (!ns.ok()) return Fail(ns.status());
  if (ns->size() != 1) {
    return Fail(
        absl::InvalidArgumentError("--n: one chip count without --sweep"));
  }
  auto p = Evaluate(*hw, cals, a.op, a.algo, ns->front(), *bytes, a.topology,
                    *budget);
  if (!p.ok()) return Fail(p.status());
  auto table = PointTable(*p);
  if (!table.ok()) return Fail(table.status());
  // Printed only once the outputs are written.
  std::string out =
      absl::StrFormat("# %s %s, N=%d, %d bytes on %s, %s\n", p->op_name,
                      p->algo, p->n, p->bytes, p->topology, hw->name) +
      table->ToText();
  if (a.advise) {
    auto topo = ParseTopologySpec(a.topology, hw->topology_params);
    auto cal = cals.For(topo->first, topo->second, p->n);
    if (!cal.ok()) return Fail(cal.status());
    out +=
        AdviceText(*p, WalkTree(*p, *cal, NetParamsFromHw(*hw), a.worst_case));
  }
  auto s = c.WriteCsvJson(table->ToCsv(), table->ToJson(), params);
  if (!s.ok()) return Fail(s);
  std::cout << out;
  return kExitOk;
}

}  // namespace

void AddModelsCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    ModelsArgs models;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "models",
      "the analytic model ladder beside the replay and Math, with errors");
  args->common.AddHw(cmd);
  args->common.AddCsvJson(cmd);
  ModelsArgs& a = args->models;
  cmd->add_option("--op", a.op,
                  "allreduce, allgather, reducescatter, "
                  "alltoall, ... (any case)")
      ->transform(CollectiveOpValidator())
      ->capture_default_str();
  cmd->add_option("--algo", a.algo,
                  "algorithm, any case (default: the baseline's)")
      ->transform(AlgorithmListValidator());
  cmd->add_option(
      "--n", a.n,
      "chips (default: the hardware config's topology.num_chips, else 8); "
      "with --sweep a comma-separated list (default 8,64, or the config's "
      "fixed count)");
  cmd->add_option("--bytes", a.bytes, "M; binary units: 1M = 1048576")
      ->capture_default_str();
  cmd->add_option(
      "--topology", a.topology,
      "topology spec (default: the hardware config's); with --sweep a "
      "comma-separated list (default ring,fullmesh,switch,board-fattree)");
  cmd->add_option("--params", a.params,
                  "PlogpCalibration from `ccreplay calibrate` (default: "
                  "calibrate on the replay now)")
      ->check(InputFile());
  cmd->add_flag("--no-calibration", a.no_calibration,
                "skip calibration: PLogP and alpha(n)-beta(n) are n/a");
  cmd->add_flag("--sweep", a.sweep, "the accuracy table over a grid");
  cmd->add_option("--ops", a.sweep_ops, "sweep: op:algorithm list")
      ->capture_default_str();
  cmd->add_option("--sizes", a.sweep_sizes, "sweep: sizes list")
      ->capture_default_str();
  AddJobsOption(cmd, a.jobs, "sweep points");
  cmd->add_flag("--advise", a.advise,
                "walk seed 004's model-selection tree for the workload");
  cmd->add_flag("--worst-case", a.worst_case,
                "advise: a worst-case guarantee is needed");
  a.budget.Add(cmd);
  cmd->callback([args, exit_code] {
    *exit_code = RunModels(args->common, args->models);
  });
}

}  // namespace ccreplay
