#include "collectives/lower.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/executor.h"
#include "check/semantics.h"
#include "collectives/lower_internal.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "trace/decode.h"
#include "trace/program.h"

namespace ccreplay {
namespace {

using lowering::ChunkOffset;
using lowering::ChunkSize;
using lowering::DataCounter;
using lowering::kDataQp;
using lowering::kReadyQp;
using lowering::NumStripes;
using ::testing::HasSubstr;

HwConfig Hw(uint32_t engines) {
  HwConfig hw = DefaultTps186();
  hw.cdma_engines = engines;
  return hw;
}

CollectiveSpec Spec(v1::CollectiveOp op, uint32_t n, uint64_t bytes,
                    uint32_t engines) {
  CollectiveSpec s;
  s.op = op;
  s.n = n;
  s.bytes = bytes;
  s.algorithm = op == v1::ALLTOALL ? "pairwise" : "ring";
  s.topology = op == v1::ALLTOALL ? TopologyKind::kSwitch : TopologyKind::kRing;
  s.cdma_engines = engines;
  return s;
}

v1::Trace MustLower(const CollectiveSpec& spec, uint32_t hw_engines = 8) {
  absl::StatusOr<v1::Trace> t = LowerCollective(spec, Hw(hw_engines));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : v1::Trace();
}

const google::protobuf::RepeatedPtrField<v1::Instruction>& Instrs(
    const v1::Trace& t, uint32_t chip) {
  return t.chips(static_cast<int>(chip)).streams(0).instructions();
}

// ---------------------------------------------------------------------------
// Chunking and striping arithmetic.

TEST(LowerInternalTest, ChunksAreBalancedAndContiguous) {
  // 1000003 = 7 * 142857 + 4: chunks 0..3 get one byte more.
  EXPECT_EQ(ChunkSize(1000003, 7, 0), 142858u);
  EXPECT_EQ(ChunkSize(1000003, 7, 3), 142858u);
  EXPECT_EQ(ChunkSize(1000003, 7, 4), 142857u);
  EXPECT_EQ(ChunkOffset(1000003, 7, 4), 4u * 142858u);
  EXPECT_EQ(ChunkOffset(1000003, 7, 6), 4u * 142858u + 2u * 142857u);
  EXPECT_EQ(ChunkOffset(1000003, 7, 7), 1000003u);
  // 3 bytes over 5 chips: 1, 1, 1, 0, 0.
  EXPECT_EQ(ChunkSize(3, 5, 2), 1u);
  EXPECT_EQ(ChunkSize(3, 5, 3), 0u);
  EXPECT_EQ(ChunkOffset(3, 5, 4), 3u);
}

TEST(LowerInternalTest, StripesFollowTheBlockSize) {
  EXPECT_EQ(NumStripes(0, 8), 1u);  // empty block: one (message-only) stripe
  EXPECT_EQ(NumStripes(3, 8), 3u);
  EXPECT_EQ(NumStripes(1000, 8), 8u);
  // 1003 bytes over 8: 126 * 3 + 125 * 5.
  EXPECT_EQ(lowering::StripeSize(1003, 8, 2), 126u);
  EXPECT_EQ(lowering::StripeSize(1003, 8, 3), 125u);
  EXPECT_EQ(lowering::StripeOffset(1003, 8, 4), 3u * 126u + 125u);
}

TEST(LowerInternalTest, CountersAreTheSpecQps) {
  EXPECT_EQ(kDataQp, 0u);
  EXPECT_EQ(kReadyQp, 1u);
  // Stripe j's data counter is the id of the qp stripe j rides on.
  EXPECT_EQ(DataCounter(0), kDataQp);
  EXPECT_EQ(DataCounter(1), 4u);
  EXPECT_EQ(DataCounter(7), MakeQp(7, 0));
}

// ---------------------------------------------------------------------------
// The N=2 AllReduce example of docs/lowering.md, chip 0, exactly.

constexpr char kAllReduceN2Chip0[] = R"pb(
  chip: 0
  streams {
    id: 0
    instructions { remote_msg_send { qp_id: 1 dst_chip: 1 dst_qp_id: 1 } }
    instructions { msg_wait { qp_id: 1 count: 1 } }
    instructions {
      transfer {
        qp_id: 0
        dst_chip: 1
        src_addr: 512
        dst_addr: 512
        bytes: 256
        reduce: REDUCE_SUM
      }
    }
    instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } }
    instructions {
      transfer {
        qp_id: 4
        dst_chip: 1
        src_addr: 768
        dst_addr: 768
        bytes: 256
        reduce: REDUCE_SUM
      }
    }
    instructions { remote_msg_send { qp_id: 4 dst_chip: 1 dst_qp_id: 4 } }
    instructions { msg_wait { qp_id: 0 count: 1 } }
    instructions { msg_wait { qp_id: 4 count: 1 } }
    instructions {
      transfer { qp_id: 0 dst_chip: 1 src_addr: 0 dst_addr: 0 bytes: 256 }
    }
    instructions { remote_msg_send { qp_id: 0 dst_chip: 1 dst_qp_id: 0 } }
    instructions {
      transfer { qp_id: 4 dst_chip: 1 src_addr: 256 dst_addr: 256 bytes: 256 }
    }
    instructions { remote_msg_send { qp_id: 4 dst_chip: 1 dst_qp_id: 4 } }
    instructions { msg_wait { qp_id: 0 count: 1 } }
    instructions { msg_wait { qp_id: 4 count: 1 } }
  }
)pb";

TEST(LowerRingTest, AllReduceTwoChipsExactStream) {
  const v1::Trace t = MustLower(Spec(v1::ALLREDUCE, 2, 1024, 2));
  v1::ChipProgram want;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(kAllReduceN2Chip0, &want));
  ASSERT_EQ(t.chips_size(), 2);
  EXPECT_EQ(t.chips(0).SerializeAsString(), want.SerializeAsString())
      << "got:\n"
      << t.chips(0).DebugString();
  // Chip 1 is the mirror image: chunk 0 reduced first, then chunk 1.
  const auto& c1 = Instrs(t, 1);
  ASSERT_EQ(c1.size(), 14);
  EXPECT_EQ(c1[2].transfer().src_addr(), 0u);
  EXPECT_EQ(c1[2].transfer().dst_chip(), 0u);
  EXPECT_EQ(c1[5].remote_msg_send().dst_qp_id(), DataCounter(1));
  EXPECT_EQ(c1[6].msg_wait().qp_id(), DataCounter(0));
  EXPECT_EQ(c1[7].msg_wait().qp_id(), DataCounter(1));
  EXPECT_EQ(c1[8].transfer().src_addr(), 512u);
  EXPECT_EQ(c1[8].transfer().reduce(), v1::REDUCE_NONE);
}

