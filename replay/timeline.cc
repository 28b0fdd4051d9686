#include "replay/timeline.h"

#include <cinttypes>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace ccreplay {
namespace {

// Track ids inside a chip's process.
constexpr uint32_t kStreamTidBase = 1;
constexpr uint32_t kCdmaTidBase = 1000;

void Meta(std::string* out, const char* what, uint32_t pid, uint32_t tid,
          const std::string& name) {
  absl::StrAppend(out, "{\"ph\":\"M\",\"name\":\"", what, "\",\"pid\":", pid,
                  ",\"tid\":", tid, ",\"args\":{\"name\":\"", name, "\"}},\n");
}

void Slice(std::string* out, const std::string& name, uint32_t pid,
           uint32_t tid, TimePs begin, TimePs end, const std::string& args) {
  absl::StrAppend(out, "{\"ph\":\"X\",\"name\":\"", name, "\",\"pid\":", pid,
                  ",\"tid\":", tid, ",\"ts\":", PsToUsString(begin),
                  ",\"dur\":", PsToUsString(end - begin), ",\"args\":{", args,
                  "}},\n");
}

std::string TimeArg(const char* key, TimePs t) {
  if (t.ps() < 0) return "";
  return absl::StrCat(",\"", key, "_us\":", PsToUsString(t));
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
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  // Which engines each chip used, to name only those tracks.
  for (uint32_t c = 0; c < program.num_chips; ++c) {
    const uint32_t pid = c + 1;
    Meta(&out, "process_name", pid, 0, absl::StrCat("chip ", c));
    const auto& streams = program.chips[c].streams;
    for (uint32_t s = 0; s < streams.size(); ++s) {
      Meta(&out, "thread_name", pid, kStreamTidBase + s,
           absl::StrCat("stream ", streams[s].id));
    }
  }
  std::vector<std::vector<bool>> engine_named(program.num_chips);
  for (const InstrTiming& t : result.instrs) {
    const StreamProgram& sp = program.chips[t.chip].streams[t.stream];
    const Instr& in = sp.instrs[t.instr];
    const uint32_t pid = t.chip + 1;
    const std::string place = absl::StrCat(
        "\"instr\":\"", InstrPlace(program, t.chip, t.stream, t.instr), "\"");
    if (in.kind == OpKind::kMsgWait || in.kind == OpKind::kFence) {
      if (t.end > t.issue) {
        const std::string name =
            in.kind == OpKind::kFence
                ? std::string("Fence")
                : absl::StrCat("MsgWait qp ", in.dst_qp, " x", in.count);
        Slice(&out, name, pid, kStreamTidBase + t.stream, t.issue, t.end,
              place);
      }
      continue;
    }
    if (!MovesData(in.kind) || t.end <= t.start) continue;
    const uint32_t cdma = CdmaOfQp(in.qp_id);
    auto& named = engine_named[t.chip];
    if (named.size() <= cdma) named.resize(cdma + 1, false);
    if (!named[cdma]) {
      named[cdma] = true;
      Meta(&out, "thread_name", pid, kCdmaTidBase + cdma,
           absl::StrCat("cdma ", cdma));
    }
    const std::string name =
        in.peer == t.chip
            ? absl::StrCat(OpKindName(in.kind), " ", in.bytes, " B local")
            : absl::StrCat(OpKindName(in.kind), " ", in.bytes, " B -> chip ",
                           in.peer);
    Slice(&out, name, pid, kCdmaTidBase + cdma, t.start, t.end,
          absl::StrCat(place, ",\"qp_id\":", in.qp_id,
                       TimeArg("issue", t.issue), TimeArg("landed", t.landed),
                       TimeArg("complete", t.complete)));
  }
  // A closing metadata record keeps every event above comma-terminated.
  absl::StrAppend(&out,
                  "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,"
                  "\"tid\":0,\"args\":{\"name\":\"ccreplay\"}}\n]}\n");
  return out;
}

}  // namespace ccreplay
