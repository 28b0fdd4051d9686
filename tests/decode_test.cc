#include "trace/decode.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

// TPS186 as the trace layer sees it (traces/tps186.hw.txtpb): 8 CDMA
// engines per chip, so qp_ids [0, 32) and counters [0, 32); any chip count.
TraceTarget Hw() { return {"TPS186", 0, 8}; }

v1::Trace Empty(uint32_t num_chips) {
  v1::Trace t;
  t.mutable_header()->set_format_version(v1::FORMAT_VERSION_1);
  t.mutable_header()->set_num_chips(num_chips);
  return t;
}

// The stream `id` of `chip`, adding the chip and the stream as needed.
v1::Stream* StreamOf(v1::Trace* t, uint32_t chip, uint32_t id) {
  v1::ChipProgram* c = nullptr;
  for (v1::ChipProgram& p : *t->mutable_chips()) {
    if (p.chip() == chip) c = &p;
  }
  if (c == nullptr) {
    c = t->add_chips();
    c->set_chip(chip);
  }
  for (v1::Stream& s : *c->mutable_streams()) {
    if (s.id() == id) return &s;
  }
  v1::Stream* s = c->add_streams();
  s->set_id(id);
  return s;
}

v1::Transfer* AddTransfer(v1::Stream* s, uint32_t qp, uint32_t dst,
                          uint64_t bytes) {
  v1::Transfer* x = s->add_instructions()->mutable_transfer();
  x->set_qp_id(qp);
  x->set_dst_chip(dst);
  x->set_bytes(bytes);
  return x;
}

v1::Send* AddSend(v1::Stream* s, uint32_t dst, uint64_t bytes) {
  v1::Send* x = s->add_instructions()->mutable_send();
  x->set_dst_chip(dst);
  x->set_bytes(bytes);
  return x;
}

v1::Receive* AddReceive(v1::Stream* s, uint32_t src, uint64_t bytes) {
  v1::Receive* x = s->add_instructions()->mutable_receive();
  x->set_src_chip(src);
  x->set_bytes(bytes);
  return x;
}

void ExpectSamePrograms(const Program& a, const Program& b) {
  ASSERT_EQ(a.num_chips, b.num_chips);
  ASSERT_EQ(a.chips.size(), b.chips.size());
  for (size_t c = 0; c < a.chips.size(); ++c) {
    ASSERT_EQ(a.chips[c].streams.size(), b.chips[c].streams.size()) << c;
    for (size_t s = 0; s < a.chips[c].streams.size(); ++s) {
      const StreamProgram& x = a.chips[c].streams[s];
      const StreamProgram& y = b.chips[c].streams[s];
      EXPECT_EQ(x.id, y.id);
      ASSERT_EQ(x.instrs.size(), y.instrs.size());
      for (size_t i = 0; i < x.instrs.size(); ++i) {
        EXPECT_TRUE(SameInstr(x.instrs[i], y.instrs[i]))
            << "chip " << c << " stream " << s << " instruction " << i;
      }
    }
  }
}

// Decoding the binary encoding of a trace chip by chip gives what decoding
// the whole message gives: the same program or the same first error.
void ExpectStreamedLikeWhole(absl::string_view bytes,
                             const absl::StatusOr<Program>& whole,
                             const TraceTarget& hw) {
  std::optional<DecodedTrace> streamed = StreamValidateAndDecode(bytes, hw);
  ASSERT_TRUE(streamed.has_value());
  ASSERT_EQ(streamed->program.status(), whole.status());
  if (whole.ok()) ExpectSamePrograms(*streamed->program, *whole);
  // The prefixes it reports consumed are never read again: overwritten
  // as soon as they are reported (as pages given back read as zeros), the
  // decode is the same.
  std::string scratch(bytes);
  size_t last = 0;
  std::optional<DecodedTrace> dropped = StreamValidateAndDecode(
      scratch, hw, [&](size_t prefix) {
        EXPECT_GE(prefix, last);
        EXPECT_LE(prefix, scratch.size());
        last = prefix;
        std::fill(scratch.begin(), scratch.begin() + prefix, '\xff');
      });
  ASSERT_TRUE(dropped.has_value());
  ASSERT_EQ(dropped->program.status(), whole.status());
  if (whole.ok()) ExpectSamePrograms(*dropped->program, *whole);
  EXPECT_EQ(dropped->header.SerializeAsString(),
            streamed->header.SerializeAsString());
}

// The error message of decoding `t` on TPS186 (empty if it decodes), which
// the chip-by-chip reader of its binary encoding gives as well.
std::string Error(const v1::Trace& t, const TraceTarget& hw = Hw()) {
  absl::StatusOr<Program> p = ValidateAndDecode(t, hw);
  if (t.has_header() && t.header().format_version() == v1::FORMAT_VERSION_1) {
    ExpectStreamedLikeWhole(t.SerializeAsString(), p, hw);
  }
  if (p.ok()) return "";
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  return std::string(p.status().message());
}

TEST(DecodeTest, MapsEveryKindAndKeepsChipAndStreamOrder) {
  v1::Trace t = Empty(4);
  // Chip 2 listed before chip 0; chips 1 and 3 absent.
  v1::Stream* a = StreamOf(&t, 2, 5);
  v1::Stream* b = StreamOf(&t, 2, 1);
  v1::Transfer* x = AddTransfer(a, /*qp=*/29, /*dst=*/2, /*bytes=*/4096);
  x->set_src_addr(0x100);
  x->set_dst_addr(0x2000);
  x->set_reduce(v1::REDUCE_SUM);
  v1::Send* snd = AddSend(a, 0, 64);
  snd->set_qp_id(4);
  snd->set_src_addr(0x300);
  v1::RemoteMsgSend* rm = a->add_instructions()->mutable_remote_msg_send();
  rm->set_qp_id(4);
  rm->set_dst_chip(0);
  rm->set_dst_qp_id(17);
  v1::MsgSend* ms = b->add_instructions()->mutable_msg_send();
  ms->set_qp_id(3);
  ms->set_dst_qp_id(31);
  v1::MsgWait* w = b->add_instructions()->mutable_msg_wait();
  w->set_qp_id(12);
  w->set_count(3);
  b->add_instructions()->mutable_fence();
  v1::Receive* rcv = AddReceive(StreamOf(&t, 0, 0), 2, 64);
  rcv->set_qp_id(8);
  rcv->set_dst_addr(0x4000);

  absl::StatusOr<Program> p = ValidateAndDecode(t, Hw());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->num_chips, 4u);
  ASSERT_EQ(p->chips.size(), 4u);
  EXPECT_TRUE(p->chips[1].streams.empty());
  EXPECT_TRUE(p->chips[3].streams.empty());
  ASSERT_EQ(p->chips[2].streams.size(), 2u);
  EXPECT_EQ(p->chips[2].streams[0].id, 5u);
  EXPECT_EQ(p->chips[2].streams[1].id, 1u);
  ASSERT_EQ(p->chips[0].streams.size(), 1u);

  const auto& sa = p->chips[2].streams[0].instrs;
  ASSERT_EQ(sa.size(), 3u);
  EXPECT_EQ(sa[0].kind, OpKind::kTransfer);
  EXPECT_EQ(sa[0].qp_id, 29u);
  EXPECT_EQ(sa[0].peer, 2u);
  EXPECT_EQ(sa[0].src_addr, 0x100u);
  EXPECT_EQ(sa[0].dst_addr, 0x2000u);
  EXPECT_EQ(sa[0].bytes, 4096u);
  EXPECT_TRUE(sa[0].reduce_sum);
  EXPECT_EQ(sa[1].kind, OpKind::kSend);
  EXPECT_EQ(sa[1].qp_id, 4u);
  EXPECT_EQ(sa[1].peer, 0u);
  EXPECT_EQ(sa[1].src_addr, 0x300u);
  EXPECT_EQ(sa[1].dst_addr, 0u);
  EXPECT_EQ(sa[1].bytes, 64u);
  EXPECT_FALSE(sa[1].reduce_sum);
  EXPECT_EQ(sa[2].kind, OpKind::kRemoteMsgSend);
  EXPECT_EQ(sa[2].qp_id, 4u);
  EXPECT_EQ(sa[2].peer, 0u);
  EXPECT_EQ(sa[2].dst_qp, 17u);
  EXPECT_EQ(sa[2].bytes, 0u);

  const auto& sb = p->chips[2].streams[1].instrs;
  ASSERT_EQ(sb.size(), 3u);
  EXPECT_EQ(sb[0].kind, OpKind::kMsgSend);
  EXPECT_EQ(sb[0].qp_id, 3u);
  EXPECT_EQ(sb[0].dst_qp, 31u);
  EXPECT_EQ(sb[1].kind, OpKind::kMsgWait);
  EXPECT_EQ(sb[1].qp_id, 12u);  // the waited counter, in both fields
  EXPECT_EQ(sb[1].dst_qp, 12u);
  EXPECT_EQ(sb[1].count, 3u);
  EXPECT_EQ(sb[2].kind, OpKind::kFence);
  EXPECT_EQ(sb[2].qp_id, 0u);
  EXPECT_EQ(sb[2].peer, 0u);

  const Instr& r = p->chips[0].streams[0].instrs.at(0);
  EXPECT_EQ(r.kind, OpKind::kReceive);
  EXPECT_EQ(r.qp_id, 8u);
  EXPECT_EQ(r.peer, 2u);
  EXPECT_EQ(r.dst_addr, 0x4000u);
  EXPECT_EQ(r.src_addr, 0u);
  EXPECT_EQ(r.bytes, 64u);
  EXPECT_EQ(InstrPlace(*p, 0, 0, 0),
            "chip 0, stream 0, instruction 0 (Receive)");
}

