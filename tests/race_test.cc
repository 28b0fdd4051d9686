// check/race.h: the happens-before relation, races and wait cycles.
#include "check/race.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/collective.h"
#include "collectives/lower.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "trace/decode.h"

namespace ccreplay {
namespace {

Program Decode(const v1::Trace& t) {
  absl::StatusOr<Program> p = ValidateAndDecode(t, DefaultTps186().Target());
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : Program();
}

Program FromText(const std::string& chips, int num_chips = 2) {
  v1::Trace t;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      absl::StrCat("header { format_version: FORMAT_VERSION_1 num_chips: ",
                   num_chips, " } ", chips),
      &t));
  return Decode(t);
}

std::string RaceText(const MemoryRace& r) {
  return absl::StrCat("chip ", r.chip, " [", r.begin, ", ", r.end, ") ",
                      r.first.chip, "/", r.first.stream, "/", r.first.instr,
                      " vs ", r.second.chip, "/", r.second.stream, "/",
                      r.second.instr);
}

std::string Races(const HbResult& r) {
  std::string s;
  for (const MemoryRace& x : r.races) absl::StrAppend(&s, RaceText(x), "\n");
  return s;
}

// Chip 0 writes [0, 64) of chip 1 on qp 0; `msg` follows it; chip 1 waits,
// then reads [0, 64) (a local copy to 128).
std::string WriteThenRead(const std::string& msg,
                          const std::string& wait =
                              "instructions { msg_wait { qp_id: 0 count: 1 } "
                              "}") {
  return absl::StrCat(
      "chips { chip: 0 streams { id: 0 instructions { transfer { qp_id: 0 "
      "dst_chip: 1 src_addr: 0 dst_addr: 0 bytes: 64 } } ",
      msg, " } } chips { chip: 1 streams { id: 0 ", wait,
      " instructions { transfer { qp_id: 4 dst_chip: 1 src_addr: 0 dst_addr: "
      "128 bytes: 64 } } } }");
}

constexpr InstrRef kWrite{0, 0, 0};
constexpr InstrRef kRead{1, 0, 1};

TEST(HappensBeforeTest, RemoteMsgSendOnTheSameQpOrdersTheWrite) {
  const Program p = FromText(WriteThenRead(
      "instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } "
      "}"));
  HappensBefore hb(p, {});
  EXPECT_TRUE(hb.complete());
  EXPECT_TRUE(hb.Ordered(kWrite, kRead));
  EXPECT_FALSE(hb.Ordered(kRead, kWrite));
  EXPECT_TRUE(hb.Analyze().races.empty());
}

TEST(HappensBeforeTest, MessageOnAnotherQpDoesNotOrderTheWrite) {
  const Program p = FromText(WriteThenRead(
      "instructions { remote_msg_send { qp_id: 4 dst_chip: 1 dst_qp_id: 0 } "
      "}"));
  HappensBefore hb(p, {});
  EXPECT_FALSE(hb.Ordered(kWrite, kRead));
  const HbResult r = hb.Analyze();
  ASSERT_EQ(r.races.size(), 1u) << Races(r);
  EXPECT_EQ(RaceText(r.races[0]), "chip 1 [0, 64) 0/0/0 vs 1/0/1");
  EXPECT_TRUE(r.races[0].first_writes);
  EXPECT_FALSE(r.races[0].second_writes);
}

TEST(HappensBeforeTest, FenceThenMessageOnAnyQpOrdersTheWrite) {
  const Program p = FromText(WriteThenRead(
      "instructions { fence { } } instructions { remote_msg_send { qp_id: 4 "
      "dst_chip: 1 dst_qp_id: 0 } }"));
  HappensBefore hb(p, {});
  EXPECT_TRUE(hb.Ordered(kWrite, kRead));
  EXPECT_TRUE(hb.Analyze().races.empty());
}

