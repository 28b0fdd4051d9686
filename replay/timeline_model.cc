#include "replay/timeline_model.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace ccreplay {
namespace timeline {
namespace {

// Track ids inside a process (the JSON tid; the uuid's low 32 bits).
constexpr uint32_t kStreamTidBase = 1;
constexpr uint32_t kCdmaTidBase = 1000;
constexpr uint32_t kLinkTidBase = 100000;
constexpr uint32_t kCounterTidBase = 1u << 30;
// Link utilisation is shown in this many bins of the span at most.
constexpr int64_t kUtilisationBins = 500;
constexpr TimePs kMinBin = TimePs::Ns(10);

// Times the engine never set are negative and left out.
void AddTime(Json* args, const char* key, TimePs t) {
  if (t.ps() >= 0) (*args)[absl::StrCat(key, "_us")] = t.us();
}

std::string DataName(const Instr& in, uint32_t chip) {
  return in.peer == chip
             ? absl::StrCat(OpKindName(in.kind), " ", in.bytes, " B local")
             : absl::StrCat(OpKindName(in.kind), " ", in.bytes, " B -> chip ",
                            in.peer);
}

class Builder {
 public:
  explicit Builder(const TimelineInputs& in)
      : in_(in), p_(in.program), r_(in.result), f_(in.filter) {}

  Model Build() {
    for (uint32_t c = 0; c < p_.num_chips; ++c) {
      if (!f_.KeepChip(c)) continue;
      const auto& streams = p_.chips[c].streams;
      for (uint32_t s = 0; s < streams.size(); ++s) {
        Child(c, kStreamTidBase + s, absl::StrCat("stream ", streams[s].id));
      }
    }
    AddInstructions();
    AddWaitReleases();
    AddMessageFlows();
    if (in_.topology != nullptr && in_.net != nullptr) AddLinks();
    return Finish();
  }

 private:
  Instr InstrOf(uint32_t g) const { return r_.InstrOf(p_, g); }
  uint32_t Pid(uint32_t node) const { return node + 1; }
  uint64_t Uuid(uint32_t pid, uint32_t tid) const {
    return (uint64_t{pid} << 32) | tid;
  }

  // The process track of topology node `node` (chip or switch).
  uint32_t Process(uint32_t node) {
    const uint64_t uuid = Uuid(Pid(node), 0);
    auto [it, fresh] = track_index_.try_emplace(uuid, m_.tracks.size());
    if (fresh) {
      Track t;
      t.uuid = uuid;
      t.pid = Pid(node);
      t.name = node < p_.num_chips ? absl::StrCat("chip ", node)
                                   : in_.topology->NodeName(node);
      m_.tracks.push_back(std::move(t));
    }
    return it->second;
  }
  uint32_t Child(uint32_t node, uint32_t tid, const std::string& name,
                 bool counter = false) {
    const uint32_t parent = Process(node);
    const uint64_t uuid = Uuid(Pid(node), tid);
    auto [it, fresh] = track_index_.try_emplace(uuid, m_.tracks.size());
    if (fresh) {
      Track t;
      t.uuid = uuid;
      t.parent = m_.tracks[parent].uuid;
      t.pid = Pid(node);
      t.tid = tid;
      t.name = name;
      t.counter = counter;
      m_.tracks.push_back(std::move(t));
    }
    return it->second;
  }

