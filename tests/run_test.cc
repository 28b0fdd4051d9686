// Lowering + replay end to end through the shared command glue.
#include "cli/run.h"

#include <numeric>

#include "collectives/lower.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "replay/timeline.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

TEST(ParseByteSizeTest, BinaryUnits) {
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576u);
  EXPECT_EQ(*ParseByteSize("1M"), 1048576u);
  EXPECT_EQ(*ParseByteSize("64K"), 65536u);
  EXPECT_EQ(*ParseByteSize("2G"), 2147483648u);
  EXPECT_EQ(*ParseByteSize("1MiB"), 1048576u);
  EXPECT_EQ(*ParseByteSize("448k"), 458752u);
  EXPECT_EQ(*ParseByteSize("7B"), 7u);
  EXPECT_EQ(*ParseByteSize("1MB"), 1048576u);
  EXPECT_EQ(*ParseByteSize("1.5M"), 1572864u);
  EXPECT_EQ(*ParseByteSize("0.5K"), 512u);
  EXPECT_THAT(ParseByteSize("1.3K").status().message(),
              HasSubstr("bad byte size '1.3K': not a whole number of bytes"));
  EXPECT_FALSE(ParseByteSize(".").ok());
  EXPECT_FALSE(ParseByteSize("1.5.2M").ok());
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("M").ok());
  EXPECT_FALSE(ParseByteSize("12Q").ok());
  EXPECT_FALSE(ParseByteSize("99999999999999999999").ok());
  EXPECT_FALSE(ParseByteSize("17179869184G").ok());  // 2^34 * 2^30 overflows
}

CollectiveSpec Spec(v1::CollectiveOp op, uint32_t n, uint64_t bytes,
                    TopologyKind topo) {
  CollectiveSpec s;
  s.op = op;
  s.n = n;
  s.bytes = bytes;
  s.algorithm = BaselineAlgorithm(op);
  s.topology = topo;
  return s;
}

TEST(RoundTripTest, LoweredTraceSurvivesBinaryAndTextUnchanged) {
  for (const auto& spec :
       {Spec(v1::ALLREDUCE, 5, 1000003, TopologyKind::kRing),
        Spec(v1::ALLTOALL, 6, 65536, TopologyKind::kSwitch)}) {
    auto trace = LowerCollective(spec, DefaultTps186());
    ASSERT_TRUE(trace.ok()) << trace.status();
    const std::string dir = ::testing::TempDir();
    for (const char* name : {"rt.pb", "rt.txtpb"}) {
      const std::string path = dir + "/" + name;
      ASSERT_TRUE(WriteTraceFile(path, *trace).ok());
      auto back = ReadTraceFile(path);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_TRUE(
          google::protobuf::util::MessageDifferencer::Equals(*trace, *back))
          << name;
    }
  }
}

TEST(EndToEndTest, EveryChipSendsWhatItsPeersReceive) {
  // Ring AllReduce with N dividing M: each chip sends 2(N-1)/N*M and
  // receives the same.
  const uint32_t n = 4;
  const uint64_t m = 4 * 65536;
  auto run = LowerAndReplay(Spec(v1::ALLREDUCE, n, m, TopologyKind::kRing),
                            DefaultTps186(), {});
  ASSERT_TRUE(run.ok()) << run.status();
  for (uint32_t c = 0; c < n; ++c) {
    EXPECT_EQ(run->result.bytes_sent[c], 2 * (n - 1) * m / n);
    EXPECT_EQ(run->result.bytes_received[c], 2 * (n - 1) * m / n);
  }
  // AllToAll through the switch: every chip sends (N-1) blocks of M/N and
  // copies its own block locally.
  run = LowerAndReplay(Spec(v1::ALLTOALL, 8, 8 * 1000, TopologyKind::kSwitch),
                       DefaultTps186(), {});
  ASSERT_TRUE(run.ok()) << run.status();
  for (uint32_t c = 0; c < 8; ++c) {
    EXPECT_EQ(run->result.bytes_sent[c], 7u * 1000u);
    EXPECT_EQ(run->result.bytes_received[c], 7u * 1000u);
    EXPECT_EQ(run->result.bytes_local[c], 1000u);
  }
}

TEST(EndToEndTest, TwoReplaysGiveByteIdenticalTimelines) {
  const auto spec = Spec(v1::ALLTOALL, 16, 16 * 4096, TopologyKind::kSwitch);
  auto a = LowerAndReplay(spec, DefaultTps186(), {});
  auto b = LowerAndReplay(spec, DefaultTps186(), {});
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string ta = TimelineJson(a->program, a->result);
  EXPECT_EQ(ta, TimelineJson(b->program, b->result));
  EXPECT_GT(ta.size(), 10000u);
  EXPECT_EQ(a->result.makespan, b->result.makespan);
  EXPECT_EQ(a->result.events, b->result.events);
}

TEST(EndToEndTest, TwoChipAllReduceStepByStep) {
  // N=2 ring AllReduce of 458,752 bytes on TPS186 (8 engines): a rendezvous
  // message, then two steps (reduce-scatter, all-gather) of 229,376 bytes.
  // One lane group, so that the link serialises every packet in turn (lane
  // groups and their hash are tested in engine_test).
  HwConfig hw = DefaultTps186();
  hw.lane_groups = 1;
  auto run = LowerAndReplay(Spec(v1::ALLREDUCE, 2, 458752, TopologyKind::kRing),
                            hw, {});
  ASSERT_TRUE(run.ok()) << run.status();
  const int64_t flight = 200000 + 25000;      // link latency + propagation
  const int64_t msg_wire = (4 + 32) * 5 / 2;  // 90 ps at 2.5 ps/byte
  const int64_t rendezvous = msg_wire + flight;
  // Each engine carries 229,376 / 8 = 28,672 bytes: 99 packets of 288 and a
  // 160-byte tail. The link (400 GB/s) is slower than 8 engines (512 GB/s),
  // so it serialises all 800 packets back to back once the first is read
  // (288 B at 64 GB/s = 4,500 ps).
  const int64_t wire_bytes = 229376 + 800 * 32;
  const int64_t serialise = wire_bytes * 5 / 2;  // 637,440 ps
  const int64_t first_read = 4500;
  // The 8 RemoteMsgSends queue behind the last data packet.
  const int64_t step = 290000 + first_read + serialise + 8 * msg_wire + flight;
  EXPECT_EQ(run->result.makespan.ps(), rendezvous + 2 * step);
  EXPECT_EQ(run->result.makespan.ps(), 2540410);
}

}  // namespace
}  // namespace ccreplay
