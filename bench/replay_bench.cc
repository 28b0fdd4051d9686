// Replay-core throughput: events and instructions per second of wall time.
// Run in Release: ./build/bench/replay_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "base/event_queue.h"
#include "base/release_memory.h"
#include "collectives/lower.h"
#include "hw/config.h"
#include "hw/config_io.h"
#include "hw/topology.h"
#include "replay/engine.h"
#include "replay/timeline.h"
#include "trace/decode.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

// The resident-set figures of this process from /proc/self/status, in
// bytes ("VmRSS" now, "VmHWM" the peak since the last ResetPeakRss).
double ProcStatusBytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      return std::strtod(line.c_str() + prefix.size(), nullptr) * 1024.0;
    }
  }
  return 0;
}
// Linux: writing 5 to clear_refs resets the peak resident set (VmHWM).
void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

const HwConfig& AlphaBeta() {
  static const HwConfig hw = [] {
    auto c = ReadHwConfigFile(std::string(CCREPLAY_SOURCE_DIR) +
                              "/traces/alpha-beta.hw.txtpb");
    if (!c.ok()) std::abort();
    return *c;
  }();
  return hw;
}

// Bytes the decoded program holds: its instruction arrays and the vectors
// around them, by capacity.
double ProgramBytes(const Program& p) {
  double b = sizeof(Program) + p.chips.capacity() * sizeof(ChipProgram);
  for (const ChipProgram& c : p.chips) {
    b += c.streams.capacity() * sizeof(StreamProgram);
    for (const StreamProgram& s : c.streams) {
      b += s.instrs.allocated_bytes();
    }
  }
  return b;
}

struct Prepared {
  const HwConfig* hw = nullptr;
  Program program;
  std::optional<Topology> topology;
  size_t instructions = 0;
};

// The lowered trace of a collective on `hw`; aborts if it cannot be lowered.
v1::Trace Lowered(v1::CollectiveOp op, uint32_t n, uint64_t bytes,
                  const char* algo, TopologyKind topo, const HwConfig& hw,
                  bool rendezvous = true) {
  CollectiveSpec spec;
  spec.op = op;
  spec.n = n;
  spec.bytes = bytes;
  spec.algorithm = algo;
  spec.topology = topo;
  spec.no_rendezvous = !rendezvous;
  auto trace = LowerCollective(spec, hw);
  if (!trace.ok()) std::abort();
  return *std::move(trace);
}

size_t Instructions(const Program& p) {
  size_t n = 0;
  for (const ChipProgram& c : p.chips) {
    for (const StreamProgram& s : c.streams) n += s.instrs.size();
  }
  return n;
}

Prepared Prepare(v1::CollectiveOp op, uint32_t n, uint64_t bytes,
                 const char* algo, TopologyKind topo,
                 const HwConfig& hw = DefaultTps186(), bool rendezvous = true) {
  auto program = ValidateAndDecode(
      Lowered(op, n, bytes, algo, topo, hw, rendezvous), hw.Target());
  if (!program.ok()) std::abort();
  Prepared p;
  p.hw = &hw;
  p.program = *std::move(program);
  p.topology = *Topology::Build(topo, n, hw.topology_params);
  p.instructions = Instructions(p.program);
  return p;
}

