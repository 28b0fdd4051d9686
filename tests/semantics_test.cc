#include "check/semantics.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/executor.h"
#include "collectives/alltoallv.h"
#include "collectives/lower.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "trace/decode.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

HwConfig Hw() { return DefaultTps186(); }  // 8 engines

CollectiveSpec Spec(v1::CollectiveOp op, const std::string& algo, uint32_t n,
                    uint64_t bytes, uint32_t k) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = algo;
  s.n = n;
  s.bytes = bytes;
  s.cdma_engines = k;
  return s;
}

v1::Trace MustLower(const CollectiveSpec& s) {
  absl::StatusOr<v1::Trace> t = LowerCollective(s, Hw());
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : v1::Trace();
}

AllToAllvDist Zipf(double s, uint64_t seed) {
  AllToAllvDist d;
  d.kind = AllToAllvDist::kZipf;
  d.zipf_s = s;
  d.seed = seed;
  return d;
}

struct Case {
  v1::CollectiveOp op;
  std::string algo;
};

std::vector<Case> Algorithms() {
  std::vector<Case> out;
  for (v1::CollectiveOp op :
       {v1::ALLREDUCE, v1::ALLGATHER, v1::REDUCESCATTER}) {
    for (const char* a : {"ring", "ring_2port", "rh", "rd", "hd"}) {
      out.push_back({op, a});
    }
  }
  out.push_back({v1::ALLTOALL, "pairwise"});
  out.push_back({v1::ALLTOALL, "bruck"});
  out.push_back({v1::ALLTOALLV, "pairwise"});
  out.push_back({v1::BROADCAST, "ring"});
  out.push_back({v1::REDUCE, "ring"});
  out.push_back({v1::P2P, "direct"});
  return out;
}

class SemanticsSweepTest : public ::testing::TestWithParam<Case> {};

// Every algorithm computes its collective for N = 2..17 and sizes that N
// does and does not divide (1 byte: most chunks empty; 1000: 1000 = 17*58 +
// 14; 4096), with K = 3 engines so blocks have uneven stripes.
TEST_P(SemanticsSweepTest, EveryNAndSize) {
  const Case& c = GetParam();
  for (uint32_t n = 2; n <= 17; ++n) {
    for (uint64_t m : {uint64_t{1}, uint64_t{1000}, uint64_t{4096}}) {
      CollectiveSpec s = Spec(c.op, c.algo, n, m, 3);
      if (c.op == v1::ALLTOALLV) {
        auto v = AllToAllvMatrix(Zipf(1.1, n), n, m);
        ASSERT_TRUE(v.ok()) << v.status();
        s.alltoallv_bytes = *v;
      }
      if (c.op == v1::BROADCAST || c.op == v1::REDUCE) s.root = n / 2;
      const v1::Trace t = MustLower(s);
      ASSERT_TRUE(ValidateAndDecode(t, Hw().Target()).ok()) << n << " " << m;
      EXPECT_TRUE(VerifySemantics(t).ok())
          << CollectiveOpName(c.op) << " " << c.algo << " n=" << n << " m=" << m
          << ": " << VerifySemantics(t);
    }
  }
}