TEST(LowerTest, Header) {
  const v1::Trace t = MustLower(Spec(v1::REDUCESCATTER, 7, 1000003, 0));
  const v1::TraceHeader& h = t.header();
  EXPECT_EQ(h.format_version(), v1::FORMAT_VERSION_1);
  EXPECT_EQ(h.num_chips(), 7u);
  EXPECT_EQ(h.generator(), "ccreplay lower");
  const v1::CollectiveInfo& c = h.collective();
  EXPECT_EQ(c.op(), v1::REDUCESCATTER);
  EXPECT_EQ(c.n(), 7u);
  EXPECT_EQ(c.bytes(), 1000003u);
  EXPECT_EQ(c.algorithm(), "ring");
  EXPECT_EQ(c.topology(), "ring");
  EXPECT_EQ(c.cdma_engines_used(), 8u);  // 0 = all the hardware has
  EXPECT_TRUE(c.in_place());
  ASSERT_EQ(c.buffers_size(), 7);
  EXPECT_EQ(c.buffers(5).chip(), 5u);
  EXPECT_EQ(c.buffers(5).input().addr(), 0u);
  EXPECT_EQ(c.buffers(5).input().bytes(), 1000003u);
  EXPECT_EQ(c.buffers(5).output().addr(), 4u * 142858u + 142857u);
  EXPECT_EQ(c.buffers(5).output().bytes(), 142857u);
  ASSERT_EQ(t.chips_size(), 7);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(t.chips(i).chip(), static_cast<uint32_t>(i));
    ASSERT_EQ(t.chips(i).streams_size(), 1);
    EXPECT_EQ(t.chips(i).streams(0).id(), 0u);
  }
}

// LowerCollectiveTo hands over the header and then each chip in order, one
// chip at a time (the program object is reused); the serialized pieces are
// exactly those of LowerCollective's whole trace, for ops with one stream
// and with several per chip, and with several engines.
TEST(LowerTest, PiecewiseLoweringGivesTheSameBytes) {
  for (const CollectiveSpec& spec :
       {Spec(v1::ALLREDUCE, 5, 1000003, 2), Spec(v1::ALLTOALL, 6, 4096, 0)}) {
    const v1::Trace whole = MustLower(spec);
    std::string header;
    std::vector<std::string> chips;
    LoweredTraceSink sink;
    sink.header = [&](v1::TraceHeader* h) {
      EXPECT_TRUE(chips.empty());
      header = h->SerializeAsString();
      return absl::OkStatus();
    };
    sink.chip = [&](v1::ChipProgram* c) {
      chips.push_back(c->SerializeAsString());
      return absl::OkStatus();
    };
    ASSERT_TRUE(LowerCollectiveTo(spec, Hw(8), sink).ok());
    EXPECT_EQ(header, whole.header().SerializeAsString());
    ASSERT_EQ(chips.size(), static_cast<size_t>(whole.chips_size()));
    for (int c = 0; c < whole.chips_size(); ++c) {
      EXPECT_EQ(chips[static_cast<size_t>(c)],
                whole.chips(c).SerializeAsString())
          << "chip " << c;
    }
  }
}

// An error from the sink stops the lowering: no chip after it is made.
TEST(LowerTest, PiecewiseLoweringStopsAtTheSinksError) {
  int chips = 0;
  LoweredTraceSink sink;
  sink.header = [](v1::TraceHeader*) { return absl::OkStatus(); };
  sink.chip = [&](v1::ChipProgram*) {
    return ++chips == 2 ? absl::DataLossError("disk full") : absl::OkStatus();
  };
  const absl::Status s =
      LowerCollectiveTo(Spec(v1::ALLREDUCE, 4, 4096, 0), Hw(8), sink);
  EXPECT_EQ(s, absl::DataLossError("disk full"));
  EXPECT_EQ(chips, 2);
}

TEST(LowerTest, HeaderBuffersPerOp) {
  {
    const v1::Trace t = MustLower(Spec(v1::ALLGATHER, 5, 3, 2));
    const v1::ChipBuffers& b = t.header().collective().buffers(2);
    EXPECT_EQ(b.input().addr(), 2u);
    EXPECT_EQ(b.input().bytes(), 1u);
    EXPECT_EQ(b.output().addr(), 0u);
    EXPECT_EQ(b.output().bytes(), 3u);
  }
  {
    const v1::Trace t = MustLower(Spec(v1::ALLTOALL, 3, 100, 2));
    const v1::CollectiveInfo& c = t.header().collective();
    EXPECT_FALSE(c.in_place());
    EXPECT_EQ(c.algorithm(), "pairwise");
    EXPECT_EQ(c.topology(), "switch");
    EXPECT_EQ(c.cdma_engines_used(), 2u);
    // 100 = 34 + 33 + 33; chip 0's output holds 3 slots of 34 bytes.
    EXPECT_EQ(c.buffers(0).input().bytes(), 100u);
    EXPECT_EQ(c.buffers(0).output().addr(), 100u);
    EXPECT_EQ(c.buffers(0).output().bytes(), 102u);
    EXPECT_EQ(c.buffers(2).output().bytes(), 99u);
  }
}

// ---------------------------------------------------------------------------
// Properties over a sweep of shapes.

struct Shape {
  v1::CollectiveOp op;
  uint32_t n;
  uint64_t bytes;
  uint32_t engines;
};

std::string ShapeName(const Shape& s) {
  return absl::StrCat(CollectiveOpName(s.op), "_n", s.n, "_m", s.bytes, "_k",
                      s.engines);
}

std::vector<Shape> Sweep() {
  std::vector<Shape> out;
  for (v1::CollectiveOp op :
       {v1::ALLREDUCE, v1::ALLGATHER, v1::REDUCESCATTER, v1::ALLTOALL}) {
    for (uint32_t n : {2u, 3u, 5u, 7u, 8u}) {
      for (uint64_t m :
           {uint64_t{1}, uint64_t{3}, uint64_t{1024}, uint64_t{1000003}}) {
        for (uint32_t k : {1u, 2u, 3u, 8u}) out.push_back({op, n, m, k});
      }
    }
  }
  return out;
}

