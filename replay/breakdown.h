// Where the time went: the critical path of a replay, walked back from the
// last stream to finish, with every picosecond attributed to one mechanism.
//
// The walk follows what held each step up, as the engine recorded it
// (InstrTiming::cause): a MsgWait back to the message that completed its
// count, a message back through the network to the engine that sent it, an
// engine back to the instruction it finished before, a data-moving
// instruction back through its data phase and startup to the point its
// stream issued it, and a stream back to its previous instruction. Network
// time of the packet on the path is split by its route into serialisation,
// link latency + propagation, switch forwarding, and the rest (queueing for
// a lane group, arbitration, credit).
#ifndef CCREPLAY_REPLAY_BREAKDOWN_H_
#define CCREPLAY_REPLAY_BREAKDOWN_H_

#include <array>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/units.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "replay/engine.h"
#include "trace/program.h"

namespace ccreplay {

enum class PathCause : uint8_t {
  kStartup,        // CDMA startup of a data-moving instruction
  kEngineRead,     // the engine reading payload at its own rate
  kBackpressure,   // data phase beyond the engine's rate: the link is slower
  kSerialisation,  // the critical packet's bytes on each link it crossed
  kLatency,        // link protocol latency + propagation, message latency
  kSwitch,         // switch forwarding latency
  kQueueing,       // waiting for a lane group, arbitration or credit
  kOther,          // anything the walk cannot attribute (should be zero)
};
inline constexpr int kNumPathCauses = 8;

absl::string_view PathCauseName(PathCause c);

struct Breakdown {
  TimePs total;  // = ReplayResult::makespan
  std::array<TimePs, kNumPathCauses> by_cause{};
  // Where the walk ended: the stream the critical path starts in.
  uint32_t steps = 0;  // instructions visited

  TimePs operator[](PathCause c) const { return by_cause[static_cast<int>(c)]; }
};

// REQUIRES: `result` is Replay(program, hw, topology)'s result.
absl::StatusOr<Breakdown> CriticalPathBreakdown(const Program& program,
                                                const ReplayResult& result,
                                                const HwConfig& hw,
                                                const Topology& topology);

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_BREAKDOWN_H_