TEST(HappensBeforeTest, MessageToAnotherChipDoesNotCoverTheData) {
  // Chip 0's message on qp 0 goes to chip 2, which tells chip 1: the data
  // bound for chip 1 may still be in flight.
  const Program p = FromText(
      "chips { chip: 0 streams { id: 0 "
      "instructions { transfer { qp_id: 0 dst_chip: 1 dst_addr: 0 bytes: 64 } "
      "} instructions { remote_msg_send { qp_id: 0 dst_chip: 2 dst_qp_id: 0 } "
      "} } } chips { chip: 2 streams { id: 0 instructions { msg_wait { qp_id: "
      "0 count: 1 } } instructions { remote_msg_send { qp_id: 0 dst_chip: 1 "
      "dst_qp_id: 0 } } } } chips { chip: 1 streams { id: 0 instructions { "
      "msg_wait { qp_id: 0 count: 1 } } instructions { transfer { qp_id: 4 "
      "dst_chip: 1 src_addr: 0 dst_addr: 128 bytes: 64 } } } }",
      3);
  HappensBefore hb(p, {});
  EXPECT_FALSE(hb.Ordered(kWrite, kRead));
  EXPECT_EQ(hb.Analyze().races.size(), 1u);
}

TEST(HappensBeforeTest, MsgSendCoversLocalCopiesOnly) {
  // A local copy then MsgSend on its qp: the copy is done when counted.
  const Program local = FromText(
      "chips { chip: 0 streams { id: 0 instructions { transfer { qp_id: 0 "
      "dst_chip: 0 src_addr: 0 dst_addr: 64 bytes: 64 } } instructions { "
      "msg_send { qp_id: 0 dst_qp_id: 2 } } } streams { id: 1 instructions { "
      "msg_wait { qp_id: 2 count: 1 } } instructions { transfer { qp_id: 4 "
      "dst_chip: 0 src_addr: 64 dst_addr: 256 bytes: 64 } } } }",
      1);
  EXPECT_TRUE(HappensBefore(local, {}).Ordered({0, 0, 0}, {0, 1, 1}));
  EXPECT_TRUE(AnalyzeHappensBefore(local).races.empty());
}

TEST(HappensBeforeTest, WaitCycleIsFoundWithItsChain) {
  const Program p = FromText(
      "chips { chip: 0 streams { id: 0 instructions { msg_wait { qp_id: 1 "
      "count: 1 } } instructions { remote_msg_send { qp_id: 1 dst_chip: 1 "
      "dst_qp_id: 1 } } } } chips { chip: 1 streams { id: 0 instructions { "
      "msg_wait { qp_id: 1 count: 1 } } instructions { remote_msg_send { "
      "qp_id: 1 dst_chip: 0 dst_qp_id: 1 } } } streams { id: 1 instructions { "
      "msg_wait { qp_id: 3 count: 1 } } } }");
  const HbResult r = AnalyzeHappensBefore(p);
  ASSERT_EQ(r.cycles.size(), 1u);
  ASSERT_EQ(r.cycles[0].links.size(), 2u);
  EXPECT_EQ(r.cycles[0].links[0].wait, (InstrRef{0, 0, 0}));
  EXPECT_EQ(r.cycles[0].links[0].message, (InstrRef{1, 0, 1}));
  EXPECT_EQ(r.cycles[0].links[1].wait, (InstrRef{1, 0, 0}));
  EXPECT_EQ(r.cycles[0].links[1].message, (InstrRef{0, 0, 1}));
  // Chip 1's stream 1 waits on a counter nothing reaches.
  ASSERT_EQ(r.unsatisfiable.size(), 1u);
  EXPECT_EQ(r.unsatisfiable[0], (InstrRef{1, 1, 0}));
}

TEST(HappensBeforeTest, KthMessageOfOneFifoOrdersTheKthWait) {
  // Two writes, each with its message on qp 0; two waits of 1: the first
  // wait covers only the first write.
  const Program p = FromText(
      "chips { chip: 0 streams { id: 0 "
      "instructions { transfer { qp_id: 0 dst_chip: 1 dst_addr: 0 bytes: 64 } "
      "} instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } "
      "} instructions { transfer { qp_id: 0 dst_chip: 1 dst_addr: 64 bytes: "
      "64 } } instructions { remote_msg_send { qp_id: 0 dst_chip: 1 "
      "dst_qp_id: 0 } } } } chips { chip: 1 streams { id: 0 instructions { "
      "msg_wait { qp_id: 0 count: 1 } } instructions { transfer { qp_id: 4 "
      "dst_chip: 1 src_addr: 0 dst_addr: 256 bytes: 64 } } instructions { "
      "msg_wait { qp_id: 0 count: 1 } } instructions { transfer { qp_id: 4 "
      "dst_chip: 1 src_addr: 64 dst_addr: 512 bytes: 64 } } } }");
  HappensBefore hb(p, {});
  EXPECT_TRUE(hb.Ordered({0, 0, 0}, {1, 0, 1}));
  EXPECT_FALSE(hb.Ordered({0, 0, 2}, {1, 0, 1}));
  EXPECT_TRUE(hb.Ordered({0, 0, 2}, {1, 0, 3}));
  EXPECT_TRUE(hb.Analyze().races.empty());
}

