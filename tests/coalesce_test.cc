// Exact coalescing (docs/hardware-model.md, "Coalescing"): the packet engine
// with coalescing on gives byte-identical results to the per-packet
// reference path (ReplayOptions::coalesce = false, --no-coalesce) on every
// hardware config in traces/, contended and uncontended workloads, with the
// config's own link buffers and with unbounded ones (where arrivals fold),
// and dispatches fewer events where it folds.
#include "hw/coalesce.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/run.h"
#include "collectives/lower.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/config_io.h"
#include "hw/topology.h"
#include "replay/breakdown.h"
#include "replay/engine.h"
#include "replay/timeline.h"
#include "run_cli.h"
#include "scratch_dir.h"
#include "tests/path_check.h"
#include "trace/decode.h"
#include "trace/program.h"

namespace ccreplay {
namespace {

// The coalescer's own bookkeeping: of a write of 3 full-size packets the
// first two arrivals fold and the last full-size one keeps its event; a
// slot reused by a one-packet write (or one past every multi-packet write's
// slot, which the coalescer does not grow its list for) folds nothing.
TEST(ArrivalCoalescerTest, OnePacketWritesFoldNothingInAnySlot) {
  constexpr uint32_t kPayload = 288;
  uint64_t events = 0;
  ArrivalCoalescer c;
  c.Enable(true, kPayload, &events);
  c.ExpectData(3, 3 * kPayload);
  Packet pk;
  pk.kind = PacketKind::kData;
  pk.state = 3;
  pk.payload = kPayload;
  EXPECT_TRUE(c.FoldArrival(pk));
  EXPECT_TRUE(c.FoldArrival(pk));
  EXPECT_FALSE(c.FoldArrival(pk));  // the last full-size packet
  EXPECT_EQ(c.TakeFolded(3), 2u * kPayload);
  c.ExpectData(3, kPayload);  // the slot reused by a one-packet write
  EXPECT_FALSE(c.FoldArrival(pk));
  c.ExpectData(3, 100);  // and by a shorter one
  pk.payload = 100;
  EXPECT_FALSE(c.FoldArrival(pk));
  c.ExpectData(1000, kPayload);  // past the list
  pk.state = 1000;
  pk.payload = kPayload;
  EXPECT_FALSE(c.FoldArrival(pk));
  EXPECT_EQ(c.TakeFolded(1000), 0u);
  EXPECT_EQ(c.folded(), 2u);
  EXPECT_EQ(events, 2u);  // one per fold: the per-packet count
}

std::vector<std::string> TraceConfigs() {
  std::vector<std::string> out;
  const std::filesystem::path dir =
      std::filesystem::path(CCREPLAY_SOURCE_DIR) / "traces";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".hw.txtpb";
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  EXPECT_GE(out.size(), 8u) << "traces/*.hw.txtpb";
  return out;
}

struct Workload {
  v1::CollectiveOp op;
  const char* algo;
  uint64_t bytes;
};

// Contended: collectives whose engines and flows share ports. Uncontended:
// one transfer between two chips (p2p). Sizes in units of the config's
// packet payload, plus a few bytes, so that the last packet is short.
std::vector<Workload> Workloads(const HwConfig& hw) {
  const uint64_t p = hw.packet_payload_bytes;
  return {
      {v1::ALLREDUCE, "ring", 64 * p * 8 + 24},
      {v1::ALLREDUCE, "hd", 16 * p * 8},
      {v1::ALLGATHER, "ring", 40 * p * 8 + 8},
      {v1::ALLTOALL, "pairwise", 24 * p * 8 + 16},
      {v1::P2P, "direct", 200 * p + 7},
      {v1::P2P, "direct", 96 * p},
  };
}

void ExpectSameTiming(const InstrTiming& a, const InstrTiming& b, size_t i) {
  SCOPED_TRACE(absl::StrCat("instruction ", i));
  EXPECT_EQ(a.issue, b.issue);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.landed, b.landed);
  EXPECT_EQ(a.complete, b.complete);
  EXPECT_EQ(a.arrived, b.arrived);
  EXPECT_EQ(a.cause, b.cause);
  EXPECT_EQ(a.held_by, b.held_by);
}

void ExpectSameLink(const LinkStats& a, const LinkStats& b, size_t l) {
  SCOPED_TRACE(absl::StrCat("link ", l));
  EXPECT_EQ(a.packets, b.packets);
  EXPECT_EQ(a.wire_bytes, b.wire_bytes);
  EXPECT_EQ(a.payload_bytes, b.payload_bytes);
  EXPECT_EQ(a.busy, b.busy);
  EXPECT_EQ(a.queued, b.queued);
  EXPECT_EQ(a.peak_depth, b.peak_depth);
  EXPECT_EQ(a.credit_stall, b.credit_stall);
  EXPECT_EQ(a.first_start, b.first_start);
  EXPECT_EQ(a.last_end, b.last_end);
  EXPECT_EQ(a.lg_packets, b.lg_packets);
  EXPECT_EQ(a.lg_busy, b.lg_busy);
  EXPECT_EQ(a.lg_last_end, b.lg_last_end);
}

// The results two replays of one trace must share, records aside.
void ExpectSameResults(const ReplayResult& a, const ReplayResult& b) {
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.drained, b.drained);
  EXPECT_EQ(a.chip_finish, b.chip_finish);
  EXPECT_EQ(a.bytes_sent, b.bytes_sent);
  EXPECT_EQ(a.bytes_received, b.bytes_received);
  EXPECT_EQ(a.bytes_local, b.bytes_local);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.packets, b.packets);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (size_t l = 0; l < a.links.size(); ++l) {
    ExpectSameLink(a.links[l], b.links[l], l);
  }
}

