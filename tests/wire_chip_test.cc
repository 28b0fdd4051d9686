// The binary decoder's fast path (trace/wire_chip.h): it takes a chip only
// where protobuf and the rules would give the same program, and whatever it
// takes decodes as protobuf's parse does. Every case is also decoded whole
// (protobuf parse, ValidateAndDecode) and chip by chip
// (StreamValidateAndDecode, which tries the fast path first): same program,
// same error, or both refuse the bytes.
#include "trace/wire_chip.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "collectives/lower.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "trace/decode.h"
#include "trace/rules.h"

namespace ccreplay {
namespace {

// The protobuf wire format, spelled out: so a test can write what
// protobuf's own serializer never does (a field twice, fields out of order,
// an overlong varint, a wrong wire type).
std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>(0x80 | (v & 0x7f)));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}
std::string Field(uint32_t field, uint64_t v) {
  return Varint(uint64_t{field} << 3) + Varint(v);
}
std::string Len(uint32_t field, const std::string& body) {
  return Varint((uint64_t{field} << 3) | 2) + Varint(body.size()) + body;
}

// Field numbers of proto/trace.proto.
constexpr uint32_t kTransfer = 1, kSend = 2, kMsgSend = 4, kMsgWait = 5,
                   kRemoteMsgSend = 6, kFence = 7;

// A Transfer of 1000 bytes on qp 3 to chip 1.
const std::string kT = Field(1, 3) + Field(2, 1) + Field(3, 4096) +
                       Field(4, 8192) + Field(5, 1000);
std::string Stream(uint32_t id, const std::string& instrs) {
  return Field(1, id) + instrs;
}
std::string Instr1(uint32_t kind, const std::string& body) {
  return Len(2, Len(kind, body));
}
// Chip 0 with one stream (id 0) of `instrs` (each a Stream.instructions
// field).
std::string Chip0(const std::string& instrs) {
  return Field(1, 0) + Len(2, Stream(0, instrs));
}

TraceTarget Hw() { return {"TPS186", 0, 8}; }
constexpr uint32_t kChips = 2;

// A binary trace of `chips` (each a ChipProgram's bytes) on kChips chips.
std::string TraceBytes(const std::vector<std::string>& chips) {
  std::string s = Len(1, Field(1, v1::FORMAT_VERSION_1) + Field(2, kChips));
  for (const std::string& c : chips) s += Len(2, c);
  return s;
}

void ExpectSamePrograms(const Program& a, const Program& b) {
  ASSERT_EQ(a.chips.size(), b.chips.size());
  for (size_t c = 0; c < a.chips.size(); ++c) {
    ASSERT_EQ(a.chips[c].streams.size(), b.chips[c].streams.size());
    for (size_t s = 0; s < a.chips[c].streams.size(); ++s) {
      const InstrList& x = a.chips[c].streams[s].instrs;
      const InstrList& y = b.chips[c].streams[s].instrs;
      EXPECT_EQ(a.chips[c].streams[s].id, b.chips[c].streams[s].id);
      ASSERT_EQ(x.size(), y.size());
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_TRUE(SameInstr(x[i], y[i])) << c << "/" << s << "/" << i;
      }
    }
  }
}

// Decoding `bytes` chip by chip gives what protobuf's parse of the whole
// and ValidateAndDecode give; returns how many chips the fast path took.
int64_t ExpectLikeWhole(const std::string& bytes, const TraceTarget& hw) {
  v1::Trace whole;
  const bool parses = whole.ParseFromString(bytes);
  std::optional<DecodedTrace> streamed = StreamValidateAndDecode(bytes, hw);
  if (!parses) {
    EXPECT_FALSE(streamed.has_value()) << "protobuf refuses these bytes";
    return streamed ? streamed->wire_chips : 0;
  }
  const absl::StatusOr<Program> p = ValidateAndDecode(whole, hw);
  EXPECT_TRUE(streamed.has_value());
  if (!streamed) return 0;
  EXPECT_EQ(streamed->program.status(), p.status());
  if (p.ok() && streamed->program.ok()) {
    ExpectSamePrograms(*streamed->program, *p);
  }
  return streamed->wire_chips;
}

