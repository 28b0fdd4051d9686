#include "cli/run.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "base/release_memory.h"
#include "base/thread_pool.h"
#include "collectives/lower.h"
#include "collectives/math.h"
#include "hw/budget.h"
#include "replay/timeline.h"
#include "trace/decode.h"
#include "trace/trace_io.h"

namespace ccreplay {

absl::StatusOr<TopologyChoice> ParseTopologyChoice(absl::string_view text,
                                                   const HwConfig& hw) {
  auto spec = ParseTopologySpec(text, hw.topology_params);
  if (!spec.ok()) return spec.status();
  return TopologyChoice(spec->first, spec->second);
}

absl::StatusOr<TopologyChoice> ChooseTopology(
    const v1::Trace& trace, const HwConfig& hw,
    std::optional<TopologyChoice> override_choice) {
  if (override_choice) return *override_choice;
  const std::string& named = trace.header().collective().topology();
  if (!named.empty()) {
    // A name, or a name with parameters (lower --topology torus2d:8x8).
    auto k = ParseTopologyChoice(named, hw);
    if (!k.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("header.collective.topology: ", k.status().message()));
    }
    if (named.find(':') == std::string::npos) return TopologyChoice(k->kind);
    return *k;
  }
  return TopologyChoice(hw.topology);
}

namespace {

// Builds the topology a decoded trace runs on and takes its program, in
// that order (so a bad topology name is reported before a bad instruction).
absl::StatusOr<RunOutcome> Prepare(DecodedTrace& trace, const HwConfig& hw,
                                   std::optional<TopologyChoice> topology) {
  auto choice = ChooseTopology(trace.header, hw, topology);
  if (!choice.ok()) return choice.status();
  absl::StatusOr<Program> program = std::move(trace.program);
  if (!program.ok()) return program.status();
  auto topo =
      Topology::Build(choice->kind, program->num_chips,
                      choice->params ? *choice->params : hw.topology_params);
  if (!topo.ok()) return topo.status();
  RunOutcome out;
  out.program = *std::move(program);
  out.topology = *std::move(topo);
  return out;
}

// Replays a prepared run on `engine` after CheckReplayBudget.
absl::StatusOr<RunOutcome> ReplayPrepared(absl::StatusOr<RunOutcome> run,
                                          const HwConfig& hw,
                                          const ReplayOptions& options,
                                          const ResourceBudget& budget,
                                          ReplayFn engine) {
  if (!run.ok()) return run.status();
  ResourceBudget b = budget;
  if (b.max_events == 0) b.max_events = options.max_events;
  if (auto s = CheckReplayBudget(run->program, hw, *run->topology, b);
      !s.ok()) {
    return s;
  }
  ReplayOptions run_options = options;
  run_options.max_events = b.EventLimit();  // the estimate is not exact
  auto result = engine(run->program, hw, *run->topology, run_options);
  if (!result.ok()) return result.status();
  run->result = *std::move(result);
  return run;
}

}  // namespace

absl::StatusOr<RunOutcome> ReplayTrace(const v1::Trace& trace,
                                       const HwConfig& hw,
                                       std::optional<TopologyChoice> topology,
                                       const ReplayOptions& options,
                                       const ResourceBudget& budget,
                                       ReplayFn engine) {
  DecodedTrace decoded = DecodeTrace(trace, hw.Target());
  return ReplayDecoded(decoded, hw, topology, options, budget, engine);
}

absl::StatusOr<DecodedTrace> ReadTraceForReplay(const std::string& path,
                                                const HwConfig& hw) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  // The pages of the chips decoded are given back as the decode goes, so
  // the file and the program are not resident in full at once. Standard
  // input cannot be read twice: its bytes are kept.
  PrefixDropper dropper(bytes->data(), size_t{2} << 20);
  const auto drop = [&](size_t prefix) { dropper.Consumed(prefix); };
  if (std::optional<DecodedTrace> streamed = StreamValidateAndDecode(
          *bytes, hw.Target(),
          path == "-" ? std::function<void(size_t)>() : drop)) {
    return *std::move(streamed);
  }
  if (dropper.dropped()) {  // the whole-message path reads every byte
    bytes = ReadFileToString(path);
    if (!bytes.ok()) return bytes.status();
  }
  DecodedTrace decoded;
  {
    absl::StatusOr<ArenaTrace> whole = ParseTraceOnArena(*bytes, path);
    if (!whole.ok()) return whole.status();
    decoded = DecodeTrace(**whole, hw.Target());
  }  // the arena is freed here, in one step
  ReleaseFreeMemory();
  return decoded;
}