class LowerSweepTest : public ::testing::TestWithParam<Shape> {};

TEST_P(LowerSweepTest, QpsStayOnTheUsedEngines) {
  const Shape& s = GetParam();
  const v1::Trace t = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
  for (uint32_t chip = 0; chip < s.n; ++chip) {
    for (const v1::Instruction& in : Instrs(t, chip)) {
      uint32_t qp = 0;
      switch (in.kind_case()) {
        case v1::Instruction::kTransfer:
          qp = in.transfer().qp_id();
          EXPECT_EQ(VcOfQp(qp), 0u);
          EXPECT_GT(in.transfer().bytes(), 0u);
          EXPECT_LT(in.transfer().dst_chip(), s.n);
          break;
        case v1::Instruction::kMsgSend:
          // Only data messages are local: stripe j's counter is its qp.
          qp = in.msg_send().qp_id();
          EXPECT_EQ(VcOfQp(qp), 0u);
          EXPECT_EQ(in.msg_send().dst_qp_id(), DataCounter(CdmaOfQp(qp)));
          break;
        case v1::Instruction::kRemoteMsgSend:
          qp = in.remote_msg_send().qp_id();
          EXPECT_NE(in.remote_msg_send().dst_chip(), chip);
          EXPECT_LT(in.remote_msg_send().dst_chip(), s.n);
          // Ready messages ride on vc 1 to kReadyQp; data messages on stripe
          // j's qp to stripe j's counter, the same id.
          if (VcOfQp(qp) == 1) {
            EXPECT_EQ(in.remote_msg_send().dst_qp_id(), kReadyQp);
          } else {
            EXPECT_EQ(VcOfQp(qp), 0u);
            EXPECT_EQ(in.remote_msg_send().dst_qp_id(),
                      DataCounter(CdmaOfQp(qp)));
          }
          break;
        case v1::Instruction::kMsgWait:
          // A counter: kReadyQp or some stripe's data counter.
          qp = in.msg_wait().qp_id();
          EXPECT_TRUE(qp == kReadyQp || VcOfQp(qp) == 0) << qp;
          EXPECT_GE(in.msg_wait().count(), 1u);
          break;
        default:
          ADD_FAILURE() << "unexpected instruction " << in.DebugString();
      }
      EXPECT_LT(CdmaOfQp(qp), s.engines) << in.DebugString();
    }
  }
}

// The replay's reader accepts every lowered trace as it is.
TEST_P(LowerSweepTest, PassesTheReplayValidator) {
  const Shape& s = GetParam();
  const v1::Trace t = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
  absl::StatusOr<Program> p = ValidateAndDecode(t, Hw(8).Target());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->num_chips, s.n);
}

// Messages sent to each (chip, counter id) equal what that chip's MsgWaits on
// that counter consume, so no chip waits for a message that never comes and
// none is left over.
TEST_P(LowerSweepTest, MessageCountsBalance) {
  const Shape& s = GetParam();
  const v1::Trace t = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> sent, waited;
  // Which chips send to each (chip, counter), and the counts waited there.
  std::map<std::pair<uint32_t, uint32_t>, std::set<uint32_t>> senders;
  std::map<std::pair<uint32_t, uint32_t>, std::set<uint32_t>> wait_counts;
  for (uint32_t chip = 0; chip < s.n; ++chip) {
    for (const v1::Instruction& in : Instrs(t, chip)) {
      if (in.has_msg_send()) {
        ++sent[{chip, in.msg_send().dst_qp_id()}];
        senders[{chip, in.msg_send().dst_qp_id()}].insert(chip);
      }
      if (in.has_remote_msg_send()) {
        const std::pair<uint32_t, uint32_t> key{
            in.remote_msg_send().dst_chip(), in.remote_msg_send().dst_qp_id()};
        ++sent[key];
        senders[key].insert(chip);
      }
      if (in.has_msg_wait()) {
        waited[{chip, in.msg_wait().qp_id()}] += in.msg_wait().count();
        wait_counts[{chip, in.msg_wait().qp_id()}].insert(
            in.msg_wait().count());
      }
    }
  }
  EXPECT_EQ(sent, waited);
  for (uint32_t chip = 0; chip < s.n; ++chip) {
    const uint64_t ready = sent[{chip, kReadyQp}];
    EXPECT_EQ(ready, s.op == v1::ALLTOALL ? s.n - 1 : 1u);
  }
  // Data counters: stripe j's, for j below the most stripes any block has.
  const uint32_t max_stripes =
      NumStripes(ChunkSize(s.bytes, s.n, 0), s.engines);
  for (const auto& [key, count] : sent) {
    const auto [chip, counter] = key;
    if (counter == kReadyQp) continue;
    EXPECT_EQ(VcOfQp(counter), 0u) << counter;
    EXPECT_LT(CdmaOfQp(counter), max_stripes) << counter;
    if (s.op == v1::ALLTOALL) {
      // Every chip sends chip p one block, so each used stripe counter gets
      // one message per chip and is waited for once, for all of them.
      EXPECT_EQ(senders[key].size(), s.n) << chip << " " << counter;
      EXPECT_EQ(count, s.n) << chip << " " << counter;
      EXPECT_EQ(wait_counts[key], std::set<uint32_t>{s.n});
    } else {
      // Ring: only prev feeds my data counters (so per-qp order is step
      // order), and each wait consumes one step's stripe.
      EXPECT_EQ(senders[key], std::set<uint32_t>{(chip + s.n - 1) % s.n})
          << chip << " " << counter;
      EXPECT_EQ(wait_counts[key], std::set<uint32_t>{1u});
    }
  }
}