  // Adds a slice clipped to the window; kNone if none of it is inside.
  uint32_t AddSlice(uint32_t track, TimePs begin, TimePs end, std::string name,
                    Json args) {
    const TimePs b = Max(begin, f_.from);
    const TimePs e = std::min(end, f_.to);
    if (b > e || (b == e && begin < end)) return kNone;
    Event ev;
    ev.kind = EventKind::kSlice;
    ev.track = track;
    ev.ts = b;
    ev.end = e;
    ev.name = std::move(name);
    ev.args = std::move(args);
    m_.events.push_back(std::move(ev));
    return static_cast<uint32_t>(m_.events.size() - 1);
  }
  uint32_t AddInstant(uint32_t track, TimePs t, std::string name, Json args) {
    if (t < f_.from || t > f_.to) return kNone;
    Event e;
    e.kind = EventKind::kInstant;
    e.track = track;
    e.ts = e.end = t;
    e.name = std::move(name);
    e.args = std::move(args);
    m_.events.push_back(std::move(e));
    return static_cast<uint32_t>(m_.events.size() - 1);
  }
  // A counter's samples (value from then on) inside the window, after the
  // value in force when the window opens.
  void AddCounter(uint32_t track,
                  const std::vector<TimelineRecorder::Sample>& samples) {
    const TimelineRecorder::Sample* at_open = nullptr;
    for (const auto& s : samples) {
      if (s.t > f_.to) break;
      if (s.t <= f_.from) {
        at_open = &s;
        continue;
      }
      if (at_open != nullptr) PushCounter(track, *at_open);
      at_open = nullptr;
      PushCounter(track, s);
    }
    if (at_open != nullptr) PushCounter(track, *at_open);
  }
  void PushCounter(uint32_t track, const TimelineRecorder::Sample& s) {
    Event e;
    e.kind = EventKind::kCounter;
    e.track = track;
    e.ts = e.end = Max(s.t, f_.from);
    e.name = m_.tracks[track].name;
    e.value = s.value;
    m_.events.push_back(std::move(e));
  }

  void AddInstructions();
  void AddInstruction(uint32_t g);
  void AddWaitReleases();
  void AddMessageFlows();
  void Flow(uint32_t from_event, uint32_t to_event) {
    if (from_event == kNone || to_event == kNone) return;
    const uint64_t id = ++flows_;
    m_.events[from_event].flows_out.push_back(id);
    m_.events[to_event].flows_in.push_back(id);
  }
  void AddLinks();
  void AddLink(uint32_t l, const TimelineRecorder::PortLog& log);
  std::string LinkSliceName(const TimelineRecorder::LinkSlice& s) const;
  Model Finish();

