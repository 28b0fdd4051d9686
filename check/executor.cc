#include "check/executor.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "trace/rules.h"

namespace ccreplay {
namespace {

bool SameContrib(const Value& a, const Value& b) {
  return a.contrib == b.contrib || *a.contrib == *b.contrib;
}

// a (of length len) is continued by b.
bool Continues(const Value& a, uint64_t len, const Value& b) {
  if (a.kind != b.kind) return false;
  if (a.kind != Value::kData) return true;
  return a.off + len == b.off && SameContrib(a, b);
}

Value Sum(const Value& a, const Value& b) {
  if (a.kind == Value::kGarbage || b.kind == Value::kGarbage) return Value{};
  if (a.kind == Value::kMixed || b.kind == Value::kMixed || a.off != b.off) {
    Value v;
    v.kind = Value::kMixed;
    return v;
  }
  auto c = std::make_shared<Contrib>();
  const Contrib& x = *a.contrib;
  const Contrib& y = *b.contrib;
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (j == y.size() || (i < x.size() && x[i].first < y[j].first)) {
      c->push_back(x[i++]);
    } else if (i == x.size() || y[j].first < x[i].first) {
      c->push_back(y[j++]);
    } else {
      c->emplace_back(x[i].first, x[i].second + y[j].second);
      ++i;
      ++j;
    }
  }
  Value v;
  v.kind = Value::kData;
  v.off = a.off;
  v.contrib = std::move(c);
  return v;
}

std::vector<Seg> Combine(const std::vector<Seg>& a, const std::vector<Seg>& b) {
  std::vector<Seg> out;
  size_t i = 0, j = 0;
  uint64_t ia = 0, jb = 0;  // consumed within a[i], b[j]
  while (i < a.size() && j < b.size()) {
    const uint64_t n = std::min(a[i].len - ia, b[j].len - jb);
    out.push_back({n, Sum(a[i].v.Shifted(ia), b[j].v.Shifted(jb))});
    ia += n;
    jb += n;
    if (ia == a[i].len) ++i, ia = 0;
    if (jb == b[j].len) ++j, jb = 0;
  }
  return out;
}

}  // namespace

// a at position p equals b at position p (both already shifted there).
bool Equal(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  if (a.kind != Value::kData) return true;
  return a.off == b.off && SameContrib(a, b);
}

std::string Describe(const Value& v) {
  if (v.kind == Value::kGarbage) return "uninitialised data";
  if (v.kind == Value::kMixed) return "a sum of data at different offsets";
  const Contrib& c = *v.contrib;
  if (c.size() == 1 && c[0].second == 1) {
    return absl::StrCat("chip ", c[0].first, "'s input from offset ", v.off);
  }
  // Runs of consecutive chips counted once print as "a-b".
  std::vector<std::string> parts;
  for (size_t i = 0; i < c.size();) {
    if (c[i].second != 1) {
      parts.push_back(absl::StrCat(c[i].first, " (x", c[i].second, ")"));
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < c.size() && c[j + 1].second == 1 &&
           c[j + 1].first == c[j].first + 1) {
      ++j;
    }
    parts.push_back(j == i ? absl::StrCat(c[i].first)
                           : absl::StrCat(c[i].first, "-", c[j].first));
    i = j + 1;
  }
  return absl::StrCat("the sum of the inputs of chips {",
                      absl::StrJoin(parts, ", "), "} from offset ", v.off);
}
std::vector<Seg> SymbolicMemory::Read(uint64_t lo, uint64_t len) const {
  std::vector<Seg> out;
  const uint64_t hi = lo + len;
  uint64_t pos = lo;
  auto it = m_.upper_bound(lo);
  if (it != m_.begin()) --it;
  for (; it != m_.end() && it->first < hi; ++it) {
    const uint64_t s = it->first, e = it->second.first;
    if (e <= pos) continue;
    if (s > pos) {
      out.push_back({s - pos, Value{}});
      pos = s;
    }
    const uint64_t end = std::min(e, hi);
    out.push_back({end - pos, it->second.second.Shifted(pos - s)});
    pos = end;
  }
  if (pos < hi) out.push_back({hi - pos, Value{}});
  return out;
}

void SymbolicMemory::Write(uint64_t lo, const std::vector<Seg>& segs,
                           bool reduce) {
  uint64_t len = 0;
  for (const Seg& s : segs) len += s.len;
  if (len == 0) return;
  std::vector<Seg> put = reduce ? Combine(Read(lo, len), segs) : segs;
  const uint64_t hi = lo + len;
  Split(lo);
  Split(hi);
  m_.erase(m_.lower_bound(lo), m_.lower_bound(hi));
  uint64_t pos = lo;
  for (const Seg& s : put) {
    if (s.len == 0) continue;
    m_.emplace(pos, std::make_pair(pos + s.len, s.v));
    pos += s.len;
  }
  Coalesce(lo, hi);
}