// Ring: every block prev sends me, in order, is waited for by one run of
// MsgWaits {DataCounter(j), 1} for j = 0..S-1, S its number of stripes (its
// data messages). Pairwise: the waits after the last block are
// {DataCounter(j), n} for j = 0..S-1.
TEST_P(LowerSweepTest, DataWaitsFollowTheIncomingBlocksStripeByStripe) {
  const Shape& s = GetParam();
  const v1::Trace t = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
  // Per chip: data messages per block sent (blocks end at a data wait or at
  // a switch of destination), and the runs of consecutive data waits.
  std::vector<std::vector<uint32_t>> block_stripes(s.n);
  std::vector<std::vector<std::vector<std::pair<uint32_t, uint32_t>>>> runs(
      s.n);
  for (uint32_t chip = 0; chip < s.n; ++chip) {
    bool in_run = false, in_block = false;
    for (const v1::Instruction& in : Instrs(t, chip)) {
      if (in.has_msg_wait() && in.msg_wait().qp_id() != kReadyQp) {
        if (!in_run) runs[chip].emplace_back();
        runs[chip].back().emplace_back(in.msg_wait().qp_id(),
                                       in.msg_wait().count());
        in_run = true;
        in_block = false;
        continue;
      }
      in_run = false;
      const bool data_msg =
          in.has_msg_send() || (in.has_remote_msg_send() &&
                                in.remote_msg_send().dst_qp_id() != kReadyQp);
      if (!data_msg) continue;
      const uint32_t counter = in.has_msg_send()
                                   ? in.msg_send().dst_qp_id()
                                   : in.remote_msg_send().dst_qp_id();
      // A new block starts with stripe 0.
      if (!in_block || counter == DataCounter(0))
        block_stripes[chip].push_back(0);
      EXPECT_EQ(counter, DataCounter(block_stripes[chip].back()));
      ++block_stripes[chip].back();
      in_block = true;
    }
  }
  for (uint32_t chip = 0; chip < s.n; ++chip) {
    if (s.op == v1::ALLTOALL) {
      ASSERT_EQ(runs[chip].size(), 1u) << chip;
      const uint32_t stripes =
          NumStripes(ChunkSize(s.bytes, s.n, chip), s.engines);
      std::vector<std::pair<uint32_t, uint32_t>> want;
      for (uint32_t j = 0; j < stripes; ++j)
        want.emplace_back(DataCounter(j), s.n);
      EXPECT_EQ(runs[chip][0], want) << chip;
      continue;
    }
    const uint32_t prev = (chip + s.n - 1) % s.n;
    ASSERT_EQ(runs[chip].size(), block_stripes[prev].size()) << chip;
    for (size_t b = 0; b < runs[chip].size(); ++b) {
      std::vector<std::pair<uint32_t, uint32_t>> want;
      for (uint32_t j = 0; j < block_stripes[prev][b]; ++j) {
        want.emplace_back(DataCounter(j), 1u);
      }
      EXPECT_EQ(runs[chip][b], want) << "chip " << chip << " block " << b;
    }
  }
}

// Transfers, grouped per (source, destination) block, have the sizes and
// addresses the collective requires.
TEST_P(LowerSweepTest, BytesMatchTheCollective) {
  const Shape& s = GetParam();
  const v1::Trace t = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
  const uint32_t n = s.n;
  const uint64_t m = s.bytes;
  std::vector<uint64_t> sent(n), received(n);
  // pairwise: bytes[src][dst] and the range they cover at dst.
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> pair_bytes, pair_lo,
      pair_hi, pair_src_lo;
  for (uint32_t chip = 0; chip < n; ++chip) {
    // AllReduce: the first m - ChunkSize(chip) bytes a chip sends are its
    // ReduceScatter phase.
    const uint64_t rs_bytes = m - ChunkSize(m, n, chip);
    for (const v1::Instruction& in : Instrs(t, chip)) {
      if (!in.has_transfer()) continue;
      const v1::Transfer& tr = in.transfer();
      if (s.op == v1::ALLTOALL) {
        const std::pair<uint32_t, uint32_t> key{chip, tr.dst_chip()};
        if (pair_bytes[key] == 0) {
          pair_lo[key] = tr.dst_addr();
          pair_src_lo[key] = tr.src_addr();
        } else {
          // Stripes of one block are consecutive.
          EXPECT_EQ(tr.dst_addr(), pair_hi[key]);
        }
        pair_bytes[key] += tr.bytes();
        pair_hi[key] = tr.dst_addr() + tr.bytes();
        EXPECT_EQ(tr.reduce(), v1::REDUCE_NONE);
      } else {
        EXPECT_EQ(tr.src_addr(), tr.dst_addr());  // in place
        EXPECT_EQ(tr.dst_chip(), (chip + 1) % n);
        const bool want_sum = s.op == v1::REDUCESCATTER ||
                              (s.op == v1::ALLREDUCE && sent[chip] < rs_bytes);
        EXPECT_EQ(tr.reduce(), want_sum ? v1::REDUCE_SUM : v1::REDUCE_NONE);
      }
      sent[chip] += tr.bytes();
      received[tr.dst_chip()] += tr.bytes();
    }
  }
  if (s.op == v1::ALLTOALL) {
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t p = 0; p < n; ++p) {
        const uint64_t want = ChunkSize(m, n, p);
        const std::pair<uint32_t, uint32_t> key{i, p};
        EXPECT_EQ(pair_bytes[key], want) << i << " -> " << p;
        if (want == 0) continue;
        EXPECT_EQ(pair_src_lo[key], ChunkOffset(m, n, p));
        EXPECT_EQ(pair_lo[key], m + uint64_t{i} * want);
        EXPECT_EQ(pair_hi[key], m + uint64_t{i + 1} * want);
      }
      EXPECT_EQ(sent[i], m);
      EXPECT_EQ(received[i], n * ChunkSize(m, n, i));
    }
    return;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t prev = (i + n - 1) % n;
    // Ring: RS sends every chunk but my own; AG every chunk but next's
    // (chunk i+1 is the one I receive last); AR both.
    const uint64_t rs = m - ChunkSize(m, n, i);
    const uint64_t ag = m - ChunkSize(m, n, (i + 1) % n);
    const uint64_t want = s.op == v1::REDUCESCATTER ? rs
                          : s.op == v1::ALLGATHER   ? ag
                                                    : rs + ag;
    EXPECT_EQ(sent[i], want) << "chip " << i;
    EXPECT_EQ(received[i], sent[prev]) << "chip " << i;
    if (m % n == 0) {
      EXPECT_EQ(received[i], sent[i]) << "chip " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LowerSweepTest, ::testing::ValuesIn(Sweep()),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return ShapeName(info.param);
                         });

