#include "collectives/lower.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "collectives/lower_internal.h"

namespace ccreplay {
namespace {

using lowering::ChunkOffset;
using lowering::ChunkSize;
using lowering::DataCounter;
using lowering::kReadyQp;
using lowering::ModSub;
using lowering::NumStripes;
using lowering::StripeOffset;
using lowering::StripeSize;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// A MsgWait count is a uint32; the largest one the lowerings emit is n (the
// pairwise wait on one stripe's counter).
static_assert(lowering::kMaxChips <= std::numeric_limits<uint32_t>::max());

// The largest engine count a qp_id can name without overflowing uint32 and
// the one hw/config.cc accepts from a config file.
constexpr uint32_t kMaxEngines = 1u << 16;

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("lowering: ", what));
}

bool IsRingOp(v1::CollectiveOp op) {
  return op == v1::ALLREDUCE || op == v1::ALLGATHER || op == v1::REDUCESCATTER;
}

// Appends the instructions of one chip's single stream.
class StreamBuilder {
 public:
  StreamBuilder(uint32_t chip, uint32_t engines, v1::Stream* stream)
      : chip_(chip), engines_(engines), stream_(stream) {}

  void MsgWait(uint32_t counter, uint32_t count) {
    v1::MsgWait* w = stream_->add_instructions()->mutable_msg_wait();
    w->set_qp_id(counter);
    w->set_count(count);
  }

  void RemoteMsgSend(uint32_t qp, uint32_t dst_chip, uint32_t counter) {
    v1::RemoteMsgSend* m =
        stream_->add_instructions()->mutable_remote_msg_send();
    m->set_qp_id(qp);
    m->set_dst_chip(dst_chip);
    m->set_dst_qp_id(counter);
  }

  // Waits until every stripe of an incoming block of `bytes` bytes has
  // landed: one message on each stripe's counter, stripes in increasing
  // order.
  void WaitBlock(uint64_t bytes) {
    const uint32_t stripes = NumStripes(bytes, engines_);
    for (uint32_t j = 0; j < stripes; ++j) MsgWait(DataCounter(j), 1);
  }

  // Sends the block [src, src + bytes) of this chip to [dst, dst + bytes) of
  // dst_chip, striped over NumStripes(bytes) engines: per stripe j a Transfer
  // on MakeQp(j, 0) (none for an empty block) followed on the same qp by its
  // data-arrival message to stripe j's counter, DataCounter(j) == MakeQp(j, 0)
  // (MsgSend when dst_chip is this chip).
  void SendBlock(uint32_t dst_chip, uint64_t src, uint64_t dst, uint64_t bytes,
                 v1::ReduceOp reduce) {
    const uint32_t stripes = NumStripes(bytes, engines_);
    for (uint32_t j = 0; j < stripes; ++j) {
      const uint32_t qp = MakeQp(j, 0);
      const uint32_t counter = DataCounter(j);
      const uint64_t size = StripeSize(bytes, engines_, j);
      const uint64_t offset = StripeOffset(bytes, engines_, j);
      if (size > 0) {
        v1::Transfer* t = stream_->add_instructions()->mutable_transfer();
        t->set_qp_id(qp);
        t->set_dst_chip(dst_chip);
        t->set_src_addr(src + offset);
        t->set_dst_addr(dst + offset);
        t->set_bytes(size);
        t->set_reduce(reduce);
      }
      if (dst_chip == chip_) {
        v1::MsgSend* m = stream_->add_instructions()->mutable_msg_send();
        m->set_qp_id(qp);
        m->set_dst_qp_id(counter);
      } else {
        RemoteMsgSend(qp, dst_chip, counter);
      }
    }
  }

 private:
  uint32_t chip_;
  uint32_t engines_;
  v1::Stream* stream_;
};

// Ring schedule: which chunk chip `chip` sends at step `step`, and how.
// AllReduce runs the ReduceScatter steps then the AllGather steps.
struct RingStep {
  uint32_t chunk;
  v1::ReduceOp reduce;
};

uint32_t RingSteps(v1::CollectiveOp op, uint32_t n) {
  return op == v1::ALLREDUCE ? 2 * (n - 1) : n - 1;
}

RingStep RingStepOf(v1::CollectiveOp op, uint32_t n, uint32_t chip,
                    uint32_t step) {
  const bool reduce_scatter =
      op == v1::REDUCESCATTER || (op == v1::ALLREDUCE && step < n - 1);
  if (reduce_scatter) {
    // After n-1 steps chip i holds chunk i reduced over all chips.
    return {ModSub(chip, step + 1, n), v1::REDUCE_SUM};
  }
  const uint32_t t = op == v1::ALLREDUCE ? step - (n - 1) : step;
  return {ModSub(chip, t, n), v1::REDUCE_NONE};
}