void SymbolicMemory::Init(uint64_t lo, uint64_t len, uint32_t chip) {
  Value v;
  v.kind = Value::kData;
  v.off = 0;
  v.contrib = std::make_shared<Contrib>(Contrib{{chip, 1}});
  Write(lo, {{len, v}}, false);
}

void SymbolicMemory::Split(uint64_t x) {
  auto it = m_.upper_bound(x);
  if (it == m_.begin()) return;
  --it;
  const uint64_t s = it->first, e = it->second.first;
  if (s >= x || e <= x) return;
  Value tail = it->second.second.Shifted(x - s);
  it->second.first = x;
  m_.emplace(x, std::make_pair(e, std::move(tail)));
}

// Merges pieces that continue each other around [lo, hi].
void SymbolicMemory::Coalesce(uint64_t lo, uint64_t hi) {
  auto it = m_.lower_bound(lo);
  if (it != m_.begin()) --it;
  while (it != m_.end() && it->first <= hi) {
    auto next = std::next(it);
    if (next == m_.end()) break;
    if (it->second.first == next->first &&
        Continues(it->second.second, it->second.first - it->first,
                  next->second.second)) {
      it->second.first = next->second.first;
      m_.erase(next);
    } else {
      it = next;
    }
  }
}

std::map<uint64_t, std::pair<uint64_t, Value>> m_;

namespace {

std::string Range(uint64_t lo, uint64_t len) {
  return absl::StrCat("[", lo, ", ", lo + len, ")");
}

bool Overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) {
  return a < b + bn && b < a + an;
}

absl::Status Hazard(absl::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat("semantics: ", what));
}

}  // namespace

Schedule LazySchedule() {
  return [](const std::vector<ExecAction>&) -> size_t {
    // Issues come first (lowest stream first); otherwise the heads are
    // sorted oldest first. An issue never enables another stream (only
    // deliveries do), so this runs each stream until it blocks.
    return 0;
  };
}

Schedule RandomSchedule(uint64_t seed) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [rng](const std::vector<ExecAction>& actions) {
    return std::uniform_int_distribution<size_t>(0, actions.size() - 1)(*rng);
  };
}

ReferenceExecutor::ReferenceExecutor(const v1::Trace& trace,
                                     const ExecOptions& options)
    : trace_(trace), options_(options) {
  n_ = trace.header().num_chips();
  mem_.resize(n_);
  counters_.resize(n_);
  writes_in_.resize(n_);
  reads_out_.resize(n_);
  for (const v1::ChipBuffers& b : trace.header().collective().buffers()) {
    if (b.chip() < n_) {
      mem_[b.chip()].Init(b.input().addr(), b.input().bytes(), b.chip());
    }
  }
  for (const v1::ChipProgram& p : trace.chips()) {
    for (const v1::Stream& s : p.streams()) {
      StreamState st;
      st.chip = p.chip();
      st.stream = &s;
      streams_.push_back(st);
    }
  }
}

std::string ReferenceExecutor::Place(const StreamState& s, int pc) const {
  return PlaceText(s.chip, s.stream->id(), pc,
                   InstructionKindName(s.stream->instructions(pc)));
}

bool ReferenceExecutor::Runnable(const StreamState& s) const {
  if (s.pc >= s.stream->instructions_size()) return false;
  const v1::Instruction& in = s.stream->instructions(s.pc);
  if (in.has_msg_wait()) {
    auto it = counters_[s.chip].find(in.msg_wait().qp_id());
    return it != counters_[s.chip].end() && it->second >= in.msg_wait().count();
  }
  if (in.has_fence()) return s.outstanding == 0;
  return true;
}

std::vector<ExecAction> ReferenceExecutor::Actions() const {
  std::vector<ExecAction> out;
  for (size_t si = 0; si < streams_.size(); ++si) {
    if (!Runnable(streams_[si])) continue;
    ExecAction a;
    a.kind = ExecAction::kIssue;
    a.stream = si;
    out.push_back(a);
  }
  for (const auto& [item, channel] : heads_) {
    ExecAction a;
    a.kind = ExecAction::kDeliver;
    a.channel = channel;
    a.key = channel_keys_[channel];
    a.item = item;
    out.push_back(a);
  }
  return out;
}