// The randomized per-qp executor: only per-qp FIFO order is assumed.
TEST_P(SemanticsSweepTest, RandomPerQpSchedules) {
  const Case& c = GetParam();
  for (uint32_t n : {2u, 3u, 5u, 8u}) {
    for (uint64_t m : {uint64_t{7}, uint64_t{40}}) {
      CollectiveSpec s = Spec(c.op, c.algo, n, m, 2);
      if (c.op == v1::ALLTOALLV) {
        s.alltoallv_bytes = *AllToAllvMatrix(Zipf(1.5, 3), n, m);
      }
      const v1::Trace t = MustLower(s);
      for (uint64_t seed = 0; seed < 30; ++seed) {
        const absl::Status st = VerifySemantics(t, {true, seed});
        EXPECT_TRUE(st.ok())
            << CollectiveOpName(c.op) << " " << c.algo << " n=" << n
            << " m=" << m << " seed " << seed << ": " << st;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, SemanticsSweepTest,
                         ::testing::ValuesIn(Algorithms()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return absl::StrCat(CollectiveOpName(info.param.op),
                                               "_", info.param.algo);
                         });

// Communicator groups: 8 groups of 8 on 64 chips, and a 64-chip, 1 MiB
// AllReduce, verify quickly thanks to the interval representation.
TEST(SemanticsTest, GroupsAndALargeTrace) {
  CollectiveSpec s = Spec(v1::ALLREDUCE, "hd", 64, 1 << 20, 0);
  s.group_size = 8;
  EXPECT_TRUE(VerifySemantics(MustLower(s)).ok());
  s.group_size = 2;
  s.algorithm = "ring";
  EXPECT_TRUE(VerifySemantics(MustLower(s)).ok());
  s.group_size = 0;
  EXPECT_TRUE(VerifySemantics(MustLower(s)).ok());
}

TEST(SemanticsTest, PipelinedChunks) {
  for (const char* algo : {"ring", "ring_2port"}) {
    CollectiveSpec s = Spec(v1::ALLREDUCE, algo, 5, 1000, 2);
    s.chunk_bytes = 64;
    const v1::Trace t = MustLower(s);
    EXPECT_EQ(t.header().collective().chunk_bytes(), 64u);
    EXPECT_TRUE(VerifySemantics(t).ok()) << algo;
    for (uint64_t seed = 0; seed < 10; ++seed) {
      EXPECT_TRUE(VerifySemantics(t, {true, seed}).ok()) << algo << seed;
    }
  }
  CollectiveSpec b = Spec(v1::BROADCAST, "ring", 4, 1000, 2);
  b.chunk_bytes = 300;
  EXPECT_TRUE(VerifySemantics(MustLower(b)).ok());
}

// ---------------------------------------------------------------------------
// Broken schedules are caught, with the chip, range and contents named.

google::protobuf::RepeatedPtrField<v1::Instruction>* Instrs(v1::Trace* t,
                                                            int chip) {
  return t->mutable_chips(chip)->mutable_streams(0)->mutable_instructions();
}

TEST(SemanticsBrokenTest, MissingStep) {
  // Ring AllGather, 3 chips, 30 bytes, 1 engine: chunks of 10. Chip 0's
  // stream: ready send, ready wait, step 0 (Transfer chunk 0 + msg), wait,
  // step 1 (Transfer chunk 2 + msg), wait. Dropping step 1's Transfer
  // leaves chip 1 without chunk 2 (its message still arrives).
  v1::Trace t = MustLower(Spec(v1::ALLGATHER, "ring", 3, 30, 1));
  auto* c0 = Instrs(&t, 0);
  ASSERT_TRUE((*c0)[5].has_transfer());
  EXPECT_EQ((*c0)[5].transfer().src_addr(), 20u);
  c0->DeleteSubrange(5, 1);
  EXPECT_EQ(VerifySemantics(t).message(),
            "semantics: allgather chip 1 output [20, 30): holds "
            "uninitialised data, want chip 2's input from offset 0");
}

TEST(SemanticsBrokenTest, DoubleCountedReduction) {
  // Ring AllReduce, 2 chips, 8 bytes, 1 engine: chip 0 sums chunk 1 =
  // [4, 8) into chip 1 at instruction 2. Sending it twice counts chip 0's
  // input twice in chip 1's chunk 1. Appended at the end, the extra write
  // carries chip 0's final chunk 1 (inputs 0 and 1) onto chip 1's final
  // chunk 1 (inputs 0 and 1): each input twice.
  v1::Trace t = MustLower(Spec(v1::ALLREDUCE, "ring", 2, 8, 1));
  auto* c0 = Instrs(&t, 0);
  ASSERT_TRUE((*c0)[2].has_transfer());
  *c0->Add() = (*c0)[2];  // the extra write lands after everything else
  const absl::Status s = VerifySemantics(t);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("output [4, 8): holds the sum of the "
                        "inputs of chips {0 (x2), 1 (x2)} from "
                        "offset 4, want the sum of the inputs "
                        "of chips {0-1} from offset 4"));
}

TEST(SemanticsBrokenTest, WrongPeer) {
  // Pairwise AllToAll, 3 chips, 3 bytes, 1 engine: chip 0 sends byte 1 to
  // chip 1 at instruction 3; sending it to chip 2 (same address, slot 0 of
  // chip 2's output at 3 + 0) overwrites what chip 2 needs from chip 0.
  v1::Trace t = MustLower(Spec(v1::ALLTOALL, "pairwise", 3, 3, 1));
  auto* c0 = Instrs(&t, 0);
  ASSERT_TRUE((*c0)[3].has_transfer());
  ASSERT_EQ((*c0)[3].transfer().dst_chip(), 1u);
  (*c0)[3].mutable_transfer()->set_dst_chip(2);
  const absl::Status s = VerifySemantics(t);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("chip 2"));
}

TEST(SemanticsBrokenTest, EarlyForwardIsAHazard) {
  // Ring AllReduce, 3 chips, 12 bytes, 1 engine: chip 1's stream is ready
  // send, ready wait, step 0 (Transfer + msg), wait (instruction 4), step 1
  // forwarding chunk (1 - 1 - 1) mod 3 = 2 = [8, 12), which chip 0 sums into
  // at its step 0. Without the wait chip 1 reads it with that write in flight.
  v1::Trace t = MustLower(Spec(v1::ALLREDUCE, "ring", 3, 12, 1));
  auto* c1 = Instrs(&t, 1);
  ASSERT_TRUE((*c1)[4].has_msg_wait());
  c1->DeleteSubrange(4, 1);
  const absl::Status s = VerifySemantics(t);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("semantics: chip 1, stream 0, "
                        "instruction 4 (Transfer) reads [8, 12) of "
                        "chip 1 while a write into [8, 12) by chip 0, "
                        "stream 0, instruction 2 (Transfer) is in flight"));
}

