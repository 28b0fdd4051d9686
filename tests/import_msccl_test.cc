// The MSCCL-IR importer (import/msccl_import.h): what the real msccl-tools
// files and the hand-written ones become, and every error with its place.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "import/msccl_import.h"
#include "trace/program.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;

const std::string kShared = CCREPLAY_SOURCE_DIR "/../shared/data/msccl";
const std::string kOwn = CCREPLAY_SOURCE_DIR "/tests/data/msccl";

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The TPS186 shape the importer needs: 8 engines, 32 counters.
HwConfig Tps186() {
  HwConfig hw;
  hw.name = "TPS186";
  hw.cdma_engines = 8;
  return hw;
}

#define SKIP_WITHOUT_SHARED()                                        \
  if (!std::filesystem::exists(kShared + "/allreduce_ring_8_1.xml")) \
  GTEST_SKIP() << "the msccl-tools files are not at " << kShared     \
               << " (CI keeps ../shared beside the clone)"

absl::StatusOr<v1::Trace> Import(const std::string& xml, uint64_t bytes,
                                 const std::string& name = "t.xml",
                                 uint32_t k = 0) {
  MscclImportOptions opt;
  opt.bytes = bytes;
  opt.engines_per_channel = k;
  return ImportMsccl(xml, name, Tps186(), opt);
}

int Count(const v1::Stream& s, v1::Instruction::KindCase kind) {
  int n = 0;
  for (const auto& in : s.instructions()) n += in.kind_case() == kind;
  return n;
}

TEST(ImportMscclTest, RealRingAllReduceBecomesOneStreamPerThreadblock) {
  SKIP_WITHOUT_SHARED();
  auto t = Import(Slurp(kShared + "/allreduce_ring_8_1.xml"), 1 << 20,
                  kShared + "/allreduce_ring_8_1.xml");
  ASSERT_TRUE(t.ok()) << t.status();
  const v1::TraceHeader& h = t->header();
  EXPECT_EQ(h.num_chips(), 8u);
  EXPECT_EQ(h.collective().op(), v1::ALLREDUCE);
  EXPECT_EQ(h.collective().bytes(), 1u << 20);
  EXPECT_EQ(h.collective().algorithm(), "msccl:allreduce_ring_inplace");
  EXPECT_TRUE(h.collective().in_place());
  EXPECT_EQ(h.source().format(), "msccl-ir");
  EXPECT_EQ(h.source().file(), "allreduce_ring_8_1.xml");
  EXPECT_EQ(h.source().protocol(), "Simple");
  // 1 channel over all 8 engines; chunk = M / nchunksperloop = 2^20 / 8.
  EXPECT_EQ(h.source().engines_per_channel(), 8u);
  EXPECT_EQ(h.source().chunk_bytes(), (1u << 20) / 8);
  ASSERT_EQ(t->chips_size(), 8);
  const v1::Stream& s = t->chips(0).streams(0);
  // 14 sends of one chunk, each striped over 8 engines: a Transfer and a
  // RemoteMsgSend per stripe; 14 receives, a MsgWait per stripe. The
  // receiver-ready analysis leaves one ready per connection (the first
  // receive: the sender cannot know the receiver has started), like the
  // native ring's rendezvous, so one more RemoteMsgSend and one MsgWait.
  EXPECT_EQ(Count(s, v1::Instruction::kTransfer), 14 * 8);
  EXPECT_EQ(Count(s, v1::Instruction::kRemoteMsgSend), 14 * 8 + 1);
  EXPECT_EQ(Count(s, v1::Instruction::kMsgWait), 14 * 8 + 1);
  EXPECT_EQ(Count(s, v1::Instruction::kFence), 0);
  // Stream order: [0] the ready to gpu 7, [1] the wait for gpu 1's ready,
  // [2, 18) step 0's 8 (Transfer, RemoteMsgSend) stripes, [18, 26) step 1's
  // 8 MsgWaits, [26, 42) step 1's stripes. Stripe j of channel 0 is on
  // engine j; rrs reduces on write.
  EXPECT_TRUE(s.instructions(0).has_remote_msg_send());
  EXPECT_EQ(s.instructions(0).remote_msg_send().dst_chip(), 7u);
  EXPECT_TRUE(s.instructions(1).has_msg_wait());
  // Step 0 lands in gpu 1's rrs: reduce-on-write too.
  EXPECT_EQ(s.instructions(2).transfer().reduce(), v1::REDUCE_SUM);
  EXPECT_TRUE(s.instructions(25).has_msg_wait());
  EXPECT_EQ(s.instructions(26).transfer().reduce(), v1::REDUCE_SUM);
  EXPECT_EQ(CdmaOfQp(s.instructions(28).transfer().qp_id()), 1u);
  // Chunk 7 of 8: [7 * 131072, 7 * 131072 + 131072 / 8) for stripe 0.
  EXPECT_EQ(s.instructions(26).transfer().src_addr(), 7u * 131072);
  EXPECT_EQ(s.instructions(26).transfer().bytes(), 131072u / 8);
  // Steps 1..7 are 24 instructions each (8 waits, 8 stripes); step 7 (rrcs,
  // chunk 1) lands in gpu 1's rcs: the first plain write, at 18 + 6*24 + 8.
  EXPECT_EQ(s.instructions(170).transfer().reduce(), v1::REDUCE_NONE);
  EXPECT_EQ(s.instructions(170).transfer().src_addr(), 131072u);
  EXPECT_EQ(s.instructions(169).msg_wait().qp_id(), 7u);  // stripe 7's
}

