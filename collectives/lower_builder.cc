#include "collectives/lower_builder.h"

#include <algorithm>

namespace ccreplay {
namespace lowering {

v1::Instruction* StreamBuilder::Add() {
  ++*count_;
  return stream_ == nullptr ? nullptr : stream_->add_instructions();
}

void StreamBuilder::MsgWait(uint32_t counter, uint32_t count) {
  v1::Instruction* in = Add();
  if (in == nullptr) return;
  v1::MsgWait* w = in->mutable_msg_wait();
  w->set_qp_id(counter);
  w->set_count(count);
}

void StreamBuilder::RemoteMsgSend(uint32_t qp, uint32_t dst_rank,
                                  uint32_t counter) {
  v1::Instruction* in = Add();
  if (in == nullptr) return;
  v1::RemoteMsgSend* m = in->mutable_remote_msg_send();
  m->set_qp_id(qp);
  m->set_dst_chip(base_ + dst_rank);
  m->set_dst_qp_id(counter);
}

void StreamBuilder::MsgSend(uint32_t qp, uint32_t counter) {
  v1::Instruction* in = Add();
  if (in == nullptr) return;
  v1::MsgSend* m = in->mutable_msg_send();
  m->set_qp_id(qp);
  m->set_dst_qp_id(counter);
}

void StreamBuilder::Transfer(uint32_t qp, uint32_t dst_rank, uint64_t src,
                             uint64_t dst, uint64_t bytes,
                             v1::ReduceOp reduce) {
  v1::Instruction* in = Add();
  if (in == nullptr) return;
  v1::Transfer* t = in->mutable_transfer();
  t->set_qp_id(qp);
  t->set_dst_chip(base_ + dst_rank);
  t->set_src_addr(src);
  t->set_dst_addr(dst);
  t->set_bytes(bytes);
  t->set_reduce(reduce);
}

void StreamBuilder::SendBlock(uint32_t dst_rank, uint64_t src, uint64_t dst,
                              uint64_t bytes, v1::ReduceOp reduce,
                              uint32_t vc) {
  const uint32_t stripes = NumStripes(bytes, engines_);
  for (uint32_t j = 0; j < stripes; ++j) {
    const uint32_t qp = MakeQp(j, vc);
    const uint64_t size = StripeSize(bytes, engines_, j);
    const uint64_t offset = StripeOffset(bytes, engines_, j);
    if (size > 0)
      Transfer(qp, dst_rank, src + offset, dst + offset, size, reduce);
    // The counter is the qp's own id: one counter per stripe (and vc).
    if (dst_rank == rank_) {
      MsgSend(qp, qp);
    } else {
      RemoteMsgSend(qp, dst_rank, qp);
    }
  }
}

void StreamBuilder::WaitBlock(uint64_t bytes, uint32_t vc) {
  const uint32_t stripes = NumStripes(bytes, engines_);
  for (uint32_t j = 0; j < stripes; ++j) MsgWait(MakeQp(j, vc), 1);
}

void StreamBuilder::SendPieces(uint32_t dst_rank,
                               const std::vector<Piece>& pieces,
                               v1::ReduceOp reduce, uint32_t vc) {
  if (pieces.empty()) {
    SendBlock(dst_rank, 0, 0, 0, reduce, vc);
    return;
  }
  for (const Piece& p : pieces) {
    SendBlock(dst_rank, p.src, p.dst, p.bytes, reduce, vc);
  }
}

void StreamBuilder::WaitPieces(const std::vector<uint64_t>& sizes,
                               uint32_t vc) {
  if (sizes.empty()) {
    WaitBlock(0, vc);
    return;
  }
  // Each piece sends one message on each of its stripes' counters; all come
  // from one sender, so one wait per counter for all of them.
  uint32_t max_stripes = 0;
  for (uint64_t s : sizes)
    max_stripes = std::max(max_stripes, NumStripes(s, engines_));
  for (uint32_t j = 0; j < max_stripes; ++j) {
    uint32_t count = 0;
    for (uint64_t s : sizes) count += NumStripes(s, engines_) > j ? 1 : 0;
    MsgWait(MakeQp(j, vc), count);
  }
}

StreamBuilder ChipOut::AddStream() {
  v1::Stream* s = nullptr;
  if (program_ != nullptr) {
    s = program_->add_streams();
    s->set_id(streams_);
  }
  ++streams_;
  return StreamBuilder(base_, rank_, engines_, s, &count_);
}

uint64_t LowerCtx::A2aBytes(uint32_t i, uint32_t p) const {
  if (spec->alltoallv_bytes.empty()) return ChunkSize(m, g, p);
  return spec->alltoallv_bytes[uint64_t{i} * g + p];
}

uint64_t LowerCtx::A2aSrcOffset(uint32_t i, uint32_t p) const {
  if (spec->alltoallv_bytes.empty()) return ChunkOffset(m, g, p);
  uint64_t off = 0;
  for (uint32_t x = 0; x < p; ++x) off += A2aBytes(i, x);
  return off;
}

uint64_t LowerCtx::A2aDstOffset(uint32_t q, uint32_t p) const {
  if (spec->alltoallv_bytes.empty()) return uint64_t{q} * ChunkSize(m, g, p);
  uint64_t off = 0;
  for (uint32_t x = 0; x < q; ++x) off += A2aBytes(x, p);
  return off;
}

uint64_t LowerCtx::A2aReceived(uint32_t p) const { return A2aDstOffset(g, p); }

uint64_t NumPieces(uint64_t bytes, uint64_t chunk_bytes) {
  if (chunk_bytes == 0 || bytes == 0) return 1;
  return bytes / chunk_bytes + (bytes % chunk_bytes != 0 ? 1 : 0);
}

uint32_t P2pPeer(const CollectiveSpec& spec, uint32_t g) {
  return spec.peer == CollectiveSpec::kDefaultPeer ? (spec.root + 1) % g
                                                   : spec.peer;
}

}  // namespace lowering
}  // namespace ccreplay
