// The mechanisms the critical path's time is split by, and the split itself
// (replay/breakdown.h walks it from the timing records; replay/critical_path.h
// keeps it as the engine replays; ReplayResult carries the result).
#ifndef CCREPLAY_REPLAY_PATH_H_
#define CCREPLAY_REPLAY_PATH_H_

#include <array>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "base/units.h"

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
  // The walk's steps: the points of instructions' lives it passed through
  // (issue, engine start, data end, landing, completion, ...).
  uint32_t steps = 0;

  TimePs operator[](PathCause c) const { return by_cause[static_cast<int>(c)]; }
};

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_PATH_H_