TEST(DecodeTest, HeaderRules) {
  v1::Trace t;
  EXPECT_EQ(Error(t), "trace has no header");
  t.mutable_header()->set_num_chips(2);
  EXPECT_EQ(Error(t),
            "header.format_version is 0, expected 1 (FORMAT_VERSION_1)");
  EXPECT_EQ(Error(Empty(0)), "header.num_chips is 0, must be in [1, 65536]");
  EXPECT_EQ(Error(Empty(65537)),
            "header.num_chips is 65537, must be in [1, 65536]");
  absl::StatusOr<Program> big = ValidateAndDecode(Empty(kMaxChips), Hw());
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->chips.size(), 65536u);
}

TEST(DecodeTest, HardwareChipCountMustMatchUnlessZero) {
  TraceTarget hw = Hw();
  hw.num_chips = 8;
  EXPECT_EQ(Error(Empty(64), hw),
            "the trace has 64 chips (header.num_chips), but the hardware "
            "config 'TPS186' has 8 (topology.num_chips)");
  EXPECT_EQ(Error(Empty(8), hw), "");
  hw.num_chips = 0;  // as many as the trace has
  EXPECT_EQ(Error(Empty(64), hw), "");
}

TEST(DecodeTest, HardwareWithoutEnginesIsRejected) {
  EXPECT_EQ(Error(Empty(2), TraceTarget()),
            "hardware config has no CDMA engines (cdma.engines_per_chip is 0)");
}

TEST(DecodeTest, ChipRules) {
  v1::Trace t = Empty(4);
  StreamOf(&t, 0, 0);
  StreamOf(&t, 4, 0);
  EXPECT_EQ(Error(t),
            "chips[1]: chip 4 out of range [0, 4) (header.num_chips)");

  v1::Trace d = Empty(4);
  d.add_chips()->set_chip(0);
  d.add_chips()->set_chip(1);
  d.add_chips()->set_chip(0);
  EXPECT_EQ(Error(d), "chips[2]: chip 0 listed twice (also chips[0])");

  v1::Trace s = Empty(4);
  v1::ChipProgram* c = s.add_chips();
  c->set_chip(3);
  c->add_streams()->set_id(3);
  c->add_streams()->set_id(1);
  c->add_streams()->set_id(3);
  EXPECT_EQ(Error(s),
            "chip 3: stream id 3 listed twice (streams[0] and "
            "streams[2])");
  // The same stream id on two chips is fine.
  v1::Trace ok = Empty(4);
  StreamOf(&ok, 0, 3);
  StreamOf(&ok, 1, 3);
  EXPECT_EQ(Error(ok), "");
}

TEST(DecodeTest, InstructionWithoutKind) {
  v1::Trace t = Empty(2);
  v1::Stream* s = StreamOf(&t, 1, 4);
  s->add_instructions()->mutable_fence();
  s->add_instructions();
  EXPECT_EQ(Error(t),
            "chip 1, stream 4, instruction 1 (no kind): instruction has no "
            "kind (none "
            "of transfer, send, receive, msg_send, msg_wait, remote_msg_send, "
            "fence is set)");
}

TEST(DecodeTest, PeerOutOfRangeNamesThePlaceAsInTheStyleGuide) {
  // The example of ARCHITECTURE.md, built literally: 64 chips, chip 3,
  // stream 1, instruction 1207 is a Transfer to chip 70.
  v1::Trace t = Empty(64);
  StreamOf(&t, 3, 0)->add_instructions()->mutable_fence();
  v1::Stream* s = StreamOf(&t, 3, 1);
  for (int i = 0; i < 1207; ++i) s->add_instructions()->mutable_fence();
  AddTransfer(s, 0, 70, 128);
  EXPECT_EQ(Error(t),
            "chip 3, stream 1, instruction 1207 (Transfer): dst_chip 70 out "
            "of range [0, 64) (header.num_chips)");
}

TEST(DecodeTest, QpIdMustNameAnExistingCdma) {
  // 8 engines: qp 31 = (7 << 2) | 3 is the last valid one; 35 = (8 << 2) | 3.
  v1::Trace ok = Empty(2);
  AddTransfer(StreamOf(&ok, 0, 0), 31, 1, 8);
  EXPECT_EQ(Error(ok), "");

  v1::Trace t = Empty(2);
  AddTransfer(StreamOf(&t, 0, 0), 35, 1, 8);
  EXPECT_EQ(Error(t),
            "chip 0, stream 0, instruction 0 (Transfer): qp_id 35 names "
            "cdma_id 8 (vc_bank 3, by the encoding qp_id = (cdma_id << 2) | "
            "vc_bank), but cdma_id must be in [0, 8): the hardware has 8 CDMA "
            "engines per chip");

  // Every kind that uses a qp is checked: Send, Receive, MsgSend,
  // RemoteMsgSend.
  v1::Trace s = Empty(2);
  AddSend(StreamOf(&s, 0, 0), 1, 8)->set_qp_id(32);
  EXPECT_THAT(Error(s), HasSubstr("chip 0, stream 0, instruction 0 (Send): "
                                  "qp_id 32 names cdma_id 8 (vc_bank 0"));
  v1::Trace r = Empty(2);
  AddReceive(StreamOf(&r, 1, 2), 0, 8)->set_qp_id(1000);
  EXPECT_THAT(Error(r), HasSubstr("chip 1, stream 2, instruction 0 (Receive):"
                                  " qp_id 1000 names cdma_id 250 (vc_bank 0"));
  v1::Trace m = Empty(2);
  v1::MsgSend* ms = StreamOf(&m, 0, 0)->add_instructions()->mutable_msg_send();
  ms->set_qp_id(64);
  EXPECT_THAT(Error(m), HasSubstr("(MsgSend): qp_id 64 names cdma_id 16"));
  v1::Trace rm = Empty(2);
  v1::RemoteMsgSend* x =
      StreamOf(&rm, 0, 0)->add_instructions()->mutable_remote_msg_send();
  x->set_qp_id(33);
  x->set_dst_chip(1);
  EXPECT_THAT(Error(rm),
              HasSubstr("(RemoteMsgSend): qp_id 33 names cdma_id 8 (vc_bank "
                        "1"));
}

