#include "check/race.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "check/executor.h"

namespace ccreplay {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

uint64_t Key2(uint64_t a, uint64_t b) { return (a << 32) | b; }

// Where a data-moving instruction's data goes, for the write + msg rule: a
// message covers earlier data on its qp only if both go to the same chip. A
// Receive's data is moved by the sender's engine: no message of the
// receiving chip covers it.
uint32_t DataDest(const Instr& in) {
  return in.kind == OpKind::kReceive ? kNone : in.peer;
}

}  // namespace

// Everything the analysis needs besides the snapshots, built once. Kept out
// of the header: only the constructor uses it.
struct HbBuild {
  // Completion channels.
  // (g, qp, destination chip) -> channel: a message to chip d on qp q
  // covers exactly the channel's earlier data.
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t>
      channel_of;
  std::vector<uint32_t> channel_size;  // data instructions so far
  std::vector<std::vector<uint32_t>> stream_channels;  // per global stream
  // Message FIFO channels and counters.
  std::vector<std::vector<uint32_t>> fifo_msgs;      // global instrs, in order
  std::vector<uint32_t> fifo_stream;                 // global stream of a FIFO
  std::vector<std::vector<uint32_t>> counter_fifos;  // sorted by size, desc
  std::vector<uint64_t> counter_total;
  // Per global instruction: waits: counter id (kNone = no message ever);
  // messages: previous message of the FIFO channel (kNone = first).
  std::vector<uint32_t> aux;
  std::vector<uint64_t> demand;     // waits: messages consumed up to here
  std::vector<uint32_t> local;      // instruction index in its stream
  std::vector<uint32_t> stream_of;  // global stream of each instruction
  // Exclusions from the previous round: (wait, FIFO) -> how many of the
  // FIFO's last messages are issued only after the wait.
  absl::flat_hash_map<uint64_t, uint32_t> excluded;
  std::vector<bool> has_excluded;  // per global instruction (waits)

  // Indexing state.
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>,
                      uint32_t>
      fifo_of;  // (g, qp, dest chip, counter) -> FIFO channel
  absl::flat_hash_map<uint64_t, uint32_t> counter_of;  // (chip, ctr) -> id
  absl::flat_hash_map<uint64_t, uint64_t> consumed;    // (g, counter) -> D
  // Two-sided: (src, dst) -> sends / receives in trace order.
  struct Pair {
    std::vector<uint32_t> sends, receives;
    uint32_t send_stream = kNone, receive_stream = kNone;
    bool one_stream = true;
  };
  absl::flat_hash_map<uint64_t, Pair> pairs;

  // The id of counter `ctr` of chip `chip`, registering it if new.
  uint32_t CounterId(uint32_t chip, uint32_t ctr);
};

HappensBefore::HappensBefore(const Program& program, const RaceOptions& options)
    : program_(program), options_(options) {
  Run();
}

HappensBefore::~HappensBefore() = default;

void HappensBefore::Run() {
  if (!Build()) return;
  for (rounds_ = 1; Round(); ++rounds_) {
    if (rounds_ >= options_.max_rounds || !Refine()) break;
  }
}

uint32_t HappensBefore::Global(InstrRef r) const {
  return instr_base_[stream_base_[r.chip] + r.stream] + r.instr;
}

bool HappensBefore::Reached(InstrRef r) const {
  if (r.chip >= program_.num_chips ||
      r.stream >= program_.chips[r.chip].streams.size()) {
    return false;
  }
  return cursor_[stream_base_[r.chip] + r.stream] > r.instr;
}

bool HappensBefore::KnowsComplete(uint32_t snap, Witness w) const {
  if (snap == kNone || w.channel == kNone) return false;
  return snapshots_[static_cast<size_t>(snap) * clock_size_ + w.channel] >=
         w.ordinal;
}

void HappensBefore::WitnessesOf(uint32_t global, Witness out[2]) const {
  out[0] = own_[global];
  out[1] = Witness{};
  if (partner_[global] != kNone) out[1] = own_[partner_[global]];
}

