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
// Checks, each failure an InvalidArgument naming its place, e.g.
//   "chip 3, stream 1, instruction 1207 (Transfer): dst_chip 70 out of range
//    [0, 64)" (instruction indices are 0-based positions in their stream):
//  - header present, format_version FORMAT_VERSION_1, num_chips in
//    [1, kMaxChips], and equal to hw.num_chips unless that is 0;
//  - header.collective, if present: n in [1, num_chips], buffers on chips
//    < num_chips, each chip at most once, ranges not overflowing 2^64;
//    cdma_engines_used <= hw.cdma_engines (0 is taken as "not stated");
//  - chips: chip < num_chips, each at most once; stream ids unique per chip;
//  - every instruction has a kind;
//  - qp_id (all kinds but MsgWait and Fence) = (cdma_id << 2) | vc_bank with
//    cdma_id < hw.cdma_engines; counter ids (MsgSend / RemoteMsgSend
//    dst_qp_id, MsgWait qp_id) < hw.num_qps();
//  - peers < num_chips; Send, Receive and RemoteMsgSend peers differ from the
//    own chip;
//  - Transfer/Send/Receive bytes > 0 and addr + bytes < 2^64 (the end of the
//    range fits a uint64); reduce a known
//    ReduceOp; MsgWait count >= 1;
//  - two-sided matching: for each ordered chip pair (A, B), as many Sends
//    from A to B as Receives on B from A, with the same sizes (in order when
//    each side sits in one stream, as a multiset otherwise).
// `hw` is HwConfig::Target() of the hardware the trace will run on; a target
// with cdma_engines == 0 (a default-constructed one) is rejected with a clear
// error.
absl::StatusOr<Program> ValidateAndDecode(const v1::Trace& trace,
                                          const TraceTarget& hw);

}  // namespace ccreplay

#endif  // CCREPLAY_TRACE_DECODE_H_
