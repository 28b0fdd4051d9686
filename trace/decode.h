// Validation and decoding of a trace: checks the whole trace against the
// invariants of proto/trace.proto and the hardware it will run on, before any
// replay, and turns it into the flat Program of trace/program.h.
#ifndef CCREPLAY_TRACE_DECODE_H_
#define CCREPLAY_TRACE_DECODE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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

// ValidateAndDecode() of a trace handed over a piece at a time: the header,
// then each entry of trace.chips in order (by the chip-by-chip reader below,
// or by a lowering as it makes the chips). Each chip is checked by the
// rules (TraceRuleRunner) and decoded at once, so its message may go as
// soon as AddChip returns; after the first error the rest are only counted.
class TraceDecoder {
 public:
  // `header` (the trace's, or null if it has none) must outlive the decoder.
  TraceDecoder(const v1::TraceHeader* header, const TraceTarget& hw);
  ~TraceDecoder();
  TraceDecoder(const TraceDecoder&) = delete;
  TraceDecoder& operator=(const TraceDecoder&) = delete;

  void AddChip(const v1::ChipProgram& chip);
  // The next entry of trace.chips given as its bytes (a binary
  // ChipProgram): taken as AddChip() would take it, without protobuf
  // objects, when ReadWireChip() (trace/wire_chip.h) reads it and the rules
  // pass it; false, and nothing done, otherwise: the caller then parses the
  // bytes and calls AddChip().
  bool AddChipBytes(absl::string_view bytes);
  // Before the first chip: every entry of trace.chips as its bytes, in
  // order. Where each is of the shape ReadWireChip() takes, their streams'
  // lengths lay the program out at once (InterleavePlan, trace/program.h),
  // and AddChipBytes() writes each stream's instructions in their place;
  // otherwise, or for a chip it then leaves to AddChip(), Finish() lays the
  // program out as before. Either way the program is the same.
  void PlanLayout(const std::vector<absl::string_view>& chips);
  // How many chips AddChipBytes() took.
  int64_t wire_chips() const;
  // After Finish(): whether the program was written in its layout as it was
  // decoded (PlanLayout), not laid out after.
  bool written_in_place() const;
  // What ValidateAndDecode() returns for the trace handed over. Once.
  absl::StatusOr<Program> Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A trace as a replay needs it: its header and its validated program (the
// protobuf of its instructions is gone). The rules' first error is kept
// rather than returned, so a caller reports it where it decodes, after what
// it checks first (the topology the header names).
struct DecodedTrace {
  v1::Trace header;  // the trace's header alone: no chips
  // What ValidateAndDecode() returns for the whole trace: the program, or
  // the rules' first error.
  absl::StatusOr<Program> program;
  // Chips read straight from their bytes (StreamValidateAndDecode's fast
  // path, trace/wire_chip.h); the others were parsed by protobuf.
  int64_t wire_chips = 0;
  // The program was written in its interleaved layout as each chip was
  // decoded (TraceDecoder::PlanLayout), not laid out after.
  bool written_in_place = false;
};

// `trace`'s header and ValidateAndDecode(trace, hw).
DecodedTrace DecodeTrace(const v1::Trace& trace, const TraceTarget& hw);

// ValidateAndDecode() for a binary trace that is never held whole: the
// top-level fields of `bytes` are scanned (the header wherever it is, merged
// as protobuf merges a repeated singular field), then each chips entry is
// read straight from its bytes where it can be (TraceDecoder::AddChipBytes,
// trace/wire_chip.h), else parsed on a scratch arena reused from one to the
// next, checked by the rules (TraceRuleRunner) and decoded, before the next
// is read. So a replay holds the file, the program and at most one chip's
// protobuf, not the whole protobuf beside the program.
//
// Returns std::nullopt when `bytes` are not a well-formed binary trace with
// a version-1 header (text format, more than 2 GiB, a malformed or
// truncated field anywhere, a top-level field other than header and chips):
// the caller takes the whole-message path (ParseTrace, ValidateAndDecode),
// whose messages say what is wrong. A rule error is returned only once
// every chip has parsed, so a malformed file is reported as such whichever
// comes first, as by the whole-message path.
//
// `consumed`, if given, is called after each chip with the length of the
// prefix of `bytes` that will not be read again (the header and every chip
// so far): the caller may give those pages back (PrefixDropper,
// base/release_memory.h). Once it
// has, a std::nullopt return means the caller must read the bytes again
// for the whole-message path.
std::optional<DecodedTrace> StreamValidateAndDecode(
    absl::string_view bytes, const TraceTarget& hw,
    const std::function<void(size_t)>& consumed = nullptr);

}  // namespace ccreplay

#endif  // CCREPLAY_TRACE_DECODE_H_
