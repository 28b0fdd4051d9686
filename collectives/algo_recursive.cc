// Recursive algorithms for AllReduce, AllGather and ReduceScatter: "rh"
// (recursive halving: distances P/2, P/4, ..., 1 in every phase), "rd"
// (recursive doubling: distances 1, 2, ..., P/2 in every phase) and "hd"
// (halving-doubling, Rabenseifner: the ReduceScatter phase by halving
// distances, the AllGather phase by doubling ones, retracing it). Non-powers
// of two fold the extra ranks in a pre and a post step. docs/algorithms.md.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/lower_builder.h"

namespace ccreplay {
namespace lowering {
namespace {

struct Fold {
  uint32_t l = 0;  // log2 of the core size
  uint32_t p = 1;  // core size, the largest power of two <= g
  uint32_t r = 0;  // extra ranks p..g-1, rank p+x paired with core rank x
};

Fold FoldOf(uint32_t g) {
  Fold f;
  while ((f.p << 1) <= g) {
    f.p <<= 1;
    ++f.l;
  }
  f.r = g - f.p;
  return f;
}

// Distance bits of a phase in order.
std::vector<uint32_t> Bits(uint32_t l, bool halving) {
  std::vector<uint32_t> bits(l);
  for (uint32_t i = 0; i < l; ++i) bits[i] = halving ? l - 1 - i : i;
  return bits;
}

// The byte ranges (in place: src == dst) of a set of virtual chunks, in
// address order, adjacent ones merged, empty ones dropped. Virtual chunk v
// is real chunk v plus real chunk p+v when rank p+v exists.
std::vector<Piece> RangesOf(const LowerCtx& c, const Fold& f,
                            const std::vector<uint32_t>& vchunks) {
  std::vector<uint32_t> real;
  for (uint32_t v : vchunks) {
    real.push_back(v);
    if (v < f.r) real.push_back(f.p + v);
  }
  std::sort(real.begin(), real.end());
  std::vector<Piece> out;
  for (uint32_t x : real) {
    const uint64_t off = ChunkOffset(c.m, c.g, x);
    const uint64_t size = ChunkSize(c.m, c.g, x);
    if (size == 0) continue;
    if (!out.empty() && out.back().src + out.back().bytes == off) {
      out.back().bytes += size;
    } else {
      out.push_back({off, off, size});
    }
  }
  return out;
}

std::vector<uint64_t> Sizes(const std::vector<Piece>& pieces) {
  std::vector<uint64_t> s;
  for (const Piece& p : pieces) s.push_back(p.bytes);
  return s;
}

// Virtual chunks x of [0, p) with (x & mask) == (v & mask).
std::vector<uint32_t> Agreeing(const Fold& f, uint32_t v, uint32_t mask) {
  std::vector<uint32_t> out;
  for (uint32_t x = 0; x < f.p; ++x) {
    if ((x & mask) == (v & mask)) out.push_back(x);
  }
  return out;
}

struct Step {
  uint32_t partner;  // core rank
  uint32_t bit;      // distance bit: names the ready counter
  std::vector<Piece> send;
  std::vector<uint64_t> recv;
  v1::ReduceOp reduce;
};

// ReduceScatter phase of core rank v over `bits`: at each step keep the
// chunks agreeing with v on the bits done so far, send the partner those
// that disagree on this bit (summed into it), receive those that agree.
void ReduceScatterSteps(const LowerCtx& c, const Fold& f, uint32_t v,
                        const std::vector<uint32_t>& bits,
                        std::vector<Step>* steps) {
  uint32_t mask = 0;
  for (uint32_t b : bits) {
    const uint32_t partner = v ^ (1u << b);
    const uint32_t next = mask | (1u << b);
    steps->push_back({partner, b, RangesOf(c, f, Agreeing(f, partner, next)),
                      Sizes(RangesOf(c, f, Agreeing(f, v, next))),
                      v1::REDUCE_SUM});
    mask = next;
  }
}

// AllGather phase: v holds the chunks agreeing with it on the bits not yet
// done, sends them all, receives the partner's.
void AllGatherSteps(const LowerCtx& c, const Fold& f, uint32_t v,
                    const std::vector<uint32_t>& bits,
                    std::vector<Step>* steps) {
  uint32_t mask = f.p - 1;
  for (uint32_t b : bits) {
    const uint32_t partner = v ^ (1u << b);
    steps->push_back({partner, b, RangesOf(c, f, Agreeing(f, v, mask)),
                      Sizes(RangesOf(c, f, Agreeing(f, partner, mask))),
                      v1::REDUCE_NONE});
    mask &= ~(1u << b);
  }
}

// The pre-step block the extra rank e = p + x sends x, and the post-step
// block x sends back.
std::vector<Piece> PreBlock(const LowerCtx& c, uint32_t e) {
  if (c.spec->op == v1::ALLGATHER) {
    const uint64_t off = ChunkOffset(c.m, c.g, e);
    const uint64_t size = ChunkSize(c.m, c.g, e);
    if (size == 0) return {};
    return {{off, off, size}};
  }
  return {{0, 0, c.m}};
}

std::vector<Piece> PostBlock(const LowerCtx& c, uint32_t e) {
  const uint64_t off = ChunkOffset(c.m, c.g, e);
  const uint64_t size = ChunkSize(c.m, c.g, e);
  switch (c.spec->op) {
    case v1::REDUCESCATTER:
      if (size == 0) return {};
      return {{off, off, size}};
    case v1::ALLGATHER: {
      std::vector<Piece> out;
      if (off > 0) out.push_back({0, 0, off});
      if (off + size < c.m)
        out.push_back({off + size, off + size, c.m - off - size});
      return out;
    }
    default:
      return {{0, 0, c.m}};
  }
}

}  // namespace

absl::Status CheckRecursive(const LowerCtx& c) {
  const Fold f = FoldOf(c.g);
  const uint32_t counters = f.l + (f.r > 0 ? 1 : 0);
  if (counters > 3 * c.hw_engines) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lowering: algorithm '", c.spec->algorithm, "' over ", c.g,
        " chips needs ", counters, " ready counters, more than the ",
        3 * c.hw_engines, " (3 per engine) the hardware's ", c.hw_engines,
        " engines provide"));
  }
  if (c.spec->chunk_bytes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lowering: chunk_bytes is supported by ring, ring_2port, broadcast, "
        "reduce and p2p, not by '",
        c.spec->algorithm, "'"));
  }
  return absl::OkStatus();
}