// Everything a replay reports, coalesced against the reference.
void ExpectSameRun(const RunOutcome& co, const RunOutcome& ref,
                   const HwConfig& hw) {
  const ReplayResult& a = co.result;
  const ReplayResult& b = ref.result;
  ExpectSameResults(a, b);
  EXPECT_EQ(b.coalesced_events, 0u);
  ASSERT_EQ(a.instrs.size(), b.instrs.size());
  for (size_t i = 0; i < a.instrs.size(); ++i) {
    ExpectSameTiming(a.instrs[i], b.instrs[i], i);
  }
  EXPECT_EQ(TimelineJson(co.program, a), TimelineJson(ref.program, b));
  EXPECT_EQ(ccreplay_test::PathMismatch(co.program, a, hw, *co.topology), "");
  EXPECT_EQ(ccreplay_test::PathMismatch(ref.program, b, hw, *ref.topology),
            "");
  auto pa = CriticalPathBreakdown(co.program, a, hw, *co.topology);
  auto pb = CriticalPathBreakdown(ref.program, b, hw, *ref.topology);
  ASSERT_TRUE(pa.ok() && pb.ok());
  EXPECT_EQ(pa->total, pb->total);
  EXPECT_EQ(pa->by_cause, pb->by_cause);
  EXPECT_EQ(pa->steps, pb->steps);
}

// A lean replay against one that kept its records: every result but the
// records themselves.
void ExpectSameLean(const ReplayResult& a, const ReplayResult& b) {
  EXPECT_TRUE(a.instrs.empty());
  EXPECT_TRUE(a.wait_releases.empty());
  EXPECT_EQ(a.stream_first, b.stream_first);
  ExpectSameResults(a, b);
}

// The chip counts a workload on `hw` runs on: the config's own, else 8 and
// 16.
std::vector<uint32_t> ChipCounts(const HwConfig& hw) {
  if (hw.num_chips != 0) return {hw.num_chips};
  return {8, 16};
}

// What the coalesced replays of a config folded: events, and credits
// counted before they were due against those kept until due.
struct Tally {
  uint64_t folded = 0;
  uint64_t early = 0;
  uint64_t kept = 0;
};