bool HappensBefore::Ordered(InstrRef a, InstrRef b) const {
  if (!Reached(a) || !Reached(b)) return false;
  if (!MovesData(
          program_.chips[a.chip].streams[a.stream].instrs[a.instr].kind)) {
    return false;
  }
  return OrderedGlobal(Global(a), Global(b));
}

bool HappensBefore::OrderedGlobal(uint32_t ga, uint32_t gb) const {
  Witness w[2];
  WitnessesOf(ga, w);
  uint32_t snaps[2] = {snap_of_[gb], kNone};
  // A two-sided transfer's data moves only once both sides have posted.
  if (partner_[gb] != kNone) snaps[1] = snap_of_[partner_[gb]];
  for (uint32_t s : snaps) {
    for (const Witness& x : w) {
      if (KnowsComplete(s, x)) return true;
    }
  }
  return false;
}

bool HappensBefore::Build() {
  const uint64_t num_instrs = FlattenStreams();
  const auto num_streams = static_cast<uint32_t>(cursor_.size());
  if (num_instrs >= kNone) {
    complete_ = false;
    note_ = absl::StrCat("happens-before analysis skipped: ", num_instrs,
                         " instructions are more than it indexes");
    return false;
  }
  const auto n = static_cast<size_t>(num_instrs);
  own_.assign(n, Witness{});
  partner_.assign(n, kNone);
  snap_of_.assign(n, kNone);
  build_ = std::make_unique<HbBuild>();
  HbBuild& b = *build_;
  b.aux.assign(n, kNone);
  b.stream_of.assign(n, 0);
  b.has_excluded.assign(n, false);
  b.demand.assign(n, 0);
  b.local.assign(n, 0);
  b.stream_channels.resize(num_streams);
  for (uint32_t g = 0; g < num_streams; ++g) IndexStream(g);
  num_channels_ = static_cast<uint32_t>(b.channel_size.size());
  PairTwoSided();
  for (std::vector<uint32_t>& fifos : b.counter_fifos) {
    std::stable_sort(fifos.begin(), fifos.end(), [&](uint32_t x, uint32_t y) {
      return b.fifo_msgs[x].size() > b.fifo_msgs[y].size();
    });
  }
  // Clocks: completion channels, then one issue entry per stream.
  clock_size_ = static_cast<uint64_t>(num_channels_) + num_streams;
  if (static_cast<uint64_t>(num_streams) * clock_size_ >
      options_.max_clock_entries) {
    complete_ = false;
    note_ = absl::StrCat("happens-before analysis skipped: ", num_streams,
                         " streams x ", clock_size_,
                         " clock entries exceed the bound of ",
                         options_.max_clock_entries, " clock entries");
    return false;
  }
  return true;
}

uint64_t HappensBefore::FlattenStreams() {
  const Program& p = program_;
  stream_base_.resize(p.num_chips);
  uint32_t num_streams = 0;
  uint64_t num_instrs = 0;
  for (uint32_t c = 0; c < p.num_chips; ++c) {
    stream_base_[c] = num_streams;
    for (uint32_t s = 0; s < p.chips[c].streams.size(); ++s) {
      stream_chip_.push_back(c);
      stream_index_.push_back(s);
      instr_base_.push_back(static_cast<uint32_t>(num_instrs));
      num_instrs += p.chips[c].streams[s].instrs.size();
      ++num_streams;
    }
  }
  cursor_.assign(num_streams, 0);
  blocked_.assign(num_streams, BlockedOn{});
  unsatisfiable_.assign(num_streams, false);
  return num_instrs;
}

uint32_t HbBuild::CounterId(uint32_t chip, uint32_t ctr) {
  auto [it, inserted] = counter_of.try_emplace(
      Key2(chip, ctr), static_cast<uint32_t>(counter_fifos.size()));
  if (inserted) {
    counter_fifos.emplace_back();
    counter_total.push_back(0);
  }
  return it->second;
}

