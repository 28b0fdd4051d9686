// ccreplay: the command line. Exit codes: 0 ok, 1 the trace, config or
// replay is wrong (the message says where), 2 usage.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectives/collective.h"
#include "collectives/lower.h"
#include "collectives/math_report.h"
#include "collectives/workload.h"
#include "hw/config.h"
#include "replay/cli/run.h"
#include "replay/file_util.h"
#include "replay/table.h"
#include "replay/timeline.h"
#include "replay/trace_io.h"

namespace ccreplay {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

int Fail(const absl::Status& s) {
  std::cerr << "ccreplay: " << s.message() << "\n";
  return kExitBadInput;
}

// Options every command shares.
struct Common {
  std::string hw_path;
  std::string csv_path;
  std::string json_path;

  absl::StatusOr<HwConfig> Hw() const {
    if (hw_path.empty()) return DefaultTps186();
    return ReadHwConfigFile(hw_path);
  }
};

void AddHw(CLI::App* cmd, Common* c) {
  cmd->add_option("--hw", c->hw_path,
                  "hardware config (text or binary HardwareConfig); default: "
                  "built-in TPS186")
      ->check(CLI::ExistingFile);
}
void AddCsvJson(CLI::App* cmd, Common* c) {
  cmd->add_option("--csv", c->csv_path, "also write the table as CSV");
  cmd->add_option("--json", c->json_path, "also write the result as JSON");
}

// Writes every requested output or none: all contents are computed before
// this is called, and each file appears only when complete.
absl::Status WriteOutputs(
    const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [path, contents] : files) {
    if (path.empty()) continue;
    if (auto s = WriteFileAtomically(path, contents); !s.ok()) return s;
  }
  return absl::OkStatus();
}

int RunMath(const Common& c, bool legacy) {
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  auto table = MathSelfCheckTable(*hw, legacy);
  if (!table.ok()) return Fail(table.status());
  std::cout << "# Math (alpha-beta) self-check on " << hw->name
            << ": SPEC.md section 2 formulas\n"
            << table->ToText();
  auto s = WriteOutputs(
      {{c.csv_path, table->ToCsv()}, {c.json_path, table->ToJson()}});
  return s.ok() ? kExitOk : Fail(s);
}

int RunBaselineCmd(const Common& c) {
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  auto b = RunBaseline(Tps186Workload(), *hw);
  if (!b.ok()) return Fail(b.status());
  auto table = BaselineTable(*b);
  if (!table.ok()) return Fail(table.status());
  std::cout << "# TPS186 baseline on " << hw->name
            << ": Math vs instruction-level replay, one collective per row\n"
            << table->ToText();
  std::cout << absl::StrFormat(
      "# one model pass (time x repeat, summed): Math %.4f us, replay %.4f "
      "us, replay/Math %.3f\n",
      b->total_math_us, b->total_replay_us,
      b->total_replay_us / b->total_math_us);
  const std::string json = absl::StrFormat(
      "{\"hw\":\"%s\",\"rows\":%s,\"total_math_us\":%.4f,"
      "\"total_replay_us\":%.4f}\n",
      hw->name, table->ToJson(), b->total_math_us, b->total_replay_us);
  auto s = WriteOutputs({{c.csv_path, table->ToCsv()}, {c.json_path, json}});
  return s.ok() ? kExitOk : Fail(s);
}

struct LowerArgs {
  std::string op = "allreduce";
  uint32_t n = 2;
  std::string bytes = "1M";
  std::string algo;
  std::string topology = "ring";
  uint32_t cdma = 0;
  std::string output;
};

absl::StatusOr<CollectiveSpec> SpecFrom(const LowerArgs& a) {
  CollectiveSpec spec;
  auto op = ParseCollectiveOp(a.op);
  if (!op.ok()) return op.status();
  spec.op = *op;
  spec.n = a.n;
  auto bytes = ParseByteSize(a.bytes);
  if (!bytes.ok()) return bytes.status();
  spec.bytes = *bytes;
  spec.algorithm = a.algo.empty() ? BaselineAlgorithm(*op) : a.algo;
  auto topo = ParseTopologyName(a.topology);
  if (!topo.ok()) return topo.status();
  spec.topology = *topo;
  spec.cdma_engines = a.cdma;
  return spec;
}

int RunLower(const Common& c, const LowerArgs& a) {
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  auto spec = SpecFrom(a);
  if (!spec.ok()) return Fail(spec.status());
  auto trace = LowerCollective(*spec, *hw);
  if (!trace.ok()) return Fail(trace.status());
  if (auto s = WriteTraceFile(a.output, *trace); !s.ok()) return Fail(s);
  size_t instrs = 0;
  for (const auto& chip : trace->chips()) {
    for (const auto& st : chip.streams()) instrs += st.instructions_size();
  }
  std::cout << "wrote " << a.output << ": " << CollectiveOpName(spec->op) << " "
            << spec->algorithm << ", N=" << spec->n << ", " << spec->bytes
            << " bytes, " << instrs << " instructions\n";
  return kExitOk;
}

struct ReplayArgs {
  std::string trace;
  std::string topology;
  std::string timeline;
  uint64_t max_events = 0;
};

