#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/json.h"
#include "base/table.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "collectives/collective.h"
#include "collectives/lower.h"
#include "collectives/math.h"
#include "import/msccl_import.h"
#include "replay/fluid_engine.h"
#include "replay/timeline.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

struct ReplayArgs {
  std::string trace;
  std::string topology;
  std::string timeline;
  BudgetFlags budget;
  bool quiet = false;
  std::string timeline_chips;   // "" = every chip
  std::string timeline_window;  // "" = the whole run
  bool links = false;
  bool no_coalesce = false;       // the per-packet reference path
  EngineFlags engine;
  MscclFlags msccl;               // when the input is MSCCL-IR XML
};

// Per-chip finish times and bytes: printed, and the CSV and JSON "chips".
absl::StatusOr<Table> ChipTable(const RunOutcome& run) {
  const ReplayResult& r = run.result;
  Table chips({Table::Column::Integer("chip"),
               Table::Column::Double("finish_us", 6),
               Table::Column::Integer("bytes_sent"),
               Table::Column::Integer("bytes_received"),
               Table::Column::Integer("bytes_local")});
  for (uint32_t i = 0; i < run.program.num_chips; ++i) {
    auto s = chips.AddRow({i, r.chip_finish[i].us(), r.bytes_sent[i],
                           r.bytes_received[i], r.bytes_local[i]});
    if (!s.ok()) return s;
  }
  return chips;
}

// The header lines: what ran where, the total, and (when the trace header
// names its collective) algbw and busbw.
void PrintSummary(const ReplayArgs& a, const v1::Trace& trace,
                  const HwConfig& hw, const RunOutcome& run,
                  std::ostream& out) {
  const ReplayResult& r = run.result;
  out << "trace " << a.trace << " on " << hw.name << ", topology "
      << TopologySpecString(run.topology->kind(), run.topology->params())
      << (a.engine.fluid() ? ", " + FluidEngineName(a.engine.FluidPackets())
                           : "")
      << "\n"
      << "total " << PsToUsString(r.makespan) << " us (all streams done)"
      << ", drained " << PsToUsString(r.drained) << " us, " << r.events
      << " events, " << r.packets << " packets\n";
  const auto& coll = trace.header().collective();
  if (coll.op() != v1::COLLECTIVE_OP_UNSPECIFIED && coll.bytes() > 0 &&
      r.makespan.ps() > 0) {
    const double us = r.makespan.us();
    out << absl::StrFormat(
        "%s N=%d %d bytes: algbw %.2f GB/s, busbw %.2f GB/s\n",
        CollectiveOpName(coll.op()), coll.n(), coll.bytes(),
        static_cast<double>(coll.bytes()) / (us * 1e3),
        static_cast<double>(coll.bytes()) / (us * 1e3) *
            BusBwFactor(coll.op(), coll.n()));
  }
}

// The busiest switch port by time queued, which is where contention shows
// first; nothing without a switch.
void PrintBusiestSwitchPort(const RunOutcome& run, std::ostream& out) {
  const ReplayResult& r = run.result;
  size_t worst = r.links.size();
  for (size_t l = 0; l < r.links.size(); ++l) {
    if (!run.topology->IsSwitch(run.topology->links()[l].src)) continue;
    if (worst == r.links.size() || r.links[l].queued > r.links[worst].queued) {
      worst = l;
    }
  }
  if (worst < r.links.size()) {
    out << "busiest switch port: " << run.topology->LinkName(worst) << ", peak "
        << r.links[worst].peak_depth << " packets waiting, "
        << PsToUsString(r.links[worst].queued)
        << " us queued in all (--links for every link)\n";
  }
}

// What the trace header says it computes, the topology it ran on, and its
// bandwidths (null when the header names no collective).
Json CollectiveJson(const v1::Trace& trace, const RunOutcome& run) {
  const v1::CollectiveInfo& c = trace.header().collective();
  const double us = run.result.makespan.us();
  const bool known = c.op() != v1::COLLECTIVE_OP_UNSPECIFIED && c.bytes() > 0;
  const uint32_t g = c.group_size() != 0 ? c.group_size() : c.n();
  return {{"op", known ? Json(std::string(CollectiveOpName(c.op()))) : Json()},
          {"n", c.n()},
          {"group_size", g},
          {"bytes", c.bytes()},
          {"algorithm", c.algorithm()},
          {"topology",
           TopologySpecString(run.topology->kind(), run.topology->params())},
          {"algbw_GBps", known ? Json(AlgBwGBps(c.bytes(), us)) : Json()},
          {"busbw_GBps",
           known ? Json(BusBwGBps(c.op(), g, c.bytes(), us)) : Json()}};
}

std::string ReplayJson(const ReplayArgs& a, const HwConfig& hw,
                       const Json& collective, const ReplayResult& r,
                       const Table& chips, const Table& links,
                       const Table& path) {
  Json j = {{"trace", a.trace},
            {"hw", hw.name},
            {"collective", collective},
            {"total_us", r.makespan.us()},
            {"drained_us", r.drained.us()},
            {"events", r.events},
            {"packets", r.packets},
            {"chips", chips.ToJsonValue()},
            {"links", links.ToJsonValue()},
            {"critical_path", path.ToJsonValue()}};
  // Named only when not the default, so packet outputs stay as they were.
  if (a.engine.fluid()) j["engine"] = a.engine.engine;
  return JsonText(j);
}