// Registers stream g's instructions: completion channels of its data,
// message FIFOs and counters, the demand of its waits.
void HappensBefore::IndexStream(uint32_t g) {
  HbBuild& b = *build_;
  const uint32_t chip = stream_chip_[g];
  const StreamProgram& sp = program_.chips[chip].streams[stream_index_[g]];
  for (uint32_t i = 0; i < sp.instrs.size(); ++i) {
    const Instr& in = sp.instrs[i];
    const uint32_t gi = instr_base_[g] + i;
    b.local[gi] = i;
    b.stream_of[gi] = g;
    if (MovesData(in.kind)) {
      IndexData(g, gi, in);
    } else if (IsMessage(in.kind)) {
      const uint32_t dest = MessageDest(chip, in);
      const uint32_t ctr = b.CounterId(dest, in.dst_qp);
      // FIFO: same sender stream, qp, destination chip (and counter).
      auto [it, inserted] =
          b.fifo_of.try_emplace(std::make_tuple(g, in.qp_id, dest, ctr),
                                static_cast<uint32_t>(b.fifo_msgs.size()));
      const uint32_t fifo = it->second;
      if (inserted) {
        b.fifo_msgs.emplace_back();
        b.fifo_stream.push_back(g);
        b.counter_fifos[ctr].push_back(fifo);
      }
      std::vector<uint32_t>& msgs = b.fifo_msgs[fifo];
      b.aux[gi] = msgs.empty() ? kNone : msgs.back();
      msgs.push_back(gi);
      ++b.counter_total[ctr];
    } else if (in.kind == OpKind::kMsgWait) {
      // A wait on a counter no message reaches is unsatisfiable
      // (counter_total 0).
      const uint32_t ctr = b.CounterId(chip, in.dst_qp);
      b.aux[gi] = ctr;
      uint64_t& d = b.consumed[Key2(g, ctr)];
      d += in.count;
      b.demand[gi] = d;
    }
  }
}

void HappensBefore::IndexData(uint32_t g, uint32_t gi, const Instr& in) {
  HbBuild& b = *build_;
  auto [it, inserted] =
      b.channel_of.try_emplace(std::make_tuple(g, in.qp_id, DataDest(in)),
                               static_cast<uint32_t>(b.channel_size.size()));
  const uint32_t ch = it->second;
  if (inserted) {
    b.channel_size.push_back(0);
    b.stream_channels[g].push_back(ch);
  }
  own_[gi] = Witness{ch, ++b.channel_size[ch]};
  if (in.kind == OpKind::kTransfer) return;
  const uint32_t chip = stream_chip_[g];
  const bool send = in.kind == OpKind::kSend;
  HbBuild::Pair& pr = b.pairs[send ? Key2(chip, in.peer) : Key2(in.peer, chip)];
  uint32_t& st = send ? pr.send_stream : pr.receive_stream;
  if (st != kNone && st != g) pr.one_stream = false;
  st = g;
  (send ? pr.sends : pr.receives).push_back(gi);
}

// The k-th Send pairs with the k-th Receive when each side is one stream.
void HappensBefore::PairTwoSided() {
  for (auto& [key, pr] : build_->pairs) {
    if (!pr.one_stream || pr.sends.size() != pr.receives.size()) continue;
    for (size_t i = 0; i < pr.sends.size(); ++i) {
      partner_[pr.sends[i]] = pr.receives[i];
      partner_[pr.receives[i]] = pr.sends[i];
    }
  }
}

// The working state of one Round(): per-stream vector clocks and the queue
// of streams that can run.
struct HbRound {
  std::vector<uint32_t> cur;        // num_streams x clock_size_
  std::vector<bool> dirty;          // clock changed since its last snapshot
  std::vector<uint32_t> last_snap;  // per stream
  std::vector<uint32_t> issued;     // per completion channel
  std::vector<std::vector<uint32_t>> waiters;  // per stream: blocked on it
  std::deque<uint32_t> queue;
};

