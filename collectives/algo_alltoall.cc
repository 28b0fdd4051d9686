// AllToAll(v): pairwise (uniform or per-peer volumes) and Bruck.
// docs/lowering.md and docs/algorithms.md.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/lower_builder.h"

namespace ccreplay {
namespace lowering {

void LowerPairwiseRank(const LowerCtx& c, uint32_t rank, ChipOut& out) {
  StreamBuilder b = out.AddStream();
  const uint32_t n = c.g;
  const uint32_t k = c.k;
  // Every rank's input is [0, M) and its output starts at M.
  const uint64_t out_base = c.m;
  // Rendezvous: my output slots are free for every chip that will write one;
  // then wait until every chip I write to says the same.
  for (uint32_t step = 1; step < n; ++step) {
    b.RemoteMsgSend(MakeQp(step % k, 1), ModSub(rank, step, n), kReadyQp);
  }
  b.MsgWait(kReadyQp, n - 1);
  for (uint32_t step = 1; step <= n; ++step) {
    const uint32_t peer = (rank + step) % n;
    b.SendBlock(peer, c.A2aSrcOffset(rank, peer),
                out_base + c.A2aDstOffset(rank, peer), c.A2aBytes(rank, peer),
                v1::REDUCE_NONE);
  }
  // Every rank, me included, sends me one block: stripe j's counter receives
  // one message per block with more than j stripes. Many senders share a
  // counter, but each wait counts everything it will ever receive.
  std::vector<uint64_t> sizes(n);
  for (uint32_t q = 0; q < n; ++q) sizes[q] = c.A2aBytes(q, rank);
  b.WaitPieces(sizes);
}

namespace {

uint32_t BruckSteps(uint32_t n) {
  uint32_t steps = 0;
  while ((uint64_t{1} << steps) < n) ++steps;
  return steps;
}

uint32_t HighestBit(uint32_t x) {
  uint32_t h = 0;
  while ((x >> (h + 1)) != 0) ++h;
  return h;
}

// The blocks rank j sends at Bruck step k (distance 2^k): for every relative
// distance d in [1, n) with bit k set, the block from s = j - (d mod 2^k) to
// s + d, which j holds after s's earlier hops. It is read from j's input
// (first hop) or from staging area h slot d (h = the hop that brought it),
// and written to the receiver's output slot s (last hop) or to its staging
// area k slot d. Empty blocks are skipped; sender and receiver compute the
// same list.
std::vector<Piece> BruckBlocks(const LowerCtx& c, uint32_t j, uint32_t k) {
  const uint32_t n = c.g;
  const uint64_t slot = ChunkSize(c.m, n, 0);         // largest block
  const uint64_t staging = c.m + uint64_t{n} * slot;  // past every output
  const uint32_t dist = 1u << k;
  std::vector<Piece> out;
  for (uint32_t d = 1; d < n; ++d) {
    if ((d & dist) == 0) continue;
    const uint32_t low = d & (dist - 1);
    const uint32_t s = ModSub(j, low % n, n);
    const uint32_t dst = (s + d) % n;
    const uint64_t size = ChunkSize(c.m, n, dst);
    if (size == 0) continue;
    const uint64_t src =
        low == 0 ? ChunkOffset(c.m, n, dst)
                 : staging + (uint64_t{HighestBit(low)} * n + d) * slot;
    const bool last = (d >> (k + 1)) == 0;
    const uint64_t to = last ? c.m + uint64_t{s} * size
                             : staging + (uint64_t{k} * n + d) * slot;
    out.push_back({src, to, size});
  }
  return out;
}

}  // namespace

absl::Status CheckBruck(const LowerCtx& c) {
  const uint32_t steps = BruckSteps(c.g);
  if (steps > 3 * c.hw_engines) {
    return absl::InvalidArgumentError(
        absl::StrCat("lowering: bruck over ", c.g, " chips needs ", steps,
                     " ready counters, more than the ", 3 * c.hw_engines,
                     " the hardware's engines provide"));
  }
  if (c.spec->chunk_bytes != 0) {
    return absl::InvalidArgumentError(
        "lowering: chunk_bytes is supported by ring, ring_2port, broadcast, "
        "reduce and p2p, not by 'bruck'");
  }
  // Staging areas: steps * n slots of the largest block past the outputs.
  const unsigned __int128 end =
      static_cast<unsigned __int128>(c.m) +
      static_cast<unsigned __int128>(uint64_t{c.g} * (steps + 1)) *
          ChunkSize(c.m, c.g, 0);
  if (end > ~uint64_t{0}) {
    return absl::InvalidArgumentError(
        "lowering: bruck staging buffers would end past 2^64 - 1");
  }
  return absl::OkStatus();
}

void LowerBruckRank(const LowerCtx& c, uint32_t rank, ChipOut& out) {
  StreamBuilder b = out.AddStream();
  const uint32_t n = c.g;
  const uint32_t steps = BruckSteps(n);
  for (uint32_t k = 0; k < steps; ++k) {
    const uint32_t dist = 1u << k;
    const uint32_t from = ModSub(rank, dist % n, n);
    const uint32_t to = (rank + dist) % n;
    // I am at step k: all my earlier incoming blocks have landed, so my
    // step-k sender may start (ready counter k is fed by it alone).
    b.RemoteMsgSend(MakeQp(0, 1), from, ReadyCounter(k));
    b.MsgWait(ReadyCounter(k), 1);
    const std::vector<Piece> send = BruckBlocks(c, rank, k);
    for (const Piece& p : send) {
      b.SendBlock(to, p.src, p.dst, p.bytes, v1::REDUCE_NONE);
    }
    std::vector<uint64_t> sizes;
    for (const Piece& p : BruckBlocks(c, from, k)) sizes.push_back(p.bytes);
    if (!sizes.empty()) b.WaitPieces(sizes);
  }
  // My own block, locally, once no other message can be on my counters.
  const uint64_t own = ChunkSize(c.m, n, rank);
  if (own > 0) {
    b.SendBlock(rank, ChunkOffset(c.m, n, rank), c.m + uint64_t{rank} * own,
                own, v1::REDUCE_NONE);
    b.WaitBlock(own);
  }
}

}  // namespace lowering
}  // namespace ccreplay
