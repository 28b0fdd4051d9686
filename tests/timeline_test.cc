// Timelines (replay/timeline.h, docs/timelines.md): both formats are read
// back and checked for structure (slices nest, flows have both ends,
// counters move forward in time, Perfetto tracks and flows are whole), for a
// time derived from the hardware, for determinism and for the filters; the
// command line refuses bad timeline options.
#include "replay/timeline.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "proto/perfetto_trace.pb.h"
#include "replay/engine.h"
#include "replay/fluid_engine.h"
#include "tests/one_transfer.h"
#include "tests/run_cli.h"
#include "tests/scratch_dir.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;
namespace pf = ::ccreplay::perfetto;

struct Run {
  Program program;
  std::optional<Topology> topo;
  ReplayResult result;
  std::optional<TimelineRecorder> net;
};

// Replays `p` on `kind` (a ring by default) with a recorder for `filter`.
std::unique_ptr<Run> ReplayRing(Program p, const HwConfig& hw,
                                const TimelineFilter& filter = {},
                                TopologyKind kind = TopologyKind::kRing) {
  auto run = std::make_unique<Run>();
  run->program = std::move(p);
  auto topo = Topology::Build(kind, run->program.num_chips);
  EXPECT_TRUE(topo.ok()) << topo.status();
  run->topo = *std::move(topo);
  run->net.emplace(filter, hw);
  ReplayOptions opt;
  opt.net_recorder = &*run->net;
  auto r = Replay(run->program, hw, *run->topo, opt);
  EXPECT_TRUE(r.ok()) << r.status();
  run->result = *std::move(r);
  return run;
}

std::string Json(Run& run, const TimelineFilter& filter = {}) {
  return TimelineJson(
      TimelineInputs{run.program, run.result, &*run.topo, &*run.net, filter});
}
std::string Perfetto(Run& run, const TimelineFilter& filter = {}) {
  return TimelinePerfetto(
      TimelineInputs{run.program, run.result, &*run.topo, &*run.net, filter});
}

// Every chip sends `bytes` to the next and tells it; each waits for the
// message from the one before.
Program RingExchange(uint32_t n, uint64_t bytes) {
  Program p;
  p.num_chips = n;
  p.chips.resize(n);
  for (uint32_t c = 0; c < n; ++c) {
    Instr t;
    t.kind = OpKind::kTransfer;
    t.peer = (c + 1) % n;
    t.bytes = bytes;
    Instr m;
    m.kind = OpKind::kRemoteMsgSend;
    m.peer = t.peer;
    Instr w;
    w.kind = OpKind::kMsgWait;
    w.count = 1;
    p.chips[c].streams.push_back({0, {t, m, w}});
  }
  return p;
}

int64_t Ps(const nlohmann::json& us) {
  return std::llround(us.get<double>() * 1e6);
}

// The JSON's events, checked for the structure every timeline has.
struct JsonSummary {
  std::map<std::string, int> phases;  // events per "ph"
  std::set<std::string> track_names;  // thread and process names
  std::vector<nlohmann::json> slices;
};

