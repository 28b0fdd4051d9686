// Validation and decoding of a trace: checks the whole trace against the
// invariants of proto/trace.proto and the hardware it will run on, before any
// replay, and turns it into the flat Program of trace/program.h.
#ifndef CCREPLAY_TRACE_DECODE_H_
#define CCREPLAY_TRACE_DECODE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "proto/trace.pb.h"
#include "trace/program.h"

namespace ccreplay {

// Validates `trace` against `hw` and decodes it. On success the Program has
// num_chips == header.num_chips, chips.size() == num_chips (chips absent from
// the trace are empty) and each chip's streams in the trace's order, with the
// instructions mapped as documented on Instr; a MsgWait's counter id is in
// both qp_id and dst_qp.
//
// Validation runs the rules of trace/rules.h (the ones `ccreplay check`
// reports, ids and texts in docs/conformance.md) without the schema-strict
// ones, and returns the first error as an InvalidArgument that starts with
// its place, e.g.
//   "chip 3, stream 1, instruction 1207 (Transfer): dst_chip 70 out of range
//    [0, 64) (header.num_chips)" (instruction indices are 0-based positions
//    in their stream).
// `hw` is HwConfig::Target() of the hardware the trace will run on; a target
// with cdma_engines == 0 (a default-constructed one) is rejected with a clear
// error.
absl::StatusOr<Program> ValidateAndDecode(const v1::Trace& trace,
                                          const TraceTarget& hw);

// One instruction, mapped as documented on Instr. REQUIRES: it passed the
// rules.
Instr DecodeInstr(const v1::Instruction& in);

// The decoding step alone. REQUIRES: RunTraceRules() reported no error for
// `trace` (the Program's invariants rest on those rules).
Program DecodeValidated(const v1::Trace& trace);

}  // namespace ccreplay

#endif  // CCREPLAY_TRACE_DECODE_H_
