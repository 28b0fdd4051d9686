// Ring algorithms (AllReduce, AllGather, ReduceScatter by ring and
// ring_2port) and the chains (Broadcast, Reduce) and P2P. docs/lowering.md
// and docs/algorithms.md describe the schedules and why they are correct.
#include <algorithm>

#include "collectives/lower_builder.h"

namespace ccreplay {
namespace lowering {
namespace {

// Which chunk a ring rank sends at `step`, and how. AllReduce runs the
// ReduceScatter steps then the AllGather steps.
struct RingStep {
  uint32_t chunk;
  v1::ReduceOp reduce;
};

uint32_t RingSteps(v1::CollectiveOp op, uint32_t n) {
  return op == v1::ALLREDUCE ? 2 * (n - 1) : n - 1;
}

RingStep RingStepOf(v1::CollectiveOp op, uint32_t n, uint32_t v,
                    uint32_t step) {
  const bool reduce_scatter =
      op == v1::REDUCESCATTER || (op == v1::ALLREDUCE && step < n - 1);
  if (reduce_scatter) return {ModSub(v, step + 1, n), v1::REDUCE_SUM};
  const uint32_t t = op == v1::ALLREDUCE ? step - (n - 1) : step;
  return {ModSub(v, t, n), v1::REDUCE_NONE};
}

// One ring over part of every chunk. `reverse` runs it in the direction
// rank -> rank - 1 by renaming rank r and chunk c as (g - r) mod g and
// (g - c) mod g, so that rank r still ends with chunk r. `part` selects
// the bytes of each chunk the ring carries: -1 all, 0 its first half
// (ChunkSize(size, 2, 0) bytes), 1 the rest.
struct RingLane {
  bool reverse = false;
  int part = -1;
  uint32_t vc = 0;  // data qps and counters MakeQp(j, vc)
  uint32_t ready_qp = MakeQp(0, 1);
  uint32_t ready_counter = kReadyQp;
};

void ChunkPart(const LowerCtx& c, uint32_t chunk, int part, uint64_t* off,
               uint64_t* size) {
  const uint64_t o = ChunkOffset(c.m, c.g, chunk);
  const uint64_t s = ChunkSize(c.m, c.g, chunk);
  if (part < 0) {
    *off = o;
    *size = s;
  } else {
    *off = o + (part == 0 ? 0 : ChunkSize(s, 2, 0));
    *size = ChunkSize(s, 2, static_cast<uint32_t>(part));
  }
}

// Piece t of a block of `size` bytes at `off` cut into chunk_bytes pieces.
void PieceOf(uint64_t off, uint64_t size, uint64_t chunk_bytes, uint64_t t,
             uint64_t* p_off, uint64_t* p_size) {
  if (chunk_bytes == 0) {
    *p_off = off;
    *p_size = size;
    return;
  }
  *p_off = off + t * chunk_bytes;
  *p_size = std::min(chunk_bytes, size - t * chunk_bytes);
}

void LowerRingLane(const LowerCtx& c, uint32_t rank, const RingLane& lane,
                   StreamBuilder& b) {
  const uint32_t n = c.g;
  const v1::CollectiveOp op = c.spec->op;
  const uint64_t cb = c.spec->chunk_bytes;
  const uint32_t v = lane.reverse ? ModSub(0, rank, n) : rank;
  auto real = [&](uint32_t x) { return lane.reverse ? ModSub(0, x, n) : x; };
  const uint32_t next = real((v + 1) % n);
  const uint32_t prev = real(ModSub(v, 1, n));
  // Rendezvous: my buffer holds my input, so prev may write into it; then
  // wait until next says the same. Not with pre-registered buffers.
  if (!c.spec->no_rendezvous) {
    b.RemoteMsgSend(lane.ready_qp, prev, lane.ready_counter);
    b.MsgWait(lane.ready_counter, 1);
  }
  const uint32_t steps = RingSteps(op, n);
  for (uint32_t s = 0; s < steps; ++s) {
    // The chunk I send at step s is the one prev sent me at step s-1 (the
    // same index in every transition, docs/lowering.md), so piece t of it
    // can go on as soon as piece t has landed: the pipeline.
    const RingStep out = RingStepOf(op, n, v, s);
    uint64_t off = 0, size = 0;
    ChunkPart(c, real(out.chunk), lane.part, &off, &size);
    const uint64_t pieces = NumPieces(size, cb);
    for (uint64_t t = 0; t < pieces; ++t) {
      uint64_t p_off = 0, p_size = 0;
      PieceOf(off, size, cb, t, &p_off, &p_size);
      // Stripe j's counter is fed only by prev's qp MakeQp(j, vc), in the
      // order prev sent: this wait consumes piece t of step s-1.
      if (s > 0) b.WaitBlock(p_size, lane.vc);
      b.SendBlock(next, p_off, p_off, p_size, out.reduce, lane.vc);
    }
  }
  const uint32_t last = RingStepOf(op, n, ModSub(v, 1, n), steps - 1).chunk;
  uint64_t off = 0, size = 0;
  ChunkPart(c, real(last), lane.part, &off, &size);
  const uint64_t pieces = NumPieces(size, cb);
  for (uint64_t t = 0; t < pieces; ++t) {
    uint64_t p_off = 0, p_size = 0;
    PieceOf(off, size, cb, t, &p_off, &p_size);
    b.WaitBlock(p_size, lane.vc);
  }
}

}  // namespace

void LowerRingRank(const LowerCtx& c, uint32_t rank, ChipOut& out) {
  StreamBuilder b = out.AddStream();
  LowerRingLane(c, rank, RingLane{}, b);
}

void LowerRing2PortRank(const LowerCtx& c, uint32_t rank, ChipOut& out) {
  if (c.g == 2) {
    // Two chips have one neighbour: both directions are the same cable, and
    // ring_2port is the ring (docs/algorithms.md).
    LowerRingRank(c, rank, out);
    return;
  }
  // First half of every chunk clockwise on stream 0 (vc 0), second half
  // counter-clockwise on stream 1 (vc 2 for data, vc 3 for ready), so the
  // two lanes never share a qp or a counter.
  StreamBuilder cw = out.AddStream();
  RingLane lane;
  lane.part = 0;
  LowerRingLane(c, rank, lane, cw);
  StreamBuilder ccw = out.AddStream();
  lane.reverse = true;
  lane.part = 1;
  lane.vc = 2;
  lane.ready_qp = MakeQp(0, 3);
  lane.ready_counter = MakeQp(0, 3);
  LowerRingLane(c, rank, lane, ccw);
}

// Broadcast: a pipelined chain root -> root+1 -> ... -> root+g-1.
void LowerBroadcastRank(const LowerCtx& c, uint32_t rank, ChipOut& out) {
  StreamBuilder b = out.AddStream();
  const uint32_t n = c.g;
  const uint32_t q = ModSub(rank, c.spec->root, n);  // position in the chain
  const uint32_t next = (rank + 1) % n;
  const uint32_t prev = ModSub(rank, 1, n);
  if (q > 0) b.RemoteMsgSend(MakeQp(0, 1), prev, kReadyQp);
  if (q + 1 < n) b.MsgWait(kReadyQp, 1);
  const uint64_t pieces = NumPieces(c.m, c.spec->chunk_bytes);
  for (uint64_t t = 0; t < pieces; ++t) {
    uint64_t off = 0, size = 0;
    PieceOf(0, c.m, c.spec->chunk_bytes, t, &off, &size);
    if (q > 0) b.WaitBlock(size);
    if (q + 1 < n) b.SendBlock(next, off, off, size, v1::REDUCE_NONE);
  }
}

// Reduce: a pipelined chain root+g-1 -> ... -> root+1 -> root, each link
// summing into the next chip's buffer.
void LowerReduceRank(const LowerCtx& c, uint32_t rank, ChipOut& out) {
  StreamBuilder b = out.AddStream();
  const uint32_t n = c.g;
  const uint32_t q = ModSub(rank, c.spec->root, n);
  const uint32_t toward_root = ModSub(rank, 1, n);
  const uint32_t from = (rank + 1) % n;
  if (q + 1 < n) b.RemoteMsgSend(MakeQp(0, 1), from, kReadyQp);
  if (q > 0) b.MsgWait(kReadyQp, 1);
  const uint64_t pieces = NumPieces(c.m, c.spec->chunk_bytes);
  for (uint64_t t = 0; t < pieces; ++t) {
    uint64_t off = 0, size = 0;
    PieceOf(0, c.m, c.spec->chunk_bytes, t, &off, &size);
    if (q + 1 < n) b.WaitBlock(size);
    if (q > 0) b.SendBlock(toward_root, off, off, size, v1::REDUCE_SUM);
  }
}

// P2P: root writes its [0, M) into the peer's [0, M), in pieces.
void LowerP2pRank(const LowerCtx& c, uint32_t rank, ChipOut& out) {
  const uint32_t src = c.spec->root;
  const uint32_t dst = P2pPeer(*c.spec, c.g);
  if (rank != src && rank != dst) return;  // idle: no stream
  StreamBuilder b = out.AddStream();
  if (rank == dst) b.RemoteMsgSend(MakeQp(0, 1), src, kReadyQp);
  if (rank == src) b.MsgWait(kReadyQp, 1);
  const uint64_t pieces = NumPieces(c.m, c.spec->chunk_bytes);
  for (uint64_t t = 0; t < pieces; ++t) {
    uint64_t off = 0, size = 0;
    PieceOf(0, c.m, c.spec->chunk_bytes, t, &off, &size);
    if (rank == src) b.SendBlock(dst, off, off, size, v1::REDUCE_NONE);
    if (rank == dst) b.WaitBlock(size);
  }
}

}  // namespace lowering
}  // namespace ccreplay
