// The MPI build (-DCCREPLAY_MPI=ON): ranks of MPI_COMM_WORLD (cli/spread.h).
// Only the main thread calls MPI; the thread pool's workers never do.
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/spread.h"

namespace ccreplay {

Rank ThisRank() {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (!up || down) return {};
  Rank r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r.size);
  return r;
}

absl::StatusOr<std::vector<std::string>> GatherAtRoot(const std::string& mine) {
  const Rank me = ThisRank();
  if (me.size == 1) return std::vector<std::string>{mine};
  // MPI counts are ints. Every rank learns every count, so all agree on
  // which shares fit in the one buffer at rank 0 (in rank order, up to 2 GiB
  // in all); a share that does not is sent as nothing, and rank 0 reports
  // it. (A share over 2 GiB counts as -1.)
  const int count = mine.size() <= INT_MAX ? static_cast<int>(mine.size()) : -1;
  std::vector<int> counts(me.size);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> recv(counts.size()), displs(counts.size());
  int64_t total = 0;
  int too_big = -1;
  for (size_t i = 0; i < counts.size(); ++i) {
    recv[i] = counts[i];
    if (counts[i] < 0 || total + counts[i] > INT_MAX) {
      if (too_big < 0) too_big = static_cast<int>(i);
      recv[i] = 0;
    }
    displs[i] = static_cast<int>(total);
    total += recv[i];
  }
  std::string all(me.rank == 0 ? static_cast<size_t>(total) : 0, '\0');
  MPI_Gatherv(mine.data(), recv[me.rank], MPI_CHAR, all.data(), recv.data(),
              displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (me.rank != 0) return std::vector<std::string>{};
  if (too_big >= 0) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "mpi: rank ", too_big,
        "'s results do not fit one 2 GiB message; use more ranks"));
  }
  std::vector<std::string> out;
  for (int i = 0; i < me.size; ++i)
    out.push_back(all.substr(displs[i], recv[i]));
  return out;
}

SpreadSession::SpreadSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  // Rank 0 alone prints: the other ranks' standard output (a --help, a
  // note) would repeat it K times. Their standard error stays, for what only
  // they can say (a crash).
  if (const Rank me = ThisRank(); me.rank != 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) std::fclose(stdout);
  }
}

SpreadSession::~SpreadSession() { MPI_Finalize(); }

}  // namespace ccreplay
