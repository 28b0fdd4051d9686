// ccreplay: the command line. Exit codes: 0 ok, 1 the trace, config or
// replay is wrong (the message says where), 2 usage.
#include "cli/app.h"
#include "cli/spread.h"

int main(int argc, char** argv) {
  // MPI_Init/MPI_Finalize in an MPI build (cli/spread.h), nothing otherwise.
  ccreplay::SpreadSession session(&argc, &argv);
  return ccreplay::RunCcreplay(argc, argv);
}
