// Chrome / Perfetto JSON timeline of a replay (loads in ui.perfetto.dev).
// One process per chip; inside it one track per stream (where the stream
// waited: MsgWait, Fence) and one per CDMA engine (each instruction's data
// phase). Slices on one track never overlap: a stream waits for one thing at
// a time and an engine moves one instruction's data at a time.
// Timestamps are microseconds (picoseconds / 1e6 as a double, printed as
// the shortest text that reads back as that double: exact for the six
// decimals a picosecond count has, and deterministic). One event a line.
#ifndef CCREPLAY_REPLAY_TIMELINE_H_
#define CCREPLAY_REPLAY_TIMELINE_H_

#include <string>

#include "hw/topology.h"
#include "replay/engine.h"
#include "trace/program.h"

namespace ccreplay {

// "12.345678": picoseconds as microseconds, exactly.
std::string PsToUsString(TimePs t);

// REQUIRES: `result` is Replay(program, ...)'s result.
std::string TimelineJson(const Program& program, const ReplayResult& result);

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_TIMELINE_H_