int RunReplay(const Common& c, const ReplayArgs& a) {
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  auto trace = ReadTraceFile(a.trace);
  if (!trace.ok()) return Fail(trace.status());
  std::optional<TopologyKind> topo;
  if (!a.topology.empty()) {
    auto k = ParseTopologyName(a.topology);
    if (!k.ok()) return Fail(k.status());
    topo = *k;
  }
  ReplayOptions opt;
  opt.max_events = a.max_events;
  auto run = ReplayTrace(*trace, *hw, topo, opt);
  if (!run.ok())
    return Fail(
        absl::Status(run.status().code(),
                     absl::StrCat(a.trace, ": ", run.status().message())));
  const ReplayResult& r = run->result;
  Table chips({Table::Column::Integer("chip"),
               Table::Column::Double("finish_us", 6),
               Table::Column::Integer("bytes_sent"),
               Table::Column::Integer("bytes_received"),
               Table::Column::Integer("bytes_local")});
  for (uint32_t i = 0; i < run->program.num_chips; ++i) {
    auto s = chips.AddRow({i, r.chip_finish[i].us(), r.bytes_sent[i],
                           r.bytes_received[i], r.bytes_local[i]});
    if (!s.ok()) return Fail(s);
  }
  std::cout << "trace " << a.trace << " on " << hw->name << ", topology "
            << TopologyName(run->topology->kind()) << "\n"
            << "total " << PsToUsString(r.makespan) << " us (all streams done)"
            << ", drained " << PsToUsString(r.drained) << " us, " << r.events
            << " events, " << r.packets << " packets\n";
  const auto& coll = trace->header().collective();
  if (coll.op() != v1::COLLECTIVE_OP_UNSPECIFIED && coll.bytes() > 0 &&
      r.makespan.ps() > 0) {
    const double us = r.makespan.us();
    std::cout << absl::StrFormat(
        "%s N=%d %d bytes: algbw %.2f GB/s, busbw %.2f GB/s\n",
        CollectiveOpName(coll.op()), coll.n(), coll.bytes(),
        static_cast<double>(coll.bytes()) / (us * 1e3),
        static_cast<double>(coll.bytes()) / (us * 1e3) *
            BusBwFactor(coll.op(), coll.n()));
  }
  std::cout << chips.ToText();
  const std::string json = absl::StrCat(
      "{\"trace\":\"", a.trace, "\",\"hw\":\"", hw->name,
      "\",\"total_us\":", PsToUsString(r.makespan),
      ",\"drained_us\":", PsToUsString(r.drained), ",\"events\":", r.events,
      ",\"packets\":", r.packets, ",\"chips\":", chips.ToJson(), "}\n");
  auto s = WriteOutputs(
      {{a.timeline,
        a.timeline.empty() ? std::string() : TimelineJson(run->program, r)},
       {c.csv_path, chips.ToCsv()},
       {c.json_path, json}});
  return s.ok() ? kExitOk : Fail(s);
}

int Main(int argc, char** argv) {
  CLI::App app{
      "ccreplay: instruction-level hardware trace replayer for collective "
      "communication"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every command");

  Common common;
  bool legacy = false;
  LowerArgs lower;
  ReplayArgs replay;

  auto* baseline = app.add_subcommand(
      "baseline",
      "replay the TPS186 workload (SPEC.md section 1) and compare with Math");
  AddHw(baseline, &common);
  AddCsvJson(baseline, &common);

  auto* math = app.add_subcommand(
      "math", "print the Math self-check table (SPEC.md section 2)");
  AddHw(math, &common);
  AddCsvJson(math, &common);
  math->add_flag("--legacy", legacy,
                 "also print the legacy column (two documented bugs)");

  auto* lower_cmd =
      app.add_subcommand("lower", "lower a collective to a trace file");
  AddHw(lower_cmd, &common);
  lower_cmd
      ->add_option("--op", lower.op,
                   "allreduce, allgather, reducescatter, alltoall")
      ->capture_default_str();
  lower_cmd->add_option("--n", lower.n, "number of chips")
      ->capture_default_str();
  lower_cmd
      ->add_option("--bytes", lower.bytes,
                   "M of SPEC.md section 2; binary units: 1M = 1048576")
      ->capture_default_str();
  lower_cmd->add_option("--algo", lower.algo,
                        "ring (AR/AG/RS), pairwise (alltoall); default by op");
  lower_cmd->add_option("--topology", lower.topology, "ring or switch")
      ->capture_default_str();
  lower_cmd
      ->add_option("--cdma", lower.cdma,
                   "CDMA engines to stripe over (0 = all)")
      ->capture_default_str();
  lower_cmd
      ->add_option("-o,--output", lower.output,
                   "trace file (.txtpb/.textproto/.pbtxt/.txt = text, "
                   "else binary)")
      ->required();

  auto* replay_cmd = app.add_subcommand("replay", "replay a trace file");
  replay_cmd->add_option("trace", replay.trace, "trace file (text or binary)")
      ->required()
      ->check(CLI::ExistingFile);
  AddHw(replay_cmd, &common);
  AddCsvJson(replay_cmd, &common);
  replay_cmd->add_option("--topology", replay.topology,
                         "ring or switch (default: the trace header's, else "
                         "the config's)");
  replay_cmd->add_option("--timeline", replay.timeline,
                         "write a Chrome/Perfetto JSON timeline");
  replay_cmd->add_option("--max-events", replay.max_events,
                         "stop with an error after this many events (0 = no "
                         "limit)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (*baseline) return RunBaselineCmd(common);
  if (*math) return RunMath(common, legacy);
  if (*lower_cmd) return RunLower(common, lower);
  if (*replay_cmd) return RunReplay(common, replay);
  return kExitUsage;
}

}  // namespace
}  // namespace ccreplay

int main(int argc, char** argv) { return ccreplay::Main(argc, argv); }