// The uneven example with the numbers written out: 1000003 = 4 * 142858 +
// 3 * 142857 over 7 chips.
TEST(LowerRingTest, AllReduceUnevenBytesByHand) {
  const v1::Trace t = MustLower(Spec(v1::ALLREDUCE, 7, 1000003, 8));
  auto sent = [&](uint32_t chip) {
    uint64_t b = 0;
    for (const auto& in : Instrs(t, chip)) b += in.transfer().bytes();
    return b;
  };
  // Chip 0 sends all chunks but 0 (RS) and all but 1 (AG): both 142858 short.
  EXPECT_EQ(sent(0), 2u * (1000003u - 142858u));
  // Chip 3 skips chunk 3 (142858) and chunk 4 (142857).
  EXPECT_EQ(sent(3), 2u * 1000003u - 142858u - 142857u);
  // Chip 6 skips chunk 6 (142857) and chunk 0 (142858).
  EXPECT_EQ(sent(6), 2u * 1000003u - 142857u - 142858u);
  // Chip 4 skips chunks 4 and 5, both 142857.
  EXPECT_EQ(sent(4), 2u * (1000003u - 142857u));
  // Per chip: ready send, ready wait, 12 steps of 8 stripes (Transfer +
  // message each), 11 step waits and the final wait, of 8 MsgWaits each.
  EXPECT_EQ(Instrs(t, 0).size(), 2 + 12 * 16 + (11 + 1) * 8);
}

// M < N: chunks 3 and 4 are empty; their blocks carry a message and no data.
TEST(LowerRingTest, EmptyChunksStillCarryTheirMessage) {
  const v1::Trace t = MustLower(Spec(v1::ALLREDUCE, 5, 3, 8));
  // Chip 0, RS step 0 sends chunk 4 (empty) and step 1 chunk 3 (empty).
  const auto& c0 = Instrs(t, 0);
  ASSERT_GE(c0.size(), 5);
  EXPECT_TRUE(c0[2].has_remote_msg_send());  // step 0: no transfer
  EXPECT_EQ(c0[2].remote_msg_send().qp_id(), 0u);
  EXPECT_EQ(c0[2].remote_msg_send().dst_chip(), 1u);
  EXPECT_EQ(c0[2].remote_msg_send().dst_qp_id(), kDataQp);
  EXPECT_EQ(c0[3].msg_wait().qp_id(), kDataQp);  // its one stripe: stripe 0
  EXPECT_EQ(c0[3].msg_wait().count(), 1u);       // chip 4 sent empty chunk 3
  EXPECT_TRUE(c0[4].has_remote_msg_send());      // step 1: chunk 3, empty
  EXPECT_TRUE(c0[6].has_transfer());             // step 2: chunk 2, one byte
  EXPECT_EQ(c0[6].transfer().src_addr(), 2u);
  EXPECT_EQ(c0[6].transfer().bytes(), 1u);
}

TEST(LowerPairwiseTest, ReadyThenBlocksThenSelf) {
  // 4 chips, 10 bytes: blocks 3, 3, 2, 2. Chip 1, K = 2.
  const v1::Trace t = MustLower(Spec(v1::ALLTOALL, 4, 10, 2));
  const auto& c = Instrs(t, 1);
  // Ready to chips 0, 3, 2 on qps (1,1), (0,1), (1,1).
  EXPECT_EQ(c[0].remote_msg_send().dst_chip(), 0u);
  EXPECT_EQ(c[0].remote_msg_send().qp_id(), MakeQp(1, 1));
  EXPECT_EQ(c[1].remote_msg_send().dst_chip(), 3u);
  EXPECT_EQ(c[1].remote_msg_send().qp_id(), MakeQp(0, 1));
  EXPECT_EQ(c[2].remote_msg_send().dst_chip(), 2u);
  EXPECT_EQ(c[2].remote_msg_send().qp_id(), MakeQp(1, 1));
  EXPECT_EQ(c[2].remote_msg_send().dst_qp_id(), kReadyQp);
  EXPECT_EQ(c[3].msg_wait().qp_id(), kReadyQp);
  EXPECT_EQ(c[3].msg_wait().count(), 3u);
  // First block: to chip 2, block 2 = [6, 8), into slot 1 at 10 + 1*2.
  EXPECT_EQ(c[4].transfer().dst_chip(), 2u);
  EXPECT_EQ(c[4].transfer().src_addr(), 6u);
  EXPECT_EQ(c[4].transfer().dst_addr(), 12u);
  EXPECT_EQ(c[4].transfer().bytes(), 1u);
  EXPECT_EQ(c[6].transfer().qp_id(), MakeQp(1, 0));
  EXPECT_EQ(c[6].transfer().src_addr(), 7u);
  EXPECT_EQ(c[5].remote_msg_send().dst_qp_id(), DataCounter(0));
  EXPECT_EQ(c[7].remote_msg_send().qp_id(), MakeQp(1, 0));
  EXPECT_EQ(c[7].remote_msg_send().dst_qp_id(), DataCounter(1));
  // 4 + 3 * 4 instructions: ready, blocks of 2 stripes, 2 final waits.
  const int n = c.size();
  ASSERT_EQ(n, 4 + 4 * 4 + 2);
  // Last block: my own, [3, 6) into slot 1 at 10 + 1*3, with MsgSends.
  EXPECT_EQ(c[n - 6].transfer().dst_chip(), 1u);
  EXPECT_EQ(c[n - 6].transfer().src_addr(), 3u);
  EXPECT_EQ(c[n - 6].transfer().dst_addr(), 13u);
  EXPECT_EQ(c[n - 6].transfer().bytes(), 2u);
  EXPECT_EQ(c[n - 5].msg_send().qp_id(), MakeQp(0, 0));
  EXPECT_EQ(c[n - 5].msg_send().dst_qp_id(), kDataQp);
  EXPECT_EQ(c[n - 3].msg_send().qp_id(), MakeQp(1, 0));
  EXPECT_EQ(c[n - 3].msg_send().dst_qp_id(), DataCounter(1));
  // 4 incoming blocks of 3 bytes, 2 stripes each: 4 messages on each
  // stripe's counter.
  EXPECT_EQ(c[n - 2].msg_wait().qp_id(), kDataQp);
  EXPECT_EQ(c[n - 2].msg_wait().count(), 4u);
  EXPECT_EQ(c[n - 1].msg_wait().qp_id(), DataCounter(1));
  EXPECT_EQ(c[n - 1].msg_wait().count(), 4u);
}

