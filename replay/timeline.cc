#include "replay/timeline.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/json.h"
#include "replay/timeline_model.h"

namespace ccreplay {
namespace {

// A time with its unit ("1.5us", "200ns"), exactly, in picoseconds.
absl::StatusOr<TimePs> ParseTime(absl::string_view text) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad time '", text, "': ", why,
                     " (use e.g. 250ns, 10us, 1.5ms; units ps, ns, us, ms, "
                     "s)"));
  };
  size_t end = 0;
  while (end < text.size() &&
         (absl::ascii_isdigit(text[end]) || text[end] == '.')) {
    ++end;
  }
  const absl::string_view number = text.substr(0, end);
  const absl::string_view unit = text.substr(end);
  int64_t scale = 0;
  if (unit == "ps") scale = 1;
  if (unit == "ns") scale = 1000;
  if (unit == "us") scale = 1000000;
  if (unit == "ms") scale = 1000000000;
  if (unit == "s") scale = 1000000000000;
  if (scale == 0) return bad(absl::StrCat("unknown unit '", unit, "'"));
  const std::vector<absl::string_view> parts = absl::StrSplit(number, '.');
  if (number.empty() || parts.size() > 2 || parts[0].empty()) {
    return bad("no number");
  }
  uint64_t whole = 0;
  if (parts[0].size() > 12 || !absl::SimpleAtoi(parts[0], &whole)) {
    return bad("too large");
  }
  int64_t ps = static_cast<int64_t>(whole) * scale;
  if (parts.size() == 2) {
    int64_t digit_scale = scale;
    for (char ch : parts[1]) {
      if (digit_scale % 10 != 0) return bad("finer than a picosecond");
      digit_scale /= 10;
      ps += (ch - '0') * digit_scale;
    }
  }
  if (ps > int64_t{1} << 62) return bad("too large");
  return TimePs(ps);
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

absl::StatusOr<TimelineFormat> TimelineFormatOf(absl::string_view path) {
  if (absl::EndsWith(path, ".json")) return TimelineFormat::kJson;
  if (absl::EndsWith(path, ".pftrace") ||
      absl::EndsWith(path, ".perfetto-trace")) {
    return TimelineFormat::kPerfetto;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--timeline ", path,
      ": unknown format; name the file .json (Chrome trace JSON) or "
      ".pftrace / .perfetto-trace (Perfetto protobuf)"));
}

bool TimelineFilter::KeepLink(const Topology& topo, uint32_t link) const {
  if (chips.empty()) return true;
  const DirectedLink& l = topo.links()[link];
  return (!topo.IsSwitch(l.src) && KeepChip(l.src)) ||
         (!topo.IsSwitch(l.dst) && KeepChip(l.dst));
}

absl::StatusOr<std::vector<bool>> ParseChipList(absl::string_view text) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad chip list '", text, "': ", why,
                     " (use e.g. 0-3,8: chips and inclusive ranges)"));
  };
  std::vector<bool> chips;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> ends = absl::StrSplit(item, '-');
    uint32_t lo = 0;
    uint32_t hi = 0;
    const auto number = [](absl::string_view s, uint32_t* v) {
      return !s.empty() && s.find_first_not_of("0123456789") == s.npos &&
             absl::SimpleAtoi(s, v);
    };
    if (ends.size() > 2 || !number(ends[0], &lo) || !number(ends.back(), &hi)) {
      return bad(absl::StrCat("'", item, "' is not a chip or a range"));
    }
    if (hi < lo) return bad(absl::StrCat("range '", item, "' runs backwards"));
    if (hi >= kMaxChips) {
      return bad(absl::StrCat("chip ", hi, " is beyond the limit of ",
                              kMaxChips, " chips"));
    }
    if (chips.size() <= hi) chips.resize(hi + 1, false);
    for (uint32_t c = lo; c <= hi; ++c) chips[c] = true;
  }
  return chips;
}

absl::StatusOr<std::pair<TimePs, TimePs>> ParseTimeWindow(
    absl::string_view text) {
  const std::vector<absl::string_view> sides = absl::StrSplit(text, ':');
  if (sides.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad time window '", text,
                     "': use FROM:TO, e.g. 10us:50us (either "
                     "side may be left out)"));
  }
  std::pair<TimePs, TimePs> w(TimePs::Zero(), TimePs::Max());
  if (!sides[0].empty()) {
    auto t = ParseTime(sides[0]);
    if (!t.ok()) return t.status();
    w.first = *t;
  }
  if (!sides[1].empty()) {
    auto t = ParseTime(sides[1]);
    if (!t.ok()) return t.status();
    w.second = *t;
  }
  if (w.first >= w.second) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad time window '", text, "': it must end after it begins"));
  }
  return w;
}

TimelineRecorder::TimelineRecorder(TimelineFilter filter, const HwConfig& hw)
    : filter_(std::move(filter)),
      credit_bounded_(hw.link_buffer_bytes != 0),
      lane_groups_(std::max<uint32_t>(hw.lane_groups, 1)) {}

void TimelineRecorder::Attach(const Topology& topo) {
  const size_t n = topo.links().size();
  logs_.assign(n, PortLog());
  keep_.assign(n, false);
  queue_kept_.assign(n, false);
  for (uint32_t l = 0; l < n; ++l) {
    keep_[l] = filter_.KeepLink(topo, l);
    queue_kept_[l] = keep_[l] && topo.IsSwitch(topo.links()[l].src);
  }
}

namespace {

// Appends a counter's new value at `t` (replacing a value set at `t`).
void Step(std::vector<TimelineRecorder::Sample>& s, TimePs t, int64_t v) {
  if (!s.empty() && s.back().t == t) {
    s.back().value = v;
    if (s.size() > 1 && s[s.size() - 2].value == v) s.pop_back();
    return;
  }
  if (!s.empty() && s.back().value == v) return;
  s.push_back({t, v});
}

}  // namespace