TEST(ImportMscclTest, EnginesPerChannelIsLimitedByMessageCounters) {
  SKIP_WITHOUT_SHARED();
  // All pairs: 7 incoming connections x K data counters + 7 ready counters
  // must fit in 32 counters, so K = 3 (7*3 + 7 = 28; K = 4 needs 35).
  auto t = Import(Slurp(kShared + "/alltoall_allpairs_8_1.xml"), 8 << 10);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().source().engines_per_channel(), 3u);
  auto four = Import(Slurp(kShared + "/alltoall_allpairs_8_1.xml"), 8 << 10,
                     "a2a.xml", 4);
  ASSERT_FALSE(four.ok());
  EXPECT_THAT(four.status().message(),
              HasSubstr("a2a.xml:2:3: gpu 0 needs 35 message counters with 4 "
                        "engine(s) per channel, but TPS186 has 32"));
}

TEST(ImportMscclTest, OutOfPlaceAllToAllPutsTheOutputAfterTheInput) {
  SKIP_WITHOUT_SHARED();
  auto t = Import(Slurp(kShared + "/alltoall_allpairs_8_1.xml"), 8 << 10);
  ASSERT_TRUE(t.ok()) << t.status();
  const v1::ChipBuffers& b = t->header().collective().buffers(3);
  EXPECT_EQ(b.input().addr(), 0u);
  EXPECT_EQ(b.input().bytes(), 8u << 10);
  EXPECT_EQ(b.output().addr(), 8u << 10);
  EXPECT_EQ(b.output().bytes(), 8u << 10);
  EXPECT_FALSE(t->header().collective().in_place());
}

TEST(ImportMscclTest, InPlaceAllGatherInputIsTheRanksSliceOfTheOutput) {
  SKIP_WITHOUT_SHARED();
  // The file has i_chunks=0, o_chunks=8: in place, the input is chunk r of
  // the output (the "o_chunks 0 with inplace" holds for AllReduce).
  auto t = Import(Slurp(kShared + "/allgather_recursive_doubling_8_1.xml"),
                  8 * 1024);
  ASSERT_TRUE(t.ok()) << t.status();
  const v1::ChipBuffers& b = t->header().collective().buffers(5);
  EXPECT_EQ(b.input().addr(), 5u * 1024);
  EXPECT_EQ(b.input().bytes(), 1024u);
  EXPECT_EQ(b.output().addr(), 0u);
  EXPECT_EQ(b.output().bytes(), 8u * 1024);
}

TEST(ImportMscclTest, DependenciesBecomeLocalMessagesBetweenStreams) {
  auto t = Import(Slurp(kOwn + "/allgather_ring_depid_4.xml"), 4 * 64);
  ASSERT_TRUE(t.ok()) << t.status();
  // tb 1 (stream 1) signals tb 0 after each of its first two receives; tb 0
  // waits for them before forwarding.
  const v1::ChipProgram& c = t->chips(2);
  EXPECT_EQ(Count(c.streams(1), v1::Instruction::kMsgSend), 2);
  int dep_waits = 0;
  uint32_t counter = 0;
  for (const auto& in : c.streams(1).instructions()) {
    if (in.has_msg_send()) counter = in.msg_send().dst_qp_id();
  }
  for (const auto& in : c.streams(0).instructions()) {
    dep_waits += in.has_msg_wait() && in.msg_wait().qp_id() == counter;
  }
  EXPECT_EQ(dep_waits, 2);
}

