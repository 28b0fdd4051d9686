// Per-group results of a lowered collective over communicator groups.
#ifndef CCREPLAY_COLLECTIVES_GROUPS_H_
#define CCREPLAY_COLLECTIVES_GROUPS_H_

#include <cstdint>
#include <vector>

#include "base/units.h"

namespace ccreplay {

// The time of each group of `group_size` consecutive chips: the latest
// finish time of its chips (chip_finish as in ReplayResult). group_size 0 =
// one group of all chips. REQUIRES: group_size divides chip_finish.size().
std::vector<TimePs> GroupTimes(const std::vector<TimePs>& chip_finish,
                               uint32_t group_size);

}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_GROUPS_H_