// Replays `p` once per iteration and reports rates: events and instructions
// per CPU second, simulated microseconds per CPU second, and the memory the
// replay adds to the decoded program, per instruction and at its peak.
// `coalesce` is ReplayOptions::coalesce (docs/hardware-model.md,
// "Coalescing"): "events" counts the per-packet simulation's events either
// way, "dispatched" those the engine handled one by one.
void ReplayLoop(benchmark::State& state, const Prepared& p,
                bool coalesce = true, bool keep_records = true) {
  ReplayOptions options;
  options.coalesce = coalesce;
  options.keep_records = keep_records;
  uint64_t events = 0, packets = 0, folded = 0;
  double sim_us = 0, peak_extra = 0, result_bytes = 0;
  for (auto _ : state) {
    // Freed heap pages (the lowered protobuf, an earlier iteration's
    // result) go back first, so the peak counts what the replay allocates.
    ReleaseFreeMemory();
    const double before = ProcStatusBytes("VmRSS");
    ResetPeakRss();
    auto r = Replay(p.program, *p.hw, *p.topology, options);
    if (!r.ok()) {
      state.SkipWithError("replay failed");
      return;
    }
    peak_extra = ProcStatusBytes("VmHWM") - before;
    events = r->events;
    folded = r->coalesced_events;
    packets = r->packets;
    result_bytes =
        static_cast<double>(r->instrs.capacity() * sizeof(InstrTiming));
    sim_us = r->makespan.us();
    benchmark::DoNotOptimize(r->makespan);
  }
  const auto rate = benchmark::Counter::kIsIterationInvariantRate;
  const double n = static_cast<double>(p.instructions);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), rate);
  state.counters["instr/s"] = benchmark::Counter(n, rate);
  state.counters["sim_us/s"] = benchmark::Counter(sim_us, rate);
  state.counters["events"] = static_cast<double>(events);
  state.counters["dispatched"] = static_cast<double>(events - folded);
  state.counters["packets"] = static_cast<double>(packets);
  state.counters["instructions"] = n;
  // The replay's peak beyond the program (its per-instruction state, the
  // result and the hardware's state), the part of it the result keeps
  // (InstrTiming), and the decoded program itself.
  state.counters["replay_B/instr"] = peak_extra / n;
  state.counters["result_B/instr"] = result_bytes / n;
  state.counters["program_B/instr"] = ProgramBytes(p.program) / n;
  state.counters["peak_RSS_MB"] = ProcStatusBytes("VmHWM") / 1e6;
}

// The MoE dispatch row of the baseline: 64-chip pairwise AllToAll through one
// switch, 917,504 bytes per chip.
// Second argument: coalescing on (1) or off (0, the reference path).
void BM_ReplayAllToAll64(benchmark::State& state) {
  ReplayLoop(state,
             Prepare(v1::ALLTOALL, 64, state.range(0), "pairwise",
                     TopologyKind::kSwitch),
             state.range(1) != 0);
}
BENCHMARK(BM_ReplayAllToAll64)
    ->Args({917504, 1})
    ->Args({917504, 0})
    ->Args({1835008, 1})
    ->Unit(benchmark::kMillisecond);

// Issue 9's scale case: pairwise AllToAll of 1.75 MB per chip over boards of
// 8 in a fat-tree (TPS186), N = 64, 256 and 1024 chips (1024: 17.9 M
// instructions; lowering it in process takes about as long as the replay).
// Second argument: coalescing on (1) or off (0).
void BM_ReplayAllToAllFatTree(benchmark::State& state) {
  ReplayLoop(state,
             Prepare(v1::ALLTOALL, static_cast<uint32_t>(state.range(0)),
                     1835008, "pairwise", TopologyKind::kBoardFatTree),
             state.range(1) != 0);
}
BENCHMARK(BM_ReplayAllToAllFatTree)
    ->Args({64, 1})
    ->Args({64, 0})
    ->Args({256, 1})
    ->Args({256, 0})
    ->Args({1024, 1})
    ->Args({1024, 0})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The 64-chip AllToAll of 917504 bytes with a timeline (docs/timelines.md):
// range 0 records only (the network's observer), 1 also writes the JSON, 2
// the Perfetto file. Compare with BM_ReplayAllToAll64/917504 (no observer).
void BM_TimelineAllToAll64(benchmark::State& state) {
  const Prepared p =
      Prepare(v1::ALLTOALL, 64, 917504, "pairwise", TopologyKind::kSwitch);
  size_t bytes = 0;
  for (auto _ : state) {
    TimelineRecorder net({}, *p.hw);
    ReplayOptions opt;
    opt.net_recorder = &net;
    auto r = Replay(p.program, *p.hw, *p.topology, opt);
    if (!r.ok()) {
      state.SkipWithError("replay failed");
      return;
    }
    const TimelineInputs in{p.program, *r, &*p.topology, &net, {}};
    if (state.range(0) == 1) bytes = TimelineJson(in).size();
    if (state.range(0) == 2) bytes = TimelinePerfetto(in).size();
    benchmark::DoNotOptimize(r->makespan);
  }
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_TimelineAllToAll64)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond);

// A 64-chip ring AllReduce: long dependency chains, few packets in flight.
void BM_ReplayRingAllReduce64(benchmark::State& state) {
  ReplayLoop(
      state,
      Prepare(v1::ALLREDUCE, 64, state.range(0), "ring", TopologyKind::kRing),
      state.range(1) != 0);
}
BENCHMARK(BM_ReplayRingAllReduce64)
    ->Args({4 << 20, 1})
    ->Args({4 << 20, 0})
    ->Unit(benchmark::kMillisecond);