TEST(HappensBeforeTest, MessagesOnTwoQpsIntoOneCounterAreNotOrdered) {
  // The same with the second write and message on qp 4: its message may
  // arrive first and release the first wait (the overtaking hazard of
  // docs/lowering.md), so the first read races with the first write.
  const Program p = FromText(
      "chips { chip: 0 streams { id: 0 "
      "instructions { transfer { qp_id: 0 dst_chip: 1 dst_addr: 0 bytes: 64 } "
      "} instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } "
      "} instructions { transfer { qp_id: 4 dst_chip: 1 dst_addr: 64 bytes: "
      "64 } } instructions { remote_msg_send { qp_id: 4 dst_chip: 1 "
      "dst_qp_id: 0 } } } } chips { chip: 1 streams { id: 0 instructions { "
      "msg_wait { qp_id: 0 count: 1 } } instructions { transfer { qp_id: 4 "
      "dst_chip: 1 src_addr: 0 dst_addr: 256 bytes: 64 } } instructions { "
      "msg_wait { qp_id: 0 count: 1 } } instructions { transfer { qp_id: 4 "
      "dst_chip: 1 src_addr: 64 dst_addr: 512 bytes: 64 } } } }");
  HappensBefore hb(p, {});
  EXPECT_FALSE(hb.Ordered({0, 0, 0}, {1, 0, 1}));
  // After both waits (2 messages of 2), both writes have landed.
  EXPECT_TRUE(hb.Ordered({0, 0, 0}, {1, 0, 3}));
  EXPECT_TRUE(hb.Ordered({0, 0, 2}, {1, 0, 3}));
  const HbResult r = hb.Analyze();
  ASSERT_EQ(r.races.size(), 1u) << Races(r);
  EXPECT_EQ(RaceText(r.races[0]), "chip 1 [0, 64) 0/0/0 vs 1/0/1");
}

TEST(HappensBeforeTest, SendReceiveDataIsCoveredByAMessageBehindTheSend) {
  const Program p = FromText(
      "chips { chip: 0 streams { id: 0 instructions { send { qp_id: 0 "
      "dst_chip: 1 src_addr: 0 bytes: 64 } } instructions { remote_msg_send { "
      "qp_id: 0 dst_chip: 1 dst_qp_id: 0 } } } } chips { chip: 1 streams { "
      "id: 0 instructions { receive { qp_id: 0 src_chip: 0 dst_addr: 0 bytes: "
      "64 } } instructions { msg_wait { qp_id: 0 count: 1 } } instructions { "
      "transfer { qp_id: 4 dst_chip: 1 src_addr: 0 dst_addr: 128 bytes: 64 } "
      "} } }");
  HappensBefore hb(p, {});
  EXPECT_TRUE(hb.Ordered({1, 0, 0}, {1, 0, 2}));  // the Receive's write
  EXPECT_TRUE(hb.Analyze().races.empty());
}

TEST(HappensBeforeTest, BoundsStopTheAnalysisAndSaySo) {
  const Program p = FromText(WriteThenRead(
      "instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } "
      "}"));
  RaceOptions opt;
  opt.max_clock_entries = 3;  // 2 streams x 2 channels
  HappensBefore hb(p, opt);
  EXPECT_FALSE(hb.complete());
  EXPECT_THAT(hb.note(), ::testing::HasSubstr("exceed the bound of 3"));
  EXPECT_FALSE(hb.Ordered(kWrite, kRead));  // never claims an order
}

// ---- Every trace the lowering produces is race-free. ----