JsonSummary CheckJson(const std::string& text) {
  JsonSummary sum;
  const nlohmann::json j = nlohmann::json::parse(text);
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>>
      tracks;
  std::map<uint64_t, std::pair<int, int>> flows;  // id -> (starts, ends)
  std::map<uint64_t, std::pair<int64_t, int64_t>> flow_ts;
  std::map<std::pair<int, std::string>, int64_t> counter_last;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph");
    sum.phases[ph]++;
    if (ph == "M") sum.track_names.insert(e.at("args").at("name"));
    if (ph == "X") {
      sum.slices.push_back(e);
      tracks[{e.at("pid"), e.at("tid")}].push_back(
          {Ps(e.at("ts")), Ps(e.at("ts")) + Ps(e.at("dur"))});
      EXPECT_GE(Ps(e.at("dur")), 0) << e;
    }
    if (ph == "s" || ph == "f") {
      const uint64_t id = e.at("id");
      (ph == "s" ? flows[id].first : flows[id].second)++;
      (ph == "s" ? flow_ts[id].first : flow_ts[id].second) = Ps(e.at("ts"));
    }
    if (ph == "C") {
      const auto key =
          std::make_pair(int(e.at("pid")), std::string(e.at("name")));
      auto it = counter_last.find(key);
      if (it != counter_last.end()) {
        EXPECT_GE(Ps(e.at("ts")), it->second) << e;
      }
      counter_last[key] = Ps(e.at("ts"));
    }
  }
  for (auto& [track, spans] : tracks) {
    // Sorted by begin, the longer first: each slice must fit inside every
    // slice still open when it begins.
    std::sort(spans.begin(), spans.end(), [](auto a, auto b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<int64_t> open;
    for (auto [b, e] : spans) {
      while (!open.empty() && open.back() <= b) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(e, open.back()) << "partial overlap on pid " << track.first
                                  << " tid " << track.second << " at " << b;
      }
      open.push_back(e);
    }
  }
  for (auto [id, ends] : flows) {
    EXPECT_EQ(ends, std::make_pair(1, 1)) << "flow " << id;
    EXPECT_LE(flow_ts[id].first, flow_ts[id].second) << "flow " << id;
  }
  return sum;
}

TEST(TimelineTest, JsonSlicesNestFlowsHaveBothEndsAndTimesAreMicroseconds) {
  const HwConfig hw = DefaultTps186();
  // One full packet: its payload and header, on one of the lane groups.
  const uint64_t payload = hw.packet_payload_bytes;
  auto run = ReplayRing(ccreplay_test::OneTransfer(payload), hw);
  const JsonSummary sum = CheckJson(Json(*run));
  // A lane group carries 1/lane_groups of the link: the packet's wire bytes
  // take lane_groups times as long as on the whole link.
  const int64_t wire = payload + hw.packet_header_bytes;
  const int64_t expect_ps =
      SerializationTime(wire * hw.lane_groups, hw.link_bytes_per_s).ps();
  EXPECT_EQ(expect_ps, 320 * 4 * 5 / 2);  // 2.5 ps per byte at 400 GB/s
  int link_slices = 0;
  for (const auto& e : sum.slices) {
    if (std::string(e.at("name")).rfind("Transfer", 0) != 0) continue;
    if (!e.at("args").contains("wire_bytes")) continue;  // the CDMA slice
    ++link_slices;
    EXPECT_EQ(Ps(e.at("dur")), expect_ps) << e;
    EXPECT_EQ(e.at("args").at("wire_bytes"), wire);
    EXPECT_EQ(e.at("args").at("packets"), 1);
  }
  EXPECT_EQ(link_slices, 1);
  // Transfer -> RemoteMsgSend -> the MsgWait it released.
  EXPECT_EQ(sum.phases.at("s"), 2);
  EXPECT_EQ(sum.phases.at("f"), 2);
  EXPECT_EQ(sum.phases.at("i"), 2);  // the message, the release
  EXPECT_GT(sum.phases.at("C"), 0);
  EXPECT_TRUE(sum.track_names.count("cdma 0"));
  EXPECT_TRUE(sum.track_names.count("stream 0"));
}

TEST(TimelineTest, BackToBackPacketsOfOneInstructionAreOneSlice) {
  HwConfig hw = DefaultTps186();
  hw.lane_groups = 1;
  hw.cdma_engines = 1;
  // An engine twice as fast as the link: after the first, each of the 64
  // packets waits for the one before it to leave, so they are serialised
  // back to back on the one lane group: one slice of 64 packets.
  hw.cdma_bytes_per_s = hw.link_bytes_per_s * 2;
  const uint64_t bytes = 64 * uint64_t{hw.packet_payload_bytes};
  auto run = ReplayRing(ccreplay_test::OneTransfer(bytes), hw);
  const JsonSummary sum = CheckJson(Json(*run));
  int data_slices = 0;
  uint64_t packets = 0;
  for (const auto& e : sum.slices) {
    if (!e.at("args").contains("packets")) continue;
    if (std::string(e.at("name")).rfind("Transfer", 0) != 0) continue;
    ++data_slices;
    packets += e.at("args").at("packets").get<uint64_t>();
  }
  EXPECT_EQ(packets, 64u);
  EXPECT_EQ(data_slices, 1) << "packets: " << packets;
}

