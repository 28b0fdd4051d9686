// Replay-core throughput: events and instructions per second of wall time.
// Run in Release: ./build/bench/replay_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <optional>

#include "collectives/lower.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "trace/decode.h"
#include "replay/engine.h"
#include "base/event_queue.h"

namespace ccreplay {
namespace {

struct Prepared {
  Program program;
  std::optional<Topology> topology;
  size_t instructions = 0;
};

Prepared Prepare(v1::CollectiveOp op, uint32_t n, uint64_t bytes,
                 const char* algo, TopologyKind topo) {
  CollectiveSpec spec;
  spec.op = op;
  spec.n = n;
  spec.bytes = bytes;
  spec.algorithm = algo;
  spec.topology = topo;
  const HwConfig& hw = DefaultTps186();
  auto trace = LowerCollective(spec, hw);
  if (!trace.ok()) std::abort();
  auto program = ValidateAndDecode(*trace, hw.Target());
  if (!program.ok()) std::abort();
  Prepared p;
  p.program = *std::move(program);
  p.topology = *Topology::Build(topo, n);
  for (const auto& c : p.program.chips) {
    for (const auto& s : c.streams) p.instructions += s.instrs.size();
  }
  return p;
}

void ReportRates(benchmark::State& state, uint64_t events, size_t instrs,
                 uint64_t packets) {
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["instr/s"] =
      benchmark::Counter(static_cast<double>(instrs),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["events"] = static_cast<double>(events);
  state.counters["packets"] = static_cast<double>(packets);
  state.counters["instructions"] = static_cast<double>(instrs);
}

// Replays `p` once per iteration and reports rates.
void ReplayLoop(benchmark::State& state, const Prepared& p) {
  uint64_t events = 0, packets = 0;
  for (auto _ : state) {
    auto r = Replay(p.program, DefaultTps186(), *p.topology);
    if (!r.ok()) {
      state.SkipWithError("replay failed");
      return;
    }
    events = r->events;
    packets = r->packets;
    benchmark::DoNotOptimize(r->makespan);
  }
  ReportRates(state, events, p.instructions, packets);
}

// The MoE dispatch row of the baseline: 64-chip pairwise AllToAll through one
// switch, 917,504 bytes per chip.
void BM_ReplayAllToAll64(benchmark::State& state) {
  ReplayLoop(state, Prepare(v1::ALLTOALL, 64, state.range(0), "pairwise",
                            TopologyKind::kSwitch));
}
BENCHMARK(BM_ReplayAllToAll64)
    ->Arg(917504)
    ->Arg(1835008)
    ->Unit(benchmark::kMillisecond);

// A 64-chip ring AllReduce: long dependency chains, few packets in flight.
void BM_ReplayRingAllReduce64(benchmark::State& state) {
  ReplayLoop(state, Prepare(v1::ALLREDUCE, 64, state.range(0), "ring",
                            TopologyKind::kRing));
}
BENCHMARK(BM_ReplayRingAllReduce64)
    ->Arg(4 << 20)
    ->Unit(benchmark::kMillisecond);

// The event queue alone: pop the earliest event and push one a little later,
// with a steady population of `range` pending events, for each heap arity
// (EventQueue is the winner).
template <typename Queue>
void BM_EventQueue(benchmark::State& state) {
  Queue q;
  const int64_t population = state.range(0);
  uint64_t x = 12345;
  for (int64_t i = 0; i < population; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    q.Push(TimePs(static_cast<int64_t>(x >> 40)), 0, 0);
  }
  for (auto _ : state) {
    const Event e = q.Pop();
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    q.Push(TimePs(e.time_ps + static_cast<int64_t>(x >> 44)), 0, 0);
  }
  state.counters["events/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_TEMPLATE(BM_EventQueue, BasicEventQueue<2>)
    ->Arg(1000)->Arg(100000)->Arg(1000000);
BENCHMARK_TEMPLATE(BM_EventQueue, BasicEventQueue<4>)
    ->Arg(1000)->Arg(100000)->Arg(1000000);
BENCHMARK_TEMPLATE(BM_EventQueue, BasicEventQueue<8>)
    ->Arg(1000)->Arg(100000)->Arg(1000000);
BENCHMARK_TEMPLATE(BM_EventQueue, RadixEventQueue)
    ->Arg(1000)->Arg(100000)->Arg(1000000);

}  // namespace
}  // namespace ccreplay

BENCHMARK_MAIN();