// Replays workload `w` on `n` chips of `hw` both ways; adds what
// coalescing folded to *tally.
void CheckWorkload(const HwConfig& hw, const Workload& w, uint32_t n,
                   Tally* tally) {
  CollectiveSpec spec;
  spec.op = w.op;
  spec.n = n;
  spec.bytes = w.bytes;
  spec.algorithm = w.algo;
  spec.topology = hw.topology;
  SCOPED_TRACE(absl::StrCat(v1::CollectiveOp_Name(w.op), " ", w.algo, " ",
                            w.bytes, " B on ", spec.n, " chips"));
  auto trace = LowerCollective(spec, hw);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ReplayOptions on, off;
  on.coalesce = true;
  off.coalesce = false;
  on.sum_critical_path = off.sum_critical_path = true;
  on.every_stream_path = off.every_stream_path = true;
  auto co = ReplayTrace(*trace, hw, TopologyChoice(hw.topology), on);
  auto ref = ReplayTrace(*trace, hw, TopologyChoice(hw.topology), off);
  ASSERT_TRUE(co.ok()) << co.status();
  ASSERT_TRUE(ref.ok()) << ref.status();
  ExpectSameRun(*co, *ref, hw);
  // A lean replay (no timing records): the same results, and the
  // breakdown it summed is the walk's over the reference's records.
  ReplayOptions lean;
  lean.keep_records = false;
  auto ln = ReplayTrace(*trace, hw, TopologyChoice(hw.topology), lean);
  ASSERT_TRUE(ln.ok()) << ln.status();
  ExpectSameLean(ln->result, ref->result);
  auto walk = WalkCriticalPath(ref->program, ref->result, hw, *ref->topology);
  auto sums = CriticalPathBreakdown(ln->program, ln->result, hw, *ln->topology);
  ASSERT_TRUE(walk.ok() && sums.ok());
  EXPECT_EQ(walk->by_cause, sums->by_cause);
  EXPECT_EQ(walk->steps, sums->steps);
  EXPECT_EQ(walk->total, sums->total);
  tally->folded += co->result.coalesced_events;
  tally->early += co->result.credits_counted_early;
  tally->kept += co->result.credits_kept;
  // The reference path keeps every credit until it is due.
  EXPECT_EQ(ref->result.credits_counted_early, 0u);
}

// Replays every workload on `hw` both ways; adds what coalescing folded to
// *tally.
void CheckConfig(const HwConfig& hw, Tally* tally) {
  for (uint32_t n : ChipCounts(hw)) {
    for (const Workload& w : Workloads(hw)) {
      // Halving-doubling over 16 chips needs 4 ready counters: more than
      // one engine's 3 (alpha-beta has one engine).
      if (n > 8 && std::string(w.algo) == "hd" && hw.cdma_engines < 2) {
        continue;
      }
      CheckWorkload(hw, w, n, tally);
    }
  }
}

HwConfig MustRead(const std::string& path) {
  auto hw = ReadHwConfigFile(path);
  EXPECT_TRUE(hw.ok()) << hw.status();
  return hw.ok() ? *hw : DefaultTps186();
}

// Each config as given: credit-based buffers or, for alpha-beta, unbounded
// ones; arrivals fold either way.
TEST(CoalesceTest, EveryTraceConfigAsGiven) {
  for (const std::string& path : TraceConfigs()) {
    SCOPED_TRACE(path);
    const HwConfig hw = MustRead(path);
    Tally tally;
    CheckConfig(hw, &tally);
    EXPECT_GT(tally.folded, 0u);
    // Buffers of 1 MiB: nearly every credit counts at once.
    if (hw.link_buffer_bytes != 0) {
      EXPECT_GT(tally.early, 0u);
    }
  }
}

// Buffers near the bandwidth-delay product (a few packets more than a
// credit's round trip at full rate): some credits are counted before they
// are due, others wait in their port's list; every result stays the
// reference's. Configs of TPS186 links (400 GB/s,
// 225 ns a crossing: 180 KB in flight over a round trip).
TEST(CoalesceTest, BuffersNearTheBandwidthDelayProduct) {
  for (const char* name : {"tps186", "tps186-board-fattree", "board8"}) {
    SCOPED_TRACE(name);
    HwConfig hw = MustRead(std::string(CCREPLAY_SOURCE_DIR) + "/traces/" +
                           name + ".hw.txtpb");
    hw.link_buffer_bytes = 192 << 10;
    Tally tally;
    CheckConfig(hw, &tally);
    EXPECT_GT(tally.early, 0u);
    EXPECT_GT(tally.kept, 0u);
  }
}