// Reads a .pftrace back with the schema subset that wrote it.
struct PerfettoSummary {
  int descriptors = 0;
  std::map<pf::TrackEvent::Type, int> types;
};

PerfettoSummary CheckPerfetto(const std::string& bytes) {
  PerfettoSummary sum;
  pf::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  std::set<uint64_t> uuids;
  std::vector<uint64_t> parents;
  std::map<uint64_t, int> open;  // per track: slices begun, not ended
  std::map<uint64_t, int> starts, ends;
  uint64_t last_ts = 0;
  for (const pf::TracePacket& p : trace.packet()) {
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    if (p.has_track_descriptor()) {
      ++sum.descriptors;
      EXPECT_TRUE(uuids.insert(p.track_descriptor().uuid()).second)
          << "duplicate uuid " << p.track_descriptor().uuid();
      if (p.track_descriptor().has_parent_uuid()) {
        parents.push_back(p.track_descriptor().parent_uuid());
      }
      continue;
    }
    EXPECT_TRUE(p.has_track_event());
    const pf::TrackEvent& e = p.track_event();
    EXPECT_TRUE(uuids.count(e.track_uuid())) << "event on unknown track";
    EXPECT_GE(p.timestamp(), last_ts) << "packets out of time order";
    last_ts = p.timestamp();
    sum.types[e.type()]++;
    if (e.type() == pf::TrackEvent::TYPE_SLICE_BEGIN) open[e.track_uuid()]++;
    if (e.type() == pf::TrackEvent::TYPE_SLICE_END) {
      EXPECT_GT(open[e.track_uuid()]--, 0) << "an end without a begin";
    }
    for (uint64_t id : e.flow_ids()) starts[id]++;
    for (uint64_t id : e.terminating_flow_ids()) ends[id]++;
  }
  for (uint64_t parent : parents) EXPECT_TRUE(uuids.count(parent)) << parent;
  for (auto [track, n] : open) EXPECT_EQ(n, 0) << "unended slice on " << track;
  EXPECT_EQ(starts.size(), ends.size());
  for (auto [id, n] : starts) {
    EXPECT_EQ(n, 1) << "flow " << id;
    EXPECT_EQ(ends[id], 1) << "flow " << id;
  }
  return sum;
}

TEST(TimelineTest, PerfettoHoldsTheJsonTracksAndEvents) {
  const HwConfig hw = DefaultTps186();
  auto run = ReplayRing(RingExchange(4, 20000), hw);
  const JsonSummary js = CheckJson(Json(*run));
  PerfettoSummary ps = CheckPerfetto(Perfetto(*run));
  EXPECT_EQ(ps.types[pf::TrackEvent::TYPE_SLICE_BEGIN], js.phases.at("X"));
  EXPECT_EQ(ps.types[pf::TrackEvent::TYPE_SLICE_END], js.phases.at("X"));
  EXPECT_EQ(ps.types[pf::TrackEvent::TYPE_INSTANT], js.phases.at("i"));
  EXPECT_EQ(ps.types[pf::TrackEvent::TYPE_COUNTER], js.phases.at("C"));
  // Process and thread names, less the closing "ccreplay", are the
  // non-counter tracks.
  std::set<std::string> counters;
  const nlohmann::json parsed = nlohmann::json::parse(Json(*run));
  for (const auto& e : parsed.at("traceEvents")) {
    if (e.at("ph") == "C") {
      counters.insert(std::to_string(int(e.at("pid"))) + " " +
                      std::string(e.at("name")));
    }
  }
  EXPECT_EQ(ps.descriptors,
            js.phases.at("M") - 1 + static_cast<int>(counters.size()));
  // Per chip: a Transfer -> its message -> the release it caused.
  EXPECT_EQ(js.phases.at("s"), 8);
}