TEST(ImportMscclTest, ScratchReduceAndCopyAreLocalTransfers) {
  auto t =
      Import(Slurp(kOwn + "/allreduce_scratch_3.xml"), 3 * 100, "s.xml", 1);
  ASSERT_TRUE(t.ok()) << t.status();
  // Chunk 100 bytes; input [0, 300) in place; scratch after it: [300, 500).
  const v1::Stream& re = t->chips(1).streams(2);
  ASSERT_GE(re.instructions_size(), 2);
  bool saw_local_reduce = false;
  for (const auto& in : re.instructions()) {
    if (!in.has_transfer()) continue;
    EXPECT_EQ(in.transfer().dst_chip(), 1u);
    EXPECT_EQ(in.transfer().reduce(), v1::REDUCE_SUM);
    EXPECT_EQ(in.transfer().dst_addr(), 100u);  // i[1]
    EXPECT_GE(in.transfer().src_addr(), 300u);  // a scratch slot
    saw_local_reduce = true;
  }
  EXPECT_TRUE(saw_local_reduce);
  // The all-gather receive into scratch slot 0 needs a ready: the reduce
  // that read the slot is ordered before it only through tb 2.
  int readies = 0;
  for (const auto& in : t->chips(1).streams(0).instructions())
    readies += in.has_remote_msg_send() &&
               CdmaOfQp(in.remote_msg_send().qp_id()) == 0 &&
               VcOfQp(in.remote_msg_send().qp_id()) == 1;
  EXPECT_EQ(readies, 2);  // the rendezvous and that one
}

TEST(ImportMscclTest, MultiChannelUsesDisjointEngines) {
  auto t = Import(Slurp(kOwn + "/allreduce_ring_2ch_4.xml"), 8 * 64);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().source().engines_per_channel(), 4u);  // 8 / 2
  for (int s = 0; s < 2; ++s) {
    for (const auto& in : t->chips(0).streams(s).instructions()) {
      if (!in.has_transfer()) continue;
      const uint32_t e = CdmaOfQp(in.transfer().qp_id());
      EXPECT_EQ(e / 4, static_cast<uint32_t>(s)) << "channel " << s;
    }
  }
}

TEST(ImportMscclTest, ReduceIntoAnotherBufferIsAWriteThenALocalReduce) {
  auto t = Import(Slurp(kOwn + "/reducescatter_ring_oop_4.xml"), 4 * 64,
                  "rs.xml", 1);
  ASSERT_TRUE(t.ok()) << t.status();
  // Chunk 64 bytes; input [0, 256), output [256, 320) out of place.
  const v1::ChipBuffers& b = t->header().collective().buffers(2);
  EXPECT_EQ(b.output().addr(), 256u);
  EXPECT_EQ(b.output().bytes(), 64u);
  // gpu 1's last send lands plainly in gpu 2's output; gpu 2 then adds its
  // own chunk 2 = [128, 192) locally and fences.
  const v1::Stream& s1 = t->chips(1).streams(0);
  const v1::Transfer* last = nullptr;
  for (const auto& in : s1.instructions())
    if (in.has_transfer() && in.transfer().dst_chip() == 2)
      last = &in.transfer();
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->dst_addr(), 256u);
  EXPECT_EQ(last->reduce(), v1::REDUCE_NONE);
  const v1::Stream& s2 = t->chips(2).streams(0);
  const int n = s2.instructions_size();
  ASSERT_GE(n, 2);
  EXPECT_TRUE(s2.instructions(n - 1).has_fence());
  const v1::Transfer& local = s2.instructions(n - 2).transfer();
  EXPECT_EQ(local.dst_chip(), 2u);
  EXPECT_EQ(local.src_addr(), 128u);
  EXPECT_EQ(local.dst_addr(), 256u);
  EXPECT_EQ(local.reduce(), v1::REDUCE_SUM);
}