// ---------------------------------------------------------------------------
// Execution: the reference executor of check/executor.h runs the trace under
// a chosen schedule, moves symbolic data, and reports deadlocks, hazards and
// wrong results (VerifySemantics compares every chip's output with the
// collective's).
//
// Each posted item (Transfer or message) enters a FIFO channel. With
// `per_qp` the channel is (source chip, qp, destination chip): the only
// ordering the hardware promises (a message arrives after the data queued
// before it on its qp). Without it the channel is (source, destination):
// everything one chip sends another arrives in issue order.

// "" if `t` computes its collective under `schedule`, else what went wrong.
std::string Execute(const v1::Trace& t, bool per_qp, const Schedule& schedule) {
  ExecOptions options;
  options.per_qp = per_qp;
  return std::string(VerifySemantics(t, schedule, options).message());
}

std::string RunRandom(const v1::Trace& t, bool per_qp, uint32_t seed) {
  return Execute(t, per_qp, RandomSchedule(seed));
}

std::vector<Shape> SmallShapes() {
  std::vector<Shape> out;
  for (v1::CollectiveOp op :
       {v1::ALLREDUCE, v1::ALLGATHER, v1::REDUCESCATTER, v1::ALLTOALL}) {
    for (uint32_t n : {2u, 3u, 4u, 5u}) {
      for (uint64_t m : {uint64_t{3}, uint64_t{7}, uint64_t{40}}) {
        for (uint32_t k : {1u, 2u, 3u}) out.push_back({op, n, m, k});
      }
    }
  }
  return out;
}

class LowerExecutionTest : public ::testing::TestWithParam<Shape> {};

// When everything a chip sends another arrives in issue order, every lowered
// trace completes with the collective's result under any interleaving of the
// chips and deliveries, and without data hazards.
TEST_P(LowerExecutionTest, CorrectUnderOrderedDelivery) {
  const Shape& s = GetParam();
  const v1::Trace t = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
  for (uint32_t seed = 0; seed < 20; ++seed) {
    EXPECT_EQ(RunRandom(t, /*per_qp=*/false, seed), "") << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LowerExecutionTest,
                         ::testing::ValuesIn(SmallShapes()),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return ShapeName(info.param);
                         });

// With only per-qp ordering (what the hardware promises), every lowered trace
// is still correct: each ring data counter is fed by one qp from one sender,
// and the pairwise waits count everything their counters will ever receive.
class LowerPerQpExecutionTest : public ::testing::TestWithParam<Shape> {};

TEST_P(LowerPerQpExecutionTest, CorrectUnderPerQpDelivery) {
  const Shape& s = GetParam();
  const v1::Trace t = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
  for (uint32_t seed = 0; seed < 200; ++seed) {
    EXPECT_EQ(RunRandom(t, /*per_qp=*/true, seed), "") << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LowerPerQpExecutionTest,
                         ::testing::ValuesIn(SmallShapes()),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return ShapeName(info.param);
                         });

// The protocol before per-stripe counters, rebuilt from a lowered trace: every
// data message counts on kDataQp, and each run of consecutive data waits is
// one MsgWait on kDataQp for their total.
v1::Trace WithOneSharedDataCounter(const v1::Trace& t) {
  v1::Trace out = t;
  for (v1::ChipProgram& chip : *out.mutable_chips()) {
    for (v1::Stream& stream : *chip.mutable_streams()) {
      google::protobuf::RepeatedPtrField<v1::Instruction> ins;
      for (const v1::Instruction& in : stream.instructions()) {
        const bool data_wait =
            in.has_msg_wait() && VcOfQp(in.msg_wait().qp_id()) == 0;
        if (data_wait && ins.size() > 0 && ins.rbegin()->has_msg_wait() &&
            ins.rbegin()->msg_wait().qp_id() == kDataQp) {
          v1::MsgWait* w = ins.rbegin()->mutable_msg_wait();
          w->set_count(w->count() + in.msg_wait().count());
          continue;
        }
        v1::Instruction* copy = ins.Add();
        *copy = in;
        if (data_wait) copy->mutable_msg_wait()->set_qp_id(kDataQp);
        if (copy->has_msg_send())
          copy->mutable_msg_send()->set_dst_qp_id(kDataQp);
        if (copy->has_remote_msg_send() &&
            VcOfQp(copy->remote_msg_send().qp_id()) == 0) {
          copy->mutable_remote_msg_send()->set_dst_qp_id(kDataQp);
        }
      }
      *stream.mutable_instructions() = std::move(ins);
    }
  }
  return out;
}

// Runs `t` with per-qp delivery, delivering the channel `slow` only when
// nothing else can move. `unblocked` (if set) counts the times such a forced
// delivery let something else move again: the slow qp was holding a chip up.
// Otherwise: issues first (in chip order), then the channels in creation
// order.
std::string RunStarving(const v1::Trace& t, const ChannelKey& slow,
                        int* unblocked = nullptr) {
  bool forced = false;
  int count = 0;
  const Schedule starve = [&](const std::vector<ExecAction>& actions) {
    size_t best = actions.size();
    for (size_t a = 0; a < actions.size(); ++a) {
      const ExecAction& x = actions[a];
      if (x.kind == ExecAction::kIssue) {
        best = a;
        break;
      }
      if (x.key != slow &&
          (best == actions.size() || x.channel < actions[best].channel)) {
        best = a;
      }
    }
    if (best == actions.size()) {
      forced = true;
      return size_t{0};
    }
    if (forced) ++count;
    forced = false;
    return best;
  };
  const std::string result = Execute(t, /*per_qp=*/true, starve);
  if (unblocked != nullptr) *unblocked = count;
  return result;
}