TEST(TimelineTest, SameInputsGiveByteIdenticalTimelines) {
  const HwConfig hw = DefaultTps186();
  auto a = ReplayRing(RingExchange(4, 20000), hw);
  auto b = ReplayRing(RingExchange(4, 20000), hw);
  EXPECT_EQ(Json(*a), Json(*b));
  EXPECT_EQ(Perfetto(*a), Perfetto(*b));
}

TEST(TimelineTest, ChipFilterKeepsTheChipsAndTheirLinks) {
  const HwConfig hw = DefaultTps186();
  TimelineFilter f;
  f.chips = {true};  // chip 0 only
  auto all = ReplayRing(RingExchange(4, 20000), hw);
  auto one = ReplayRing(RingExchange(4, 20000), hw, f);
  const JsonSummary full = CheckJson(Json(*all));
  const JsonSummary kept = CheckJson(Json(*one, f));
  EXPECT_TRUE(full.track_names.count("chip 2"));
  EXPECT_FALSE(kept.track_names.count("chip 2"));  // no link to chip 0
  EXPECT_TRUE(kept.track_names.count("chip 0"));
  // The links out of and into chip 0 stay (the latter in chip 3's process).
  EXPECT_TRUE(kept.track_names.count("link chip 0 -> chip 1 lg 0") ||
              kept.track_names.count("link chip 0 -> chip 1 lg 1") ||
              kept.track_names.count("link chip 0 -> chip 1 lg 2") ||
              kept.track_names.count("link chip 0 -> chip 1 lg 3"));
  for (const std::string& name : kept.track_names) {
    EXPECT_THAT(name, ::testing::Not(HasSubstr("chip 1 -> chip 2"))) << name;
  }
  EXPECT_LT(kept.slices.size(), full.slices.size());
  // Flows whose ends are both on chip 0 or its links stay whole.
  EXPECT_EQ(kept.phases.count("s") ? kept.phases.at("s") : 0,
            kept.phases.count("f") ? kept.phases.at("f") : 0);
}

TEST(TimelineTest, WindowClipsSlicesAndDropsWhatIsOutside) {
  const HwConfig hw = DefaultTps186();
  auto all = ReplayRing(RingExchange(4, 20000), hw);
  const JsonSummary full = CheckJson(Json(*all));
  // From the middle of the longest slice to three quarters of the run.
  int64_t mid = 0;
  int64_t longest = 0;
  int64_t longest_end = 0;
  for (const auto& e : full.slices) {
    if (Ps(e.at("dur")) <= longest) continue;
    longest = Ps(e.at("dur"));
    mid = Ps(e.at("ts")) + longest / 2;
    longest_end = Ps(e.at("ts")) + longest;
  }
  TimelineFilter f;
  f.from = TimePs(mid);
  f.to = TimePs(all->result.makespan.ps() / 4 * 3);
  ASSERT_LT(f.from, f.to);
  auto win = ReplayRing(RingExchange(4, 20000), hw, f);
  const std::string text = Json(*win, f);
  const JsonSummary kept = CheckJson(text);
  EXPECT_LT(kept.slices.size(), full.slices.size());
  EXPECT_GT(kept.slices.size(), 0u);
  bool clipped = false;
  const nlohmann::json parsed = nlohmann::json::parse(text);
  for (const auto& e : parsed.at("traceEvents")) {
    if (e.at("ph") == "M") continue;
    EXPECT_GE(Ps(e.at("ts")), f.from.ps()) << e;
    EXPECT_LE(Ps(e.at("ts")), f.to.ps()) << e;
    if (e.at("ph") != "X") continue;
    EXPECT_LE(Ps(e.at("ts")) + Ps(e.at("dur")), f.to.ps()) << e;
    clipped =
        clipped || (Ps(e.at("ts")) == f.from.ps() &&
                    Ps(e.at("dur")) == std::min(longest_end, f.to.ps()) - mid);
  }
  EXPECT_TRUE(clipped) << "the longest slice was not clipped at the start";
  CheckPerfetto(Perfetto(*win, f));
}