// Each config with unbounded link buffers: arrivals fold, and the coalesced
// runs dispatch fewer events than the reference.
TEST(CoalesceTest, EveryTraceConfigUnboundedBuffers) {
  for (const std::string& path : TraceConfigs()) {
    SCOPED_TRACE(path);
    HwConfig hw = MustRead(path);
    hw.link_buffer_bytes = 0;
    Tally tally;
    CheckConfig(hw, &tally);
    EXPECT_GT(tally.folded, 0u);
    EXPECT_EQ(tally.early + tally.kept, 0u);  // no credit at all
  }
}

// An acknowledgement's arrival folds only where no Fence follows its write
// in the stream: a Fence reached while the acknowledgement is on its way
// must still wait for it. Chip 0, one engine, links without credit: write A
// to chip 1; a local copy L long enough that the stream, through a local
// message and its MsgWait, reaches the Fence after A's acknowledgement has
// left chip 1 and before it arrives; then write C, whose acknowledgement
// has no Fence after it (it folds in a lean replay, and it is the run's
// last arrival).
TEST(CoalesceTest, AcknowledgementsFoldOnlyWithNoFenceAfterTheirWrite) {
  HwConfig hw = DefaultTps186();
  hw.cdma_engines = 1;
  hw.lane_groups = 1;
  hw.link_buffer_bytes = 0;
  // L's read: 300 ns at the engine's rate, against one link crossing
  // (225 ns, the acknowledgement's) after A lands.
  const uint64_t local_bytes = hw.cdma_bytes_per_s * 300 / 1'000'000'000;
  ChipProgram c0;
  c0.streams.push_back(StreamProgram{
      0,
      {TransferInstr(0, 1, 0, 0, 1000, false),
       TransferInstr(0, 0, 0, 1 << 20, local_bytes, false),
       MsgSendInstr(0, 0), MsgWaitInstr(0, 1), FenceInstr(),
       TransferInstr(0, 1, 4096, 4096, 600, false)}});
  Program p;
  p.num_chips = 2;
  p.chips.push_back(std::move(c0));
  p.chips.push_back(ChipProgram{});
  auto topo = Topology::Build(TopologyKind::kRing, 2);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ReplayOptions on, off, lean;
  on.coalesce = lean.coalesce = true;
  off.coalesce = false;
  lean.keep_records = false;
  auto co = Replay(p, hw, *topo, on);
  auto ref = Replay(p, hw, *topo, off);
  auto ln = Replay(p, hw, *topo, lean);
  ASSERT_TRUE(co.ok() && ref.ok() && ln.ok());
  // The premise: the Fence (instruction 4) is reached between A's landing,
  // when its acknowledgement leaves, and A's completion, when it arrives,
  // and waits for it.
  const InstrTiming& a = ref->instrs[0];
  const InstrTiming& fence = ref->instrs[4];
  EXPECT_GT(fence.issue, a.landed);
  EXPECT_LT(fence.issue, a.complete);
  EXPECT_EQ(fence.end, a.complete);
  // C's acknowledgement is the last arrival: the run drains with it.
  EXPECT_EQ(ref->drained, ref->instrs[5].complete);
  ExpectSameResults(*co, *ref);
  ASSERT_EQ(co->instrs.size(), ref->instrs.size());
  for (size_t i = 0; i < co->instrs.size(); ++i) {
    ExpectSameTiming(co->instrs[i], ref->instrs[i], i);
  }
  // Only a lean replay folds acknowledgements (C's, here): it folds more
  // than the one with records, which folds data arrivals only.
  ExpectSameLean(*ln, *ref);
  EXPECT_GT(ln->coalesced_events, co->coalesced_events);
}

// --max-events stops a coalesced replay exactly when it stops the
// reference: folded events count when they are folded, and a run that
// needs no more than the limit is never stopped. Unbounded buffers and
// TPS186 as shipped (with credit): arrivals fold in both.
class CoalesceMaxEventsTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(CoalesceMaxEventsTest, StopsBothPathsAlike) {
  HwConfig hw = DefaultTps186();
  hw.link_buffer_bytes = GetParam();
  CollectiveSpec spec;
  spec.op = v1::ALLREDUCE;
  spec.n = 8;
  spec.bytes = 8 * 288 * 40 + 8;
  auto trace = LowerCollective(spec, hw);
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto program = ValidateAndDecode(*trace, hw.Target());
  ASSERT_TRUE(program.ok()) << program.status();
  auto topo = Topology::Build(TopologyKind::kRing, spec.n);
  ASSERT_TRUE(topo.ok());
  ReplayOptions on, off;
  off.coalesce = false;
  auto full = Replay(*program, hw, *topo, on);
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_GT(full->coalesced_events, 0u);
  for (uint64_t limit : {full->events, full->events - 1, full->events / 2}) {
    on.max_events = off.max_events = limit;
    const auto a = Replay(*program, hw, *topo, on);
    const auto b = Replay(*program, hw, *topo, off);
    EXPECT_EQ(a.ok(), limit >= full->events) << limit;
    EXPECT_EQ(b.ok(), limit >= full->events) << limit;
    EXPECT_EQ(a.status().code(), b.status().code()) << limit;
  }
}