void LowerRecursiveRank(const LowerCtx& c, uint32_t rank, ChipOut& out) {
  StreamBuilder b = out.AddStream();
  const Fold f = FoldOf(c.g);
  const v1::CollectiveOp op = c.spec->op;
  const std::string& algo = c.spec->algorithm;
  const uint32_t fold_counter = ReadyCounter(f.l);
  const uint32_t ready_qp = MakeQp(0, 1);
  if (rank >= f.p) {
    // Extra rank: hand my input to my core partner, wait for the result.
    const uint32_t x = rank - f.p;
    b.MsgWait(fold_counter, 1);
    b.SendPieces(x, PreBlock(c, rank),
                 op == v1::ALLGATHER ? v1::REDUCE_NONE : v1::REDUCE_SUM);
    b.WaitPieces(Sizes(PostBlock(c, rank)));
    return;
  }
  const uint32_t v = rank;
  const bool has_extra = v < f.r;
  if (has_extra) {
    b.RemoteMsgSend(ready_qp, f.p + v, fold_counter);
    b.WaitPieces(Sizes(PreBlock(c, f.p + v)));
  }
  std::vector<Step> steps;
  const bool rs_halving = algo != "rd";
  const bool ag_halving = algo == "rh";
  if (op != v1::ALLGATHER) {
    ReduceScatterSteps(c, f, v, Bits(f.l, rs_halving), &steps);
  }
  if (op != v1::REDUCESCATTER) {
    AllGatherSteps(c, f, v, Bits(f.l, ag_halving), &steps);
  }
  uint32_t last_partner = v;  // none yet
  for (const Step& s : steps) {
    // A new partner may write into me only once I am at this step (all my
    // earlier incoming blocks consumed), and I into it likewise: so my data
    // counters only ever hold this step's messages (docs/lowering.md).
    if (s.partner != last_partner) {
      b.RemoteMsgSend(ready_qp, s.partner, ReadyCounter(s.bit));
      b.MsgWait(ReadyCounter(s.bit), 1);
    }
    b.SendPieces(s.partner, s.send, s.reduce);
    b.WaitPieces(s.recv);
    last_partner = s.partner;
  }
  if (has_extra) b.SendPieces(f.p + v, PostBlock(c, f.p + v), v1::REDUCE_NONE);
}

}  // namespace lowering
}  // namespace ccreplay
