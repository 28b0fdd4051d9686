// The default build: one process, one rank (cli/spread.h).
#include "cli/spread.h"

namespace ccreplay {

Rank ThisRank() { return {}; }

absl::StatusOr<std::vector<std::string>> GatherAtRoot(const std::string& mine) {
  return std::vector<std::string>{mine};
}

SpreadSession::SpreadSession(int*, char***) {}
SpreadSession::~SpreadSession() = default;

}  // namespace ccreplay