TEST(DecodeTest, CounterIdsMustBeQpIds) {
  v1::Trace ms = Empty(2);
  StreamOf(&ms, 0, 0)->add_instructions()->mutable_msg_send()->set_dst_qp_id(
      32);
  EXPECT_EQ(Error(ms),
            "chip 0, stream 0, instruction 0 (MsgSend): dst_qp_id 32 out of "
            "range [0, 32) (message counters are qp ids: 8 CDMA engines x 4 "
            "VC banks)");

  v1::Trace rm = Empty(2);
  v1::RemoteMsgSend* x =
      StreamOf(&rm, 1, 0)->add_instructions()->mutable_remote_msg_send();
  x->set_dst_chip(0);
  x->set_dst_qp_id(40);
  EXPECT_THAT(Error(rm), HasSubstr("chip 1, stream 0, instruction 0 "
                                   "(RemoteMsgSend): dst_qp_id 40 out of "
                                   "range [0, 32)"));

  v1::Trace w = Empty(2);
  v1::MsgWait* mw = StreamOf(&w, 0, 0)->add_instructions()->mutable_msg_wait();
  mw->set_qp_id(32);
  mw->set_count(1);
  EXPECT_THAT(Error(w), HasSubstr("chip 0, stream 0, instruction 0 (MsgWait):"
                                  " qp_id 32 out of range [0, 32)"));
  mw->set_qp_id(31);
  EXPECT_EQ(Error(w), "");
}

TEST(DecodeTest, PeersMustExistAndTwoSidedPeersMustBeRemote) {
  v1::Trace t = Empty(4);
  AddTransfer(StreamOf(&t, 1, 0), 0, 1, 8);  // local copy: fine
  EXPECT_EQ(Error(t), "");

  v1::Trace s = Empty(4);
  AddSend(StreamOf(&s, 2, 0), 2, 8);
  EXPECT_EQ(Error(s),
            "chip 2, stream 0, instruction 0 (Send): dst_chip 2 is the "
            "instruction's own chip; Send needs another chip (a local copy "
            "is a Transfer to the own chip)");
  v1::Trace s4 = Empty(4);
  AddSend(StreamOf(&s4, 2, 0), 4, 8);
  EXPECT_EQ(Error(s4),
            "chip 2, stream 0, instruction 0 (Send): dst_chip 4 "
            "out of range [0, 4) (header.num_chips)");

  v1::Trace r = Empty(4);
  AddReceive(StreamOf(&r, 3, 0), 3, 8);
  EXPECT_THAT(Error(r), HasSubstr("chip 3, stream 0, instruction 0 (Receive):"
                                  " src_chip 3 is the instruction's own "
                                  "chip"));
  v1::Trace r9 = Empty(4);
  AddReceive(StreamOf(&r9, 3, 0), 9, 8);
  EXPECT_EQ(Error(r9),
            "chip 3, stream 0, instruction 0 (Receive): src_chip "
            "9 out of range [0, 4) (header.num_chips)");

  v1::Trace m = Empty(4);
  v1::RemoteMsgSend* x =
      StreamOf(&m, 0, 0)->add_instructions()->mutable_remote_msg_send();
  x->set_dst_chip(0);
  EXPECT_THAT(Error(m), HasSubstr("chip 0, stream 0, instruction 0 "
                                  "(RemoteMsgSend): dst_chip 0 is the "
                                  "instruction's own chip"));
  x->set_dst_chip(4);
  EXPECT_EQ(Error(m),
            "chip 0, stream 0, instruction 0 (RemoteMsgSend): "
            "dst_chip 4 out of range [0, 4) (header.num_chips)");
}

TEST(DecodeTest, DataMovesNeedBytes) {
  v1::Trace t = Empty(2);
  AddTransfer(StreamOf(&t, 0, 0), 0, 1, 0);
  EXPECT_EQ(Error(t),
            "chip 0, stream 0, instruction 0 (Transfer): bytes is "
            "0, must be > 0");
  v1::Trace s = Empty(2);
  AddSend(StreamOf(&s, 0, 0), 1, 0);
  EXPECT_EQ(Error(s),
            "chip 0, stream 0, instruction 0 (Send): bytes is 0, "
            "must be > 0");
  v1::Trace r = Empty(2);
  AddReceive(StreamOf(&r, 1, 0), 0, 0);
  EXPECT_EQ(Error(r),
            "chip 1, stream 0, instruction 0 (Receive): bytes is "
            "0, must be > 0");
}

TEST(DecodeTest, AddressRangesMustNotOverflow) {
  // [2^64 - 16, 2^64 - 1) ends at the largest uint64: fine; one byte more
  // and the end is 2^64, which overflows.
  v1::Trace ok = Empty(2);
  AddTransfer(StreamOf(&ok, 0, 0), 0, 1, 15)->set_src_addr(kMaxU64 - 15);
  EXPECT_EQ(Error(ok), "");

  v1::Trace t = Empty(2);
  AddTransfer(StreamOf(&t, 0, 0), 0, 1, 16)->set_src_addr(kMaxU64 - 15);
  EXPECT_EQ(Error(t),
            "chip 0, stream 0, instruction 0 (Transfer): src_addr "
            "18446744073709551600 + bytes 16 overflows 2^64 (the range's end "
            "must fit in 64 bits)");
  v1::Trace d = Empty(2);
  AddTransfer(StreamOf(&d, 0, 0), 0, 1, 2)->set_dst_addr(kMaxU64);
  EXPECT_EQ(Error(d),
            "chip 0, stream 0, instruction 0 (Transfer): dst_addr "
            "18446744073709551615 + bytes 2 overflows 2^64 (the range's end "
            "must fit in 64 bits)");
  v1::Trace s = Empty(2);
  AddSend(StreamOf(&s, 0, 0), 1, kMaxU64)->set_src_addr(1);
  EXPECT_EQ(Error(s),
            "chip 0, stream 0, instruction 0 (Send): src_addr 1 + bytes "
            "18446744073709551615 overflows 2^64 (the range's end must fit "
            "in 64 bits)");
  v1::Trace r = Empty(2);
  AddReceive(StreamOf(&r, 1, 0), 0, 8)->set_dst_addr(kMaxU64 - 3);
  EXPECT_EQ(Error(r),
            "chip 1, stream 0, instruction 0 (Receive): dst_addr "
            "18446744073709551612 + bytes 8 overflows 2^64 (the range's end "
            "must fit in 64 bits)");
}

TEST(DecodeTest, ReduceMustBeKnown) {
  v1::Trace t = Empty(2);
  AddTransfer(StreamOf(&t, 0, 0), 0, 1, 8)
      ->set_reduce(static_cast<v1::ReduceOp>(5));
  EXPECT_EQ(Error(t),
            "chip 0, stream 0, instruction 0 (Transfer): reduce 5 "
            "is not a known ReduceOp (REDUCE_NONE = 0, REDUCE_SUM "
            "= 1)");
}

TEST(DecodeTest, MsgWaitCountAtLeastOne) {
  v1::Trace t = Empty(2);
  StreamOf(&t, 1, 6)->add_instructions()->mutable_msg_wait()->set_qp_id(2);
  EXPECT_EQ(Error(t),
            "chip 1, stream 6, instruction 0 (MsgWait): count is 0, "
            "must be >= 1");
}

TEST(DecodeTest, SendsAndReceivesMustPairUp) {
  // Two Sends 0 -> 1, one Receive: the second Send is unmatched.
  v1::Trace t = Empty(3);
  AddSend(StreamOf(&t, 0, 0), 1, 64);
  AddSend(StreamOf(&t, 0, 0), 1, 64);
  AddReceive(StreamOf(&t, 1, 0), 0, 64);
  EXPECT_EQ(Error(t),
            "chip 0, stream 0, instruction 1 (Send): no matching "
            "Receive: chip 0 has 2 Send(s) to chip 1, but chip 1 "
            "has 1 Receive(s) from chip 0");

  // A Receive on chip 2 from chip 0 with no Send.
  v1::Trace r = Empty(3);
  AddReceive(StreamOf(&r, 2, 5), 0, 64);
  EXPECT_EQ(Error(r),
            "chip 2, stream 5, instruction 0 (Receive): no "
            "matching Send: chip 0 has 0 Send(s) to chip 2, but "
            "chip 2 has 1 Receive(s) from chip 0");
}

TEST(DecodeTest, PairedSizesMustAgreeInOrderWithinOneStream) {
  v1::Trace t = Empty(2);
  AddSend(StreamOf(&t, 0, 0), 1, 64);
  AddSend(StreamOf(&t, 0, 0), 1, 128);
  AddReceive(StreamOf(&t, 1, 0), 0, 128);
  AddReceive(StreamOf(&t, 1, 0), 0, 64);
  EXPECT_EQ(Error(t),
            "chip 0, stream 0, instruction 0 (Send): sends 64 bytes to chip "
            "1, but its matching Receive (number 0 between these chips), "
            "chip 1, stream 0, instruction 0 (Receive), expects 128 "
            "bytes");
}

