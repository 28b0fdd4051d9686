// ccreplay: the command line. Exit codes: 0 ok, 1 the trace, config or
// replay is wrong (the message says where), 2 usage.
#include "cli/app.h"

int main(int argc, char** argv) { return ccreplay::RunCcreplay(argc, argv); }