TEST(SemanticsBrokenTest, MissingMessageDeadlocks) {
  v1::Trace t = MustLower(Spec(v1::ALLREDUCE, "ring", 2, 8, 1));
  Instrs(&t, 0)->DeleteSubrange(0, 1);  // chip 0's ready to chip 1
  EXPECT_EQ(VerifySemantics(t).message(),
            "semantics: deadlock: chip 0, stream 0, instruction 3 "
            "(MsgWait): waits for 1 message(s) on counter 0, has 0; chip 1, "
            "stream 0, instruction 1 (MsgWait): waits for 1 message(s) on "
            "counter 1, has 0");
}

TEST(SemanticsBrokenTest, NoCollectiveInHeader) {
  v1::Trace t = MustLower(Spec(v1::ALLREDUCE, "ring", 2, 8, 1));
  t.mutable_header()->clear_collective();
  EXPECT_EQ(VerifySemantics(t).code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// The reference executor's schedule hook and channel ordering.

// Chip 0 writes [0, 8) of chip 1 on qp 0 and signals on qp `msg_qp`; chip 1
// waits for the signal, then copies [0, 8) locally.
v1::Trace WriteThenSignal(uint32_t msg_qp) {
  v1::Trace t;
  t.mutable_header()->set_format_version(v1::FORMAT_VERSION_1);
  t.mutable_header()->set_num_chips(2);
  // Chip 0's input is [0, 8): the data the write carries.
  v1::CollectiveInfo* c = t.mutable_header()->mutable_collective();
  c->set_n(2);
  v1::ChipBuffers* b = c->add_buffers();
  b->set_chip(0);
  b->mutable_input()->set_bytes(8);
  v1::Stream* s0 = t.add_chips()->add_streams();
  t.mutable_chips(0)->set_chip(0);
  v1::Transfer* w = s0->add_instructions()->mutable_transfer();
  w->set_dst_chip(1);
  w->set_bytes(8);
  v1::RemoteMsgSend* m = s0->add_instructions()->mutable_remote_msg_send();
  m->set_qp_id(msg_qp);
  m->set_dst_chip(1);
  v1::ChipProgram* c1 = t.add_chips();
  c1->set_chip(1);
  v1::Stream* s1 = c1->add_streams();
  s1->add_instructions()->mutable_msg_wait()->set_count(1);
  v1::Transfer* copy = s1->add_instructions()->mutable_transfer();
  copy->set_dst_chip(1);
  copy->set_dst_addr(64);
  copy->set_bytes(8);
  EXPECT_TRUE(ValidateAndDecode(t, Hw().Target()).ok());
  return t;
}

// Issues first; among deliveries, a message channel (qp 4) before data.
size_t MessagesFirst(const std::vector<ExecAction>& actions) {
  for (size_t a = 0; a < actions.size(); ++a) {
    if (actions[a].kind == ExecAction::kIssue) return a;
  }
  for (size_t a = 0; a < actions.size(); ++a) {
    if (actions[a].key.qp == 4) return a;
  }
  return 0;
}

TEST(ReferenceExecutorTest, AMessageOnAnotherQpMayOvertakeTheData) {
  // Per-qp channels: the qp-4 signal can arrive before the qp-0 data, and
  // chip 1 then reads [0, 8) with the write still in flight.
  const v1::Trace signal_on_4 = WriteThenSignal(4);
  const v1::Trace signal_on_0 = WriteThenSignal(0);
  ReferenceExecutor per_qp(signal_on_4, ExecOptions{});
  EXPECT_EQ(per_qp.Run(MessagesFirst).message(),
            "semantics: chip 1, stream 0, instruction 1 (Transfer) reads [0, "
            "8) of chip 1 while a write into [0, 8) by chip 0, stream 0, "
            "instruction 0 (Transfer) is in flight");
  // On the data's own qp the signal follows the data (write + msg).
  ReferenceExecutor same_qp(signal_on_0, ExecOptions{});
  EXPECT_TRUE(same_qp.Run(MessagesFirst).ok());
  // With one channel per chip pair everything arrives in issue order.
  ExecOptions pair;
  pair.per_qp = false;
  ReferenceExecutor ordered(signal_on_4, pair);
  EXPECT_TRUE(ordered.Run(MessagesFirst).ok());
}

TEST(ReferenceExecutorTest, LazyScheduleKeepsDataInFlightUntilNeeded) {
  // The lazy schedule delivers the oldest item first (the data), so this
  // trace passes under it even with the signal on another qp: hazards that
  // need a reordering show up only under schedules that make it.
  const v1::Trace t = WriteThenSignal(4);
  ReferenceExecutor lazy(t, ExecOptions{});
  EXPECT_TRUE(lazy.Run(LazySchedule()).ok());
  // Chip 1's copy landed after the write: [64, 72) holds chip 0's input.
  const std::vector<Seg> got = lazy.Read(1, 64, 8);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].len, 8u);
  EXPECT_EQ(Describe(got[0].v), "chip 0's input from offset 0");
}

}  // namespace
}  // namespace ccreplay