TEST(DecodeTest, PairedSizesAcrossStreamsCompareAsMultisets) {
  // The Receives sit in two streams, so their order is decided at run time:
  // {64, 128} against {128, 64} is fine ...
  v1::Trace t = Empty(2);
  AddSend(StreamOf(&t, 0, 0), 1, 64);
  AddSend(StreamOf(&t, 0, 0), 1, 128);
  AddReceive(StreamOf(&t, 1, 0), 0, 128);
  AddReceive(StreamOf(&t, 1, 1), 0, 64);
  EXPECT_EQ(Error(t), "");
  // ... {64, 128} against {128, 32} is not: the 32-byte Receive is left over.
  t.mutable_chips(1)
      ->mutable_streams(1)
      ->mutable_instructions(0)
      ->mutable_receive()
      ->set_bytes(32);
  EXPECT_EQ(Error(t),
            "chip 1, stream 1, instruction 0 (Receive): no Send of 32 bytes "
            "between chip 0 and chip 1 is left to match it (sizes compared as "
            "a multiset: the pair's Sends or Receives are in several "
            "streams)");
}

TEST(DecodeTest, SeveralChipPairsAreCheckedSeparately) {
  // Ring exchange on 3 chips: each chip sends to the next and receives from
  // the previous; sizes differ per pair.
  v1::Trace t = Empty(3);
  for (uint32_t c = 0; c < 3; ++c) {
    AddSend(StreamOf(&t, c, 0), (c + 1) % 3, 100 + c);
    AddReceive(StreamOf(&t, c, 0), (c + 2) % 3, 100 + (c + 2) % 3);
  }
  EXPECT_EQ(Error(t), "");
  // Break the pair 2 -> 0 only.
  t.mutable_chips(0)
      ->mutable_streams(0)
      ->mutable_instructions(1)
      ->mutable_receive()
      ->set_bytes(7);
  EXPECT_EQ(Error(t),
            "chip 2, stream 0, instruction 0 (Send): sends 102 bytes to chip "
            "0, but its matching Receive (number 0 between these chips), "
            "chip 0, stream 0, instruction 1 (Receive), expects 7 "
            "bytes");
}

TEST(DecodeTest, CollectiveInfoRules) {
  auto with = [](auto edit) {
    v1::Trace t = Empty(4);
    v1::CollectiveInfo* c = t.mutable_header()->mutable_collective();
    c->set_op(v1::ALLREDUCE);
    c->set_n(4);
    c->set_bytes(1024);
    c->set_cdma_engines_used(8);
    for (uint32_t i = 0; i < 4; ++i) {
      v1::ChipBuffers* b = c->add_buffers();
      b->set_chip(i);
      b->mutable_input()->set_bytes(1024);
      b->mutable_output()->set_bytes(1024);
    }
    edit(c);
    return Error(t);
  };
  EXPECT_EQ(with([](v1::CollectiveInfo*) {}), "");
  EXPECT_EQ(with([](v1::CollectiveInfo* c) { c->set_cdma_engines_used(0); }),
            "");
  EXPECT_EQ(with([](v1::CollectiveInfo* c) { c->set_n(0); }),
            "header.collective.n is 0, must be in [1, 4] (header.num_chips)");
  EXPECT_EQ(with([](v1::CollectiveInfo* c) { c->set_n(5); }),
            "header.collective.n is 5, must be in [1, 4] (header.num_chips)");
  EXPECT_EQ(with([](v1::CollectiveInfo* c) {
              c->set_op(static_cast<v1::CollectiveOp>(99));
            }),
            "header.collective.op 99 is not a known CollectiveOp");
  EXPECT_EQ(with([](v1::CollectiveInfo* c) { c->set_cdma_engines_used(9); }),
            "header.collective.cdma_engines_used is 9, but the hardware has 8 "
            "CDMA engines per chip");
  EXPECT_EQ(
      with([](v1::CollectiveInfo* c) { c->mutable_buffers(2)->set_chip(4); }),
      "header.collective.buffers[2]: chip 4 out of range [0, 4)");
  EXPECT_EQ(
      with([](v1::CollectiveInfo* c) { c->mutable_buffers(3)->set_chip(1); }),
      "header.collective.buffers[3]: chip 1 listed twice (also "
      "buffers[1])");
  EXPECT_EQ(with([](v1::CollectiveInfo* c) {
              c->mutable_buffers(1)->mutable_output()->set_addr(kMaxU64);
            }),
            "header.collective.buffers[1].output: addr 18446744073709551615 "
            "+ bytes 1024 overflows 2^64");
}

TEST(DecodeTest, FirstErrorInTraceOrderIsReported) {
  // Chip 1 (listed first) has a bad qp, chip 0 a zero-byte Transfer: the
  // first listed is reported.
  v1::Trace t = Empty(2);
  AddTransfer(StreamOf(&t, 1, 0), 99, 0, 8);
  AddTransfer(StreamOf(&t, 0, 0), 0, 1, 0);
  EXPECT_THAT(Error(t), HasSubstr("chip 1, stream 0, instruction 0 "
                                  "(Transfer): qp_id 99"));
}

TEST(DecodeTest, MutatedTracesNeverCrash) {
  // A valid ring exchange, serialized, with random bytes overwritten: every
  // mutant that still parses either decodes or gets an InvalidArgument.
  v1::Trace t = Empty(4);
  for (uint32_t c = 0; c < 4; ++c) {
    v1::Stream* s = StreamOf(&t, c, 0);
    AddTransfer(s, 5, (c + 1) % 4, 4096)->set_dst_addr(1 << 20);
    v1::RemoteMsgSend* m = s->add_instructions()->mutable_remote_msg_send();
    m->set_qp_id(5);
    m->set_dst_chip((c + 1) % 4);
    m->set_dst_qp_id(1);
    v1::MsgWait* w = s->add_instructions()->mutable_msg_wait();
    w->set_qp_id(1);
    w->set_count(1);
    AddSend(s, (c + 1) % 4, 64);
    AddReceive(s, (c + 3) % 4, 64);
  }
  ASSERT_EQ(Error(t), "");
  const std::string bytes = t.SerializeAsString();
  std::mt19937 rng(99);
  std::uniform_int_distribution<size_t> pos(0, bytes.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  int decoded = 0, rejected = 0, streamed_count = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutant = bytes;
    for (int k = 0; k < 3; ++k) mutant[pos(rng)] = static_cast<char>(byte(rng));
    std::optional<DecodedTrace> streamed =
        StreamValidateAndDecode(mutant, Hw());
    absl::StatusOr<v1::Trace> parsed = ParseTrace(mutant, "m.pb");
    // What the chip-by-chip reader takes on, the whole path parses too.
    ASSERT_TRUE(!streamed || parsed.ok()) << i;
    if (!parsed.ok()) continue;
    absl::StatusOr<Program> p = ValidateAndDecode(*parsed, Hw());
    if (streamed) {
      ++streamed_count;
      ExpectStreamedLikeWhole(mutant, p, Hw());
    }
    if (p.ok()) {
      ++decoded;
      EXPECT_EQ(p->chips.size(), parsed->header().num_chips());
    } else {
      ++rejected;
      EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
    }
  }
  // Both outcomes occur, and most parsed mutants were streamed: the checks
  // above are not vacuous.
  EXPECT_GT(decoded, 0);
  EXPECT_GT(rejected, 0);
  EXPECT_GT(streamed_count, (decoded + rejected) / 2);
}

// A small valid trace: chips 0 and 1 send each other 64 bytes.
v1::Trace Pair() {
  v1::Trace t = Empty(2);
  AddSend(StreamOf(&t, 0, 0), 1, 64);
  AddReceive(StreamOf(&t, 1, 0), 0, 64);
  AddSend(StreamOf(&t, 1, 0), 0, 64);
  AddReceive(StreamOf(&t, 0, 0), 1, 64);
  return t;
}

// The encoding of `header` as field 1 of a Trace, and of `chip` as field 2.
std::string HeaderField(const v1::TraceHeader& header) {
  v1::Trace t;
  *t.mutable_header() = header;
  return t.SerializeAsString();
}
std::string ChipField(const v1::ChipProgram& chip) {
  v1::Trace t;
  *t.add_chips() = chip;
  return t.SerializeAsString();
}