struct Shape {
  v1::CollectiveOp op;
  const char* algorithm;
  uint32_t n;
  uint64_t bytes;
  uint32_t k;  // CDMA engines striped over
};

class LoweredTest : public ::testing::TestWithParam<Shape> {};

TEST_P(LoweredTest, NoRaceNoCycle) {
  const Shape& s = GetParam();
  CollectiveSpec spec;
  spec.op = s.op;
  spec.algorithm = s.algorithm;
  spec.n = s.n;
  spec.bytes = s.bytes;
  spec.cdma_engines = s.k;
  spec.topology =
      s.op == v1::ALLTOALL ? TopologyKind::kSwitch : TopologyKind::kRing;
  absl::StatusOr<v1::Trace> t = LowerCollective(spec, DefaultTps186());
  ASSERT_TRUE(t.ok()) << t.status();
  const Program p = Decode(*t);
  const HbResult r = AnalyzeHappensBefore(p);
  EXPECT_TRUE(r.complete) << r.note;
  EXPECT_EQ(r.races_found, 0u) << Races(r);
  EXPECT_TRUE(r.cycles.empty());
  EXPECT_TRUE(r.unsatisfiable.empty());
}

std::vector<Shape> Shapes() {
  std::vector<Shape> v;
  for (v1::CollectiveOp op :
       {v1::ALLREDUCE, v1::ALLGATHER, v1::REDUCESCATTER}) {
    for (const char* algo : {"ring", "ring_2port", "rh", "rd", "hd"}) {
      for (uint32_t n : {2u, 3u, 4u, 5u, 7u, 8u, 12u}) {
        for (uint32_t k : {1u, 2u, 8u}) {
          // Chunks of many bytes, and of fewer bytes than stripes.
          for (uint64_t bytes : {uint64_t{1000003}, uint64_t{3} * n}) {
            v.push_back({op, algo, n, bytes, k});
          }
        }
      }
    }
    // Empty chunks (M < N).
    for (uint32_t k : {1u, 3u}) v.push_back({op, "ring", 5, 3, k});
  }
  for (const char* algo : {"pairwise", "bruck"}) {
    for (uint32_t n : {2u, 3u, 5u, 8u, 13u, 64u}) {
      for (uint32_t k : {1u, 2u, 8u}) {
        for (uint64_t bytes : {uint64_t{917504}, uint64_t{5}}) {
          v.push_back({v1::ALLTOALL, algo, n, bytes, k});
        }
      }
    }
  }
  return v;
}

void PrintTo(const Shape& s, std::ostream* os) {
  *os << v1::CollectiveOp_Name(s.op) << " " << s.algorithm << " n=" << s.n
      << " k=" << s.k << " bytes=" << s.bytes;
}

INSTANTIATE_TEST_SUITE_P(Lowering, LoweredTest, ::testing::ValuesIn(Shapes()),
                         [](const ::testing::TestParamInfo<Shape>& i) {
                           return absl::StrCat(
                               v1::CollectiveOp_Name(i.param.op), "_",
                               i.param.algorithm, "_n", i.param.n, "_k",
                               i.param.k, "_b", i.param.bytes);
                         });

// ---- A race planted in an otherwise correct AllReduce. ----