// An upper bound on the instructions of the whole trace, computed before any
// is emitted. Every block has at most S = NumStripes(largest chunk) stripes:
// sending it takes a Transfer and a message per stripe, waiting for it one
// MsgWait per stripe. No overflow: n <= 2^16, steps < 2^17, k <= 2^16.
uint64_t InstructionBound(const CollectiveSpec& spec, uint32_t k) {
  const uint64_t n = spec.n;
  const uint64_t stripes = NumStripes(ChunkSize(spec.bytes, spec.n, 0), k);
  if (IsRingOp(spec.op)) {
    const uint64_t steps = RingSteps(spec.op, spec.n);
    // ready send + ready wait + per step (send a block + wait for one: the
    // steps-1 in-loop waits and the final one) + 1 to spare.
    return n * (3 + steps * 3 * stripes);
  }
  // n-1 ready sends + ready wait + n blocks + data waits + 1 to spare.
  return n * ((n - 1) + 1 + n * 2 * stripes + stripes + 1);
}

absl::Status Validate(const CollectiveSpec& spec, const HwConfig& hw,
                      uint32_t* engines) {
  const bool supported =
      (IsRingOp(spec.op) && spec.algorithm == "ring") ||
      (spec.op == v1::ALLTOALL && spec.algorithm == "pairwise");
  if (!supported) {
    return Invalid(absl::StrCat(
        "unsupported collective '", CollectiveOpName(spec.op),
        "' with algorithm '", spec.algorithm,
        "' (supported: allreduce, allgather, reducescatter with 'ring'; "
        "alltoall with 'pairwise')"));
  }
  if (spec.bytes == 0) return Invalid("bytes must be > 0");
  if (spec.n < 2 || spec.n > lowering::kMaxChips) {
    return Invalid(absl::StrCat("n must be in [2, ", lowering::kMaxChips,
                                "], got ", spec.n));
  }
  if (hw.cdma_engines == 0 || hw.cdma_engines > kMaxEngines) {
    return Invalid(absl::StrCat("hardware cdma_engines must be in [1, ",
                                kMaxEngines, "], got ", hw.cdma_engines));
  }
  if (spec.cdma_engines > hw.cdma_engines) {
    return Invalid(absl::StrCat("cdma_engines ", spec.cdma_engines,
                                " exceeds the hardware's ", hw.cdma_engines,
                                " engines per chip"));
  }
  const uint32_t k =
      spec.cdma_engines == 0 ? hw.cdma_engines : spec.cdma_engines;
  if (spec.op == v1::ALLTOALL) {
    // Chip 0's output ends furthest: M + n * ChunkSize(M, n, 0).
    const unsigned __int128 end = static_cast<unsigned __int128>(spec.bytes) +
                                  static_cast<unsigned __int128>(spec.n) *
                                      ChunkSize(spec.bytes, spec.n, 0);
    if (end > kU64Max) {
      return Invalid(
          absl::StrCat("alltoall of ", spec.bytes, " bytes over ", spec.n,
                       " chips needs output buffers ending past 2^64 - 1"));
    }
  }
  const uint64_t bound = InstructionBound(spec, k);
  if (bound > lowering::kMaxInstructions) {
    return Invalid(absl::StrCat(
        CollectiveOpName(spec.op), " over ", spec.n, " chips and ", k,
        " engines would emit up to ", bound, " instructions, more than the ",
        lowering::kMaxInstructions, " one trace may hold"));
  }
  *engines = k;
  return absl::OkStatus();
}

void SetRange(v1::BufferRange* r, uint64_t addr, uint64_t bytes) {
  r->set_addr(addr);
  r->set_bytes(bytes);
}

void LowerRingChip(const CollectiveSpec& spec, uint32_t k, uint32_t chip,
                   v1::Stream* stream) {
  const uint32_t n = spec.n;
  const uint64_t m = spec.bytes;
  const uint32_t next = (chip + 1) % n;
  const uint32_t prev = ModSub(chip, 1, n);
  StreamBuilder b(chip, k, stream);
  // Rendezvous: my buffer holds my input, so prev may write into it; then
  // wait until next says the same.
  b.RemoteMsgSend(MakeQp(0, 1), prev, kReadyQp);
  b.MsgWait(kReadyQp, 1);
  const uint32_t steps = RingSteps(spec.op, n);
  for (uint32_t s = 0; s < steps; ++s) {
    if (s > 0) {
      // The block prev sent me at step s-1 is what I forward now. Stripe j's
      // counter is fed only by prev's qp MakeQp(j, 0), in step order, so the
      // message this wait consumes is step s-1's stripe j (docs/lowering.md).
      const uint32_t in = RingStepOf(spec.op, n, prev, s - 1).chunk;
      b.WaitBlock(ChunkSize(m, n, in));
    }
    const RingStep out = RingStepOf(spec.op, n, chip, s);
    const uint64_t addr = ChunkOffset(m, n, out.chunk);
    b.SendBlock(next, addr, addr, ChunkSize(m, n, out.chunk), out.reduce);
  }
  const uint32_t last = RingStepOf(spec.op, n, prev, steps - 1).chunk;
  b.WaitBlock(ChunkSize(m, n, last));
}

