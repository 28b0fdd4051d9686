// Spreading independent points over the processes of an MPI job: `mpirun -np
// K ccreplay sweep ...` (or `compare`) gives each rank a share of the points
// balanced by estimated work (PointsOfRank, cli/point.h), each rank runs its
// share on its own thread pool (-j), and rank 0 gathers every
// outcome and alone prints and writes the results, which are byte-identical
// to a serial run's. Built only with -DCCREPLAY_MPI=ON (spread_mpi.cc); the
// default build (spread_local.cc) is always one process of one rank.
#ifndef CCREPLAY_CLI_SPREAD_H_
#define CCREPLAY_CLI_SPREAD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccreplay {

struct Rank {
  int rank = 0;  // this process
  int size = 1;  // processes in the job
};

// {0, 1} unless built with MPI, initialised (SpreadSession) and run by
// mpirun with more than one process.
Rank ThisRank();

// Only rank 0 prints and writes results; the others run their share and
// return.
inline bool ReportsResults() { return ThisRank().rank == 0; }

// A collective call: every rank passes its bytes, rank 0 gets all of them in
// rank order, the others an empty vector. Errors (a share over 2 GiB) come
// back on rank 0.
absl::StatusOr<std::vector<std::string>> GatherAtRoot(const std::string& mine);

// main()'s guard: MPI_Init on construction and MPI_Finalize on destruction
// in an MPI build, nothing otherwise. Tests and fuzzers that call
// RunCcreplay in process do without it and are one rank.
class SpreadSession {
 public:
  SpreadSession(int* argc, char*** argv);
  ~SpreadSession();
  SpreadSession(const SpreadSession&) = delete;
  SpreadSession& operator=(const SpreadSession&) = delete;
};

// Whether `command` (a subcommand name) spreads over ranks: sweep and
// compare. Under mpirun with more than one process every other command is a
// usage error (each rank would write the same outputs).
inline bool CommandSpreads(const std::string& command) {
  return command == "sweep" || command == "compare";
}

}  // namespace ccreplay

#endif  // CCREPLAY_CLI_SPREAD_H_