void TimelineRecorder::Serialise(uint32_t port, uint32_t lg, const Packet& pk,
                                 uint32_t wire, TimePs start, TimePs end) {
  if (!keep_[port]) return;
  PortLog& log = logs_[port];
  if (credit_bounded_) {
    CountReturns(log, start);
    log.credit_now += wire;
    if (start <= filter_.to) Step(log.credit, start, log.credit_now);
  }
  if (end < filter_.from || start > filter_.to) return;
  if (log.open.size() <= lg) log.open.resize(lg + 1);
  LinkSlice& open = log.open[lg];
  if (open.packets > 0 &&
      (open.op != pk.op || open.kind != pk.kind || open.end != start)) {
    Close(log, lg);
  }
  if (open.packets == 0) {
    open.lg = lg;
    open.op = pk.op;
    open.kind = pk.kind;
    open.start = start;
    open.wire_bytes = 0;
  }
  open.packets++;
  open.wire_bytes += wire;
  open.end = end;
}

void TimelineRecorder::Close(PortLog& log, uint32_t lg) {
  log.slices.push_back(log.open[lg]);
  log.open[lg].packets = 0;
}

void TimelineRecorder::CreditReturned(uint32_t port, uint32_t bytes,
                                      TimePs due) {
  if (!keep_[port]) return;
  logs_[port].returns.Add(due, bytes, 0);
}

void TimelineRecorder::CountReturns(PortLog& log, TimePs t) {
  // Serialisations are told in time order, and a credit is sent no later
  // than it is due: every return due by `t` is known when one starts at `t`.
  // A value set at a picosecond replaces the one set before at it (Step), so
  // the order of the changes within one does not matter.
  log.returns.TakeDue(t, [&](TimePs due, uint32_t bytes, uint32_t) {
    log.credit_now -= bytes;
    if (due <= filter_.to) Step(log.credit, due, log.credit_now);
  });
}

void TimelineRecorder::QueueDepth(uint32_t port, uint32_t waiting, TimePs now) {
  if (!queue_kept_[port] || now > filter_.to) return;
  Step(logs_[port].queue, now, waiting);
}

const std::vector<TimelineRecorder::PortLog>& TimelineRecorder::Logs() {
  for (PortLog& log : logs_) {
    CountReturns(log, TimePs::Max());
    for (uint32_t lg = 0; lg < log.open.size(); ++lg) {
      if (log.open[lg].packets > 0) Close(log, lg);
    }
    std::stable_sort(log.slices.begin(), log.slices.end(),
                     [](const LinkSlice& a, const LinkSlice& b) {
                       return a.start < b.start;
                     });
  }
  return logs_;
}

namespace {

Json Meta(const char* what, uint32_t pid, uint32_t tid,
          const std::string& name) {
  return {{"ph", "M"},
          {"name", what},
          {"pid", pid},
          {"tid", tid},
          {"args", {{"name", name}}}};
}

// Chrome flow events: "s" where a flow starts, "f" (bound to the enclosing
// slice) where it ends, matched by id.
Json FlowJson(const char* ph, uint64_t id, const timeline::Track& t,
              TimePs ts) {
  Json j = {{"ph", ph},     {"name", "flow"}, {"cat", "flow"}, {"id", id},
            {"pid", t.pid}, {"tid", t.tid},   {"ts", ts.us()}};
  if (ph[0] == 'f') j["bp"] = "e";
  return j;
}

Json EventJson(const timeline::Event& e, const timeline::Track& t) {
  switch (e.kind) {
    case timeline::EventKind::kSlice:
      return {{"ph", "X"},     {"name", e.name},  {"pid", t.pid},
              {"tid", t.tid},  {"ts", e.ts.us()}, {"dur", (e.end - e.ts).us()},
              {"args", e.args}};
    case timeline::EventKind::kInstant:
      return {{"ph", "i"},     {"s", "t"},     {"name", e.name},
              {"pid", t.pid},  {"tid", t.tid}, {"ts", e.ts.us()},
              {"args", e.args}};
    case timeline::EventKind::kCounter:
      break;
  }
  return {{"ph", "C"},
          {"name", e.name},
          {"pid", t.pid},
          {"ts", e.ts.us()},
          {"args", {{"value", e.value}}}};
}

}  // namespace

std::string TimelineJson(const TimelineInputs& in) {
  const timeline::Model m = timeline::Build(in);
  // Streamed: a large replay's events would take several times their text
  // as a tree.
  JsonArrayWriter events({{"displayTimeUnit", "ns"}}, "traceEvents");
  for (const timeline::Track& t : m.tracks) {
    if (t.counter) continue;  // named by their events
    events.Add(t.tid == 0 ? Meta("process_name", t.pid, 0, t.name)
                          : Meta("thread_name", t.pid, t.tid, t.name));
  }
  for (const timeline::Event& e : m.events) {
    const timeline::Track& t = m.tracks[e.track];
    events.Add(EventJson(e, t));
    for (uint64_t id : e.flows_out) events.Add(FlowJson("s", id, t, e.ts));
    for (uint64_t id : e.flows_in) events.Add(FlowJson("f", id, t, e.ts));
  }
  // The closing process name that the hand-written writer needed to keep
  // its commas right is kept: it names the timeline in the Perfetto UI.
  events.Add(Meta("process_name", 0, 0, "ccreplay"));
  return std::move(events).Finish();
}

std::string TimelineJson(const Program& program, const ReplayResult& result) {
  return TimelineJson(TimelineInputs{program, result, nullptr, nullptr, {}});
}

}  // namespace ccreplay