v1::Trace RingAllReduce(uint32_t n, uint64_t bytes, uint32_t k) {
  CollectiveSpec spec;
  spec.n = n;
  spec.bytes = bytes;
  spec.cdma_engines = k;
  absl::StatusOr<v1::Trace> t = LowerCollective(spec, DefaultTps186());
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

TEST(PlantedRaceTest, MessageMovedBeforeItsDataIsCaught) {
  // N = 4, 4 KiB, K = 2: every block has 2 stripes. On chip 1, swap the
  // first Transfer of step 0 with the RemoteMsgSend that follows it: the
  // message no longer rides behind the data, so chip 2 may forward the
  // stripe before chip 1's reduction into it has landed.
  v1::Trace t = RingAllReduce(4, 4096, 2);
  ASSERT_TRUE(AnalyzeHappensBefore(Decode(t)).races.empty());
  v1::Stream* s = t.mutable_chips(1)->mutable_streams(0);
  int first = -1;
  for (int i = 0; i < s->instructions_size(); ++i) {
    if (s->instructions(i).has_transfer()) {
      first = i;
      break;
    }
  }
  ASSERT_GE(first, 0);
  ASSERT_TRUE(s->instructions(first + 1).has_remote_msg_send());
  const v1::Transfer planted = s->instructions(first).transfer();
  s->mutable_instructions()->SwapElements(first, first + 1);
  const Program p = Decode(t);
  const HbResult r = AnalyzeHappensBefore(p);
  ASSERT_FALSE(r.races.empty());
  // Every race involves the moved Transfer (now at first + 1): chip 2 may
  // read the stripe before it lands, and chip 0 may write into chip 1's
  // source stripe before chip 1 has read it (chip 0 learns of the read
  // through the same, now early, message).
  const InstrRef moved{1, 0, static_cast<uint32_t>(first + 1)};
  const MemoryRace* forward = nullptr;
  for (const MemoryRace& x : r.races) {
    EXPECT_TRUE(x.first == moved || x.second == moved) << RaceText(x);
    if (x.chip == 2 && x.first == moved && x.second.chip == 2) forward = &x;
  }
  ASSERT_NE(forward, nullptr) << Races(r);
  EXPECT_EQ(forward->begin, planted.dst_addr());
  EXPECT_EQ(forward->end, planted.dst_addr() + planted.bytes());
  EXPECT_TRUE(forward->first_writes);
  EXPECT_FALSE(forward->second_writes);
  const Instr& reader = p.chips[2].streams[0].instrs[forward->second.instr];
  EXPECT_EQ(reader.kind, OpKind::kTransfer);
  EXPECT_EQ(reader.src_addr, planted.dst_addr());
  EXPECT_EQ(reader.peer, 3u);
}

TEST(PlantedRaceTest, MissingWaitIsCaught) {
  // N = 5, K = 1: drop chip 3's wait before its step 1; it then forwards
  // the chunk chip 2 is still reducing into it.
  v1::Trace t = RingAllReduce(5, 5000, 1);
  v1::Stream* s = t.mutable_chips(3)->mutable_streams(0);
  int waits = 0;
  for (int i = 0; i < s->instructions_size(); ++i) {
    if (s->instructions(i).has_msg_wait() && ++waits == 2) {
      s->mutable_instructions()->DeleteSubrange(i, 1);
      break;
    }
  }
  // Chip 3's later waits are now one message early all the way round, so
  // the damage spreads; the first race is the planted one: chip 3 forwards
  // chunk 1 = [1000, 2000) at step 1 while chip 2's step-0 reduction into
  // it may still be landing.
  const HbResult r = AnalyzeHappensBefore(Decode(t));
  bool found = false;
  for (const MemoryRace& x : r.races) {
    found |= x.chip == 3 && x.begin == 1000 && x.end == 2000 &&
             x.first.chip == 2 && x.second.chip == 3;
  }
  EXPECT_TRUE(found) << Races(r);
}

TEST(PlantedRaceTest, OneCounterForAllStripesIsTheDocumentedHazard) {
  // Rewrite a per-stripe lowering to the old protocol (every stripe's
  // message on counter 0, one wait for all stripes of a block): with K >= 2
  // a later stripe's message can release the wait early.
  v1::Trace t = RingAllReduce(3, 12, 2);
  for (v1::ChipProgram& c : *t.mutable_chips()) {
    v1::Stream* s = c.mutable_streams(0);
    google::protobuf::RepeatedPtrField<v1::Instruction> out;
    for (const v1::Instruction& in : s->instructions()) {
      if (in.has_remote_msg_send() && in.remote_msg_send().dst_qp_id() != 1) {
        v1::Instruction m = in;
        m.mutable_remote_msg_send()->set_dst_qp_id(0);
        *out.Add() = m;
      } else if (in.has_msg_wait() && in.msg_wait().qp_id() != 1) {
        if (in.msg_wait().qp_id() == 0) {
          v1::Instruction w = in;
          w.mutable_msg_wait()->set_count(2);
          *out.Add() = w;
        }
      } else {
        *out.Add() = in;
      }
    }
    s->mutable_instructions()->Swap(&out);
  }
  const HbResult r = AnalyzeHappensBefore(Decode(t));
  EXPECT_FALSE(r.races.empty());
}

}  // namespace
}  // namespace ccreplay