TEST(TimelineTest, SwitchPortsHaveTracksAndQueueCounters) {
  const HwConfig hw = DefaultTps186();
  // Chips 1-3 all write to chip 0 and tell it: its switch port queues.
  Program p = RingExchange(4, 20000);
  for (uint32_t c = 1; c < 4; ++c) {
    InstrList& list = p.chips[c].streams[0].instrs;
    Instr write = list[0], msg = list[1];
    write.peer = msg.peer = 0;
    list = {write, msg};  // no wait
  }
  Instr wait = p.chips[0].streams[0].instrs[2];
  wait.count = 3;
  p.chips[0].streams[0].instrs = {wait};
  auto run = ReplayRing(p, hw, {}, TopologyKind::kSwitch);
  const std::string text = Json(*run);
  const JsonSummary sum = CheckJson(text);
  EXPECT_TRUE(sum.track_names.count("switch 0")) << text.substr(0, 2000);
  int queue_peak = 0;
  const nlohmann::json parsed = nlohmann::json::parse(text);
  for (const auto& e : parsed.at("traceEvents")) {
    if (e.at("ph") != "C") continue;
    const std::string name = e.at("name");
    if (name.rfind("peak packets queued switch 0 -> chip 0", 0) == 0) {
      queue_peak = std::max(queue_peak, int(e.at("args").at("value")));
    }
    EXPECT_EQ(name.find("peak packets queued chip"), std::string::npos)
        << "a queue counter on a chip's port: " << name;
  }
  EXPECT_GT(queue_peak, 0) << "three senders, one port: packets wait";
  // Three writes, three messages, each message releases chip 0's wait
  // only once (the last one): 3 + 1 flows.
  EXPECT_EQ(sum.phases.at("s"), 4);
  CheckPerfetto(Perfetto(*run));
}

TEST(TimelineTest, AWindowAfterTheRunKeepsOnlyTheTracks) {
  const HwConfig hw = DefaultTps186();
  auto all = ReplayRing(RingExchange(4, 20000), hw);
  TimelineFilter f;
  f.from = all->result.drained + TimePs::Us(1);
  auto late = ReplayRing(RingExchange(4, 20000), hw, f);
  const JsonSummary sum = CheckJson(Json(*late, f));
  EXPECT_EQ(sum.phases.count("X") + sum.phases.count("i"), 0u);
  EXPECT_TRUE(sum.track_names.count("stream 0"));
  CheckPerfetto(Perfetto(*late, f));
}

TEST(TimelineTest, FluidEngineTimelineHasNoLinkTracks) {
  const HwConfig hw = DefaultTps186();
  const Program p = RingExchange(4, 20000);
  auto topo = Topology::Build(TopologyKind::kRing, 4);
  ASSERT_TRUE(topo.ok());
  TimelineRecorder net({}, hw);
  ReplayOptions opt;
  opt.net_recorder = &net;
  auto r = ReplayFluid(p, hw, *topo, opt);
  ASSERT_TRUE(r.ok()) << r.status();
  const TimelineInputs in{p, *r, &*topo, &net, {}};
  const JsonSummary sum = CheckJson(TimelineJson(in));
  EXPECT_TRUE(sum.track_names.count("cdma 0"));
  for (const std::string& name : sum.track_names) {
    EXPECT_THAT(name, ::testing::Not(HasSubstr("link "))) << name;
  }
  CheckPerfetto(TimelinePerfetto(in));
}