INSTANTIATE_TEST_SUITE_P(Buffers, CoalesceMaxEventsTest,
                         ::testing::Values(uint64_t{0},
                                           DefaultTps186().link_buffer_bytes));

class CoalesceCliTest : public ccreplay_test::ScratchDirTest {
 protected:
  CoalesceCliTest() : ScratchDirTest("coalesce") {}
};

// The command line: --no-coalesce selects the reference path, and every
// output (printed tables, --json, --csv, --timeline) is byte-identical.
TEST_F(CoalesceCliTest, NoCoalesceFlagGivesIdenticalFiles) {
  const std::string ab =
      std::string(CCREPLAY_SOURCE_DIR) + "/traces/alpha-beta.hw.txtpb";
  // Alpha-beta: 1 MiB packets, so 8 MiB + 3 B blocks are 9 packets each.
  const std::string lower =
      "lower --hw " + ab +
      " --op allreduce --n 8 --bytes 67108888 --algo ring -o " + Path("t.pb");
  ASSERT_EQ(ccreplay_test::RunCcreplay(lower).exit_code, 0);
  std::string out[2];
  for (int k = 0; k < 2; ++k) {
    const std::string tag = k == 0 ? "co" : "ref";
    const auto r = ccreplay_test::RunCcreplay(
        "replay --hw " + ab + " " + Path("t.pb") + " --links --json " +
        Path(tag + ".json") + " --csv " + Path(tag + ".csv") + " --timeline " +
        Path(tag + ".tl.json") + (k == 0 ? "" : " --no-coalesce"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    out[k] = r.out;
  }
  EXPECT_EQ(out[0], out[1]);
  for (const char* ext : {".json", ".csv", ".tl.json"}) {
    const std::string co = ccreplay_test::Slurp(Path(std::string("co") + ext));
    EXPECT_FALSE(co.empty()) << ext;
    EXPECT_EQ(co, ccreplay_test::Slurp(Path(std::string("ref") + ext))) << ext;
  }
}

// The same on TPS186 as shipped, whose links have credit: arrivals fold and
// send their credit early, which the timeline's credit track must not show.
TEST_F(CoalesceCliTest, NoCoalesceFlagGivesIdenticalFilesWithCredit) {
  const std::string lower = "lower --op alltoall --n 8 --bytes 1M -o " +
                            Path("a.pb");
  ASSERT_EQ(ccreplay_test::RunCcreplay(lower).exit_code, 0);
  std::string out[2];
  for (int k = 0; k < 2; ++k) {
    const std::string tag = k == 0 ? "co" : "ref";
    const std::string flag = k == 0 ? "" : " --no-coalesce";
    const auto r = ccreplay_test::RunCcreplay(
        "replay " + Path("a.pb") + " --links --json " + Path(tag + ".json") +
        " --csv " + Path(tag + ".csv") + flag);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    out[k] = r.out;
    const auto t = ccreplay_test::RunCcreplay(
        "replay -q " + Path("a.pb") + " --timeline " + Path(tag + ".tl.json") +
        flag);
    ASSERT_EQ(t.exit_code, 0) << t.out;
  }
  EXPECT_EQ(out[0], out[1]);
  for (const char* ext : {".json", ".csv", ".tl.json"}) {
    const std::string co = ccreplay_test::Slurp(Path(std::string("co") + ext));
    EXPECT_FALSE(co.empty()) << ext;
    EXPECT_EQ(co, ccreplay_test::Slurp(Path(std::string("ref") + ext))) << ext;
  }
}

}  // namespace
}  // namespace ccreplay