absl::Status ReferenceExecutor::Run(const Schedule& schedule) {
  for (;;) {
    const std::vector<ExecAction> actions = Actions();
    if (actions.empty()) break;
    const ExecAction& a = actions[schedule(actions)];
    absl::Status s =
        a.kind == ExecAction::kIssue ? Issue(a.stream) : Deliver(a.channel);
    if (!s.ok()) return s;
  }
  return CheckEnd();
}

absl::Status ReferenceExecutor::CheckPostHazards(uint32_t src, uint32_t dst,
                                                 const Item& item) const {
  // Read after write: my source has a write into it in flight.
  for (uint64_t w : writes_in_[src]) {
    const Item& o = items_[w];
    if (Overlap(o.dst, o.bytes, item.src, item.bytes)) {
      return Hazard(absl::StrCat(item.place, " reads ",
                                 Range(item.src, item.bytes), " of chip ", src,
                                 " while a write into ", Range(o.dst, o.bytes),
                                 " by ", o.place, " is in flight"));
    }
  }
  for (uint64_t w : writes_in_[dst]) {
    const Item& o = items_[w];
    if (Overlap(o.dst, o.bytes, item.dst, item.bytes) &&
        !(o.reduce && item.reduce)) {
      return Hazard(absl::StrCat(
          item.place, " writes ", Range(item.dst, item.bytes), " of chip ", dst,
          " while a write into ", Range(o.dst, o.bytes), " by ", o.place,
          " is in flight: the result depends on their order"));
    }
  }
  return absl::OkStatus();
}

absl::Status ReferenceExecutor::Post(uint32_t src, uint32_t qp, uint32_t dst,
                                     Item item) {
  if (src >= n_ || dst >= n_) {  // a guard: the trace should be validated
    return absl::InvalidArgumentError(
        absl::StrCat("semantics: ", item.place, ": chip ", std::max(src, dst),
                     " out of range [0, ", n_, ")"));
  }
  const uint64_t id = items_.size();
  if (item.data) {
    if (absl::Status s = CheckPostHazards(src, dst, item); !s.ok()) return s;
    item.snapshot = mem_[src].Read(item.src, item.bytes);
    writes_in_[dst].push_back(id);
    reads_out_[src].push_back(id);
  }
  items_.push_back(std::move(item));
  const ChannelKey key{src, options_.per_qp ? qp : 0, dst};
  auto it = channel_index_.find(key);
  if (it == channel_index_.end()) {
    it = channel_index_.emplace(key, channels_.size()).first;
    channels_.emplace_back();
    channel_keys_.push_back(key);
  }
  std::deque<uint64_t>& ch = channels_[it->second];
  if (ch.empty()) heads_.insert({id, it->second});
  ch.push_back(id);
  return absl::OkStatus();
}

absl::Status ReferenceExecutor::Issue(size_t si) {
  StreamState& s = streams_[si];
  const int pc = s.pc++;
  const v1::Instruction& in = s.stream->instructions(pc);
  const uint32_t chip = s.chip;
  Item item;
  item.src_chip = chip;
  item.place = Place(s, pc);
  switch (in.kind_case()) {
    case v1::Instruction::kMsgWait:
      counters_[chip][in.msg_wait().qp_id()] -= in.msg_wait().count();
      return absl::OkStatus();
    case v1::Instruction::kFence:
      return absl::OkStatus();
    case v1::Instruction::kMsgSend:
      item.dst_chip = chip;
      item.counter = in.msg_send().dst_qp_id();
      return Post(chip, in.msg_send().qp_id(), chip, std::move(item));
    case v1::Instruction::kRemoteMsgSend: {
      const v1::RemoteMsgSend& m = in.remote_msg_send();
      item.dst_chip = m.dst_chip();
      item.counter = m.dst_qp_id();
      return Post(chip, m.qp_id(), m.dst_chip(), std::move(item));
    }
    case v1::Instruction::kTransfer: {
      const v1::Transfer& tr = in.transfer();
      item.data = true;
      item.dst_chip = tr.dst_chip();
      item.src = tr.src_addr();
      item.dst = tr.dst_addr();
      item.bytes = tr.bytes();
      item.reduce = tr.reduce() == v1::REDUCE_SUM;
      item.src_stream = static_cast<int64_t>(si);
      ++s.outstanding;
      return Post(chip, tr.qp_id(), tr.dst_chip(), std::move(item));
    }
    case v1::Instruction::kSend:
    case v1::Instruction::kReceive:
      return IssueTwoSided(si, in);
    case v1::Instruction::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("semantics: ", item.place, ": empty instruction"));
}

