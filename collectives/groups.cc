#include "collectives/groups.h"

#include <algorithm>

namespace ccreplay {

std::vector<TimePs> GroupTimes(const std::vector<TimePs>& chip_finish,
                               uint32_t group_size) {
  const size_t g = group_size == 0 ? chip_finish.size() : group_size;
  std::vector<TimePs> out;
  if (g == 0) return out;
  for (size_t base = 0; base + g <= chip_finish.size(); base += g) {
    out.push_back(*std::max_element(chip_finish.begin() + base,
                                    chip_finish.begin() + base + g));
  }
  return out;
}

}  // namespace ccreplay