TEST(TimelineTest, OptionParsers) {
  auto chips = ParseChipList("0-3,8");
  ASSERT_TRUE(chips.ok()) << chips.status();
  EXPECT_EQ(*chips, std::vector<bool>({1, 1, 1, 1, 0, 0, 0, 0, 1}));
  EXPECT_THAT(ParseChipList("3-1").status().message(), HasSubstr("backwards"));
  EXPECT_FALSE(ParseChipList("a").ok());
  EXPECT_FALSE(ParseChipList("1,,2").ok());
  auto w = ParseTimeWindow("1.5us:2ms");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->first.ps(), 1500000);
  EXPECT_EQ(w->second.ps(), 2000000000);
  w = ParseTimeWindow(":250ns");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->first.ps(), 0);
  EXPECT_EQ(w->second.ps(), 250000);
  EXPECT_THAT(ParseTimeWindow("50us:10us").status().message(),
              HasSubstr("must end after it begins"));
  EXPECT_FALSE(ParseTimeWindow("10:20us").ok());       // no unit
  EXPECT_FALSE(ParseTimeWindow("1.0001ns:2ns").ok());  // below a picosecond
  EXPECT_TRUE(TimelineFormatOf("a.json").ok());
  EXPECT_TRUE(TimelineFormatOf("a.pftrace").ok());
  EXPECT_TRUE(TimelineFormatOf("a.perfetto-trace").ok());
  EXPECT_THAT(TimelineFormatOf("a.txt").status().message(),
              HasSubstr(".pftrace"));
}

class TimelineCliTest : public ccreplay_test::ScratchDirTest {
 protected:
  TimelineCliTest() : ScratchDirTest("timeline") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    trace_ = Path("ar.txtpb");
    ASSERT_EQ(ccreplay_test::RunCcreplay(
                  "lower --op allreduce --n 4 --bytes 64K -o " + trace_)
                  .exit_code,
              0);
  }
  std::string trace_;
};

TEST_F(TimelineCliTest, BadTimelineOptionsAreUsageErrorsWithNoOutput) {
  const std::string out = Path("t.json");
  const struct {
    std::string args;
    std::string message;
  } cases[] = {
      {"--timeline " + Path("t.txt"), ".pftrace"},
      {"--timeline " + out + " --timeline-chips 3-1", "runs backwards"},
      {"--timeline " + out + " --timeline-chips x", "bad chip list"},
      {"--timeline " + out + " --timeline-chips 0,4", "chips 0-3"},
      {"--timeline " + out + " --timeline-window 50us:10us", "must end after"},
      {"--timeline " + out + " --timeline-window 10", "bad time"},
      {"--timeline-window 1us:2us", "--timeline"},
  };
  for (const auto& c : cases) {
    const auto r =
        ccreplay_test::RunCcreplay("replay " + trace_ + " " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.args;
    EXPECT_FALSE(std::filesystem::exists(Path("t.txt"))) << c.args;
  }
}

TEST_F(TimelineCliTest, BothFormatsAreWrittenAndRepeatable) {
  for (const std::string ext : {".json", ".pftrace", ".perfetto-trace"}) {
    std::string first;
    for (int i = 0; i < 2; ++i) {
      // StrCat, not "t" + std::string: GCC 12's -Wrestrict misfires there.
      const std::string out = Path(absl::StrCat("t", i, ext));
      const auto r = ccreplay_test::RunCcreplay(
          "replay " + trace_ + " --timeline " + out +
          " --timeline-chips 0-1 --timeline-window 1us:");
      ASSERT_EQ(r.exit_code, 0) << r.out;
      const std::string bytes = ccreplay_test::Slurp(out);
      EXPECT_FALSE(bytes.empty());
      if (i == 0) first = bytes;
      if (i == 1) {
        EXPECT_EQ(bytes, first) << ext;
      }
    }
    if (ext == ".json") {
      CheckJson(first);
    } else {
      CheckPerfetto(first);
    }
  }
}

}  // namespace
}  // namespace ccreplay
