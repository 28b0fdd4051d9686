// Lowering of collectives to per-chip instruction streams (proto/trace.proto).
// The protocol (chunking, CDMA striping, qp assignment, write + msg
// synchronisation) is specified in docs/lowering.md; the replay engine relies
// on it, so any change there is a format change.
#ifndef CCREPLAY_COLLECTIVES_LOWER_H_
#define CCREPLAY_COLLECTIVES_LOWER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/collective.h"
#include "hw/config.h"
#include "proto/trace.pb.h"
#include "trace/decode.h"
#include "trace/program.h"

namespace ccreplay {
namespace lowering {

// Message counters (MsgWait qp_id, MsgSend/RemoteMsgSend dst_qp_id) the
// lowered traces use on every chip.
//
// Counts the data-arrival messages of stripe `stripe` of incoming blocks: one
// per incoming block with more than `stripe` stripes. It is the id of the qp
// the stripe and its message ride on, so each counter is fed by one qp per
// sender and, with one sender (the ring's prev), counts that sender's blocks
// in the order it sent them.
constexpr uint32_t DataCounter(uint32_t stripe) { return MakeQp(stripe, 0); }
// Stripe 0's data counter: the only one for blocks of one stripe (and for
// empty blocks, whose single message-only stripe is stripe 0).
inline constexpr uint32_t kDataQp = DataCounter(0);
// Counts ready (rendezvous) messages: "my buffer may now be written".
inline constexpr uint32_t kReadyQp = MakeQp(0, 1);

// Largest number of instructions (all chips together) a lowering emits.
// About 1.3 GB serialized, under protobuf's 2 GB cap on one message; a
// 1024-chip ring AllReduce over 8 engines needs about 50 million.
inline constexpr uint64_t kMaxInstructions = uint64_t{1} << 26;

}  // namespace lowering

// Lowers `spec` to a trace for `hw`: one chip program per chip (0..n-1), and
// a header describing the collective, the lowering's choices and every
// chip's input/output buffers. With spec.group_size = G the n chips form n/G
// groups of G consecutive chips, each running the collective on its own.
//
// Supported (docs/algorithms.md): ALLREDUCE, ALLGATHER, REDUCESCATTER with
// "ring", "ring_2port", "rh", "rd", "hd"; ALLTOALL with "pairwise", "bruck";
// ALLTOALLV with "pairwise"; BROADCAST and REDUCE with "ring" (a pipelined
// chain); P2P with "direct". Any n in [2, 65536] (the recursive algorithms
// and Bruck also need enough counter ids: 3 per hardware engine).
// The lowering stripes every block over K = spec.cdma_engines engines, or
// hw.cdma_engines when spec.cdma_engines is 0; spec.chunk_bytes pipelines
// the ring, ring_2port and chain algorithms.
//
// Returns InvalidArgument for an unsupported op/algorithm pair or option,
// bytes == 0, n outside [2, 65536], a group size that does not divide n,
// hw.cdma_engines == 0, spec.cdma_engines > hw.cdma_engines, buffers whose
// end would overflow uint64, an AllToAllv matrix whose rows do not sum to
// bytes, or a trace of more than lowering::kMaxInstructions instructions
// (counted exactly by a dry run before anything is emitted). Deterministic:
// equal inputs give byte-identical serialized traces.
absl::StatusOr<v1::Trace> LowerCollective(const CollectiveSpec& spec,
                                          const HwConfig& hw);

// Where LowerCollectiveTo puts a lowered trace, in file order: the header
// once (the sink may complete it, e.g. with the topology's parameters, and
// may take its contents), then each chip's program in chip order. A chip's
// program is reused for the next chip once `chip` returns, so only one chip
// of the trace is ever held: a sink that serialises each chip as it comes
// writes a large trace without building it whole (ccreplay lower). An error
// from the sink stops the lowering and is returned.
struct LoweredTraceSink {
  std::function<absl::Status(v1::TraceHeader* header)> header;
  std::function<absl::Status(v1::ChipProgram* chip)> chip;
};

// LowerCollective, delivering the trace to `sink` piece by piece. The checks
// (and their errors) are LowerCollective's and all happen before the header
// is delivered.
absl::Status LowerCollectiveTo(const CollectiveSpec& spec, const HwConfig& hw,
                               const LoweredTraceSink& sink);

// LowerCollective, validated and decoded chip by chip as the lowering makes
// the chips (TraceDecoder, trace/decode.h), so the whole protobuf is never
// built: the trace's header (a v1::Trace without chips) and what
// ValidateAndDecode() would return for the trace, or the lowering's error.
// For the commands that lower and replay in one go (sweep, compare,
// baseline, models, calibrate).
absl::StatusOr<DecodedTrace> LowerAndDecode(const CollectiveSpec& spec,
                                             const HwConfig& hw);

// Whether LowerCollective has a lowering of `algorithm` for `op` (the pairs
// listed above), and every algorithm name it knows, for command-line checks.
bool HasLowering(v1::CollectiveOp op, const std::string& algorithm);
const std::vector<std::string>& LoweringAlgorithmNames();

}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_LOWER_H_