absl::StatusOr<RunOutcome> ReplayDecoded(DecodedTrace& trace,
                                         const HwConfig& hw,
                                         std::optional<TopologyChoice> topology,
                                         const ReplayOptions& options,
                                         const ResourceBudget& budget,
                                         ReplayFn engine) {
  return ReplayPrepared(Prepare(trace, hw, topology), hw, options, budget,
                        engine);
}

absl::StatusOr<RunOutcome> LowerAndReplay(const CollectiveSpec& spec,
                                          const HwConfig& hw,
                                          const ReplayOptions& options,
                                          const ResourceBudget& budget) {
  // Decoded as it is lowered: the whole protobuf is never built.
  auto lowered = LowerAndDecode(spec, hw);
  if (!lowered.ok()) return lowered.status();
  return ReplayDecoded(*lowered, hw, spec.topology, options, budget);
}

std::string BaselineAlgorithm(v1::CollectiveOp op) {
  return op == v1::ALLTOALL || op == v1::ALLTOALLV ? "pairwise" : "ring";
}

namespace {

// One row of the baseline: its replay, Math and critical path.
absl::StatusOr<BaselineRow> BaselineRowOf(const WorkloadRow& w,
                                          const HwConfig& hw,
                                          const MathParams& mp,
                                          const ResourceBudget& budget,
                                          uint64_t* events) {
  CollectiveSpec spec;
  spec.op = w.op;
  spec.n = w.n;
  spec.bytes = w.bytes;
  spec.algorithm = BaselineAlgorithm(w.op);
  spec.topology = w.topology;
  auto run = LowerAndReplay(spec, hw, ReplayOptions{}, budget);
  if (!run.ok()) {
    return absl::Status(
        run.status().code(),
        absl::StrCat(w.module, " ", w.op_name, ": ", run.status().message()));
  }
  auto math = MathTimeUs(w.op, w.n, w.bytes, w.topology, mp);
  if (!math.ok()) return math.status();
  BaselineRow row;
  row.work = w;
  row.math_us = *math;
  row.replay = run->result.makespan;
  row.busbw_gbps = BusBwGBps(w.op, w.n, w.bytes, row.replay.us());
  auto bd =
      CriticalPathBreakdown(run->program, run->result, hw, *run->topology);
  if (!bd.ok()) return bd.status();
  row.breakdown = *bd;
  *events = run->result.events;
  return row;
}

}  // namespace

absl::StatusOr<Baseline> RunBaseline(
    const std::vector<WorkloadRow>& workload, const HwConfig& hw,
    const std::function<void(uint64_t events)>& on_row, unsigned jobs,
    const ResourceBudget& budget) {
  const MathParams mp = MathParamsFromHw(hw);
  std::vector<absl::StatusOr<BaselineRow>> rows(workload.size());
  ThreadPool(jobs).ParallelFor(workload.size(), [&](size_t i) {
    uint64_t events = 0;
    rows[i] = BaselineRowOf(workload[i], hw, mp, budget, &events);
    if (on_row) on_row(events);
  });
  Baseline b;  // summed in row order, as a serial run sums
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].ok()) return rows[i].status();
    b.total_math_us += rows[i]->math_us * workload[i].repeat;
    b.total_replay_us += rows[i]->replay.us() * workload[i].repeat;
    b.rows.push_back(*std::move(rows[i]));
  }
  return b;
}

absl::StatusOr<Table> BaselineTable(const Baseline& b) {
  Table t({Table::Column::String("module"), Table::Column::String("operator"),
           Table::Column::String("primitive"), Table::Column::Integer("N"),
           Table::Column::String("topology"), Table::Column::Integer("bytes"),
           Table::Column::Double("math_us", 4),
           Table::Column::Double("replay_us", 4),
           Table::Column::Double("replay/math", 3),
           Table::Column::Double("busbw_GBps", 2),
           Table::Column::Integer("repeat")});
  for (const BaselineRow& r : b.rows) {
    auto s = t.AddRow({r.work.module, r.work.op_name, r.work.primitive,
                       r.work.n, std::string(TopologyName(r.work.topology)),
                       r.work.bytes, r.math_us, r.replay.us(),
                       r.replay.us() / r.math_us, r.busbw_gbps, r.work.repeat});
    if (!s.ok()) return s;
  }
  return t;
}

absl::StatusOr<Table> BaselineBreakdownTable(const Baseline& b) {
  std::vector<Table::Column> cols = {Table::Column::String("module"),
                                     Table::Column::String("operator"),
                                     Table::Column::Double("math_us", 4),
                                     Table::Column::Double("replay_us", 4)};
  for (int c = 0; c < kNumPathCauses; ++c) {
    cols.push_back(Table::Column::Double(
        std::string(PathCauseName(static_cast<PathCause>(c))), 4));
  }
  Table t(cols);
  for (const BaselineRow& r : b.rows) {
    std::vector<Table::Cell> cells = {r.work.module, r.work.op_name, r.math_us,
                                      r.replay.us()};
    for (TimePs v : r.breakdown.by_cause) cells.push_back(v.us());
    if (auto s = t.AddRow(std::move(cells)); !s.ok()) return s;
  }
  return t;
}