// What replay reads, and what it writes with the contents still empty: the
// paths are checked before the run, the contents filled in after it.
std::vector<NamedPath> ReplayInputs(const CommonFlags& c, const ReplayArgs& a) {
  return {{"trace", a.trace}, {"--hw", c.hw_path}};
}
std::vector<OutputFile> ReplayOutputs(const CommonFlags& c,
                                      const ReplayArgs& a) {
  return {{"--timeline", a.timeline, ""},
          {"--csv", c.csv_path, ""},
          {"--json", c.json_path, ""}};
}

// What --timeline-chips and --timeline-window keep (their syntax was
// checked by the parser; a chip beyond the trace's is a usage error too).
absl::StatusOr<TimelineFilter> TimelineFilterOf(const ReplayArgs& a,
                                                uint32_t num_chips) {
  TimelineFilter f;
  if (!a.timeline_chips.empty()) {
    auto chips = ParseChipList(a.timeline_chips);
    if (!chips.ok()) return chips.status();
    if (chips->size() > num_chips) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--timeline-chips ", a.timeline_chips, ": chip ", chips->size() - 1,
          " is not in the trace, which has chips 0-", num_chips - 1));
    }
    f.chips = *std::move(chips);
  }
  if (!a.timeline_window.empty()) {
    auto w = ParseTimeWindow(a.timeline_window);
    if (!w.ok()) return w.status();
    f.from = w->first;
    f.to = w->second;
  }
  return f;
}

// The trace file, or an MSCCL-IR XML imported in memory
// (docs/import-msccl.md).
absl::StatusOr<DecodedTrace> ReadReplayInput(
    const ReplayArgs& a, const HwConfig& hw,
    const std::optional<TopologyChoice>& topo) {
  if (!IsMscclXmlPath(a.trace)) return ReadTraceForReplay(a.trace, hw);
  std::optional<std::pair<TopologyKind, TopologyParams>> t;
  if (topo)
    t = std::pair(topo->kind, topo->params.value_or(hw.topology_params));
  absl::StatusOr<v1::Trace> imported = a.msccl.Import(a.trace, hw, t);
  if (!imported.ok()) return imported.status();
  return DecodeTrace(*imported, hw.Target());
}

// The timeline's bytes in the format its extension names.
std::string TimelineBytes(const ReplayArgs& a, const RunOutcome& run,
                          TimelineRecorder* net, TimelineFilter filter) {
  const TimelineInputs in{run.program, run.result, &*run.topology, net,
                          std::move(filter)};
  return *TimelineFormatOf(a.timeline) == TimelineFormat::kPerfetto
             ? TimelinePerfetto(in)
             : TimelineJson(in);
}

// Timing records for the timeline, which draws every instruction; the
// reports need none (the breakdown is then summed as the replay runs), and
// a lean replay is used where it holds less (PreferLeanReplay).
bool KeepRecords(const ReplayArgs& a, const DecodedTrace& input) {
  return !a.timeline.empty() || !input.program.ok() ||
         !PreferLeanReplay(*input.program);
}

// The critical-path breakdown's table. The breakdown walks packet-level
// causes (queueing, serialisation per hop, lane groups): the fluid engine
// has none of them, so its table is empty.
absl::StatusOr<Table> PathTable(const RunOutcome& run, const HwConfig& hw,
                                bool fluid) {
  if (fluid) {
    return Table({Table::Column::String("mechanism"),
                  Table::Column::Double("us", 6),
                  Table::Column::Double("share", 3)});
  }
  auto path = CriticalPathBreakdown(run.program, run.result, hw, *run.topology);
  if (!path.ok()) return path.status();
  return BreakdownTable(*path);
}