TEST(StreamDecodeTest, HeaderAfterTheChipsAndRepeatedHeadersAreMerged) {
  const v1::Trace t = Pair();
  // Protobuf accepts fields in any order and merges a singular message
  // field met twice; so does the chip-by-chip reader.
  v1::TraceHeader first;
  first.set_format_version(v1::FORMAT_VERSION_1);
  first.set_generator("first");
  v1::TraceHeader second;
  second.set_num_chips(2);
  const std::string bytes = ChipField(t.chips(0)) + HeaderField(first) +
                            ChipField(t.chips(1)) + HeaderField(second);
  absl::StatusOr<v1::Trace> whole = ParseTrace(bytes, "t.pb");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->header().num_chips(), 2u);
  EXPECT_EQ(whole->header().generator(), "first");
  std::optional<DecodedTrace> s = StreamValidateAndDecode(bytes, Hw());
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->header.header().SerializeAsString(),
            whole->header().SerializeAsString());
  EXPECT_EQ(s->header.chips_size(), 0);
  ExpectStreamedLikeWhole(bytes, ValidateAndDecode(*whole, Hw()), Hw());
}

TEST(StreamDecodeTest, MatchingErrorNamesAPlaceInAChipAlreadyFreed) {
  // Chip 0's Send of 64 bytes meets chip 1's Receive of 32: the message
  // names both places, though chip 0's protobuf is gone when it is made.
  v1::Trace t = Empty(2);
  AddSend(StreamOf(&t, 0, 3), 1, 64);
  AddReceive(StreamOf(&t, 1, 7), 0, 32);
  EXPECT_EQ(Error(t),
            "chip 0, stream 3, instruction 0 (Send): sends 64 bytes to chip "
            "1, but its matching Receive (number 0 between these chips), "
            "chip 1, stream 7, instruction 0 (Receive), expects 32 bytes");
}

TEST(StreamDecodeTest, LeavesToTheWholePathWhatItDoesNotTakeOn) {
  const v1::Trace t = Pair();
  const std::string bytes = t.SerializeAsString();
  ASSERT_TRUE(StreamValidateAndDecode(bytes, Hw()).has_value());
  // Every truncation (the whole path rejects each as malformed).
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string cut = bytes.substr(0, n);
    if (ParseTrace(cut, "t.pb").ok()) continue;  // a cut at a field end
    EXPECT_FALSE(StreamValidateAndDecode(cut, Hw()).has_value()) << n;
  }
  // An unknown top-level field (protobuf keeps it; the reader leaves it).
  EXPECT_FALSE(StreamValidateAndDecode(bytes + std::string("\x18\x01", 2), Hw())
                   .has_value());
  // A chips entry whose length is a 6-byte varint: protobuf's parser reads
  // at most 5 (a 32-bit reader would drop the high bits and see 0).
  const std::string long_length =
      bytes + std::string("\x12\x80\x80\x80\x80\x80\x20", 7);
  EXPECT_FALSE(ParseTrace(long_length, "t.pb").ok());
  EXPECT_FALSE(StreamValidateAndDecode(long_length, Hw()).has_value());
  // No header, a header of another version, the text format.
  EXPECT_FALSE(
      StreamValidateAndDecode(ChipField(t.chips(0)), Hw()).has_value());
  v1::Trace v2 = t;
  v2.mutable_header()->set_format_version(static_cast<v1::FormatVersion>(2));
  EXPECT_FALSE(
      StreamValidateAndDecode(v2.SerializeAsString(), Hw()).has_value());
  EXPECT_FALSE(
      StreamValidateAndDecode(
          "header { format_version: FORMAT_VERSION_1 num_chips: 2 }", Hw())
          .has_value());
}

TEST(StreamDecodeTest, AMalformedChipAfterARuleErrorIsLeftToTheWholePath) {
  // Chip 0 breaks a rule (zero bytes); chip 1's entry is framed right but
  // its content does not parse (a zero tag). The whole path reports the
  // malformed file, not the rule: so must the reader, by leaving it.
  v1::Trace t = Empty(2);
  AddTransfer(StreamOf(&t, 0, 0), 0, 1, 0);
  AddTransfer(StreamOf(&t, 1, 0), 0, 0, 8);
  const std::string head = HeaderField(t.header()) + ChipField(t.chips(0));
  std::string bad = ChipField(t.chips(1));
  ASSERT_LT(static_cast<unsigned char>(bad[1]), 0x80);  // a 1-byte length
  bad[2] = 0;  // the first tag of the chip's content
  EXPECT_FALSE(ParseTrace(head + bad, "t.pb").ok());
  EXPECT_FALSE(StreamValidateAndDecode(head + bad, Hw()).has_value());
  // The same framing with the chip intact is read chip by chip.
  EXPECT_TRUE(
      StreamValidateAndDecode(head + ChipField(t.chips(1)), Hw()).has_value());
  // Well formed, the same rule error comes back from both.
  EXPECT_THAT(Error(t), HasSubstr("bytes is 0"));
}

// Each stream's words, as offsets from the program's first stream's first
// word: where its layout puts them.
std::vector<std::vector<ptrdiff_t>> Offsets(const Program& p) {
  std::vector<std::vector<ptrdiff_t>> out;
  const InstrList::Packed* base = nullptr;
  for (const ChipProgram& c : p.chips) {
    for (const StreamProgram& s : c.streams) {
      const InstrList::Layout l = s.instrs.layout();
      if (base == nullptr) base = l.At(0);
      std::vector<ptrdiff_t>& o = out.emplace_back();
      for (size_t i = 0; i < s.instrs.size(); ++i) o.push_back(l.At(i) - base);
    }
  }
  return out;
}

// A binary trace whose chips all have the wire reader's shape is counted
// first and written where InterleaveStreams would put it: the same program,
// in the same layout, as the whole path's, which lays it out after. Three
// chips (listed out of order) with streams of 9 rounds and 5 instructions
// (two), 8 rounds and 1, 6 rounds, and an empty stream: padded to whole
// rounds they grow by less than an eighth, so they are interleaved.
TEST(StreamDecodeTest, ChipsCountedFirstAreWrittenInPlace) {
  constexpr uint32_t R = InstrList::kRound;
  v1::Trace t = Empty(3);
  const auto fill = [&](uint32_t chip, uint32_t stream, uint32_t n) {
    v1::Stream* s = StreamOf(&t, chip, stream);
    for (uint32_t i = 0; i < n; ++i) {
      AddTransfer(s, i % 8, (chip + 1) % 3, 1000 * chip + 100 * stream + i + 1);
    }
  };
  fill(2, 0, 9 * R + 5);
  fill(2, 5, 8 * R + 1);
  fill(0, 1, 6 * R);
  StreamOf(&t, 0, 2);  // empty
  fill(1, 0, 9 * R + 5);
  const absl::StatusOr<Program> whole = ValidateAndDecode(t, Hw());
  ASSERT_TRUE(whole.ok()) << whole.status();
  const std::string bytes = t.SerializeAsString();
  std::optional<DecodedTrace> s = StreamValidateAndDecode(bytes, Hw());
  ASSERT_TRUE(s.has_value());
  ASSERT_TRUE(s->program.ok()) << s->program.status();
  EXPECT_TRUE(s->written_in_place);
  ExpectSamePrograms(*s->program, *whole);
  EXPECT_EQ(Offsets(*s->program), Offsets(*whole));
  ExpectStreamedLikeWhole(bytes, whole, Hw());

  // A chip the wire reader leaves to protobuf (a Send and its Receive, which
  // feed the matching): laid out after, as before, in the same layout.
  AddSend(StreamOf(&t, 1, 0), 0, 64);
  AddReceive(StreamOf(&t, 0, 1), 1, 64);
  const absl::StatusOr<Program> whole2 = ValidateAndDecode(t, Hw());
  ASSERT_TRUE(whole2.ok()) << whole2.status();
  s = StreamValidateAndDecode(t.SerializeAsString(), Hw());
  ASSERT_TRUE(s.has_value());
  ASSERT_TRUE(s->program.ok()) << s->program.status();
  EXPECT_FALSE(s->written_in_place);
  EXPECT_EQ(s->wire_chips, 1);  // chip 2 alone
  ExpectSamePrograms(*s->program, *whole2);
  EXPECT_EQ(Offsets(*s->program), Offsets(*whole2));
}