bool HappensBefore::Round() {
  const auto num_streams = static_cast<uint32_t>(cursor_.size());
  std::fill(cursor_.begin(), cursor_.end(), 0);
  std::fill(blocked_.begin(), blocked_.end(), BlockedOn{});
  std::fill(unsatisfiable_.begin(), unsatisfiable_.end(), false);
  std::fill(snap_of_.begin(), snap_of_.end(), kNone);
  snapshots_.clear();
  // Messages' carried completions are recomputed below.
  for (uint32_t g = 0; g < num_streams; ++g) {
    const StreamProgram& sp =
        program_.chips[stream_chip_[g]].streams[stream_index_[g]];
    for (uint32_t i = 0; i < sp.instrs.size(); ++i) {
      if (IsMessage(sp.instrs[i].kind)) own_[instr_base_[g] + i] = Witness{};
    }
  }
  HbRound r;
  r.cur.assign(static_cast<size_t>(num_streams) * clock_size_, 0);
  r.dirty.assign(num_streams, false);
  r.last_snap.assign(num_streams, kNone);
  r.issued.assign(num_channels_, 0);
  r.waiters.resize(num_streams);
  for (uint32_t g = 0; g < num_streams; ++g) r.queue.push_back(g);
  while (!r.queue.empty() && complete_) {
    const uint32_t g = r.queue.front();
    r.queue.pop_front();
    blocked_[g] = BlockedOn{};
    RunStream(&r, g);
    // Wake the streams waiting for a message this stream has now issued.
    std::vector<uint32_t>& ws = r.waiters[g];
    size_t kept = 0;
    for (uint32_t w : ws) {
      if (blocked_[w].stream == g && cursor_[g] > blocked_[w].instr) {
        r.queue.push_back(w);
      } else if (blocked_[w].stream == g) {
        ws[kept++] = w;
      }
    }
    ws.resize(kept);
  }
  return complete_;
}

// Issues stream g's instructions until it blocks on a wait or ends.
void HappensBefore::RunStream(HbRound* r, uint32_t g) {
  const HbBuild& b = *build_;
  const StreamProgram& sp =
      program_.chips[stream_chip_[g]].streams[stream_index_[g]];
  const auto len = static_cast<uint32_t>(sp.instrs.size());
  uint32_t* clock = r->cur.data() + g * clock_size_;
  while (cursor_[g] < len) {
    const uint32_t i = cursor_[g];
    const uint32_t gi = instr_base_[g] + i;
    const Instr& in = sp.instrs[i];
    if (in.kind == OpKind::kMsgWait) {
      if (!TryWait(r, g, gi)) return;
    } else if (in.kind == OpKind::kFence) {
      for (uint32_t ch : b.stream_channels[g]) {
        clock[ch] = std::max(clock[ch], r->issued[ch]);
      }
      r->dirty[g] = true;
    } else {
      if (!TakeSnapshot(r, g)) {
        complete_ = false;
        note_ =
            absl::StrCat("happens-before analysis stopped: more than ",
                         options_.max_clock_entries, " clock entries needed");
        return;
      }
      snap_of_[gi] = r->last_snap[g];
      if (MovesData(in.kind)) {
        ++r->issued[own_[gi].channel];
      } else {
        own_[gi] = Carried(*r, g, gi, in);
      }
    }
    ++cursor_[g];
  }
}

// A message: which completions it carries to its receiver.
HappensBefore::Witness HappensBefore::Carried(const HbRound& r, uint32_t g,
                                              uint32_t gi,
                                              const Instr& in) const {
  const HbBuild& b = *build_;
  const uint32_t dest = MessageDest(stream_chip_[g], in);
  auto it = b.channel_of.find(std::make_tuple(g, in.qp_id, dest));
  Witness w;
  if (it != b.channel_of.end()) {
    // Delivered behind all of this stream's data on the qp bound for `dest`
    // so far.
    w = Witness{it->second, r.issued[it->second]};
  }
  const uint32_t prev = b.aux[gi];
  if (prev != kNone && own_[prev].channel != kNone) {
    // FIFO: delivered after the previous message of its channel.
    w.channel = own_[prev].channel;
    w.ordinal = std::max(w.ordinal, own_[prev].ordinal);
  }
  return w;
}

