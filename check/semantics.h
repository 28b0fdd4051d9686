// Semantic verification: proves that a trace computes the collective its
// header names. See docs/semantics.md.
//
// The trace runs on the reference executor (check/executor.h) with symbolic
// data: every byte range of every chip's memory holds "the sum of count_q
// copies of chip q's input at input offset o" (one count per contributing
// chip), tracked as intervals, not bytes. The execution respects stream
// order, per-qp FIFO delivery (a message arrives after the data queued before
// it on its qp), message counting (MsgWait consumes), Fence and Send/Receive
// matching. At the end each chip's output must be exactly what the
// collective defines (AllReduce: every group chip's input counted once;
// AllGather: chunk c = chip c's input; ...).
#ifndef CCREPLAY_CHECK_SEMANTICS_H_
#define CCREPLAY_CHECK_SEMANTICS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "check/executor.h"
#include "proto/trace.pb.h"

namespace ccreplay {

struct SemanticsOptions {
  // false: LazySchedule() of check/executor.h (transfers stay in flight as
  // long as any valid schedule keeps them, so hazards show up).
  // true: RandomSchedule(seed) (each step picks a runnable stream or a
  // per-qp channel head uniformly).
  bool random = false;
  uint64_t seed = 0;
};

// OK when the trace computes the collective of header.collective. Errors
// (FailedPrecondition unless noted):
//   - InvalidArgument: no collective in the header, an op it cannot check,
//     buffers missing or inconsistent with the op, a malformed instruction;
//   - a data hazard, naming the instruction and the range: a Transfer reads a
//     range a write into which is in flight, a write lands on a range an
//     in-flight Transfer is still reading, or two in-flight writes (not both
//     reductions) overlap;
//   - a deadlock (a stream waits forever) or messages never waited for;
//   - a wrong result: "chip 3 output [512, 1024): holds <what>, want <what>".
// REQUIRES: the trace passed ValidateAndDecode (addresses do not overflow).
absl::Status VerifySemantics(const v1::Trace& trace,
                             const SemanticsOptions& options = {});

// The same with any schedule and channel ordering of the reference executor
// (check/executor.h): tests drive adversarial or random interleavings here.
absl::Status VerifySemantics(const v1::Trace& trace, const Schedule& schedule,
                             const ExecOptions& exec_options);

}  // namespace ccreplay

#endif  // CCREPLAY_CHECK_SEMANTICS_H_
