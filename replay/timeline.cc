#include "replay/timeline.h"

#include <cinttypes>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/json.h"

namespace ccreplay {
namespace {

// Track ids inside a chip's process.
constexpr uint32_t kStreamTidBase = 1;
constexpr uint32_t kCdmaTidBase = 1000;

Json Meta(const char* what, uint32_t pid, uint32_t tid,
          const std::string& name) {
  return {{"ph", "M"},
          {"name", what},
          {"pid", pid},
          {"tid", tid},
          {"args", {{"name", name}}}};
}

Json Slice(const std::string& name, uint32_t pid, uint32_t tid, TimePs begin,
           TimePs end, Json args) {
  return {{"ph", "X"},
          {"name", name},
          {"pid", pid},
          {"tid", tid},
          {"ts", begin.us()},
          {"dur", (end - begin).us()},
          {"args", std::move(args)}};
}

// Times the engine never set are negative and left out.
void AddTime(Json* args, const char* key, TimePs t) {
  if (t.ps() >= 0) (*args)[absl::StrCat(key, "_us")] = t.us();
}

}  // namespace

std::string PsToUsString(TimePs t) {
  const int64_t ps = t.ps();
  const char* sign = ps < 0 ? "-" : "";
  const uint64_t a = ps < 0 ? static_cast<uint64_t>(-ps) : ps;
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%06" PRIu64, sign,
                a / kPsPerUs, a % kPsPerUs);
  return buf;
}

std::string TimelineJson(const Program& program, const ReplayResult& result) {
  // Streamed: a large replay's events would take several times their text
  // as a tree.
  JsonArrayWriter events({{"displayTimeUnit", "ns"}}, "traceEvents");
  for (uint32_t c = 0; c < program.num_chips; ++c) {
    const uint32_t pid = c + 1;
    events.Add(Meta("process_name", pid, 0, absl::StrCat("chip ", c)));
    const auto& streams = program.chips[c].streams;
    for (uint32_t s = 0; s < streams.size(); ++s) {
      events.Add(Meta("thread_name", pid, kStreamTidBase + s,
                      absl::StrCat("stream ", streams[s].id)));
    }
  }
  // Which engines each chip used, to name only those tracks.
  std::vector<std::vector<bool>> engine_named(program.num_chips);
  for (const InstrTiming& t : result.instrs) {
    const StreamProgram& sp = program.chips[t.chip].streams[t.stream];
    const Instr& in = sp.instrs[t.instr];
    const uint32_t pid = t.chip + 1;
    Json args = {{"instr", InstrPlace(program, t.chip, t.stream, t.instr)}};
    if (in.kind == OpKind::kMsgWait || in.kind == OpKind::kFence) {
      if (t.end > t.issue) {
        const std::string name =
            in.kind == OpKind::kFence
                ? std::string("Fence")
                : absl::StrCat("MsgWait qp ", in.dst_qp, " x", in.count);
        events.Add(Slice(name, pid, kStreamTidBase + t.stream, t.issue, t.end,
                         std::move(args)));
      }
      continue;
    }
    if (!MovesData(in.kind) || t.end <= t.start) continue;
    const uint32_t cdma = CdmaOfQp(in.qp_id);
    auto& named = engine_named[t.chip];
    if (named.size() <= cdma) named.resize(cdma + 1, false);
    if (!named[cdma]) {
      named[cdma] = true;
      events.Add(Meta("thread_name", pid, kCdmaTidBase + cdma,
                      absl::StrCat("cdma ", cdma)));
    }
    const std::string name =
        in.peer == t.chip
            ? absl::StrCat(OpKindName(in.kind), " ", in.bytes, " B local")
            : absl::StrCat(OpKindName(in.kind), " ", in.bytes, " B -> chip ",
                           in.peer);
    args["qp_id"] = in.qp_id;
    AddTime(&args, "issue", t.issue);
    AddTime(&args, "landed", t.landed);
    AddTime(&args, "complete", t.complete);
    events.Add(
        Slice(name, pid, kCdmaTidBase + cdma, t.start, t.end, std::move(args)));
  }
  // The closing process name that the hand-written writer needed to keep
  // its commas right is kept: it names the timeline in the Perfetto UI.
  events.Add(Meta("process_name", 0, 0, "ccreplay"));
  return std::move(events).Finish();
}

}  // namespace ccreplay