// A Send or a Receive: queued until its partner has issued, then one item.
absl::Status ReferenceExecutor::IssueTwoSided(size_t si,
                                              const v1::Instruction& in) {
  StreamState& s = streams_[si];
  const int pc = s.pc - 1;
  const bool send = in.has_send();
  const uint32_t peer = send ? in.send().dst_chip() : in.receive().src_chip();
  const std::pair<uint32_t, uint32_t> key =
      send ? std::make_pair(s.chip, peer) : std::make_pair(peer, s.chip);
  ++s.outstanding;
  (send ? sends_ : receives_)[key].push_back({si, pc});
  auto& ss = sends_[key];
  auto& rr = receives_[key];
  if (ss.empty() || rr.empty()) return absl::OkStatus();
  const auto [s_si, s_pc] = ss.front();
  const auto [r_si, r_pc] = rr.front();
  ss.pop_front();
  rr.pop_front();
  const v1::Send& sd = streams_[s_si].stream->instructions(s_pc).send();
  const v1::Receive& rv = streams_[r_si].stream->instructions(r_pc).receive();
  if (sd.bytes() != rv.bytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("semantics: ", Place(streams_[s_si], s_pc), " sends ",
                     sd.bytes(), " bytes but its matching ",
                     Place(streams_[r_si], r_pc), " expects ", rv.bytes()));
  }
  Item item;
  item.data = true;
  item.src_chip = key.first;
  item.dst_chip = key.second;
  item.src = sd.src_addr();
  item.dst = rv.dst_addr();
  item.bytes = sd.bytes();
  item.src_stream = static_cast<int64_t>(s_si);
  item.dst_stream = static_cast<int64_t>(r_si);
  item.place = Place(streams_[s_si], s_pc);
  return Post(key.first, sd.qp_id(), key.second, std::move(item));
}

absl::Status ReferenceExecutor::Deliver(size_t c) {
  std::deque<uint64_t>& ch = channels_[c];
  const uint64_t id = ch.front();
  heads_.erase({id, c});
  ch.pop_front();
  if (!ch.empty()) heads_.insert({ch.front(), c});
  Item& item = items_[id];
  if (!item.data) {
    ++counters_[item.dst_chip][item.counter];
    return absl::OkStatus();
  }
  auto drop = [](std::vector<uint64_t>& v, uint64_t x) {
    auto it = std::find(v.begin(), v.end(), x);
    if (it != v.end()) {
      *it = v.back();
      v.pop_back();
    }
  };
  drop(writes_in_[item.dst_chip], id);
  drop(reads_out_[item.src_chip], id);
  // Write after read: an in-flight transfer still reads what this write
  // changes.
  for (uint64_t r : reads_out_[item.dst_chip]) {
    const Item& o = items_[r];
    if (Overlap(o.src, o.bytes, item.dst, item.bytes)) {
      return Hazard(absl::StrCat(item.place, " writes ",
                                 Range(item.dst, item.bytes), " of chip ",
                                 item.dst_chip, " while ", o.place,
                                 " still reads ", Range(o.src, o.bytes)));
    }
  }
  mem_[item.dst_chip].Write(item.dst, item.snapshot, item.reduce);
  item.snapshot.clear();
  item.snapshot.shrink_to_fit();
  if (item.src_stream >= 0) --streams_[item.src_stream].outstanding;
  if (item.dst_stream >= 0) --streams_[item.dst_stream].outstanding;
  return absl::OkStatus();
}

// Nothing can move: every stream must have finished and every message been
// waited for.
absl::Status ReferenceExecutor::CheckEnd() const {
  std::vector<std::string> stuck;
  for (const StreamState& s : streams_) {
    if (s.pc >= s.stream->instructions_size()) continue;
    const v1::Instruction& in = s.stream->instructions(s.pc);
    std::string why;
    if (in.has_msg_wait()) {
      auto it = counters_[s.chip].find(in.msg_wait().qp_id());
      why = absl::StrCat(": waits for ", in.msg_wait().count(),
                         " message(s) on counter ", in.msg_wait().qp_id(),
                         ", has ",
                         it == counters_[s.chip].end() ? 0 : it->second);
    }
    stuck.push_back(absl::StrCat(Place(s, s.pc), why));
  }
  if (!stuck.empty()) {
    if (stuck.size() > 4) {
      const size_t more = stuck.size() - 4;
      stuck.resize(4);
      stuck.push_back(absl::StrCat("and ", more, " more"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("semantics: deadlock: ", absl::StrJoin(stuck, "; ")));
  }
  for (uint32_t i = 0; i < n_; ++i) {
    for (const auto& [counter, value] : counters_[i]) {
      if (value != 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("semantics: chip ", i, " counter ", counter,
                         " ends with ", value, " message(s) never waited for"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ccreplay