  const TimelineInputs& in_;
  const Program& p_;
  const ReplayResult& r_;
  const TimelineFilter& f_;
  Model m_;
  absl::flat_hash_map<uint64_t, uint32_t> track_index_;
  // Per instruction: its data-phase slice or message instant (kNone).
  std::vector<uint32_t> event_of_;
  uint64_t flows_ = 0;
  TimePs util_from_, util_to_, util_bin_;
};

void Builder::AddInstructions() {
  event_of_.assign(r_.instrs.size(), kNone);
  for (uint32_t g = 0; g < r_.instrs.size(); ++g) {
    if (f_.KeepChip(r_.instrs[g].chip)) AddInstruction(g);
  }
}

void Builder::AddInstruction(uint32_t g) {
  const InstrTiming& t = r_.instrs[g];
  const Instr& in = InstrOf(g);
  Json args = {{"instr", r_.PlaceOf(p_, g)}};
  if (in.kind == OpKind::kMsgWait || in.kind == OpKind::kFence) {
    if (t.end > t.issue) {
      std::string name =
          in.kind == OpKind::kFence
              ? std::string("Fence")
              : absl::StrCat("MsgWait qp ", in.dst_qp, " x", in.count);
      AddSlice(Child(t.chip, kStreamTidBase + t.stream, ""), t.issue, t.end,
               std::move(name), std::move(args));
    }
    return;
  }
  const uint32_t cdma = CdmaOfQp(in.qp_id);
  const uint32_t track =
      Child(t.chip, kCdmaTidBase + cdma, absl::StrCat("cdma ", cdma));
  args["qp_id"] = in.qp_id;
  if (in.kind == OpKind::kMsgSend || in.kind == OpKind::kRemoteMsgSend) {
    if (t.start.ps() < 0) return;
    AddTime(&args, "landed", t.landed);
    std::string name = in.kind == OpKind::kMsgSend
                           ? absl::StrCat("MsgSend qp ", in.dst_qp)
                           : absl::StrCat("RemoteMsgSend -> chip ", in.peer,
                                          " qp ", in.dst_qp);
    event_of_[g] = AddInstant(track, t.start, std::move(name), std::move(args));
    return;
  }
  if (!MovesData(in.kind) || t.end <= t.start) return;
  AddTime(&args, "issue", t.issue);
  AddTime(&args, "landed", t.landed);
  AddTime(&args, "complete", t.complete);
  event_of_[g] =
      AddSlice(track, t.start, t.end, DataName(in, t.chip), std::move(args));
}

void Builder::AddWaitReleases() {
  for (const ReplayResult::WaitRelease& w : r_.wait_releases) {
    const InstrTiming& t = r_.instrs[w.wait];
    if (!f_.KeepChip(t.chip)) continue;
    const Instr& in = InstrOf(w.wait);
    Json args = {{"instr", r_.PlaceOf(p_, w.wait)}};
    if (w.msg != kNoCause) args["last_message"] = r_.PlaceOf(p_, w.msg);
    const uint32_t ev = AddInstant(
        Child(t.chip, kStreamTidBase + t.stream, ""), t.end,
        absl::StrCat("MsgWait qp ", in.dst_qp, " released"), std::move(args));
    if (w.msg != kNoCause) Flow(event_of_[w.msg], ev);
  }
}

// A Transfer (or Send) to the RemoteMsgSend after it on its qp, in its
// stream's order: the message counts only once that data has landed.
void Builder::AddMessageFlows() {
  uint32_t base = 0;
  for (const ChipProgram& chip : p_.chips) {
    for (const StreamProgram& s : chip.streams) {
      absl::flat_hash_map<uint32_t, uint32_t> last_data;  // qp -> instr
      for (uint32_t i = 0; i < s.instrs.size(); ++i) {
        const Instr& in = s.instrs[i];
        if (in.kind == OpKind::kTransfer || in.kind == OpKind::kSend) {
          last_data[in.qp_id] = base + i;
        } else if (in.kind == OpKind::kRemoteMsgSend) {
          auto it = last_data.find(in.qp_id);
          if (it != last_data.end()) {
            Flow(event_of_[it->second], event_of_[base + i]);
          }
        }
      }
      base += static_cast<uint32_t>(s.instrs.size());
    }
  }
}

std::string Builder::LinkSliceName(const TimelineRecorder::LinkSlice& s) const {
  switch (s.kind) {
    case PacketKind::kData:
      return DataName(InstrOf(s.op), r_.instrs[s.op].chip);
    case PacketKind::kMsg:
      return absl::StrCat("message -> chip ", InstrOf(s.op).peer);
    case PacketKind::kCts:
      return "clear-to-send";
    case PacketKind::kAck:
      return "acknowledgement";
  }
  return "";
}

void Builder::AddLinks() {
  // Counter bins: 1/kUtilisationBins of the span shown, at least
  // kMinBin, in whole nanoseconds.
  util_from_ = f_.from;
  util_to_ = Max(util_from_, std::min(f_.to, r_.drained));  // >= 1 bin
  const int64_t span = std::max<int64_t>((util_to_ - util_from_).ps(), 1);
  const int64_t ns = (span / kUtilisationBins + kPsPerNs - 1) / kPsPerNs;
  util_bin_ = Max(kMinBin, TimePs::Ns(ns));
  const std::vector<TimelineRecorder::PortLog>& logs = in_.net->Logs();
  for (uint32_t l = 0; l < logs.size(); ++l) {
    if (f_.KeepLink(*in_.topology, l)) AddLink(l, logs[l]);
  }
}

// A link's utilisation in percent of its lanes, per bin of `bin` from
// `from` to `to`, from its slices: a value when it changes.
std::vector<TimelineRecorder::Sample> Utilisation(
    const std::vector<TimelineRecorder::LinkSlice>& slices, uint32_t lanes,
    TimePs from, TimePs to, TimePs bin) {
  const int64_t bins = (to - from).ps() / bin.ps() + 1;
  std::vector<int64_t> busy(static_cast<size_t>(bins), 0);
  for (const auto& s : slices) {
    const TimePs b = Max(s.start, from);
    const TimePs e = std::min(s.end, to);
    for (int64_t k = (b - from).ps() / bin.ps(); k < bins; ++k) {
      const TimePs lo = from + bin * k;
      if (lo >= e) break;
      busy[k] += (std::min(e, lo + bin) - Max(b, lo)).ps();
    }
  }
  std::vector<TimelineRecorder::Sample> out;
  for (int64_t k = 0; k < bins; ++k) {
    const int64_t pct = busy[k] * 100 / (bin.ps() * lanes);
    if (out.empty() || out.back().value != pct) {
      out.push_back({from + bin * k, pct});
    }
  }
  return out;
}

// The peak of a step counter per bin of `bin` from `from` to `to` (the
// value in force at the bin's start or any it takes inside), when it
// changes.
std::vector<TimelineRecorder::Sample> PeakPerBin(
    const std::vector<TimelineRecorder::Sample>& s, TimePs from, TimePs to,
    TimePs bin) {
  const int64_t bins = (to - from).ps() / bin.ps() + 1;
  size_t i = 0;
  int64_t now = 0;
  for (; i < s.size() && s[i].t <= from; ++i) now = s[i].value;
  std::vector<TimelineRecorder::Sample> out;
  for (int64_t k = 0; k < bins; ++k) {
    const TimePs lo = from + bin * k;
    int64_t peak = now;
    for (; i < s.size() && s[i].t < lo + bin; ++i) {
      now = s[i].value;
      peak = std::max(peak, now);
    }
    if (out.empty() || out.back().value != peak) out.push_back({lo, peak});
  }
  return out;
}

void Builder::AddLink(uint32_t l, const TimelineRecorder::PortLog& log) {
  const Topology& topo = *in_.topology;
  const uint32_t node = topo.links()[l].src;
  const std::string link = topo.LinkName(l);
  const bool lanes = log.open.size() > 1;
  for (const auto& s : log.slices) {
    const uint32_t tid = kLinkTidBase + l * 64 + s.lg;
    const uint32_t track =
        Child(node, tid,
              lanes ? absl::StrCat("link ", link, " lg ", s.lg)
                    : absl::StrCat("link ", link));
    AddSlice(track, s.start, s.end, LinkSliceName(s),
             {{"instr", r_.PlaceOf(p_, s.op)},
              {"packets", s.packets},
              {"wire_bytes", s.wire_bytes}});
  }
  const uint32_t base = kCounterTidBase + l * 4;
  if (!log.slices.empty()) {
    AddCounter(Child(node, base, absl::StrCat("utilisation % ", link), true),
               Utilisation(log.slices, in_.net->lane_groups(), util_from_,
                           util_to_, util_bin_));
  }
  if (!log.credit.empty()) {
    AddCounter(Child(node, base + 1,
                     absl::StrCat("peak credit bytes in use ", link), true),
               PeakPerBin(log.credit, util_from_, util_to_, util_bin_));
  }
  if (!log.queue.empty()) {
    AddCounter(
        Child(node, base + 2, absl::StrCat("peak packets queued ", link), true),
        PeakPerBin(log.queue, util_from_, util_to_, util_bin_));
  }
}

Model Builder::Finish() {
  // By time; at one time a slice that ends before one that begins, and the
  // longer of two that begin together first (it encloses the other).
  std::vector<uint32_t> order(m_.events.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Event& x = m_.events[a];
    const Event& y = m_.events[b];
    if (x.ts != y.ts) return x.ts < y.ts;
    return x.end > y.end;
  });
  Model out;
  out.tracks = std::move(m_.tracks);
  out.events.reserve(order.size());
  for (uint32_t i : order) out.events.push_back(std::move(m_.events[i]));
  return out;
}

}  // namespace

Model Build(const TimelineInputs& in) { return Builder(in).Build(); }

}  // namespace timeline
}  // namespace ccreplay