struct Case {
  const char* what;
  std::string chip;  // a ChipProgram's bytes
  bool taken;        // by the fast path
};

TEST(WireChipTest, TakesOnlyWhatProtobufAndTheRulesWouldDecodeTheSame) {
  const std::string overlong_qp =
      Varint(1 << 3) + std::string("\x83\x80\x80\x00", 4);
  std::string eleven(10, '\x80');
  eleven += '\x01';
  const std::vector<Case> cases = {
      {"a Transfer", Chip0(Instr1(kTransfer, kT)), true},
      {"a local copy", Chip0(Instr1(kTransfer, Field(5, 64))), true},
      {"a Transfer adding", Chip0(Instr1(kTransfer, kT + Field(6, 1))), true},
      {"every message kind",
       Chip0(Instr1(kMsgSend, Field(1, 1) + Field(2, 31)) +
             Instr1(kMsgWait, Field(1, 31) + Field(2, 2)) +
             Instr1(kRemoteMsgSend, Field(1, 2) + Field(2, 1) + Field(3, 4)) +
             Instr1(kFence, "")),
       true},
      {"fields in reverse order",
       Len(2, Instr1(kTransfer, Field(5, 1000) + Field(2, 1) + Field(1, 3)) +
                  Field(1, 7)) +
           Field(1, 1),
       true},
      {"an overlong varint (protobuf reads 3)",
       Chip0(Instr1(kTransfer, overlong_qp + Field(5, 8))), true},
      {"two streams",
       Field(1, 0) + Len(2, Stream(0, Instr1(kFence, ""))) +
           Len(2, Stream(1, Instr1(kFence, ""))),
       true},
      {"a chip with no streams", Field(1, 1), true},
      // Protobuf takes these with a value of its own choosing: left to it.
      {"a field twice (the last wins)",
       Chip0(Instr1(kTransfer, kT + Field(1, 5))), false},
      {"a kind twice (merged)",
       Chip0(Len(2, Len(kTransfer, kT) + Len(kTransfer, Field(5, 7)))), false},
      {"two kinds (the last wins)",
       Chip0(Len(2, Len(kTransfer, kT) + Len(kFence, ""))), false},
      {"a stream's id twice", Len(2, Field(1, 0) + Field(1, 1)), false},
      {"the chip's id twice", Field(1, 0) + Field(1, 1), false},
      {"an unknown field", Chip0(Instr1(kTransfer, kT + Field(9, 1))), false},
      {"a field of another wire type",
       Chip0(Instr1(kTransfer, Len(1, "ab") + Field(5, 8))), false},
      {"a uint32 past 2^32 (protobuf keeps the low bits)",
       Chip0(
           Instr1(kTransfer, Field(1, (uint64_t{1} << 32) + 3) + Field(5, 8))),
       false},
      {"a Fence with a field", Chip0(Instr1(kFence, Field(1, 0))), false},
      {"a Send (the cross-chip matching)",
       Chip0(Instr1(kSend, Field(2, 1) + Field(4, 8))), false},
      // Malformed: protobuf refuses the trace.
      {"an 11-byte varint", Chip0(Instr1(kTransfer, Varint(8) + eleven)),
       false},
      {"field number 0", Chip0(Instr1(kTransfer, Field(0, 1))), false},
      {"a length past the end", Field(1, 0) + Varint(18) + Varint(100) + "ab",
       false},
      {"a group", Chip0(Instr1(kTransfer, Varint(3 << 3 | 3))), false},
      // Rule errors: the rules word them.
      {"no kind", Chip0(Len(2, "")), false},
      {"zero bytes", Chip0(Instr1(kTransfer, Field(1, 3))), false},
      {"qp of no engine", Chip0(Instr1(kTransfer, Field(1, 32) + Field(5, 8))),
       false},
      {"peer out of range",
       Chip0(Instr1(kTransfer, Field(2, kChips) + Field(5, 8))), false},
      {"a range past 2^64",
       Chip0(Instr1(kTransfer, Field(3, ~uint64_t{0}) + Field(5, 8))), false},
      {"an unknown ReduceOp",
       Chip0(Instr1(kTransfer, Field(5, 8) + Field(6, 2))), false},
      {"a counter out of range",
       Chip0(Instr1(kMsgSend, Field(1, 0) + Field(2, 32))), false},
      {"a wait for nothing", Chip0(Instr1(kMsgWait, Field(1, 0))), false},
      {"a message to the own chip", Chip0(Instr1(kRemoteMsgSend, Field(2, 0))),
       false},
      {"a stream id twice in the chip",
       Field(1, 0) + Len(2, Stream(4, "")) + Len(2, Stream(4, "")), false},
  };
  const TraceTarget hw = Hw();
  const WireRules rules{&hw, kChips};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    WireChip out;
    EXPECT_EQ(ReadWireChip(c.chip, &rules, &out), c.taken);
    EXPECT_EQ(ExpectLikeWhole(TraceBytes({c.chip}), hw), c.taken ? 1 : 0);
  }
}