// The same ring on TPS186 with unbounded link buffers (no credit): the
// packets' arrivals fold (docs/hardware-model.md, "Coalescing").
const HwConfig& Tps186NoCredit() {
  static const HwConfig hw = [] {
    HwConfig c = DefaultTps186();
    c.link_buffer_bytes = 0;
    return c;
  }();
  return hw;
}
void BM_ReplayRingAllReduce64NoCredit(benchmark::State& state) {
  ReplayLoop(state,
             Prepare(v1::ALLREDUCE, 64, state.range(0), "ring",
                     TopologyKind::kRing, Tps186NoCredit()),
             state.range(1) != 0);
}
BENCHMARK(BM_ReplayRingAllReduce64NoCredit)
    ->Args({4 << 20, 1})
    ->Args({4 << 20, 0})
    ->Unit(benchmark::kMillisecond);

// The message-level peers' own workload: ring AllReduce of 64 MiB on the
// pure alpha-beta machine (traces/alpha-beta.hw.txtpb), no rendezvous, N
// chips. One iteration: lowering 1024 chips takes seconds.
// Second argument: coalescing on (1) or off (0). At 8 chips a block is 8
// packets of 1 MiB, whose arrivals fold; from 64 chips on a block is one
// packet and nothing does.
void BM_ReplayAlphaBetaRing(benchmark::State& state) {
  ReplayLoop(state,
             Prepare(v1::ALLREDUCE, static_cast<uint32_t>(state.range(0)),
                     64 << 20, "ring", TopologyKind::kRing, AlphaBeta(),
                     /*rendezvous=*/false),
             state.range(1) != 0);
}
BENCHMARK(BM_ReplayAlphaBetaRing)
    ->Args({8, 1})
    ->Args({8, 0})
    ->Args({64, 1})
    ->Args({1024, 1})
    ->Args({1024, 0})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The same without timing records (ReplayOptions::keep_records = false, the
// breakdown summed as it runs: what `ccreplay replay` does for this trace,
// PreferLeanReplay), coalescing on.
void BM_ReplayAlphaBetaRingLean(benchmark::State& state) {
  ReplayLoop(state,
             Prepare(v1::ALLREDUCE, static_cast<uint32_t>(state.range(0)),
                     64 << 20, "ring", TopologyKind::kRing, AlphaBeta(),
                     /*rendezvous=*/false),
             /*coalesce=*/true, /*keep_records=*/false);
}
BENCHMARK(BM_ReplayAlphaBetaRingLean)
    ->Arg(1024)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Reading a binary trace for a replay, three ways (argument 1): 2, as
// `ccreplay replay` does, chip by chip (StreamValidateAndDecode: each chip
// parsed on a reused arena, checked and decoded before the next); 1, the
// whole protobuf parsed onto an arena (ArenaTrace), validated and decoded,
// then freed (the path of text traces); 0, the same on the heap (one
// allocation per message). The ring AllReduce of 64 MiB on the alpha-beta
// machine, N chips. Counters per CPU second and per instruction: the file's
// bytes, the resident set the whole parse adds (the protobuf, before the
// decode), and the peak the reading adds beyond the file (the program
// included).
void BM_DecodeTrace(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(1));
  const std::string bytes =
      Lowered(v1::ALLREDUCE, static_cast<uint32_t>(state.range(0)), 64 << 20,
              "ring", TopologyKind::kRing, AlphaBeta(), /*rendezvous=*/false)
          .SerializeAsString();
  double instrs = 0, parsed_bytes = 0, peak_bytes = 0;
  for (auto _ : state) {
    ReleaseFreeMemory();
    ResetPeakRss();
    const double before = ProcStatusBytes("VmRSS");
    absl::StatusOr<Program> program;
    if (mode == 2) {
      std::optional<DecodedTrace> t =
          StreamValidateAndDecode(bytes, AlphaBeta().Target());
      if (!t) std::abort();
      program = std::move(t->program);
    } else if (mode == 1) {
      absl::StatusOr<ArenaTrace> t = ParseTraceOnArena(bytes, "bench");
      if (!t.ok()) std::abort();
      parsed_bytes = ProcStatusBytes("VmRSS") - before;
      program = ValidateAndDecode(**t, AlphaBeta().Target());
    } else {
      absl::StatusOr<v1::Trace> t = ParseTrace(bytes, "bench");
      if (!t.ok()) std::abort();
      parsed_bytes = ProcStatusBytes("VmRSS") - before;
      program = ValidateAndDecode(*t, AlphaBeta().Target());
    }  // the protobuf is freed here, as the replay frees it
    if (!program.ok()) std::abort();
    peak_bytes = ProcStatusBytes("VmHWM") - before;
    instrs = static_cast<double>(Instructions(*program));
    benchmark::DoNotOptimize(program->num_chips);
  }
  state.counters["instr/s"] =
      benchmark::Counter(instrs, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["instructions"] = instrs;
  state.counters["file_B/instr"] = static_cast<double>(bytes.size()) / instrs;
  if (mode != 2) state.counters["protobuf_B/instr"] = parsed_bytes / instrs;
  state.counters["peak_B/instr"] = peak_bytes / instrs;
}
BENCHMARK(BM_DecodeTrace)
    ->Args({64, 2})
    ->Args({64, 1})
    ->Args({64, 0})
    ->Args({1024, 2})
    ->Args({1024, 1})
    ->Args({1024, 0})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The event queue alone: a steady population of `range` pending events
// (first due at random within 2^`spread_bits` ps), each pop replaced by a
// push `delay()` later.
template <typename Queue, typename Delay>
void RunEventQueue(benchmark::State& state, int spread_bits, Delay delay) {
  Queue q;
  const int64_t population = state.range(0);
  uint64_t x = 12345;
  for (int64_t i = 0; i < population; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    q.Push(TimePs(static_cast<int64_t>(x >> (64 - spread_bits))), 0, 0);
  }
  for (auto _ : state) {
    const Event e = q.Pop();
    q.Push(TimePs(e.time_ps + delay()), 0, 0);
  }
  state.counters["events/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// Delays up to 2^20 ps (1 us), for each queue. EventQueue (the tiered one)
// wins at 1e3 and 1e5 pending and loses at 1e6, where its coarse wheel's
// nodes lie scattered (docs/architecture.md, "Event queue").
template <typename Queue>
void BM_EventQueue(benchmark::State& state) {
  uint64_t x = 54321;
  RunEventQueue<Queue>(state, 24, [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>(x >> 44);
  });
}
BENCHMARK_TEMPLATE(BM_EventQueue, BasicEventQueue<2>)
    ->Arg(1000)
    ->Arg(100000)
    ->Arg(1000000);
BENCHMARK_TEMPLATE(BM_EventQueue, BasicEventQueue<4>)
    ->Arg(1000)
    ->Arg(100000)
    ->Arg(1000000);
BENCHMARK_TEMPLATE(BM_EventQueue, BasicEventQueue<8>)
    ->Arg(1000)
    ->Arg(100000)
    ->Arg(1000000);
BENCHMARK_TEMPLATE(BM_EventQueue, RadixEventQueue)
    ->Arg(1000)
    ->Arg(100000)
    ->Arg(1000000);
BENCHMARK_TEMPLATE(BM_EventQueue, TieredEventQueue)
    ->Arg(1000)
    ->Arg(100000)
    ->Arg(1000000);

// The same with a packet-level replay's delays on TPS186: a lane group's
// serialisation of a full packet (3,200 ps) or an engine's read of one
// (4,500 ps), and one event in eight a link's flight later (225,000 ps),
// as the 64-chip ring AllReduce (at most 1,316 pending) and larger ones;
// the first events within 262 ns.
template <typename Queue>
void BM_EventQueuePacketDelays(benchmark::State& state) {
  uint64_t x = 54321;
  RunEventQueue<Queue>(state, 18, [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    if ((x >> 61) == 0) return int64_t{225000};
    return (x >> 60) % 2 == 0 ? int64_t{3200} : int64_t{4500};
  });
}
BENCHMARK_TEMPLATE(BM_EventQueuePacketDelays, RadixEventQueue)
    ->Arg(1000)
    ->Arg(100000);
BENCHMARK_TEMPLATE(BM_EventQueuePacketDelays, TieredEventQueue)
    ->Arg(1000)
    ->Arg(100000);

}  // namespace
}  // namespace ccreplay

BENCHMARK_MAIN();
