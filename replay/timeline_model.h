// The tracks and events of a timeline, built once from a replay and written
// by both formats (replay/timeline.h): what is on the timeline is decided
// here, how it is spelled in timeline.cc (JSON) and timeline_perfetto.cc.
#ifndef CCREPLAY_REPLAY_TIMELINE_MODEL_H_
#define CCREPLAY_REPLAY_TIMELINE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"
#include "replay/timeline.h"

namespace ccreplay {
namespace timeline {

struct Track {
  uint64_t uuid = 0;
  uint64_t parent = 0;  // 0: a process track
  std::string name;
  uint32_t pid = 0;
  uint32_t tid = 0;  // 0 for a process track
  bool counter = false;
};

enum class EventKind : uint8_t { kSlice, kInstant, kCounter };

struct Event {
  EventKind kind = EventKind::kSlice;
  uint32_t track = 0;
  TimePs ts;
  TimePs end;  // slices
  std::string name;
  int64_t value = 0;                // counters
  Json args;                        // slices and instants (an object or null)
  std::vector<uint64_t> flows_out;  // flows that start at this event
  std::vector<uint64_t> flows_in;   // flows that end at this event
};

struct Model {
  std::vector<Track> tracks;
  // In order of time (ties: the order they were made in), each track's
  // events in an order that nests.
  std::vector<Event> events;
};

Model Build(const TimelineInputs& in);

}  // namespace timeline
}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_TIMELINE_MODEL_H_