// InstrList stores an instruction in 24 bytes and gives it back whole: every
// field at the largest value its packed width holds, and one past it (kept
// whole beside the packed ones), for each kind and the fields that share
// storage (a message's dst_qp with src_addr, a MsgWait's count with
// dst_addr).
TEST(InstrListTest, EveryFieldAtAndPastItsPackedWidth) {
  const uint64_t addr_max = (uint64_t{1} << 56) - 1;
  const uint64_t bytes_max = (uint64_t{1} << 41) - 1;
  const uint64_t qp_max = (uint64_t{1} << 18) - 1;
  const uint64_t peer_max = (uint64_t{1} << 16) - 1;
  std::vector<Instr> cases;
  for (int k = 0; k <= static_cast<int>(OpKind::kFence); ++k) {
    const auto kind = static_cast<OpKind>(k);
    Instr zero;  // all zero
    zero.kind = kind;
    cases.push_back(zero);
    const Instr in{.kind = kind,
                   .reduce_sum = true,
                   .qp_id = qp_max,
                   .peer = peer_max,
                   .src_addr = addr_max,
                   .dst_addr = addr_max,
                   .bytes = bytes_max};
    cases.push_back(in);  // every field at its widest packed value
    // Then one field past it at a time.
    const auto past = [&](auto set) {
      Instr wider = in;
      set(wider);
      cases.push_back(wider);
    };
    past([&](Instr& w) { w.qp_id = qp_max + 1; });
    past([&](Instr& w) { w.peer = peer_max + 1; });
    past([&](Instr& w) { w.src_addr = addr_max + 1; });
    past([&](Instr& w) { w.dst_addr = ~uint64_t{0}; });
    past([&](Instr& w) { w.bytes = bytes_max + 1; });
  }
  cases.push_back(Instr{.kind = OpKind::kMsgWait,
                        .qp_id = 7,
                        .dst_qp = 7,
                        .count = 0xffffffffu});
  cases.push_back(Instr{.kind = OpKind::kRemoteMsgSend,
                        .qp_id = 3,
                        .peer = 9,
                        .dst_qp = 0xfffffu,
                        .dst_addr = 0});

  InstrList list;
  for (const Instr& in : cases) list.push_back(in);
  ASSERT_EQ(list.size(), cases.size());
  size_t i = 0;
  for (const Instr& in : list) {  // iteration gives what indexing gives
    EXPECT_TRUE(SameInstr(in, cases[i])) << "case " << i;
    EXPECT_TRUE(SameInstr(list[i], cases[i])) << "case " << i;
    ++i;
  }
  EXPECT_EQ(i, cases.size());
  EXPECT_EQ(list[list.size() - 2].count, 0xffffffffu);
  EXPECT_EQ(list.back().dst_qp, 0xfffffu);
  EXPECT_THROW(list.at(cases.size()), std::out_of_range);

  // Replacing: a whole one by a packed one and back.
  list.set(4, cases[1]);
  EXPECT_TRUE(SameInstr(list[4], cases[1]));
  list.set(1, cases[4]);
  EXPECT_TRUE(SameInstr(list[1], cases[4]));
}

// Random instructions with fields of random widths (0 to 64 bits) come back
// as they went in; the ones that fit take 24 bytes each and nothing else.
TEST(InstrListTest, RandomInstructionsComeBackWholeIn24BytesEach) {
  std::mt19937_64 rng(15);
  const auto bits = [&](int most) {
    const int w = static_cast<int>(rng() % (most + 1));
    return w == 0 ? uint64_t{0} : rng() >> (64 - w);
  };
  std::vector<Instr> cases;
  for (int n = 0; n < 20000; ++n) {
    Instr in;
    in.kind = static_cast<OpKind>(rng() % 7);
    in.reduce_sum = (rng() & 1) != 0;
    in.qp_id = bits(24);
    in.peer = bits(24);
    in.src_addr = bits(64);
    in.dst_addr = bits(64);
    in.bytes = bits(64);
    cases.push_back(in);
  }
  const InstrList list(cases);
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(SameInstr(list[i], cases[i])) << "instruction " << i;
  }

  InstrList small;
  constexpr size_t kCount = 1000;
  small.reserve(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    Instr in;
    in.kind = OpKind::kTransfer;
    in.peer = static_cast<uint32_t>(i % 65536);
    in.qp_id = static_cast<uint32_t>(i % 8);
    in.src_addr = i << 20;
    in.dst_addr = (i << 20) + 4096;
    in.bytes = 1 + i * 4096;
    small.push_back(in);
  }
  EXPECT_EQ(small.allocated_bytes(), kCount * 24);
}

// The budget's memo (hw/budget.cc) compares instructions by their packed
// words' CostKey: random pairs of packed instructions, each field drawn from
// a few values (small, at a packed field's edge), have the same key exactly
// when they have the same kind, peer and size, whatever their qp, reduce
// and addresses; the size's bits in all three words count (2^25 and 2^33
// and past them among the sizes).
TEST(InstrListTest, CostKeysAreEqualExactlyForTheSameKindPeerAndSize) {
  std::mt19937_64 rng(32);
  const auto pick = [&](std::initializer_list<uint64_t> values) {
    return *(values.begin() + rng() % values.size());
  };
  std::vector<Instr> cases;
  for (int n = 0; n < 4000; ++n) {
    Instr in;
    in.kind = static_cast<OpKind>(pick({0, 4, 5, 6}));
    in.reduce_sum = (rng() & 1) != 0;
    in.qp_id = pick({0, 3, (1 << 18) - 1});
    in.peer = pick({0, 1, 65535});
    in.src_addr = pick({0, 4096, (uint64_t{1} << 56) - 1});
    in.dst_addr = pick({0, 1 << 20, (uint64_t{1} << 56) - 1});
    in.bytes = pick({0, 1, (1 << 25) - 1, 1 << 25, uint64_t{1} << 33,
                     (uint64_t{1} << 33) + 1, (uint64_t{1} << 41) - 1});
    cases.push_back(in);
  }
  const InstrList list(cases);
  const InstrList::Layout l = list.layout();
  size_t same = 0;
  for (size_t i = 0; i + 1 < cases.size(); ++i) {
    const InstrList::Packed& a = *l.At(i);
    const InstrList::Packed& b = *l.At(i + 1);
    ASSERT_FALSE(InstrList::Escaped(a)) << "instruction " << i;
    const bool shape = cases[i].kind == cases[i + 1].kind &&
                       cases[i].peer == cases[i + 1].peer &&
                       cases[i].bytes == cases[i + 1].bytes;
    EXPECT_EQ(InstrList::CostKeyOf(a) == InstrList::CostKeyOf(b), shape)
        << "instructions " << i << " and " << i + 1;
    same += shape;
  }
  // Both answers occur often enough to mean something.
  EXPECT_GT(same, 10u);
  EXPECT_GT(cases.size() - 1 - same, 1000u);

  // An instruction past the packed widths is kept whole: it has no key.
  Instr wide;
  wide.kind = OpKind::kTransfer;
  wide.peer = 1 << 16;
  const InstrList whole({wide});
  EXPECT_TRUE(InstrList::Escaped(*whole.layout().At(0)));
}