absl::StatusOr<Table> BreakdownTable(const Breakdown& b) {
  Table t({Table::Column::String("mechanism"), Table::Column::Double("us", 6),
           Table::Column::Double("share", 3)});
  for (int c = 0; c < kNumPathCauses; ++c) {
    const TimePs v = b.by_cause[c];
    auto s =
        t.AddRow({std::string(PathCauseName(static_cast<PathCause>(c))), v.us(),
                  b.total.ps() > 0 ? static_cast<double>(v.ps()) /
                                         static_cast<double>(b.total.ps())
                                   : 0.0});
    if (!s.ok()) return s;
  }
  return t;
}

absl::StatusOr<Table> LinkTable(const Topology& topo, const ReplayResult& r,
                                const HwConfig& hw) {
  Table t({Table::Column::String("link"), Table::Column::Integer("packets"),
           Table::Column::Integer("wire_bytes"),
           Table::Column::Double("util", 3),
           Table::Column::Integer("peak_waiting"),
           Table::Column::Double("queued_us", 4),
           Table::Column::Double("credit_stall_us", 4),
           Table::Column::Double("lg_imbalance", 3),
           Table::Column::Double("first_us", 4),
           Table::Column::Double("last_us", 4)});
  const double span = r.drained.us() * hw.lane_groups;
  for (size_t l = 0; l < r.links.size(); ++l) {
    const LinkStats& s = r.links[l];
    if (s.packets == 0) continue;
    TimePs most;
    for (TimePs b : s.lg_busy) most = Max(most, b);
    const double mean = s.busy.us() / static_cast<double>(s.lg_busy.size());
    auto st = t.AddRow({topo.LinkName(static_cast<uint32_t>(l)), s.packets,
                        s.wire_bytes, span > 0 ? s.busy.us() / span : 0.0,
                        s.peak_depth, s.queued.us(), s.credit_stall.us(),
                        most.us() / mean, s.first_start.us(), s.last_end.us()});
    if (!st.ok()) return st;
  }
  return t;
}

// Hand-written rather than CLI11's AsSizeValue (CLI11 2.1), which was
// considered: AsSizeValue takes a bare unit ("M" = 1 MiB, which must be an
// error here), reports by throwing CLI::ValidationError in its own words, and
// as an option transformer would make a bad size a usage error (exit 2),
// while a bad size is an input error (exit 1, "bad byte size '1.3K'"), as
// tests/run_test.cc and tests/cli_test.cc assert.
namespace {

// log2 of the unit named by `suffix` (upper case): "", B, K, KB, KiB, ...
std::optional<int> UnitShift(std::string suffix) {
  if (suffix == "B") suffix.clear();
  if (suffix.size() == 3 && suffix.substr(1) == "IB") suffix.resize(1);
  if (suffix.size() == 2 && suffix[1] == 'B') suffix.resize(1);
  if (suffix.empty()) return 0;
  if (suffix == "K") return 10;
  if (suffix == "M") return 20;
  if (suffix == "G") return 30;
  if (suffix == "T") return 40;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  const std::string t(absl::StripAsciiWhitespace(text));
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad byte size '", text, "': ", why,
        " (use e.g. 1048576, 64K, 1M, 1MB, 1.5M, 2G; K/M/G/T are binary)"));
  };
  size_t end = 0;
  unsigned __int128 digits = 0;  // the number without its decimal point
  int decimals = -1;             // digits after the point, -1: no point
  bool any = false;
  for (; end < t.size(); ++end) {
    const char c = t[end];
    if (c == '.' && decimals < 0) {
      decimals = 0;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    any = true;
    digits = digits * 10 + static_cast<unsigned>(c - '0');
    if (decimals >= 0) ++decimals;
    if (digits > (static_cast<unsigned __int128>(1) << 80)) {
      return bad("too large");
    }
  }
  if (!any) return bad("no number");
  const std::optional<int> shift =
      UnitShift(absl::AsciiStrToUpper(t.substr(end)));
  if (!shift) return bad(absl::StrCat("unknown suffix '", t.substr(end), "'"));
  unsigned __int128 scale = 1;
  for (int i = 0; i < std::max(decimals, 0); ++i) scale *= 10;
  if (decimals > 18) return bad("too many decimals");
  const unsigned __int128 value = digits << *shift;
  if (value % scale != 0) return bad("not a whole number of bytes");
  if (value / scale > ~uint64_t{0}) return bad("too large");
  return static_cast<uint64_t>(value / scale);
}

}  // namespace ccreplay