// Makes stream g's current clock a snapshot, taking a new one if it changed;
// false past the bound on clock entries.
bool HappensBefore::TakeSnapshot(HbRound* r, uint32_t g) {
  if (!r->dirty[g]) return true;
  const uint64_t v = clock_size_;
  if (snapshots_.size() + v > options_.max_clock_entries) return false;
  const uint32_t* clock = r->cur.data() + g * v;
  r->last_snap[g] = static_cast<uint32_t>(snapshots_.size() / (v ? v : 1));
  snapshots_.insert(snapshots_.end(), clock, clock + v);
  r->dirty[g] = false;
  return true;
}

// Stream g has seen message m delivered: it knows what m's sender knew.
void HappensBefore::JoinMessage(HbRound* r, uint32_t g, uint32_t m) {
  const HbBuild& b = *build_;
  const uint64_t v = clock_size_;
  uint32_t* c = r->cur.data() + g * v;
  const uint32_t s = snap_of_[m];
  if (s != kNone) {
    const uint32_t* o = snapshots_.data() + static_cast<size_t>(s) * v;
    for (uint64_t i = 0; i < v; ++i) c[i] = std::max(c[i], o[i]);
  }
  const Witness w = own_[m];
  if (w.channel != kNone) c[w.channel] = std::max(c[w.channel], w.ordinal);
  // The sender had issued the message, so everything before it.
  uint32_t& issued_by = c[num_channels_ + b.stream_of[m]];
  issued_by = std::max(issued_by, b.local[m] + 1);
  r->dirty[g] = true;
}

// Tries to release the MsgWait `gi` of stream g; false if blocked.
bool HappensBefore::TryWait(HbRound* r, uint32_t g, uint32_t gi) {
  const HbBuild& b = *build_;
  const uint32_t ctr = b.aux[gi];
  const std::vector<uint32_t>& fifos = b.counter_fifos[ctr];
  auto excluded = [&](uint32_t f) -> uint64_t {
    if (!b.has_excluded[gi]) return 0;
    auto it = b.excluded.find(Key2(gi, f));
    return it == b.excluded.end() ? 0 : it->second;
  };
  uint64_t total = b.counter_total[ctr];
  if (b.has_excluded[gi]) {
    for (uint32_t f : fifos) total -= excluded(f);
  }
  const uint64_t d = b.demand[gi];
  if (total < d) {
    unsatisfiable_[g] = true;
    return false;
  }
  const uint64_t slack = total - d;
  for (uint32_t f : fifos) {
    const std::vector<uint32_t>& msgs = b.fifo_msgs[f];
    const uint64_t eligible = msgs.size() - excluded(f);
    if (eligible <= slack) {
      // FIFOs are sorted by size: without exclusions no later one counts.
      if (!b.has_excluded[gi]) break;
      continue;
    }
    // The k-th message of this FIFO is delivered in every schedule that
    // releases the wait: at most `slack` deliveries can come from elsewhere.
    const uint64_t k = eligible - slack;
    const uint32_t m = msgs[static_cast<size_t>(k - 1)];
    const uint32_t mg = b.fifo_stream[f];
    if (cursor_[mg] <= b.local[m]) {
      blocked_[g] = BlockedOn{mg, b.local[m]};
      r->waiters[mg].push_back(g);
      return false;
    }
    JoinMessage(r, g, m);
  }
  return true;
}