TEST(WireChipTest, ChipsAfterARuleErrorAreOnlyParsed) {
  // The first chip breaks a rule; the second is read by the fast path for
  // its form alone. With a malformed third the file is refused as
  // malformed, as protobuf's parse of the whole refuses it.
  const std::string bad = Chip0(Instr1(kTransfer, Field(1, 3)));
  const std::string good = Field(1, 1) + Len(2, Stream(0, Instr1(kFence, "")));
  EXPECT_EQ(ExpectLikeWhole(TraceBytes({bad, good}), Hw()), 1);
  EXPECT_EQ(ExpectLikeWhole(TraceBytes({bad, good, "x"}), Hw()), 0);
  // A chip listed twice is left to the rules, which name both entries.
  EXPECT_EQ(ExpectLikeWhole(TraceBytes({good, good}), Hw()), 1);
}

// Random instructions of every kind the fast path reads, each field drawn
// from a range that breaks its rule about one time in eight: the fast path
// takes a chip exactly when ValidateAndDecode passes it, with the same
// instructions.
TEST(WireChipTest, RandomChipsAreTakenExactlyWhenTheRulesPassThem) {
  std::mt19937_64 rng(20261205);
  auto draw = [&](uint64_t ok_below, uint64_t limit) {
    return rng() % 8 == 0 ? limit == 0 ? rng() : rng() % limit
                          : rng() % ok_below;
  };
  const TraceTarget hw = Hw();
  int taken = 0, refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    v1::Trace t;
    t.mutable_header()->set_format_version(v1::FORMAT_VERSION_1);
    t.mutable_header()->set_num_chips(kChips);
    v1::ChipProgram* chip = t.add_chips();
    chip->set_chip(static_cast<uint32_t>(rng() % kChips));
    v1::Stream* s = chip->add_streams();
    s->set_id(static_cast<uint32_t>(rng() % 4));
    for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n; ++i) {
      v1::Instruction* in = s->add_instructions();
      switch (rng() % 5) {
        case 0: {
          v1::Transfer* x = in->mutable_transfer();
          x->set_qp_id(static_cast<uint32_t>(draw(32, 1u << 31)));
          x->set_dst_chip(static_cast<uint32_t>(draw(kChips, 1u << 31)));
          const int width = static_cast<int>(rng() % 64);
          x->set_src_addr(rng() >> width);
          x->set_dst_addr(rng() >> width);
          x->set_bytes(draw(uint64_t{1} << (rng() % 48), 0) + 1);
          if (rng() % 8 == 0) x->set_bytes(0);
          x->set_reduce(static_cast<v1::ReduceOp>(draw(2, 4)));
          break;
        }
        case 1:
          in->mutable_msg_send()->set_qp_id(
              static_cast<uint32_t>(draw(32, 1u << 31)));
          in->mutable_msg_send()->set_dst_qp_id(
              static_cast<uint32_t>(draw(32, 1u << 31)));
          break;
        case 2:
          in->mutable_msg_wait()->set_qp_id(
              static_cast<uint32_t>(draw(32, 1u << 31)));
          in->mutable_msg_wait()->set_count(
              static_cast<uint32_t>(draw(1u << 31, 0)) + 1);
          if (rng() % 8 == 0) in->mutable_msg_wait()->set_count(0);
          break;
        case 3: {
          v1::RemoteMsgSend* x = in->mutable_remote_msg_send();
          x->set_qp_id(static_cast<uint32_t>(draw(32, 1u << 31)));
          x->set_dst_chip(static_cast<uint32_t>(draw(kChips, 1u << 31)));
          x->set_dst_qp_id(static_cast<uint32_t>(draw(32, 1u << 31)));
          break;
        }
        default:
          in->mutable_fence();
      }
    }
    const absl::StatusOr<Program> whole = ValidateAndDecode(t, hw);
    const WireRules rules{&hw, kChips};
    WireChip out;
    const bool took = ReadWireChip(chip->SerializeAsString(), &rules, &out);
    ASSERT_EQ(took, whole.ok()) << t.ShortDebugString() << whole.status();
    if (took) {
      ++taken;
      const InstrList& list = whole->chips[chip->chip()].streams[0].instrs;
      ASSERT_EQ(out.instrs.size(), list.size());
      for (size_t i = 0; i < list.size(); ++i) {
        EXPECT_TRUE(SameInstr(out.instrs[i], list[i]));
        EXPECT_TRUE(SameInstr(
            out.instrs[i], DecodeInstr(s->instructions(static_cast<int>(i)))));
      }
    } else {
      ++refused;
    }
    ExpectLikeWhole(t.SerializeAsString(), hw);
  }
  // Both outcomes are exercised.
  EXPECT_GT(taken, 200);
  EXPECT_GT(refused, 200);
}