// The hazard per-stripe counters fix (docs/lowering.md, "Ordering"): with all
// stripes of all ring steps counting on one counter, a slow stripe's message
// could be overtaken by the next step's message on another qp, which then
// satisfied the wait in its place, and the chip forwarded a chunk before all
// of it had landed. Here the qp (1, 0) from chip 0 to chip 1 is delivered
// only when nothing else can move.
TEST(LowerRingHazardTest, PerStripeCountersKeepALaterStepFromSatisfyingAWait) {
  // 3 chips, 12 bytes: chunks of 4 bytes, 2 stripes of 2 bytes each.
  const v1::Trace t = MustLower(Spec(v1::ALLREDUCE, 3, 12, 2));
  const ChannelKey slow{0, MakeQp(1, 0), 1};
  // Chip 0 sends chunk 2 at step 0 (stripes [8,10) on qp 0, [10,12) on qp 4)
  // and chunk 1 at step 1. Chip 1's step-1 wait needs one message on counter
  // 0 and one on counter 4; the step-1 message on qp 0 goes to counter 0, so
  // chip 1 waits for [10,12) to land before forwarding chunk 2.
  int unblocked = 0;
  EXPECT_EQ(RunStarving(t, slow, &unblocked), "");
  EXPECT_GT(unblocked, 0);  // the schedule did hold chip 1 up
  // With one shared data counter (the old protocol) the same schedule lets
  // the two qp-0 messages meet chip 1's wait for 2, and chip 1 forwards
  // chunk 2 while [10,12) is in flight.
  const v1::Trace shared = WithOneSharedDataCounter(t);
  ASSERT_TRUE(ValidateAndDecode(shared, Hw(8).Target()).ok());
  EXPECT_EQ(RunStarving(shared, slow),
            "semantics: chip 1, stream 0, instruction 9 (Transfer) reads "
            "[10, 12) of chip 1 while a write into [10, 12) by chip 0, stream "
            "0, instruction 4 (Transfer) is in flight");
  // The same schedule is harmless with one engine.
  EXPECT_EQ(RunStarving(MustLower(Spec(v1::ALLREDUCE, 3, 12, 1)), slow), "");
}

// Two chips are exposed too when blocks differ in stripe count: M = 3 gives
// chunk 0 = [0, 2) (2 stripes) and chunk 1 = [2, 3) (1 stripe). Chip 1 sends
// chunk 0 at step 0 before its wait, and chunk 1 at step 1 on qp 0 right after
// chip 0's step-0 block lands, so with one shared counter that message could
// stand in for chunk 0's slow stripe [1, 2) on qp 4.
TEST(LowerRingHazardTest, TwoChipsUnevenStripesAreSafeToo) {
  const v1::Trace t = MustLower(Spec(v1::ALLREDUCE, 2, 3, 2));
  const ChannelKey slow{1, MakeQp(1, 0), 0};
  int unblocked = 0;
  EXPECT_EQ(RunStarving(t, slow, &unblocked), "");
  EXPECT_GT(unblocked, 0);
  EXPECT_EQ(RunStarving(WithOneSharedDataCounter(t), slow),
            "semantics: chip 0, stream 0, instruction 7 (Transfer) reads "
            "[1, 2) of chip 0 while a write into [1, 2) by chip 1, stream 0, "
            "instruction 4 (Transfer) is in flight");
}

// ---------------------------------------------------------------------------
// Errors and limits.

TEST(LowerErrorTest, UnsupportedOpOrAlgorithm) {
  CollectiveSpec s = Spec(v1::BROADCAST, 4, 1024, 0);
  s.algorithm = "pairwise";
  absl::StatusOr<v1::Trace> t = LowerCollective(s, Hw(8));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("'broadcast'"));
  EXPECT_THAT(t.status().message(),
              HasSubstr("supported: allreduce, allgather, reducescatter with "
                        "'ring', 'ring_2port', 'rh', 'rd', 'hd'; alltoall with "
                        "'pairwise', 'bruck'"));

  s = Spec(v1::ALLREDUCE, 4, 1024, 0);
  s.algorithm = "bruck";
  EXPECT_THAT(LowerCollective(s, Hw(8)).status().message(),
              HasSubstr("algorithm 'bruck'"));
  s.op = v1::ALLTOALL;
  s.algorithm = "ring";
  EXPECT_FALSE(LowerCollective(s, Hw(8)).ok());
  s.op = v1::ALLGATHER;
  s.algorithm = "pairwise";
  EXPECT_FALSE(LowerCollective(s, Hw(8)).ok());
}

TEST(LowerErrorTest, BadSizes) {
  auto message = [](const CollectiveSpec& s, uint32_t hw_engines = 8) {
    absl::StatusOr<v1::Trace> t = LowerCollective(s, Hw(hw_engines));
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(t.status().message());
  };
  EXPECT_THAT(message(Spec(v1::ALLREDUCE, 4, 0, 0)),
              HasSubstr("bytes must be > 0"));
  EXPECT_THAT(message(Spec(v1::ALLREDUCE, 1, 8, 0)),
              HasSubstr("n must be in [2, 65536], got 1"));
  EXPECT_THAT(message(Spec(v1::ALLREDUCE, 0, 8, 0)), HasSubstr("got 0"));
  EXPECT_THAT(message(Spec(v1::ALLTOALL, 65537, 8, 0)), HasSubstr("got 65537"));
  EXPECT_THAT(message(Spec(v1::ALLREDUCE, 4, 8, 9)),
              HasSubstr("cdma_engines 9 exceeds the hardware's 8"));
  EXPECT_THAT(message(Spec(v1::ALLREDUCE, 4, 8, 0), 0),
              HasSubstr("hardware cdma_engines must be in [1, 65536], got 0"));
  // AllToAll output of chip 0 = [M, M + 2 * 2^62) ends at 2^64.
  EXPECT_THAT(message(Spec(v1::ALLTOALL, 2, uint64_t{1} << 63, 0)),
              HasSubstr("past 2^64 - 1"));
  // Too many instructions: 65536 chips, 131070 ring steps each.
  EXPECT_THAT(message(Spec(v1::ALLREDUCE, 65536, 1 << 20, 0)),
              HasSubstr("instructions, more than the 67108864"));
}

TEST(LowerLimitTest, HugeRingBufferFitsUint64) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const v1::Trace t = MustLower(Spec(v1::ALLREDUCE, 2, max, 8));
  // Chunks 2^63 and 2^63 - 1; the last stripe of chunk 1 ends at 2^64 - 1.
  uint64_t end = 0;
  for (const auto& in : Instrs(t, 0)) {
    if (in.has_transfer()) {
      end = std::max(end, in.transfer().src_addr() + in.transfer().bytes());
    }
  }
  EXPECT_EQ(end, max);
  EXPECT_TRUE(ValidateAndDecode(t, Hw(8).Target()).ok());
  // AllToAll just under the limit: 2 chips, M = 2^63 - 1, output to 2^64 - 1.
  EXPECT_TRUE(
      LowerCollective(Spec(v1::ALLTOALL, 2, (uint64_t{1} << 63) - 1, 8), Hw(8))
          .ok());
}