bool HappensBefore::Refine() {
  HbBuild& b = *build_;
  const uint64_t v = clock_size_;
  // Issued only after wait `w` (global instruction gi_w of stream g_w)?
  auto after = [&](uint32_t g_w, uint32_t gi_w, uint32_t m) {
    const uint32_t gm = b.stream_of[m];
    if (gm == g_w) return b.local[m] > b.local[gi_w];
    const uint32_t s = snap_of_[m];
    return s != kNone &&
           snapshots_[static_cast<size_t>(s) * v + num_channels_ + g_w] >
               b.local[gi_w];
  };
  absl::flat_hash_map<uint64_t, uint32_t> next;
  std::vector<bool> has(b.has_excluded.size(), false);
  uint64_t work = 0;
  for (uint32_t g = 0; g < cursor_.size(); ++g) {
    const StreamProgram& sp =
        program_.chips[stream_chip_[g]].streams[stream_index_[g]];
    for (uint32_t i = 0; i < sp.instrs.size(); ++i) {
      if (sp.instrs[i].kind != OpKind::kMsgWait) continue;
      const uint32_t gi = instr_base_[g] + i;
      for (uint32_t f : b.counter_fifos[b.aux[gi]]) {
        if (++work > options_.max_pairs) return false;  // stay sound, stop
        const std::vector<uint32_t>& msgs = b.fifo_msgs[f];
        const uint32_t fg = b.fifo_stream[f];
        // Without the last message issued, later ones are unknown: keep all
        // (unless they follow the wait in its own stream).
        if (fg != g && cursor_[fg] <= b.local[msgs.back()]) continue;
        // Clocks grow along a stream, so "after" holds for a suffix.
        size_t lo = 0, hi = msgs.size();
        while (lo < hi) {
          const size_t mid = (lo + hi) / 2;
          if (after(g, gi, msgs[mid])) {
            hi = mid;
          } else {
            lo = mid + 1;
          }
        }
        if (lo < msgs.size()) {
          next[Key2(gi, f)] = static_cast<uint32_t>(msgs.size() - lo);
          has[gi] = true;
        }
      }
    }
  }
  if (next == b.excluded) return false;
  b.excluded = std::move(next);
  b.has_excluded = std::move(has);
  return true;
}

// One GMEM access of a reached data-moving instruction.
struct HbAccess {
  uint64_t lo, hi;
  uint32_t chip;
  uint32_t global;
  uint32_t g;
  bool write, reduce;
};

HbResult HappensBefore::Analyze() const {
  HbResult r;
  r.complete = complete_;
  r.note = note_;
  if (complete_) FindWaitProblems(&r);
  FindRaces(&r);
  std::sort(r.races.begin(), r.races.end(),
            [](const MemoryRace& x, const MemoryRace& y) {
              if (!(x.second == y.second)) return x.second < y.second;
              return x.first < y.first;
            });
  return r;
}

InstrRef HappensBefore::RefOf(uint32_t g, uint32_t i) const {
  return InstrRef{stream_chip_[g], stream_index_[g], i};
}

// Unsatisfiable waits, and the cycles of the blocked streams, which form a
// functional graph (each waits on one stream).
void HappensBefore::FindWaitProblems(HbResult* r) const {
  const auto num_streams = static_cast<uint32_t>(cursor_.size());
  std::vector<int> cycle_of(num_streams, -1);
  std::vector<uint8_t> state(num_streams, 0);  // 0 new, 1 on path, 2 done
  auto blocked = [&](uint32_t g) {
    const auto len = static_cast<uint32_t>(program_.chips[stream_chip_[g]]
                                               .streams[stream_index_[g]]
                                               .instrs.size());
    return cursor_[g] < len && !unsatisfiable_[g] &&
           blocked_[g].stream != kNone;
  };
  for (uint32_t g = 0; g < num_streams; ++g) {
    if (unsatisfiable_[g]) r->unsatisfiable.push_back(RefOf(g, cursor_[g]));
  }
  for (uint32_t g0 = 0; g0 < num_streams; ++g0) {
    if (state[g0] != 0 || !blocked(g0)) continue;
    std::vector<uint32_t> path;
    uint32_t g = g0;
    int target = -1;
    while (true) {
      if (!blocked(g)) break;  // behind an unsatisfiable wait
      if (state[g] == 2) {
        target = cycle_of[g];
        break;
      }
      if (state[g] == 1) {
        // A new cycle: from g to the end of the path.
        const auto start = static_cast<size_t>(
            std::find(path.begin(), path.end(), g) - path.begin());
        target = static_cast<int>(r->cycles.size());
        WaitCycle cyc;
        for (size_t i = start; i < path.size(); ++i) {
          const uint32_t s = path[i];
          cyc.links.push_back(
              WaitCycle::Link{RefOf(s, cursor_[s]),
                              RefOf(blocked_[s].stream, blocked_[s].instr)});
          cycle_of[s] = target;
          state[s] = 2;
        }
        r->cycles.push_back(std::move(cyc));
        path.resize(start);
        break;
      }
      state[g] = 1;
      path.push_back(g);
      g = blocked_[g].stream;
    }
    for (uint32_t s : path) {
      state[s] = 2;
      cycle_of[s] = target;
      if (target >= 0) ++r->cycles[static_cast<size_t>(target)].blocked_behind;
    }
  }
}