TEST(ImportMscclTest, HugeNumbersAreErrorsNotOverflows) {
  const std::string base = Slurp(kOwn + "/reducescatter_ring_oop_4.xml");
  std::string xml = base;
  absl::StrReplaceAll({{"s_chunks=\"0\"", "s_chunks=\"9223372036854775807\""}},
                      &xml);
  EXPECT_THAT(std::string(Import(xml, 256).status().message()),
              HasSubstr("s_chunks=9223372036854775807 is out of range"));
  xml = base;
  absl::StrReplaceAll({{"cnt=\"1\"", "cnt=\"9223372036854775807\""}}, &xml);
  EXPECT_THAT(std::string(Import(xml, 256).status().message()),
              HasSubstr("are outside the input buffer's 4 chunk(s)"));
  // The range's end is printed exactly although it leaves int64: the step
  // at offset 3 ends at 3 + (2^63 - 1).
  EXPECT_THAT(std::string(Import(xml, 256).status().message()),
              HasSubstr("[3, 9223372036854775810)"));
  EXPECT_THAT(std::string(Import(base, uint64_t{1} << 62).status().message()),
              HasSubstr("up to 2^60"));
}

TEST(ImportMscclTest, DeterministicBytes) {
  SKIP_WITHOUT_SHARED();
  const std::string xml =
      Slurp(kShared + "/allgather_recursive_doubling_8_1.xml");
  auto a = Import(xml, 1 << 20);
  auto b = Import(xml, 1 << 20);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->SerializeAsString(), b->SerializeAsString());
}

// Mutations of the real files: each error names the place.
class ImportMutationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kShared + "/allreduce_ring_8_1.xml")) {
      GTEST_SKIP() << "the msccl-tools files are not at " << kShared;
    }
    ring_ = Slurp(kShared + "/allreduce_ring_8_1.xml");
    ag_ = Slurp(kShared + "/allgather_recursive_doubling_8_1.xml");
  }
  std::string Error(const std::string& xml, uint64_t bytes = 1 << 20) {
    auto t = Import(xml, bytes, "m.xml");
    return t.ok() ? "ok" : std::string(t.status().message());
  }
  std::string ring_, ag_;
};

TEST_F(ImportMutationTest, DroppedReceive) {
  // gpu 1's last step receives chunk 3 from gpu 0; without it gpu 0's last
  // send (step 13, line 17) has no receive.
  const std::string line =
      "      <step s=\"14\" type=\"r\" srcbuf=\"i\" srcoff=\"3\" dstbuf=\"i\" "
      "dstoff=\"3\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n";
  const size_t at = ring_.find(line, ring_.find("<gpu id=\"1\""));
  ASSERT_NE(at, std::string::npos);
  std::string xml = ring_;
  xml.erase(at, line.size());
  EXPECT_EQ(Error(xml),
            "m.xml:17:7: gpu 0 tb 0 (m.xml:3:5) sends 14 time(s) to gpu 1 on "
            "channel 0, but gpu 1 tb 0 (m.xml:22:5) receives 13 time(s) from "
            "gpu 0: gpu 0 tb 0 step 13 (rcs) has no matching receive");
}

TEST_F(ImportMutationTest, ChunkRangePastTheBuffer) {
  // gpu 0 step 1 with cnt=7 from chunk 7: past the 8 chunks of the input.
  // (Two offsets swapped within range import fine and are caught by
  // check --semantics: import_cli_test.cc, SwappedOffsets...)
  std::string xml = ring_;
  absl::StrReplaceAll({{"<step s=\"1\" type=\"rrs\" srcbuf=\"i\" srcoff=\"7\" "
                        "dstbuf=\"i\" dstoff=\"7\" cnt=\"1\"",
                        "<step s=\"1\" type=\"rrs\" srcbuf=\"i\" srcoff=\"1\" "
                        "dstbuf=\"i\" dstoff=\"7\" cnt=\"7\""}},
                      &xml);
  EXPECT_THAT(Error(xml), HasSubstr("m.xml:5:7: gpu 0 tb 0 step 1 (rrs): i "
                                    "chunks [7, 14) are outside the input "
                                    "buffer's 8 chunk(s)"));
}

TEST_F(ImportMutationTest, BrokenDependency) {
  std::string xml = ag_;
  // gpu 0 tb 1 step 0 waits for tb 0 step 1; point it at a step that does
  // not exist.
  const std::string from =
      "<step s=\"0\" type=\"s\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" "
      "dstoff=\"0\" cnt=\"2\" depid=\"0\" deps=\"1\"";
  const size_t at = xml.find(from);
  ASSERT_NE(at, std::string::npos);
  xml.replace(at, from.size(),
              absl::StrReplaceAll(from, {{"deps=\"1\"", "deps=\"9\""}}));
  EXPECT_EQ(Error(xml, 8 << 10),
            "m.xml:8:7: gpu 0 tb 1 step 0 (s) depends on tb 0 step 9 of gpu "
            "0, which does not exist");
}