TEST(LowerLimitTest, InstructionCapBoundary) {
  // Ring AllReduce, K = 1, chunks >= 1 byte: per chip 2 + 2(n-1) * 3
  // instructions (counted exactly by a dry run). n = 3345: 3345 * (2 + 6688
  // * 3) = 67120770 > 2^26 = 67108864, rejected before anything is emitted.
  // (n = 3344 gives 3344 * (2 + 6686 * 3) = 67080352, under the cap.)
  absl::StatusOr<v1::Trace> t =
      LowerCollective(Spec(v1::ALLREDUCE, 3345, 1 << 20, 1), Hw(8));
  EXPECT_THAT(t.status().message(),
              HasSubstr("would emit 67120770 instructions"));
}

TEST(LowerLimitTest, MidSizeRingInstructionCount) {
  // 256 chips, 64 MiB, 8 engines: chunks of 256 KiB, 8 stripes everywhere.
  absl::StatusOr<v1::Trace> t =
      LowerCollective(Spec(v1::ALLREDUCE, 256, 64 << 20, 8), Hw(8));
  ASSERT_TRUE(t.ok()) << t.status();
  // 2 + 510 steps * (8 waits + 8 Transfers + 8 messages) per chip (the first
  // step has no wait, the final wait makes up for it).
  EXPECT_EQ(Instrs(*t, 255).size(), 2 + 510 * 24);
}

TEST(LowerTest, Deterministic) {
  for (const Shape& s : {Shape{v1::ALLREDUCE, 7, 1000003, 3},
                         Shape{v1::ALLTOALL, 6, 12345, 8}}) {
    const v1::Trace a = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
    const v1::Trace b = MustLower(Spec(s.op, s.n, s.bytes, s.engines));
    std::string sa, sb;
    ASSERT_TRUE(a.SerializeToString(&sa));
    ASSERT_TRUE(b.SerializeToString(&sb));
    EXPECT_EQ(sa, sb) << ShapeName(s);
    EXPECT_FALSE(sa.empty());
  }
}

// Decoding as the lowering goes (the whole protobuf never built) gives the
// header and the program that lowering whole and decoding give; a lowering
// error comes back as it is.
TEST(LowerAndDecodeTest, SameHeaderAndProgramAsLoweringWhole) {
  for (const Shape& s :
       {Shape{v1::ALLREDUCE, 7, 1000003, 3}, Shape{v1::ALLTOALL, 6, 12345, 8},
        Shape{v1::ALLGATHER, 5, 4096, 2}}) {
    const CollectiveSpec spec = Spec(s.op, s.n, s.bytes, s.engines);
    const v1::Trace whole = MustLower(spec);
    const absl::StatusOr<Program> want =
        ValidateAndDecode(whole, Hw(8).Target());
    ASSERT_TRUE(want.ok()) << want.status();
    const absl::StatusOr<DecodedTrace> got = LowerAndDecode(spec, Hw(8));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->header.header().SerializeAsString(),
              whole.header().SerializeAsString())
        << ShapeName(s);
    EXPECT_EQ(got->header.chips_size(), 0);
    ASSERT_TRUE(got->program.ok()) << got->program.status();
    ASSERT_EQ(got->program->chips.size(), want->chips.size());
    uint64_t instrs = 0;
    for (size_t c = 0; c < want->chips.size(); ++c) {
      const auto& x = want->chips[c].streams;
      const auto& y = got->program->chips[c].streams;
      ASSERT_EQ(x.size(), y.size());
      for (size_t k = 0; k < x.size(); ++k) {
        ASSERT_EQ(x[k].instrs.size(), y[k].instrs.size());
        for (size_t i = 0; i < x[k].instrs.size(); ++i, ++instrs) {
          EXPECT_TRUE(SameInstr(x[k].instrs[i], y[k].instrs[i]))
              << ShapeName(s) << " chip " << c << " instruction " << i;
        }
      }
    }
    EXPECT_GT(instrs, 0u);
  }
  CollectiveSpec bad = Spec(v1::ALLREDUCE, 4, 1024, 2);
  bad.algorithm = "no-such-algorithm";
  const absl::StatusOr<v1::Trace> whole = LowerCollective(bad, Hw(8));
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(LowerAndDecode(bad, Hw(8)).status(), whole.status());
}

}  // namespace
}  // namespace ccreplay

namespace ccreplay {
namespace {

// --no-rendezvous (docs/lowering.md): the ring and ring_2port lowerings
// leave out the two ready instructions per lane and still compute their
// collective under any schedule with per-qp ordering; the other algorithms
// refuse it, naming it.
TEST(NoRendezvousTest, RingsStayCorrectWithoutTheReadyMessages) {
  for (const char* algo : {"ring", "ring_2port"}) {
    for (v1::CollectiveOp op :
         {v1::ALLREDUCE, v1::ALLGATHER, v1::REDUCESCATTER}) {
      for (uint32_t n : {2u, 3u, 5u}) {
        CollectiveSpec spec = Spec(op, n, 40, 2);
        spec.algorithm = algo;
        const v1::Trace with = MustLower(spec);
        spec.no_rendezvous = true;
        const v1::Trace without = MustLower(spec);
        EXPECT_TRUE(without.header().collective().no_rendezvous());
        // One RemoteMsgSend and one MsgWait fewer per chip and lane.
        const int lanes = std::string(algo) == "ring" || n == 2 ? 1 : 2;
        for (uint32_t c = 0; c < n; ++c) {
          int a = 0, b = 0;
          for (const auto& s : with.chips(c).streams())
            a += s.instructions_size();
          for (const auto& s : without.chips(c).streams()) {
            b += s.instructions_size();
          }
          EXPECT_EQ(a - b, 2 * lanes) << algo << " n " << n << " chip " << c;
        }
        for (uint32_t seed = 0; seed < 10; ++seed) {
          EXPECT_EQ(RunRandom(without, /*per_qp=*/true, seed), "")
              << algo << " " << v1::CollectiveOp_Name(op) << " n " << n;
        }
      }
    }
  }
}

TEST(NoRendezvousTest, OtherAlgorithmsRefuseIt) {
  CollectiveSpec spec = Spec(v1::ALLREDUCE, 4, 1024, 1);
  spec.algorithm = "rh";
  spec.no_rendezvous = true;
  auto t = LowerCollective(spec, DefaultTps186());
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr("no_rendezvous is supported by allreduce, allgather "
                        "and reducescatter with 'ring' or 'ring_2port', not by "
                        "'allreduce' with 'rh'"));
}

}  // namespace
}  // namespace ccreplay