// InterleaveStreams lays a program out round by round (kRound instructions
// of each stream still going, longest first) and every instruction reads
// back as it went in: streams of lengths 0, 1, whole rounds and partial
// ones, with whole (unpackable) instructions among them; the layout's
// addresses are where the rounds put them; a placed list that is changed
// keeps the others' and its own instructions; a copy shares the layout.
TEST(InstrListTest, InterleavedStreamsReadBackAndSitRoundByRound) {
  constexpr size_t R = InstrList::kRound;
  const std::vector<size_t> lengths = {9 * R + 5, 0, 1, 8 * R, 8 * R + 1,
                                       9 * R + 5, 6 * R};
  std::mt19937_64 rng(18);
  Program p;
  p.num_chips = 2;
  p.chips.resize(2);
  std::vector<std::vector<Instr>> want;
  for (size_t s = 0; s < lengths.size(); ++s) {
    StreamProgram& sp = p.chips[s % 2].streams.emplace_back();
    std::vector<Instr>& w = want.emplace_back();
    for (size_t i = 0; i < lengths[s]; ++i) {
      Instr in;
      in.kind = static_cast<OpKind>(rng() % 7);
      in.qp_id = static_cast<uint32_t>(rng() % 64);
      in.peer = static_cast<uint32_t>(s * 1000 + i);  // names its place
      in.src_addr = rng() >> 8;
      // Some whole, in the even streams.
      in.dst_addr = s % 2 == 0 && i % 5 == 4 ? ~uint64_t{0} : rng() >> 8;
      in.bytes = rng() % 100000;
      w.push_back(in);
      sp.instrs.push_back(in);
    }
  }
  InterleaveStreams(p);
  // Streams in program order: chip 0's (0, 2, 4, 6), then chip 1's.
  const std::vector<size_t> order = {0, 2, 4, 6, 1, 3, 5};
  std::vector<const InstrList*> lists;
  for (const ChipProgram& c : p.chips) {
    for (const StreamProgram& s : c.streams) lists.push_back(&s.instrs);
  }
  for (size_t k = 0; k < lists.size(); ++k) {
    const InstrList& list = *lists[k];
    const std::vector<Instr>& w = want[order[k]];
    ASSERT_EQ(list.size(), w.size()) << "stream " << order[k];
    for (size_t i = 0; i < w.size(); ++i) {
      ASSERT_TRUE(SameInstr(list[i], w[i])) << order[k] << " " << i;
      ASSERT_EQ(list.kind(i), w[i].kind);
    }
  }
  // Ranked by length, ties in program order: 0 and 5 (9R + 5), 4 (8R + 1),
  // 3 (8R), 6 (6R), 2 (1), 1 (0). Round r holds R words for each stream
  // longer than r R: 6 streams in round 0, 5 in rounds 1-5 (not stream 2),
  // 4 in rounds 6-7 (not 6), 3 in round 8 (not 3), 2 in round 9.
  const std::vector<size_t> rank_of = {0, 6, 5, 3, 2, 1, 4};
  const std::vector<size_t> live = {6, 5, 5, 5, 5, 5, 4, 4, 3, 2};
  std::vector<size_t> round_first = {0};
  for (size_t n : live) round_first.push_back(round_first.back() + n * R);
  const InstrList::Packed* base = lists[0]->layout().At(0);
  for (size_t k = 0; k < lists.size(); ++k) {
    const size_t s = order[k];
    const InstrList::Layout l = lists[k]->layout();
    for (size_t i = 0; i < lengths[s]; ++i) {
      ASSERT_EQ(l.At(i) - base, static_cast<ptrdiff_t>(round_first[i / R] +
                                                       rank_of[s] * R + i % R))
          << "stream " << s << " instruction " << i;
    }
  }
  // Stream 5 (no whole ones) counts its share: 10 rounds of R words.
  EXPECT_EQ(lists[6]->allocated_bytes(), 10 * R * 24);

  InstrList copy = *lists[0];
  EXPECT_EQ(copy.layout().At(0), base);  // shares the layout
  copy.set(1, want[0][0]);
  copy.push_back(want[5][0]);
  ASSERT_EQ(copy.size(), want[0].size() + 1);
  EXPECT_TRUE(SameInstr(copy[1], want[0][0]));
  EXPECT_TRUE(SameInstr(copy[2], want[0][2]));
  EXPECT_TRUE(SameInstr(copy.back(), want[5][0]));
  EXPECT_NE(copy.layout().At(0), base);  // its own words now
  for (size_t i = 0; i < want[0].size(); ++i) {
    ASSERT_TRUE(SameInstr((*lists[0])[i], want[0][i]));  // unchanged
  }
  // Laid out again (a program decoded twice over): the same instructions.
  InterleaveStreams(p);
  for (size_t i = 0; i < want[5].size(); ++i) {
    ASSERT_TRUE(SameInstr(p.chips[1].streams[2].instrs[i], want[5][i]));
  }
}

// One past the last Fence of `instrs` (0: none) and the longest run of
// instructions on a queue between waits, counted the long way.
std::pair<uint32_t, uint32_t> ShapeByHand(const std::vector<Instr>& instrs) {
  uint32_t fence_end = 0;
  for (uint32_t i = 0; i < instrs.size(); ++i) {
    if (instrs[i].kind == OpKind::kFence) fence_end = i + 1;
  }
  uint32_t longest = 0;
  for (uint32_t i = 0; i < instrs.size(); ++i) {
    uint32_t j = i;
    while (j < instrs.size() && instrs[j].kind != OpKind::kFence &&
           instrs[j].kind != OpKind::kMsgWait) {
      ++j;
    }
    longest = std::max(longest, j - i);
  }
  return {fence_end, longest};
}

// A list keeps its shape as instructions are appended, and works it out
// again once one is replaced.
TEST(InstrListTest, KnowsItsLastFenceAndLongestQueueRun) {
  std::vector<Instr> v = {
      TransferInstr(0, 1, 0, 0, 8, false), RemoteMsgSendInstr(0, 1, 0),
      MsgWaitInstr(0, 1),                  TransferInstr(0, 1, 0, 0, 8, false),
      MsgSendInstr(0, 1),                  ReceiveInstr(0, 1, 0, 8),
      FenceInstr(),                        RemoteMsgSendInstr(0, 1, 0),
  };
  InstrList list;
  EXPECT_EQ(list.shape().fence_end, 0u);
  EXPECT_EQ(list.shape().longest_queue_run, 0u);
  for (const Instr& in : v) list.push_back(in);
  EXPECT_EQ(list.shape().fence_end, 7u);          // the Fence is instruction 6
  EXPECT_EQ(list.shape().longest_queue_run, 3u);  // instructions 3 to 5
  EXPECT_EQ(ShapeByHand(v), std::make_pair(7u, 3u));
  // The Fence replaced, and the wait: no Fence, one run of 8.
  v[6] = MsgSendInstr(0, 2);
  v[2] = MsgSendInstr(0, 3);
  list.set(6, v[6]);
  list.set(2, v[2]);
  EXPECT_EQ(list.shape().fence_end, 0u);
  EXPECT_EQ(list.shape().longest_queue_run, 8u);
  EXPECT_EQ(ShapeByHand(v), std::make_pair(0u, 8u));
  // Appended after a set: still right.
  list.push_back(FenceInstr());
  EXPECT_EQ(list.shape().fence_end, 9u);
  EXPECT_EQ(list.shape().longest_queue_run, 8u);
  EXPECT_EQ(InstrList(v).shape().longest_queue_run, 8u);
}

