#include "check/semantics.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collectives/collective.h"
#include "collectives/lower_internal.h"
#include "trace/rules.h"

namespace ccreplay {
namespace {

using lowering::ChunkOffset;
using lowering::ChunkSize;

// Contributions of a value: (chip, count) sorted by chip, counts >= 1.
using Contrib = std::vector<std::pair<uint32_t, uint32_t>>;

// What a range of memory holds. kData: at byte x of a range starting at s,
// the sum over (q, c) in contrib of c copies of chip q's input byte
// off + (x - s). kGarbage: never written (or derived from such bytes).
// kMixed: a sum of data at different input offsets.
struct Value {
  enum Kind : uint8_t { kGarbage, kData, kMixed };
  Kind kind = kGarbage;
  uint64_t off = 0;
  std::shared_ptr<const Contrib> contrib;

  Value Shifted(uint64_t d) const {
    Value v = *this;
    if (kind == kData) v.off += d;
    return v;
  }
};

bool SameContrib(const Value& a, const Value& b) {
  return a.contrib == b.contrib || *a.contrib == *b.contrib;
}

// a at position p equals b at position p (both already shifted there).
bool Equal(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  if (a.kind != Value::kData) return true;
  return a.off == b.off && SameContrib(a, b);
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

struct Seg {
  uint64_t len = 0;
  Value v;
};

// One chip's memory as intervals [start, end) -> value at start.
class Memory {
 public:
  std::vector<Seg> Read(uint64_t lo, uint64_t len) const {
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

  void Write(uint64_t lo, const std::vector<Seg>& segs, bool reduce) {
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

  void Init(uint64_t lo, uint64_t len, uint32_t chip) {
    Value v;
    v.kind = Value::kData;
    v.off = 0;
    v.contrib = std::make_shared<Contrib>(Contrib{{chip, 1}});
    Write(lo, {{len, v}}, false);
  }

 private:
  static std::vector<Seg> Combine(const std::vector<Seg>& a,
                                  const std::vector<Seg>& b) {
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

  void Split(uint64_t x) {
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
  void Coalesce(uint64_t lo, uint64_t hi) {
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
};

struct Item {
  bool data = false;
  uint32_t src_chip = 0, dst_chip = 0;
  uint32_t counter = 0;  // messages
  uint64_t src = 0, dst = 0, bytes = 0;
  bool reduce = false;
  std::vector<Seg> snapshot;
  int64_t src_stream = -1;  // global stream index of the issuer (Fence)
  int64_t dst_stream = -1;  // Receive's stream
  std::string place;
};

struct StreamState {
  uint32_t chip = 0;
  int index = 0;  // in the chip's program
  const v1::Stream* stream = nullptr;
  int pc = 0;
  uint64_t outstanding = 0;  // data items issued and not delivered
};

bool Overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) {
  return a < b + bn && b < a + an;
}

std::string Range(uint64_t lo, uint64_t len) {
  return absl::StrCat("[", lo, ", ", lo + len, ")");
}

absl::Status Hazard(absl::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat("semantics: ", what));
}

class Executor {
 public:
  Executor(const v1::Trace& t, const SemanticsOptions& o)
      : t_(t), opts_(o), rng_(o.seed) {}

  absl::Status Run();

 private:
  std::string Place(const StreamState& s, int pc) const {
    return PlaceText(s.chip, s.stream->id(), pc,
                     InstructionKindName(s.stream->instructions(pc)));
  }
  bool Runnable(const StreamState& s) const;
  absl::Status Step(size_t si);
  absl::Status Deliver(size_t channel);
  absl::Status Post(uint32_t src, uint32_t qp, uint32_t dst, Item item);
  absl::Status CheckResult() const;

  const v1::Trace& t_;
  SemanticsOptions opts_;
  std::mt19937_64 rng_;
  uint32_t n_ = 0;
  std::vector<Memory> mem_;
  std::vector<std::map<uint32_t, uint64_t>> counters_;
  std::vector<StreamState> streams_;
  std::vector<Item> items_;
  // In-flight data items per chip: writes into it, reads from it.
  std::vector<std::vector<uint64_t>> writes_in_, reads_out_;
  // Channels: (src, qp, dst) -> FIFO of item ids.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> channel_index_;
  std::vector<std::deque<uint64_t>> channels_;
  std::set<std::pair<uint64_t, size_t>> heads_;  // (item id, channel)
  // Send/Receive matching per (src, dst).
  std::map<std::pair<uint32_t, uint32_t>, std::deque<std::pair<size_t, int>>>
      sends_, receives_;
};

bool Executor::Runnable(const StreamState& s) const {
  if (s.pc >= s.stream->instructions_size()) return false;
  const v1::Instruction& in = s.stream->instructions(s.pc);
  if (in.has_msg_wait()) {
    auto it = counters_[s.chip].find(in.msg_wait().qp_id());
    return it != counters_[s.chip].end() && it->second >= in.msg_wait().count();
  }
  if (in.has_fence()) return s.outstanding == 0;
  return true;
}

absl::Status Executor::Post(uint32_t src, uint32_t qp, uint32_t dst,
                            Item item) {
  const uint64_t id = items_.size();
  if (item.data) {
    // Read after write: my source has a write into it in flight.
    for (uint64_t w : writes_in_[src]) {
      const Item& o = items_[w];
      if (Overlap(o.dst, o.bytes, item.src, item.bytes)) {
        return Hazard(absl::StrCat(
            item.place, " reads ", Range(item.src, item.bytes), " of chip ",
            src, " while a write into ", Range(o.dst, o.bytes), " by ", o.place,
            " is in flight"));
      }
    }
    for (uint64_t w : writes_in_[dst]) {
      const Item& o = items_[w];
      if (Overlap(o.dst, o.bytes, item.dst, item.bytes) &&
          !(o.reduce && item.reduce)) {
        return Hazard(absl::StrCat(
            item.place, " writes ", Range(item.dst, item.bytes), " of chip ",
            dst, " while a write into ", Range(o.dst, o.bytes), " by ", o.place,
            " is in flight: the result depends on "
            "their order"));
      }
    }
    item.snapshot = mem_[src].Read(item.src, item.bytes);
    writes_in_[dst].push_back(id);
    reads_out_[src].push_back(id);
  }
  items_.push_back(std::move(item));
  const auto key = std::make_tuple(src, qp, dst);
  auto it = channel_index_.find(key);
  if (it == channel_index_.end()) {
    it = channel_index_.emplace(key, channels_.size()).first;
    channels_.emplace_back();
  }
  std::deque<uint64_t>& ch = channels_[it->second];
  if (ch.empty()) heads_.insert({id, it->second});
  ch.push_back(id);
  return absl::OkStatus();
}

absl::Status Executor::Step(size_t si) {
  StreamState& s = streams_[si];
  const int pc = s.pc++;
  const v1::Instruction& in = s.stream->instructions(pc);
  const uint32_t chip = s.chip;
  auto check_chip = [&](uint32_t c) -> absl::Status {
    if (c >= n_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "semantics: ", Place(s, pc), ": chip ", c, " out of range"));
    }
    return absl::OkStatus();
  };
  switch (in.kind_case()) {
    case v1::Instruction::kMsgWait:
      counters_[chip][in.msg_wait().qp_id()] -= in.msg_wait().count();
      return absl::OkStatus();
    case v1::Instruction::kFence:
      return absl::OkStatus();
    case v1::Instruction::kMsgSend: {
      Item item;
      item.src_chip = item.dst_chip = chip;
      item.counter = in.msg_send().dst_qp_id();
      item.place = Place(s, pc);
      return Post(chip, in.msg_send().qp_id(), chip, std::move(item));
    }
    case v1::Instruction::kRemoteMsgSend: {
      const auto& m = in.remote_msg_send();
      if (auto st = check_chip(m.dst_chip()); !st.ok()) return st;
      Item item;
      item.src_chip = chip;
      item.dst_chip = m.dst_chip();
      item.counter = m.dst_qp_id();
      item.place = Place(s, pc);
      return Post(chip, m.qp_id(), m.dst_chip(), std::move(item));
    }
    case v1::Instruction::kTransfer: {
      const auto& tr = in.transfer();
      if (auto st = check_chip(tr.dst_chip()); !st.ok()) return st;
      Item item;
      item.data = true;
      item.src_chip = chip;
      item.dst_chip = tr.dst_chip();
      item.src = tr.src_addr();
      item.dst = tr.dst_addr();
      item.bytes = tr.bytes();
      item.reduce = tr.reduce() == v1::REDUCE_SUM;
      item.src_stream = static_cast<int64_t>(si);
      item.place = Place(s, pc);
      ++s.outstanding;
      return Post(chip, tr.qp_id(), tr.dst_chip(), std::move(item));
    }
    case v1::Instruction::kSend:
    case v1::Instruction::kReceive: {
      const bool send = in.has_send();
      const uint32_t peer =
          send ? in.send().dst_chip() : in.receive().src_chip();
      if (auto st = check_chip(peer); !st.ok()) return st;
      const std::pair<uint32_t, uint32_t> key =
          send ? std::make_pair(chip, peer) : std::make_pair(peer, chip);
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
      const v1::Receive& rv =
          streams_[r_si].stream->instructions(r_pc).receive();
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
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("semantics: ", Place(s, pc), ": empty instruction"));
  }
}

absl::Status Executor::Deliver(size_t c) {
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

// What chip `chip`'s output must hold, as segments.
absl::Status Expected(const v1::CollectiveInfo& c, uint32_t n, uint32_t chip,
                      std::vector<Seg>* out) {
  const uint32_t g = c.group_size() == 0 ? n : c.group_size();
  const uint32_t base = chip - chip % g;
  const uint32_t r = chip % g;
  const uint64_t m = c.bytes();
  const uint64_t out_bytes = c.buffers(static_cast<int>(chip)).output().bytes();
  auto data = [](uint64_t off, Contrib contrib) {
    Value v;
    v.kind = Value::kData;
    v.off = off;
    v.contrib = std::make_shared<Contrib>(std::move(contrib));
    return v;
  };
  auto one = [&](uint32_t q, uint64_t off) { return data(off, {{q, 1}}); };
  Contrib all;
  for (uint32_t q = 0; q < g; ++q) all.emplace_back(base + q, 1);
  auto in_bytes = [&](uint32_t q) {
    return c.buffers(static_cast<int>(q)).input().bytes();
  };
  out->clear();
  switch (c.op()) {
    case v1::ALLREDUCE:
      out->push_back({m, data(0, all)});
      break;
    case v1::ALLGATHER:
      for (uint32_t q = 0; q < g; ++q)
        out->push_back({in_bytes(base + q), one(base + q, 0)});
      break;
    case v1::REDUCESCATTER:
      out->push_back({ChunkSize(m, g, r), data(ChunkOffset(m, g, r), all)});
      break;
    case v1::ALLTOALL:
      for (uint32_t q = 0; q < g; ++q) {
        out->push_back(
            {ChunkSize(m, g, r), one(base + q, ChunkOffset(m, g, r))});
      }
      break;
    case v1::ALLTOALLV: {
      if (c.alltoallv_bytes_size() != static_cast<int>(uint64_t{g} * g)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "semantics: header.collective.alltoallv_bytes has ",
            c.alltoallv_bytes_size(), " entries, want ", uint64_t{g} * g));
      }
      for (uint32_t q = 0; q < g; ++q) {
        uint64_t src_off = 0;
        for (uint32_t p = 0; p < r; ++p)
          src_off += c.alltoallv_bytes(static_cast<int>(q * g + p));
        out->push_back({c.alltoallv_bytes(static_cast<int>(q * g + r)),
                        one(base + q, src_off)});
      }
      break;
    }
    case v1::BROADCAST:
      out->push_back({m, one(base + c.root(), 0)});
      break;
    case v1::REDUCE:
      if (r == c.root()) out->push_back({m, data(0, all)});
      break;
    case v1::P2P:
      if (r == c.peer()) out->push_back({m, one(base + c.root(), 0)});
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("semantics: cannot check collective '",
                       CollectiveOpName(c.op()), "'"));
  }
  uint64_t total = 0;
  for (const Seg& s : *out) total += s.len;
  if (total != out_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("semantics: header.collective.buffers[", chip,
                     "].output has ", out_bytes, " bytes, but ",
                     CollectiveOpName(c.op()), " defines ", total));
  }
  return absl::OkStatus();
}

absl::Status Executor::CheckResult() const {
  const v1::CollectiveInfo& c = t_.header().collective();
  std::vector<Seg> want;
  for (uint32_t chip = 0; chip < n_; ++chip) {
    if (auto s = Expected(c, n_, chip, &want); !s.ok()) return s;
    const v1::BufferRange& ob = c.buffers(static_cast<int>(chip)).output();
    const std::vector<Seg> got = mem_[chip].Read(ob.addr(), ob.bytes());
    // Walk both partitions of the output; report the first difference.
    size_t i = 0, j = 0;
    uint64_t ia = 0, jb = 0, pos = ob.addr();
    while (i < got.size() && j < want.size()) {
      if (want[j].len == 0) {
        ++j;
        continue;
      }
      const uint64_t n = std::min(got[i].len - ia, want[j].len - jb);
      const Value a = got[i].v.Shifted(ia);
      const Value b = want[j].v.Shifted(jb);
      if (!Equal(a, b)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "semantics: ", CollectiveOpName(c.op()), " chip ", chip, " output ",
            Range(pos, n), ": holds ", Describe(a), ", want ", Describe(b)));
      }
      pos += n;
      ia += n;
      jb += n;
      if (ia == got[i].len) ++i, ia = 0;
      if (jb == want[j].len) ++j, jb = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status Executor::Run() {
  const v1::TraceHeader& h = t_.header();
  if (!h.has_collective()) {
    return absl::InvalidArgumentError(
        "semantics: the trace header has no collective to check against");
  }
  const v1::CollectiveInfo& c = h.collective();
  n_ = h.num_chips();
  const uint32_t g = c.group_size() == 0 ? n_ : c.group_size();
  if (n_ == 0 || g == 0 || n_ % g != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("semantics: group_size ", c.group_size(),
                     " does not divide ", n_, " chips"));
  }
  if (c.buffers_size() != static_cast<int>(n_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("semantics: header.collective has ", c.buffers_size(),
                     " buffers, want one per chip (", n_, ")"));
  }
  mem_.resize(n_);
  counters_.resize(n_);
  writes_in_.resize(n_);
  reads_out_.resize(n_);
  for (uint32_t i = 0; i < n_; ++i) {
    const v1::ChipBuffers& b = c.buffers(static_cast<int>(i));
    if (b.chip() != i) {
      return absl::InvalidArgumentError(
          absl::StrCat("semantics: header.collective.buffers[", i,
                       "] is for chip ", b.chip()));
    }
    mem_[i].Init(b.input().addr(), b.input().bytes(), i);
  }
  for (const v1::ChipProgram& p : t_.chips()) {
    for (int s = 0; s < p.streams_size(); ++s) {
      StreamState st;
      st.chip = p.chip();
      st.index = s;
      st.stream = &p.streams(s);
      streams_.push_back(st);
    }
  }
  for (;;) {
    if (!opts_.random) {
      bool stepped = true;
      while (stepped) {
        stepped = false;
        for (size_t si = 0; si < streams_.size(); ++si) {
          while (Runnable(streams_[si])) {
            if (auto s = Step(si); !s.ok()) return s;
            stepped = true;
          }
        }
      }
      if (heads_.empty()) break;
      if (auto s = Deliver(heads_.begin()->second); !s.ok()) return s;
      continue;
    }
    std::vector<size_t> runnable;
    for (size_t si = 0; si < streams_.size(); ++si) {
      if (Runnable(streams_[si])) runnable.push_back(si);
    }
    const size_t total = runnable.size() + heads_.size();
    if (total == 0) break;
    size_t pick = std::uniform_int_distribution<size_t>(0, total - 1)(rng_);
    if (pick < runnable.size()) {
      if (auto s = Step(runnable[pick]); !s.ok()) return s;
    } else {
      auto it = heads_.begin();
      std::advance(it, pick - runnable.size());
      if (auto s = Deliver(it->second); !s.ok()) return s;
    }
  }
  std::vector<std::string> stuck;
  for (const StreamState& s : streams_) {
    if (s.pc < s.stream->instructions_size()) {
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
  return CheckResult();
}

}  // namespace

absl::Status VerifySemantics(const v1::Trace& trace,
                             const SemanticsOptions& options) {
  Executor e(trace, options);
  return e.Run();
}

}  // namespace ccreplay