// The reader keeps the last encoding of each kind of at most 8 bytes and
// decodes the same bytes again as it did the first time (InstrMemo):
// instructions that repeat, that differ only in their last byte, or that
// are a prefix of another, each decode as protobuf's parse of them.
TEST(WireChipTest, RepeatedInstructionsDecodeAsProtobufParsesEach) {
  v1::ChipProgram chip;
  chip.set_chip(0);
  v1::Stream* s = chip.add_streams();
  auto wait = [&](uint32_t counter, uint32_t count) {
    v1::MsgWait* w = s->add_instructions()->mutable_msg_wait();
    w->set_qp_id(counter);
    w->set_count(count);
  };
  auto message = [&](uint32_t qp, uint32_t counter) {
    v1::RemoteMsgSend* m = s->add_instructions()->mutable_remote_msg_send();
    m->set_qp_id(qp);
    m->set_dst_chip(1);
    m->set_dst_qp_id(counter);
  };
  // 15 bytes encoded: past what the memo keeps.
  auto transfer = [&](uint64_t bytes) {
    v1::Transfer* t = s->add_instructions()->mutable_transfer();
    t->set_qp_id(3);
    t->set_dst_chip(1);
    t->set_src_addr(4096);
    t->set_dst_addr(8192);
    t->set_bytes(bytes);
  };
  wait(1, 2);
  wait(1, 300);  // the same, one byte longer
  wait(1, 2);
  wait(1, 3);  // same length, last byte differs
  wait(1, 2);
  message(2, 4);  // 8 bytes encoded
  message(2, 5);  // the last of them differs
  message(2, 4);
  transfer(1000);
  transfer(1001);
  transfer(1000);
  transfer(1000);
  s->add_instructions()->mutable_fence();
  wait(1, 2);  // last: within 8 bytes of the chip's end
  const std::string bytes = chip.SerializeAsString();
  const TraceTarget hw = Hw();
  const WireRules rules{&hw, kChips};
  WireChip out;
  ASSERT_TRUE(ReadWireChip(bytes, &rules, &out));
  ASSERT_EQ(out.instrs.size(), static_cast<size_t>(s->instructions_size()));
  for (int i = 0; i < s->instructions_size(); ++i) {
    EXPECT_TRUE(SameInstr(out.instrs[static_cast<size_t>(i)],
                          DecodeInstr(s->instructions(i))))
        << i;
  }
  EXPECT_EQ(out.instrs[1].count, 300u);
  EXPECT_EQ(out.instrs[3].count, 3u);
  EXPECT_EQ(out.instrs[6].dst_qp, 5u);
  EXPECT_EQ(out.instrs[9].bytes, 1001u);
  EXPECT_EQ(out.instrs[11].bytes, 1000u);
  // A repeated message to the chip itself is refused as the first is.
  v1::ChipProgram self;
  self.set_chip(1);
  s = self.add_streams();
  message(2, 4);
  message(2, 4);
  EXPECT_FALSE(ReadWireChip(self.SerializeAsString(), &rules, &out));
}