TEST_F(ImportMutationTest, DependencyOnAStepThatNeverSignals) {
  std::string xml = ag_;
  // tb 0 step 1 of gpu 0 is waited on; clear its hasdep.
  const std::string from =
      "<step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" "
      "dstoff=\"1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>";
  const size_t at = xml.find(from);
  ASSERT_NE(at, std::string::npos);
  xml.replace(at, from.size(),
              absl::StrReplaceAll(from, {{"hasdep=\"1\"", "hasdep=\"0\""}}));
  EXPECT_EQ(Error(xml, 8 << 10),
            "m.xml:8:7: gpu 0 tb 1 step 0 (s) depends on gpu 0 tb 0 step 1 "
            "(r) at m.xml:5:7, which has hasdep=\"0\": MSCCL never signals "
            "it");
}

TEST_F(ImportMutationTest, TruncatedFile) {
  const std::string xml = ring_.substr(0, ring_.size() / 2);
  const std::string e = Error(xml);
  EXPECT_THAT(e, ::testing::StartsWith("m.xml:"));
  EXPECT_THAT(e, HasSubstr("malformed XML"));
}

TEST_F(ImportMutationTest, UnknownStepType) {
  std::string xml = ring_;
  absl::StrReplaceAll(
      {{"<step s=\"14\" type=\"r\"", "<step s=\"14\" type=\"rx\""}}, &xml);
  EXPECT_EQ(Error(xml),
            "m.xml:18:20: unknown step type 'rx' (known: s, r, rcs, rrc, rrs, "
            "rrcs, re, cpy, nop)");
}

TEST_F(ImportMutationTest, SendWithoutAReceivingThreadblock) {
  std::string xml = ring_;
  // gpu 1's tb now receives from gpu 2: gpu 0's sends to gpu 1 have no
  // receiver.
  absl::StrReplaceAll({{"<tb id=\"0\" send=\"2\" recv=\"0\" chan=\"0\">",
                        "<tb id=\"0\" send=\"2\" recv=\"2\" chan=\"0\">"}},
                      &xml);
  EXPECT_THAT(Error(xml),
              HasSubstr("m.xml:4:7: gpu 0 tb 0 step 0 (s) sends to gpu 1 on "
                        "channel 0, but gpu 1 has no tb with recv=0 chan=0"));
}

TEST_F(ImportMutationTest, RanksThatDoNotFitTheHardwareOrTopology) {
  HwConfig hw = Tps186();
  hw.num_chips = 4;
  MscclImportOptions opt;
  opt.bytes = 1 << 20;
  auto t = ImportMsccl(ring_, "m.xml", hw, opt);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "m.xml:1:1: ngpus=8 but the hardware config 'TPS186' has 4 chips");
  TopologyParams p;
  p.torus_x = 3;
  p.torus_y = 3;
  opt.topology = std::pair(TopologyKind::kTorus2D, p);
  auto torus = ImportMsccl(ring_, "m.xml", Tps186(), opt);
  ASSERT_FALSE(torus.ok());
  EXPECT_THAT(torus.status().message(),
              HasSubstr("m.xml:1:1: ngpus=8 does not fit topology torus2d: "));
}

TEST_F(ImportMutationTest, AnAttributeBeyondItsTypeIsRefusedNotWrapped) {
  // 99999999999 mod 2^32 = 1215752191: a cast would have read that many
  // ranks. 2^31 - 1 is the largest int, the type ngpus is read into.
  std::string xml = ring_;
  absl::StrReplaceAll({{"ngpus=\"8\"", "ngpus=\"99999999999\""}}, &xml);
  EXPECT_THAT(Error(xml),
              HasSubstr("<algo> attribute ngpus=99999999999 is out of range "
                        "[-2147483648, 2147483647]"));
}

TEST_F(ImportMutationTest, BytesMustSplitIntoChunks) {
  EXPECT_EQ(Error(ring_, 1000003),
            "m.xml:1:1: --bytes 1000003 is not a positive multiple of "
            "nchunksperloop=8 up to 2^60 (one chunk = bytes / "
            "nchunksperloop)");
}

}  // namespace
}  // namespace ccreplay