int RunReplay(const CommonFlags& c, const ReplayArgs& a) {
  if (auto s = a.engine.Check(); !s.ok()) return FailUsage(s);
  if (auto s = CheckOutputs(ReplayInputs(c, a), ReplayOutputs(c, a)); !s.ok()) {
    return Fail(s);
  }
  auto budget = a.budget.Budget();  // before any input is read
  if (!budget.ok()) return Fail(budget.status());
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  std::optional<TopologyChoice> topo;
  if (!a.topology.empty()) {
    auto k = ParseTopologyChoice(a.topology, *hw);
    if (!k.ok()) return Fail(k.status());
    topo = *k;
  }
  absl::StatusOr<DecodedTrace> input = ReadReplayInput(a, *hw, topo);
  if (!input.ok()) return Fail(input.status());
  const v1::Trace& trace = input->header;  // the header alone
  absl::StatusOr<TimelineFilter> filter =
      TimelineFilterOf(a, trace.header().num_chips());
  if (!filter.ok()) return FailUsage(filter.status());
  ReplayOptions opt;
  opt.max_events = a.budget.max_events;
  ReplayProgress bar(a.quiet);
  if (bar.enabled()) {
    opt.on_progress = [&bar](uint64_t events, TimePs now) {
      bar.Update(events, now);
    };
  }
  opt.coalesce = !a.no_coalesce;
  opt.keep_records = KeepRecords(a, *input);
  opt.fluid_packet_max = a.engine.FluidPackets();
  std::optional<TimelineRecorder> recorder;
  if (!a.timeline.empty()) {
    opt.net_recorder = &recorder.emplace(*filter, *hw);
  }
  const bool fluid = a.engine.fluid();
  auto run = ReplayDecoded(*input, *hw, topo, opt, *budget,
                           fluid ? &ReplayFluid : &Replay);
  bar.Finish();
  if (!run.ok())
    return Fail(
        absl::Status(run.status().code(),
                     absl::StrCat(a.trace, ": ", run.status().message())));
  const ReplayResult& r = run->result;
  auto chips = ChipTable(*run);
  if (!chips.ok()) return Fail(chips.status());
  auto links = LinkTable(*run->topology, r, *hw);
  if (!links.ok()) return Fail(links.status());
  absl::StatusOr<Table> path_table = PathTable(*run, *hw, fluid);
  if (!path_table.ok()) return Fail(path_table.status());
  std::vector<OutputFile> outputs = ReplayOutputs(c, a);
  if (!a.timeline.empty()) {
    outputs[0].contents = TimelineBytes(a, *run, &*recorder, *filter);
  }
  // Made only for the files asked for (WriteOutputs skips the others).
  if (!outputs[1].path.empty()) outputs[1].contents = chips->ToCsv();
  if (!outputs[2].path.empty()) {
    outputs[2].contents = ReplayJson(a, *hw, CollectiveJson(trace, *run), r,
                                     *chips, *links, *path_table);
  }
  if (auto s = WriteOutputs(ReplayInputs(c, a), outputs); !s.ok()) {
    return Fail(s);
  }
  // The report, only once the outputs are written.
  PrintSummary(a, trace, *hw, *run, std::cout);
  std::cout << chips->ToText() << "critical path by mechanism:"
            << (fluid ? " n/a with the fluid engine\n"
                      : "\n" + path_table->ToText());
  if (a.links) {
    std::cout << links->ToText();
  } else if (!fluid) {  // flows do not queue
    PrintBusiestSwitchPort(*run, std::cout);
  }
  return kExitOk;
}

// The parser's check that `parse` accepts the value: its error message, or
// none. `name` is the value's name in the help text.
template <typename T>
CLI::Validator ParsedBy(absl::StatusOr<T> (*parse)(absl::string_view),
                        const std::string& name) {
  return CLI::Validator(
      [parse](std::string& s) {
        auto v = parse(s);
        return v.ok() ? std::string() : std::string(v.status().message());
      },
      name);
}

}  // namespace

void AddReplayCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    ReplayArgs replay;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("replay", "replay a trace file");
  cmd->add_option("trace", args->replay.trace,
                  "trace file (text or binary), or MSCCL-IR .xml")
      ->required()
      ->check(InputFile());
  args->common.AddHw(cmd);
  args->replay.msccl.Add(cmd);
  args->common.AddCsvJson(cmd);
  cmd->add_option("--topology", args->replay.topology,
                  "name[:params], e.g. ring, switch, fullmesh, board-ring, "
                  "torus2d:8x8 (default: the trace header's, else "
                  "the config's)");
  CLI::Option* timeline =
      AddOutputOption(cmd, "--timeline", args->replay.timeline,
                      "write a timeline: FILE.json (Chrome trace JSON) or "
                      "FILE.pftrace (Perfetto); docs/timelines.md")
          ->check(ParsedBy(&TimelineFormatOf, ""));
  cmd->add_option("--timeline-chips", args->replay.timeline_chips,
                  "keep only these chips' tracks, e.g. 0-3,8")
      ->needs(timeline)
      ->check(ParsedBy(&ParseChipList, "CHIPS"));
  cmd->add_option("--timeline-window", args->replay.timeline_window,
                  "keep only FROM:TO of the run, e.g. 10us:50us (slices "
                  "crossing it are clipped)")
      ->needs(timeline)
      ->check(ParsedBy(&ParseTimeWindow, "FROM:TO"));
  cmd->add_flag("--links", args->replay.links,
                "print every link's use and queueing");
  args->replay.engine.Add(cmd);
  cmd->add_flag("--no-coalesce", args->replay.no_coalesce,
                "packet engine: simulate every packet event (the reference "
                "path; coalescing gives byte-identical results, "
                "docs/hardware-model.md, \"Coalescing\")");
  args->replay.budget.Add(cmd);
  cmd->add_flag("-q,--quiet", args->replay.quiet,
                "no progress line on standard error (shown only on a "
                "terminal)");

  cmd->callback([args, exit_code] {
    *exit_code = RunReplay(args->common, args->replay);
  });
}

}  // namespace ccreplay
