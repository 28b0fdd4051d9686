// The binary decoder's fast path: one chips entry of a binary trace (the
// bytes of a v1::ChipProgram) read straight from the protobuf wire format
// into decoded instructions, without building protobuf objects, for the
// chips that need nothing else. Anything unusual is left to the protobuf
// parser and the rules (trace/decode.cc), whose results and messages are the
// reference: this reader only ever says "taken" or "not mine".
#ifndef CCREPLAY_TRACE_WIRE_CHIP_H_
#define CCREPLAY_TRACE_WIRE_CHIP_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "trace/program.h"

namespace ccreplay {

// One chip as read: its id, its streams and all their instructions in
// order (each stream's `size` of them, one stream after the other).
struct WireChip {
  struct Stream {
    uint32_t id = 0;
    uint32_t size = 0;
  };
  uint32_t chip = 0;
  std::vector<Stream> streams;
  std::vector<Instr> instrs;
};

// What the per-instruction rules need (trace/rules.h): the hardware and the
// header's chip count.
struct WireRules {
  const TraceTarget* hw = nullptr;
  uint32_t num_chips = 0;
};

// Reads `bytes`, one ChipProgram message, into *out (its vectors are reused)
// and returns true only if
//  1. protobuf parses the bytes to the same values: every field is one the
//     schema defines, with its own wire type, at most once in its message
//     (so nothing is merged and no later value replaces an earlier one),
//     every instruction has exactly one kind, and every value fits its
//     field (a uint32 below 2^32, a ReduceOp of 0 or 1); varints and lengths
//     are read as protobuf reads them (a tag or a length in at most 5
//     bytes, a value in at most 10);
//  2. and, when `rules` is given, the chip's streams and instructions pass
//     every rule of trace/rules.h that does not depend on other chips: no
//     stream id twice, and each instruction the rules of its kind
//     (qp-encoding, peer-range, peer-self, zero-bytes, range-overflow,
//     reduce-op, counter-range, wait-count); and it has no Send or Receive,
//     which feed the cross-chip matching. Its instructions are then decoded
//     as DecodeInstr() (trace/decode.h) decodes them.
// Otherwise returns false, and *out means nothing: the caller parses the
// chip with protobuf and hands it to the rules (the chip may be malformed,
// break a rule, or merely be outside this subset).
bool ReadWireChip(absl::string_view bytes, const WireRules* rules,
                  WireChip* out);

// The chip id and its streams' lengths (instructions each, in order) of the
// ChipProgram in `bytes`, read as ReadWireChip reads its chip and streams
// but with every instruction only counted, not read: what ReadWireChip
// gives where it takes the chip. False where the chip or a stream is not of
// the shape it takes (ReadWireChip will not take the chip either).
bool CountWireChip(absl::string_view bytes, uint32_t* chip,
                   std::vector<uint32_t>* lengths);

}  // namespace ccreplay

#endif  // CCREPLAY_TRACE_WIRE_CHIP_H_