// An InterleavePlan made from the streams' lengths puts every instruction
// where InterleaveStreams puts it (the streams of
// InterleavedStreamsReadBackAndSitRoundByRound), takes
// each stream once and only at its planned length, and is complete when
// every stream is filled; streams too short to interleave plan nothing.
TEST(InstrListTest, APlanLaysStreamsOutAsInterleaveStreamsDoes) {
  constexpr size_t R = InstrList::kRound;
  // Two chips: chip 0 with 4 streams, chip 1 with 3.
  const std::vector<std::vector<uint32_t>> lengths = {
      {9 * R + 5, 1, 8 * R + 1, 6 * R}, {0, 8 * R, 9 * R + 5}};
  std::mt19937_64 rng(29);
  Program laid;
  laid.num_chips = 2;
  laid.chips.resize(2);
  std::vector<std::vector<std::vector<Instr>>> want(2);
  for (uint32_t c = 0; c < 2; ++c) {
    for (const uint32_t n : lengths[c]) {
      std::vector<Instr>& w = want[c].emplace_back();
      StreamProgram& sp = laid.chips[c].streams.emplace_back();
      for (uint32_t i = 0; i < n; ++i) {
        Instr in;
        in.kind = static_cast<OpKind>(rng() % 7);
        in.peer = c * 100000 + i;
        in.src_addr = rng() >> 8;
        in.dst_addr = i % 7 == 3 ? ~uint64_t{0} : rng() >> 8;  // some whole
        in.bytes = rng() % 100000;
        w.push_back(in);
        sp.instrs.push_back(in);
      }
    }
  }
  InterleaveStreams(laid);

  InterleavePlan plan(lengths);
  ASSERT_TRUE(plan.ok());
  Program filled;
  filled.num_chips = 2;
  filled.chips.resize(2);
  for (uint32_t c = 0; c < 2; ++c) filled.chips[c].streams.resize(3 + (c == 0));
  InstrList spare;
  EXPECT_FALSE(plan.Fill(2, 0, nullptr, 0, &spare));  // no chip 2
  EXPECT_FALSE(plan.Fill(1, 3, nullptr, 0, &spare));  // no stream 3
  EXPECT_FALSE(plan.Fill(0, 1, want[0][0].data(), 2, &spare));  // not 2 long
  EXPECT_TRUE(spare.empty());
  // Filled in another order than the program's.
  for (uint32_t c : {1u, 0u}) {
    for (uint32_t s = 0; s < lengths[c].size(); ++s) {
      EXPECT_FALSE(plan.complete());
      ASSERT_TRUE(plan.Fill(c, s, want[c][s].data(), want[c][s].size(),
                            &filled.chips[c].streams[s].instrs));
    }
  }
  EXPECT_TRUE(plan.complete());
  EXPECT_FALSE(plan.Fill(0, 1, want[0][1].data(), 1, &spare));  // twice
  ExpectSamePrograms(filled, laid);
  EXPECT_EQ(Offsets(filled), Offsets(laid));
  // A filled list and an interleaved one know their shape as the appended
  // one did.
  for (uint32_t c = 0; c < 2; ++c) {
    for (uint32_t s = 0; s < lengths[c].size(); ++s) {
      const std::pair<uint32_t, uint32_t> shape = ShapeByHand(want[c][s]);
      for (const Program* p : {&filled, &laid}) {
        const InstrList::Shape got = p->chips[c].streams[s].instrs.shape();
        EXPECT_EQ(got.fence_end, shape.first) << c << "/" << s;
        EXPECT_EQ(got.longest_queue_run, shape.second) << c << "/" << s;
      }
    }
  }
  for (uint32_t c = 0; c < 2; ++c) {
    for (uint32_t s = 0; s < lengths[c].size(); ++s) {
      const InstrList& list = filled.chips[c].streams[s].instrs;
      EXPECT_EQ(list.allocated_bytes(),
                laid.chips[c].streams[s].instrs.allocated_bytes());
      for (size_t i = 0; i < want[c][s].size(); ++i) {
        ASSERT_TRUE(SameInstr(list[i], want[c][s][i])) << c << " " << s;
      }
    }
  }
  // 100 streams of 3 (ShortStreamsAreNotPadded, below): no plan.
  EXPECT_FALSE(
      InterleavePlan(std::vector<std::vector<uint32_t>>(100, {3})).ok());
}

// Streams in groups of kGroup by rank: each group's rounds lie together,
// the groups one after the other, so that a program written stream after
// stream fills its layout group after group. 130 streams of 8 to 11 rounds
// over 5 chips: groups of 64, 64 and 2 streams.
TEST(InstrListTest, GroupsOfStreamsLieOneAfterTheOther) {
  constexpr size_t R = InstrList::kRound;
  constexpr size_t G = InstrList::kGroup;
  constexpr size_t kStreams = 130;
  std::vector<size_t> lengths;
  for (size_t k = 0; k < kStreams; ++k) {
    lengths.push_back(8 * R + (k * 37) % (3 * R));
  }
  Program p;
  p.num_chips = 5;
  p.chips.resize(5);
  for (size_t k = 0; k < kStreams; ++k) {
    InstrList& list = p.chips[k % 5].streams.emplace_back().instrs;
    for (size_t i = 0; i < lengths[k]; ++i) {
      Instr in;
      in.kind = OpKind::kTransfer;
      in.peer = static_cast<uint32_t>(k);
      in.bytes = i + 1;
      list.push_back(in);
    }
  }
  // Program order (chip by chip) and rank (by length, longest first, ties
  // in program order).
  std::vector<size_t> program_order;
  for (size_t c = 0; c < 5; ++c) {
    for (size_t k = c; k < kStreams; k += 5) program_order.push_back(k);
  }
  std::vector<size_t> by_rank = program_order;
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  // Group g's round r starts after every earlier group's words and its own
  // earlier rounds, each R words for each of its streams still going.
  std::vector<std::vector<size_t>> round_first;
  std::vector<size_t> group_end;
  size_t words = 0;
  for (size_t first = 0; first < kStreams; first += G) {
    const size_t end = std::min(kStreams, first + G);
    std::vector<size_t>& rf = round_first.emplace_back();
    for (size_t r = 0; r * R < lengths[by_rank[first]]; ++r) {
      rf.push_back(words);
      for (size_t rank = first; rank < end; ++rank) {
        if (lengths[by_rank[rank]] > r * R) words += R;
      }
    }
    group_end.push_back(words);
  }
  ASSERT_EQ(group_end.size(), 3u);
  InterleaveStreams(p);
  const InstrList::Packed* base =
      p.chips[by_rank[0] % 5].streams[by_rank[0] / 5].instrs.layout().At(0);
  for (size_t rank = 0; rank < kStreams; ++rank) {
    const size_t k = by_rank[rank];
    const InstrList& list = p.chips[k % 5].streams[k / 5].instrs;
    const InstrList::Layout l = list.layout();
    const size_t g = rank / G;
    for (size_t i = 0; i < lengths[k]; ++i) {
      const ptrdiff_t at = l.At(i) - base;
      ASSERT_EQ(at, static_cast<ptrdiff_t>(round_first[g][i / R] +
                                           (rank % G) * R + i % R))
          << "stream " << k << " instruction " << i;
      ASSERT_LT(at, static_cast<ptrdiff_t>(group_end[g]));
      ASSERT_GE(at, static_cast<ptrdiff_t>(g == 0 ? 0 : group_end[g - 1]));
      ASSERT_EQ(list[i].peer, k);
      ASSERT_EQ(list[i].bytes, i + 1);
    }
  }
  // A plan of the same lengths places every stream alike.
  std::vector<std::vector<uint32_t>> chip_lengths(5);
  for (const size_t k : program_order) {
    chip_lengths[k % 5].push_back(static_cast<uint32_t>(lengths[k]));
  }
  InterleavePlan plan(chip_lengths);
  ASSERT_TRUE(plan.ok());
  Program filled;
  filled.num_chips = 5;
  filled.chips.resize(5);
  for (size_t c = 0; c < 5; ++c) {
    filled.chips[c].streams.resize(p.chips[c].streams.size());
    for (size_t s = 0; s < p.chips[c].streams.size(); ++s) {
      std::vector<Instr> in;
      for (const Instr& x : p.chips[c].streams[s].instrs) in.push_back(x);
      ASSERT_TRUE(plan.Fill(static_cast<uint32_t>(c), static_cast<uint32_t>(s),
                            in.data(), in.size(),
                            &filled.chips[c].streams[s].instrs));
    }
  }
  EXPECT_TRUE(plan.complete());
  EXPECT_EQ(Offsets(filled), Offsets(p));
  ExpectSamePrograms(filled, p);
}

// Streams so short that their partial rounds would pad the program by more
// than an eighth stay as they are: 100 streams of 3 instructions would take
// 100 rounds' blocks of kRound words for 300 instructions.
TEST(InstrListTest, ShortStreamsAreNotPadded) {
  Program p;
  p.num_chips = 100;
  p.chips.resize(100);
  for (uint32_t c = 0; c < 100; ++c) {
    StreamProgram& s = p.chips[c].streams.emplace_back();
    s.instrs.reserve(3);
    for (uint32_t i = 0; i < 3; ++i) {
      Instr in;
      in.kind = OpKind::kTransfer;
      in.peer = c;
      in.bytes = i + 1;
      s.instrs.push_back(in);
    }
  }
  InterleaveStreams(p);
  for (uint32_t c = 0; c < 100; ++c) {
    const InstrList& list = p.chips[c].streams[0].instrs;
    EXPECT_EQ(list.layout().rounds, nullptr);
    EXPECT_EQ(list.allocated_bytes(), 3 * 24);
    EXPECT_EQ(list[2].peer, c);
    EXPECT_EQ(list[2].bytes, 3u);
  }
}

}  // namespace
}  // namespace ccreplay
