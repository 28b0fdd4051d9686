// Resource budgets of a replay: what a decoded program on a hardware config
// and topology will cost in memory, events and simulated time, estimated
// from their sizes alone before anything is allocated, and refused with a
// message naming the parameter, the estimate, the limit and how to raise it
// when it cannot finish (docs/limits.md).
#ifndef CCREPLAY_HW_BUDGET_H_
#define CCREPLAY_HW_BUDGET_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "trace/program.h"

namespace ccreplay {

// About 10^10 events: at the engine's 10-30 M events/s that is ten minutes
// or more of replay, past what any documented workload needs (the 1024-chip
// 64 MiB ring AllReduce on alpha-beta is 1.7e7).
inline constexpr uint64_t kDefaultMaxEvents = 10'000'000'000ULL;

// The machine's memory, MemTotal of /proc/meminfo in bytes; 0 when it
// cannot be read (then no memory budget applies by default).
uint64_t MachineMemoryBytes();

// The soft address-space limit (RLIMIT_AS, `ulimit -v`) in bytes; 0 when
// unlimited.
uint64_t AddressSpaceLimitBytes();

// What a run may use. 0 = the default: max_memory_bytes the smaller of the
// machine's memory (MachineMemoryBytes) and the address-space limit,
// max_events kDefaultMaxEvents.
struct ResourceBudget {
  uint64_t max_memory_bytes = 0;  // --max-memory
  uint64_t max_events = 0;        // --max-events
  uint64_t MemoryLimit() const;
  uint64_t EventLimit() const;
};

// Upper estimates of a replay, computed in one pass over the instructions
// (no allocation beyond a few counters).
struct ReplayEstimate {
  // Bytes the replay allocates: per instruction (timing and engine state),
  // per port (its (input, row) queues: inputs x lane-group queues x virtual
  // channels), per CDMA engine and per message counter.
  uint64_t memory_bytes = 0;
  // Events: per packet, its source's events and at most one of each
  // per-hop event on every hop of its route; per instruction, its own.
  uint64_t events = 0;
  // Simulated time if every instruction ran alone, one after another
  // (startup, read, every packet serialised and flown over every hop,
  // message latencies): an upper bound on the makespan of a
  // work-conserving replay. Saturates at UINT64_MAX.
  uint64_t serial_ps = 0;
};

// The estimates; an overflow of any of them saturates (and is then refused
// by CheckReplayBudget).
// REQUIRES: program decoded against hw (ValidateAndDecode), topology built
// for program.num_chips chips.
ReplayEstimate EstimateReplay(const Program& program, const HwConfig& hw,
                              const Topology& topology);

// OK, or ResourceExhausted naming what is too large:
// - "replay needs about 9.2 GB of memory (65538 inputs x 4 lane-group
//   queues on the busiest port ...), more than the budget of 25.3 GB
//   (the machine's memory; --max-memory raises it)";
// - "replay needs about 1.8e16 events (... 2^62 bytes in 256-byte packets
//   ...), more than the budget of 1e10 (--max-events raises it)";
// - an instruction whose own time alone, or a whole run whose serial time,
//   could pass the picosecond clock's range (2^62 ps, about 53 days): names
//   the instruction ("chip 0, stream 0, instruction 0 (Transfer): moving
//   9437184 bytes at cdma.bandwidth_bytes_per_s 1 takes 9.4e18 ps, past
//   the clock's range"). Not raisable.
absl::Status CheckReplayBudget(const Program& program, const HwConfig& hw,
                               const Topology& topology,
                               const ResourceBudget& budget);

// Why instruction `in` of chip `chip` alone cannot be timed on `hw` even
// one hop from its peer (its time would pass 2^62 ps), e.g. "9437184 bytes
// take about 9.44e+18 ps on this hardware (cdma.bandwidth_bytes_per_s 1,
// ...), past the range of the picosecond clock (2^62 ps, about 53 days)";
// "" when it can. For `ccreplay check`, which has no topology.
std::string InstrTimeProblem(const Instr& in, uint32_t chip,
                             const HwConfig& hw);

// Bytes the estimate counts for one instruction's InstrTiming
// (replay/engine.h); tests/budget_test.cc checks it is not less.
inline constexpr uint64_t kInstrTimingEstimateBytes = 64;

// "9.2 GB" / "512 MB" / "64 KB" (decimal, 3 significant digits), for
// budget messages.
std::string HumanBytes(uint64_t bytes);

}  // namespace ccreplay

#endif  // CCREPLAY_HW_BUDGET_H_
