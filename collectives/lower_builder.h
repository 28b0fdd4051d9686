// The instruction emitter the algorithm lowerings share, and the per-rank
// lowering functions of every algorithm (collectives/algo_*.cc). Internal to
// collectives/; the public entry point is LowerCollective (lower.h). The
// protocol these emit is specified in docs/lowering.md.
#ifndef CCREPLAY_COLLECTIVES_LOWER_BUILDER_H_
#define CCREPLAY_COLLECTIVES_LOWER_BUILDER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "collectives/collective.h"
#include "collectives/lower.h"
#include "collectives/lower_internal.h"
#include "proto/trace.pb.h"
#include "trace/program.h"

namespace ccreplay {
namespace lowering {

// Counter of ready (rendezvous) messages from the partner at index t of an
// algorithm with several partners (recursive algorithms: t = the distance
// bit; Bruck: t = the step; the fold partner: t = log2 of the core size).
// Uses the vc banks 1..3 of every engine: ReadyCounter(0) == kReadyQp.
// REQUIRES: t < 3 * hardware engines (checked by the lowering).
constexpr uint32_t ReadyCounter(uint32_t t) { return MakeQp(t / 3, 1 + t % 3); }

// One contiguous piece of a block: [src, src + bytes) of the sender to
// [dst, dst + bytes) of the receiver.
struct Piece {
  uint64_t src = 0;
  uint64_t dst = 0;
  uint64_t bytes = 0;
};

// Appends instructions to one stream, or only counts them when the stream is
// null (the lowering's dry run that bounds the trace size before emitting).
// Ranks are group-local; the emitted chip ids are base + rank.
class StreamBuilder {
 public:
  StreamBuilder(uint32_t base, uint32_t rank, uint32_t engines,
                v1::Stream* stream, uint64_t* count)
      : base_(base),
        rank_(rank),
        engines_(engines),
        stream_(stream),
        count_(count) {}

  uint32_t engines() const { return engines_; }

  void MsgWait(uint32_t counter, uint32_t count);
  void RemoteMsgSend(uint32_t qp, uint32_t dst_rank, uint32_t counter);
  void MsgSend(uint32_t qp, uint32_t counter);
  void Transfer(uint32_t qp, uint32_t dst_rank, uint64_t src, uint64_t dst,
                uint64_t bytes, v1::ReduceOp reduce);

  // Sends one block of `bytes` bytes striped over NumStripes(bytes) engines:
  // per stripe j a Transfer on MakeQp(j, vc) (none when empty) and, on the
  // same qp, a message to counter MakeQp(j, vc) of the receiver (MsgSend
  // when dst_rank is this rank). docs/lowering.md, "Sending a block".
  void SendBlock(uint32_t dst_rank, uint64_t src, uint64_t dst, uint64_t bytes,
                 v1::ReduceOp reduce, uint32_t vc = 0);
  // Waits for one incoming block of `bytes` bytes: MsgWait {MakeQp(j, vc), 1}
  // for j = 0..NumStripes(bytes)-1.
  void WaitBlock(uint64_t bytes, uint32_t vc = 0);
  // Sends several pieces, each a block of its own; no pieces = one empty
  // block (a message on stripe 0 only), so a receiver always gets something.
  void SendPieces(uint32_t dst_rank, const std::vector<Piece>& pieces,
                  v1::ReduceOp reduce, uint32_t vc = 0);
  // Waits for the blocks of SendPieces with these sizes: per stripe j one
  // MsgWait counting every piece with more than j stripes.
  void WaitPieces(const std::vector<uint64_t>& sizes, uint32_t vc = 0);

 private:
  v1::Instruction* Add();

  uint32_t base_;
  uint32_t rank_;
  uint32_t engines_;
  v1::Stream* stream_;
  uint64_t* count_;
};

// One rank's program under construction (null program = count only).
class ChipOut {
 public:
  ChipOut(v1::ChipProgram* program, uint32_t base, uint32_t rank,
          uint32_t engines)
      : program_(program), base_(base), rank_(rank), engines_(engines) {}
  // Adds a stream with the next id (0, 1, ...).
  StreamBuilder AddStream();
  uint64_t instructions() const { return count_; }

 private:
  v1::ChipProgram* program_;
  uint32_t base_, rank_, engines_;
  uint32_t streams_ = 0;
  uint64_t count_ = 0;
};

// What every per-rank lowering needs: the spec and the resolved numbers.
struct LowerCtx {
  const CollectiveSpec* spec = nullptr;
  uint32_t g = 0;           // ranks in the group
  uint64_t m = 0;           // spec->bytes
  uint32_t k = 0;           // engines striped over
  uint32_t hw_engines = 0;  // engines the hardware has (counter ids)
  // ALLTOALL(V): bytes rank i sends rank p (the uniform split when the spec
  // has no matrix).
  uint64_t A2aBytes(uint32_t i, uint32_t p) const;
  // Offset of rank i's block for p in i's input; of sender q's slot in
  // p's output (relative to the output's start).
  uint64_t A2aSrcOffset(uint32_t i, uint32_t p) const;
  uint64_t A2aDstOffset(uint32_t q, uint32_t p) const;
  // Bytes rank p receives in all.
  uint64_t A2aReceived(uint32_t p) const;
};

// Pieces of size <= chunk_bytes (0 = one piece) a block of `bytes` is cut
// into for pipelining; an empty block is one empty piece.
uint64_t NumPieces(uint64_t bytes, uint64_t chunk_bytes);

// Per-algorithm checks beyond the common ones (e.g. enough counter ids).
absl::Status CheckRecursive(const LowerCtx& c);
absl::Status CheckBruck(const LowerCtx& c);

// Per-rank lowerings. `rank` is group-local.
void LowerRingRank(const LowerCtx& c, uint32_t rank, ChipOut& out);
void LowerRing2PortRank(const LowerCtx& c, uint32_t rank, ChipOut& out);
void LowerRecursiveRank(const LowerCtx& c, uint32_t rank, ChipOut& out);
void LowerPairwiseRank(const LowerCtx& c, uint32_t rank, ChipOut& out);
void LowerBruckRank(const LowerCtx& c, uint32_t rank, ChipOut& out);
void LowerBroadcastRank(const LowerCtx& c, uint32_t rank, ChipOut& out);
void LowerReduceRank(const LowerCtx& c, uint32_t rank, ChipOut& out);
void LowerP2pRank(const LowerCtx& c, uint32_t rank, ChipOut& out);

// The P2P destination rank of a spec (peer, or root + 1 by default).
uint32_t P2pPeer(const CollectiveSpec& spec, uint32_t g);

}  // namespace lowering
}  // namespace ccreplay

#endif  // CCREPLAY_COLLECTIVES_LOWER_BUILDER_H_