// The accesses of the reached data-moving instructions, sorted by chip and
// start address.
void HappensBefore::CollectAccesses(std::vector<HbAccess>* acc) const {
  for (uint32_t g = 0; g < cursor_.size(); ++g) {
    const uint32_t chip = stream_chip_[g];
    const StreamProgram& sp = program_.chips[chip].streams[stream_index_[g]];
    for (uint32_t i = 0; i < cursor_[g]; ++i) {
      const Instr& in = sp.instrs[i];
      const uint32_t gi = instr_base_[g] + i;
      const uint64_t src_hi = in.src_addr + in.bytes;
      const uint64_t dst_hi = in.dst_addr + in.bytes;
      switch (in.kind) {
        case OpKind::kTransfer:
          acc->push_back({in.src_addr, src_hi, chip, gi, g, false, false});
          acc->push_back({in.dst_addr, dst_hi, static_cast<uint32_t>(in.peer),
                          gi, g, true, in.reduce_sum});
          break;
        case OpKind::kSend:
          acc->push_back({in.src_addr, src_hi, chip, gi, g, false, false});
          break;
        case OpKind::kReceive:
          acc->push_back({in.dst_addr, dst_hi, chip, gi, g, true, false});
          break;
        default:
          break;
      }
    }
  }
  std::sort(acc->begin(), acc->end(), [](const HbAccess& x, const HbAccess& y) {
    if (x.chip != y.chip) return x.chip < y.chip;
    if (x.lo != y.lo) return x.lo < y.lo;
    return x.global < y.global;
  });
}

// A sweep over the accesses by address: each is compared with the earlier
// ones still overlapping it.
void HappensBefore::FindRaces(HbResult* r) const {
  std::vector<HbAccess> acc;
  CollectAccesses(&acc);
  absl::flat_hash_set<uint64_t> reported;
  std::vector<const HbAccess*> active;
  uint64_t pairs = 0;
  bool stopped = false;
  for (size_t i = 0; i < acc.size() && !stopped; ++i) {
    const HbAccess& x = acc[i];
    size_t kept = 0;
    for (const HbAccess* y : active) {
      if (y->chip == x.chip && y->hi > x.lo) active[kept++] = y;
    }
    active.resize(kept);
    for (const HbAccess* y : active) {
      if (++pairs > options_.max_pairs) {
        stopped = true;
        break;
      }
      if (!x.write && !y->write) continue;
      if (x.global == y->global) continue;  // checked as transfer-overlap
      if (OrderedGlobal(x.global, y->global) ||
          OrderedGlobal(y->global, x.global)) {
        continue;
      }
      const uint32_t a = std::min(x.global, y->global);
      const uint32_t c = std::max(x.global, y->global);
      if (!reported.insert(Key2(a, c)).second) continue;
      ++r->races_found;
      if (r->races.size() >= options_.max_races) continue;
      r->races.push_back(
          MakeRace(a == x.global ? x : *y, a == x.global ? *y : x));
    }
    active.push_back(&x);
  }
  if (stopped) {
    r->complete = false;
    r->note =
        absl::StrCat("race check stopped after comparing ", options_.max_pairs,
                     " pairs of overlapping accesses");
  }
}

MemoryRace HappensBefore::MakeRace(const HbAccess& first,
                                   const HbAccess& second) const {
  MemoryRace race;
  race.chip = first.chip;
  race.begin = std::max(first.lo, second.lo);
  race.end = std::min(first.hi, second.hi);
  race.first = RefOf(first.g, first.global - instr_base_[first.g]);
  race.second = RefOf(second.g, second.global - instr_base_[second.g]);
  race.first_writes = first.write;
  race.second_writes = second.write;
  race.both_reduce = first.reduce && second.reduce;
  return race;
}

HbResult AnalyzeHappensBefore(const Program& program,
                              const RaceOptions& options) {
  return HappensBefore(program, options).Analyze();
}

}  // namespace ccreplay