// CountWireChip counts each stream's instructions as the reader reads them,
// whether the stream is in the form a serializer writes (its id first, each
// instruction in under 128 bytes: counted by a tight loop) or not (the
// general count): the id after the instructions, no id, a long
// instruction, an empty stream; and refuses a stream whose id comes twice.
TEST(WireChipTest, CountsEveryStreamAsTheReaderReadsIt) {
  const std::string fence = Instr1(kFence, "");
  const std::string wait = Instr1(kMsgWait, Field(1, 1) + Field(2, 2));
  // 130 bytes of one instruction: a two-byte length (the reader refuses
  // the unknown field; the count only counts).
  const std::string long_one =
      Instr1(kTransfer, kT + Len(9, std::string(120, 'x')));
  const std::string chip =
      Field(1, 1) + Len(2, Stream(3, fence + wait + fence)) +  // id first
      Len(2, wait + fence + Field(1, 4)) +                     // id last
      Len(2, wait + wait) +                                    // no id
      Len(2, Stream(5, fence + long_one + wait)) +             // long
      Len(2, Stream(6, ""));                                   // empty
  uint32_t id = 0;
  std::vector<uint32_t> lengths;
  ASSERT_TRUE(CountWireChip(chip, &id, &lengths));
  EXPECT_EQ(id, 1u);
  EXPECT_EQ(lengths, (std::vector<uint32_t>{3, 2, 2, 3, 0}));
  // Where the reader takes the chip, it reads as many.
  const std::string taken = Field(1, 1) +
                            Len(2, Stream(3, fence + wait + fence)) +
                            Len(2, wait + fence + Field(1, 4));
  ASSERT_TRUE(CountWireChip(taken, &id, &lengths));
  const TraceTarget hw = Hw();
  const WireRules rules{&hw, kChips};
  WireChip out;
  ASSERT_TRUE(ReadWireChip(taken, &rules, &out));
  ASSERT_EQ(out.streams.size(), lengths.size());
  for (size_t i = 0; i < lengths.size(); ++i) {
    EXPECT_EQ(out.streams[i].size, lengths[i]) << i;
  }
  // A stream's id twice: protobuf's parse takes the last; not counted.
  EXPECT_FALSE(CountWireChip(
      Field(1, 1) + Len(2, Stream(3, fence) + Field(1, 4)), &id, &lengths));
}

// Every chip of the lowered collectives is read by the fast path, to the
// same program as the whole decode.
TEST(WireChipTest, EveryLoweredChipIsTaken) {
  const HwConfig hw = DefaultTps186();
  struct Spec {
    v1::CollectiveOp op;
    const char* algo;
  };
  for (const Spec& s :
       {Spec{v1::ALLREDUCE, "ring"}, Spec{v1::ALLREDUCE, "hd"},
        Spec{v1::ALLGATHER, "ring"}, Spec{v1::REDUCESCATTER, "rh"},
        Spec{v1::ALLTOALL, "pairwise"}, Spec{v1::ALLTOALL, "bruck"}}) {
    SCOPED_TRACE(s.algo);
    CollectiveSpec spec;
    spec.op = s.op;
    spec.n = 8;
    spec.bytes = 1 << 20;
    spec.algorithm = s.algo;
    spec.topology = hw.topology;
    const absl::StatusOr<v1::Trace> trace = LowerCollective(spec, hw);
    ASSERT_TRUE(trace.ok()) << trace.status();
    EXPECT_EQ(ExpectLikeWhole(trace->SerializeAsString(), hw.Target()),
              trace->chips_size());
  }
}

}  // namespace
}  // namespace ccreplay