void LowerPairwiseChip(const CollectiveSpec& spec, uint32_t k, uint32_t chip,
                       v1::Stream* stream) {
  const uint32_t n = spec.n;
  const uint64_t m = spec.bytes;
  StreamBuilder b(chip, k, stream);
  // Rendezvous: my output slots are free for every chip that will write one;
  // then wait until every chip I write to says the same.
  for (uint32_t step = 1; step < n; ++step) {
    b.RemoteMsgSend(MakeQp(step % k, 1), ModSub(chip, step, n), kReadyQp);
  }
  b.MsgWait(kReadyQp, n - 1);
  // Block p of my input goes to slot `chip` of p's output; every slot of
  // p's output has size ChunkSize(m, n, p). My own block goes last, locally.
  for (uint32_t step = 1; step <= n; ++step) {
    const uint32_t peer = (chip + step) % n;
    const uint64_t size = ChunkSize(m, n, peer);
    b.SendBlock(peer, ChunkOffset(m, n, peer), m + uint64_t{chip} * size, size,
                v1::REDUCE_NONE);
  }
  // Every chip, me included, sends me a block of ChunkSize(m, n, chip), so
  // stripe j's counter receives one message from each of the n blocks when
  // j < S(ChunkSize(m, n, chip)) and none otherwise. Many senders share a
  // counter here, but each wait counts everything its counter will ever
  // receive, so the order among them does not matter.
  const uint32_t stripes = NumStripes(ChunkSize(m, n, chip), k);
  for (uint32_t j = 0; j < stripes; ++j) b.MsgWait(DataCounter(j), n);
}

}  // namespace

absl::StatusOr<v1::Trace> LowerCollective(const CollectiveSpec& spec,
                                          const HwConfig& hw) {
  uint32_t k = 0;
  if (absl::Status s = Validate(spec, hw, &k); !s.ok()) return s;
  const uint32_t n = spec.n;
  const uint64_t m = spec.bytes;
  const bool ring = IsRingOp(spec.op);

  v1::Trace trace;
  v1::TraceHeader* h = trace.mutable_header();
  h->set_format_version(v1::FORMAT_VERSION_1);
  h->set_num_chips(n);
  h->set_generator("ccreplay lower");
  v1::CollectiveInfo* info = h->mutable_collective();
  info->set_op(spec.op);
  info->set_n(n);
  info->set_bytes(m);
  info->set_algorithm(spec.algorithm);
  info->set_topology(std::string(TopologyName(spec.topology)));
  info->set_cdma_engines_used(k);
  info->set_in_place(ring);
  info->mutable_buffers()->Reserve(static_cast<int>(n));
  for (uint32_t chip = 0; chip < n; ++chip) {
    v1::ChipBuffers* buf = info->add_buffers();
    buf->set_chip(chip);
    const uint64_t own_offset = ChunkOffset(m, n, chip);
    const uint64_t own_size = ChunkSize(m, n, chip);
    switch (spec.op) {
      case v1::ALLGATHER:
        SetRange(buf->mutable_input(), own_offset, own_size);
        SetRange(buf->mutable_output(), 0, m);
        break;
      case v1::REDUCESCATTER:
        SetRange(buf->mutable_input(), 0, m);
        SetRange(buf->mutable_output(), own_offset, own_size);
        break;
      case v1::ALLTOALL:
        SetRange(buf->mutable_input(), 0, m);
        SetRange(buf->mutable_output(), m, uint64_t{n} * own_size);
        break;
      default:  // ALLREDUCE
        SetRange(buf->mutable_input(), 0, m);
        SetRange(buf->mutable_output(), 0, m);
        break;
    }
  }

  trace.mutable_chips()->Reserve(static_cast<int>(n));
  for (uint32_t chip = 0; chip < n; ++chip) {
    v1::ChipProgram* program = trace.add_chips();
    program->set_chip(chip);
    v1::Stream* stream = program->add_streams();
    stream->set_id(0);
    if (ring) {
      LowerRingChip(spec, k, chip, stream);
    } else {
      LowerPairwiseChip(spec, k, chip, stream);
    }
  }
  return trace;
}

}  // namespace ccreplay
