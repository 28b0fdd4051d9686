#include "import/msccl_import.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "collectives/collective.h"
#include "collectives/lower_internal.h"
#include "hw/topology.h"
#include "trace/program.h"

namespace ccreplay {
namespace {

using msccl::Algo;
using msccl::Step;
using msccl::StepType;
using msccl::Threadblock;
using msccl::XmlPlace;

struct Range {
  uint64_t addr = 0;
  uint64_t bytes = 0;
  bool Overlaps(const Range& o) const {
    return addr < o.addr + o.bytes && o.addr < addr + bytes;
  }
};

// Where buffer 'i', 'o' or 's' of one rank lives: its first byte and its
// size in chunks (aliases of in-place collectives point into another one).
struct Buffer {
  uint64_t base = 0;
  int64_t chunks = 0;
  const char* name = "";
};
struct Layout {
  Buffer i, o, s;
  const Buffer& Of(char b) const { return b == 'i' ? i : b == 'o' ? o : s; }
};

// A connection: every transfer from rank src to rank dst on channel chan,
// sent by one threadblock of src and received by one of dst, in order.
struct Conn {
  int src = 0, dst = 0, chan = 0;
  int send_tb = -1, recv_tb = -1;  // tb indices on src and dst
  std::vector<int> sends, recvs;   // step indices, in order
};

// What the importer derived for one step.
struct StepInfo {
  int in_conn = -1, in_m = -1;    // the connection and ordinal it receives
  int out_conn = -1, out_m = -1;  // ... and sends
  Range src, dst;                 // resolved srcbuf/dstbuf ranges
  Range land;  // where a received chunk is written on this rank
  Range fwd;   // what a send reads on this rank
  bool reduce_on_write = false;     // the sender's Transfer is REDUCE_SUM
  bool local_reduce = false;        // dst += src locally after the receive
  std::vector<Range> touched;       // every range of this rank it accesses
  bool needs_ready = true;          // receive: the sender must wait for a ready
  std::pair<int, int> ready{0, 0};  // receive: (step, phase) of its ready
  std::vector<int> waiters;         // tbs with a step depending on this one
};

struct Model {
  const Algo* a = nullptr;
  std::string file;
  uint64_t chunk = 0;
  uint32_t k = 1;  // engines per channel
  v1::CollectiveOp op = v1::ALLREDUCE;
  std::vector<Layout> layout;
  std::vector<Conn> conns;
  std::map<std::tuple<int, int, int>, int> conn_index;
  std::vector<std::vector<std::vector<StepInfo>>> info;  // [gpu][tb][step]
  std::vector<std::map<int, int>> tb_index;              // [gpu]: id -> index
  // Message counters of each rank.
  std::vector<std::map<int, uint32_t>> data_ctr;   // [gpu]: conn -> first
  std::vector<std::map<int, uint32_t>> ready_ctr;  // [gpu]: conn -> counter
  std::vector<std::map<std::pair<int, int>, uint32_t>> dep_ctr;  // (W, Y)
};

absl::Status Err(const Model& m, XmlPlace p, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(m.file, ":", p.line, ":", p.column, ": ", what));
}

std::string StepName(int gpu, const Threadblock& tb, const Step& st) {
  return absl::StrCat("gpu ", gpu, " tb ", tb.id, " step ", st.s, " (",
                      msccl::StepTypeName(st.type), ")");
}

std::string TbName(const Model& m, int gpu, int tb) {
  const Threadblock& t = m.a->gpus[gpu].tbs[tb];
  return absl::StrCat("gpu ", gpu, " tb ", t.id, " (", m.file, ":",
                      t.place.line, ":", t.place.column, ")");
}

// The buffer M describes (its chunk count must be nchunksperloop).
char MBuffer(v1::CollectiveOp op) { return op == v1::ALLGATHER ? 'o' : 'i'; }

absl::Status CheckChunks(const Model& m, const msccl::Gpu& g) {
  const Algo& a = *m.a;
  const int64_t n = a.ngpus;
  const int64_t mb = MBuffer(m.op) == 'o' ? g.o_chunks : g.i_chunks;
  if (mb != a.nchunksperloop) {
    return Err(m, g.place,
               absl::StrCat("gpu ", g.id, ": ", a.coll, " needs ",
                            MBuffer(m.op) == 'o' ? "o_chunks" : "i_chunks",
                            " = nchunksperloop = ", a.nchunksperloop,
                            ", the file has ", mb));
  }
  // The other buffer's size, unless it is an alias of this one.
  int64_t want = mb;
  if (m.op == v1::ALLGATHER || m.op == v1::REDUCESCATTER) {
    if (mb % n != 0) {
      return Err(m, g.place,
                 absl::StrCat("gpu ", g.id, ": ", mb,
                              " chunks do not split over ", n, " ranks"));
    }
    want = mb / n;
  }
  const bool other_is_o = MBuffer(m.op) == 'i';
  const int64_t have = other_is_o ? g.o_chunks : g.i_chunks;
  if (a.inplace && have != 0 && have != want) {
    return Err(m, g.place,
               absl::StrCat("gpu ", g.id, ": in place, ",
                            other_is_o ? "o_chunks" : "i_chunks",
                            " must be 0 or ", want, ", the file has ", have));
  }
  if (!a.inplace && have != want) {
    return Err(m, g.place,
               absl::StrCat("gpu ", g.id, ": ", a.coll, " out of place needs ",
                            other_is_o ? "o_chunks" : "i_chunks", " = ", want,
                            ", the file has ", have));
  }
  return absl::OkStatus();
}

// Input at 0, output after it (or an alias in place), scratch last.
absl::Status BuildLayout(Model& m) {
  const Algo& a = *m.a;
  if (a.inplace && m.op == v1::ALLTOALL) {
    return Err(m, a.place,
               "an in-place alltoall cannot be imported: its "
               "output would overwrite input other ranks read");
  }
  for (const msccl::Gpu& g : a.gpus) {
    if (auto s = CheckChunks(m, g); !s.ok()) return s;
    const int64_t mb = a.nchunksperloop;
    const int64_t part =
        m.op == v1::ALLGATHER || m.op == v1::REDUCESCATTER ? mb / a.ngpus : mb;
    Layout l;
    l.i.name = "input";
    l.o.name = "output";
    l.s.name = "scratch";
    l.i.chunks = m.op == v1::ALLGATHER ? part : mb;
    l.o.chunks = m.op == v1::REDUCESCATTER ? part : mb;
    if (a.inplace && m.op == v1::ALLGATHER) {
      l.i.base = static_cast<uint64_t>(g.id * part) * m.chunk;
    } else if (a.inplace && m.op == v1::REDUCESCATTER) {
      l.o.base = static_cast<uint64_t>(g.id * part) * m.chunk;
    } else if (!a.inplace) {
      l.o.base = static_cast<uint64_t>(l.i.chunks) * m.chunk;
    }
    // Keep every address below 2^62 so that no sum of them overflows.
    if (g.s_chunks < 0 || static_cast<uint64_t>(g.s_chunks) >
                              (uint64_t{1} << 62) / m.chunk - 2 * mb) {
      return Err(m, g.place,
                 absl::StrCat("gpu ", g.id, ": s_chunks=", g.s_chunks,
                              " is out of range"));
    }
    l.s.chunks = g.s_chunks;
    l.s.base = std::max(l.i.base + l.i.chunks * m.chunk,
                        l.o.base + l.o.chunks * m.chunk);
    m.layout.push_back(l);
  }
  return absl::OkStatus();
}

// off + cnt as text, exact even where the sum leaves int64 (hostile XML).
std::string SumText(int64_t off, int64_t cnt) {
  std::ostringstream out;
  out << absl::int128(off) + absl::int128(cnt);
  return out.str();
}

absl::StatusOr<Range> Resolve(const Model& m, int gpu, const Threadblock& tb,
                              const Step& st, char buf, int64_t off) {
  const Buffer& b = m.layout[gpu].Of(buf);
  if (off < 0 || st.cnt < 1 || off > b.chunks || st.cnt > b.chunks - off) {
    return Err(
        m, st.place,
        absl::StrCat(StepName(gpu, tb, st), ": ", std::string(1, buf),
                     " chunks [", off, ", ", SumText(off, st.cnt),
                     ") are outside the ",
                     b.name, " buffer's ", b.chunks, " chunk(s)"));
  }
  return Range{b.base + static_cast<uint64_t>(off) * m.chunk,
               static_cast<uint64_t>(st.cnt) * m.chunk};
}

// Ranges, land/fwd and the reduction form of one step.
absl::Status DescribeStep(Model& m, int gpu, const Threadblock& tb,
                          const Step& st, StepInfo& in) {
  if (st.type == StepType::kNop) return absl::OkStatus();
  auto src = Resolve(m, gpu, tb, st, st.srcbuf, st.srcoff);
  if (!src.ok()) return src.status();
  auto dst = Resolve(m, gpu, tb, st, st.dstbuf, st.dstoff);
  if (!dst.ok()) return dst.status();
  in.src = *src;
  in.dst = *dst;
  const bool same = st.srcbuf == st.dstbuf && st.srcoff == st.dstoff;
  switch (st.type) {
    case StepType::kSend:
      in.fwd = in.src;
      in.touched = {in.src};
      break;
    case StepType::kRecv:
    case StepType::kRecvCopySend:
      in.land = in.fwd = in.dst;
      in.touched = {in.dst};
      break;
    case StepType::kRecvReduceSend:
      // MSCCL sends (received + local src) on; the sum lands in src here.
      in.land = in.fwd = in.src;
      in.reduce_on_write = true;
      in.touched = {in.src};
      break;
    case StepType::kRecvReduceCopy:
    case StepType::kRecvReduceCopySend:
      in.land = in.fwd = in.dst;
      in.reduce_on_write = same;
      in.local_reduce = !same;
      in.touched = {in.src, in.dst};
      break;
    case StepType::kCopy:
    case StepType::kReduce:
      in.touched = {in.src, in.dst};
      break;
    case StepType::kNop:
      break;
  }
  if ((st.type == StepType::kCopy || in.local_reduce) &&
      in.src.Overlaps(in.dst)) {
    return Err(m, st.place,
               absl::StrCat(StepName(gpu, tb, st),
                            ": source and destination overlap"));
  }
  return absl::OkStatus();
}

absl::Status AddConnEnd(Model& m, int gpu, int tbi, bool sending) {
  const Algo& a = *m.a;
  const Threadblock& tb = a.gpus[gpu].tbs[tbi];
  const int peer = sending ? tb.send : tb.recv;
  if (peer < 0) return absl::OkStatus();
  if (peer >= a.ngpus || peer == gpu) {
    return Err(m, tb.place,
               absl::StrCat("gpu ", gpu, " tb ", tb.id, ": ",
                            sending ? "send" : "recv", "=", peer,
                            " is not another rank of [0, ", a.ngpus, ")"));
  }
  const auto key = sending ? std::make_tuple(gpu, peer, tb.chan)
                           : std::make_tuple(peer, gpu, tb.chan);
  auto [it, fresh] = m.conn_index.emplace(key, m.conns.size());
  if (fresh) {
    Conn c;
    std::tie(c.src, c.dst, c.chan) = key;
    m.conns.push_back(c);
  }
  Conn& c = m.conns[it->second];
  int& end = sending ? c.send_tb : c.recv_tb;
  if (end >= 0) {
    return Err(m, tb.place,
               absl::StrCat("gpu ", gpu, " tb ", tb.id, " ",
                            sending ? "sends to" : "receives from", " rank ",
                            peer, " on channel ", tb.chan, ", as ",
                            TbName(m, gpu, end), " already does"));
  }
  end = tbi;
  return absl::OkStatus();
}

// Lists every step's connection and ordinal; checks ranges.
absl::Status BuildSteps(Model& m) {
  const Algo& a = *m.a;
  m.info.resize(a.ngpus);
  m.tb_index.resize(a.ngpus);
  for (int g = 0; g < a.ngpus; ++g) {
    const auto& tbs = a.gpus[g].tbs;
    m.info[g].resize(tbs.size());
    for (int t = 0; t < static_cast<int>(tbs.size()); ++t) {
      const Threadblock& tb = tbs[t];
      m.tb_index[g][tb.id] = t;
      if (tb.chan < 0 || tb.chan >= a.nchannels) {
        return Err(m, tb.place,
                   absl::StrCat("gpu ", g, " tb ", tb.id, ": chan=", tb.chan,
                                " is not in [0, nchannels=", a.nchannels, ")"));
      }
      if (auto s = AddConnEnd(m, g, t, true); !s.ok()) return s;
      if (auto s = AddConnEnd(m, g, t, false); !s.ok()) return s;
      m.info[g][t].resize(tb.steps.size());
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        auto s = DescribeStep(m, g, tb, tb.steps[k], m.info[g][t][k]);
        if (!s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

// Pairs the k-th send of every connection with its k-th receive.
absl::Status MatchSteps(Model& m) {
  const Algo& a = *m.a;
  for (int g = 0; g < a.ngpus; ++g) {
    for (size_t t = 0; t < a.gpus[g].tbs.size(); ++t) {
      const Threadblock& tb = a.gpus[g].tbs[t];
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        const Step& st = tb.steps[k];
        StepInfo& in = m.info[g][t][k];
        for (bool sending : {true, false}) {
          if (!(sending ? msccl::StepSends(st.type)
                        : msccl::StepReceives(st.type))) {
            continue;
          }
          const int peer = sending ? tb.send : tb.recv;
          if (peer < 0) {
            return Err(
                m, st.place,
                absl::StrCat(StepName(g, tb, st), " ",
                             sending ? "sends" : "receives", " but its tb has ",
                             sending ? "send" : "recv", "=-1"));
          }
          const int c =
              m.conn_index.at(sending ? std::make_tuple(g, peer, tb.chan)
                                      : std::make_tuple(peer, g, tb.chan));
          auto& list = sending ? m.conns[c].sends : m.conns[c].recvs;
          (sending ? in.out_conn : in.in_conn) = c;
          (sending ? in.out_m : in.in_m) = static_cast<int>(list.size());
          list.push_back(static_cast<int>(k));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckConn(const Model& m, const Conn& c) {
  const Algo& a = *m.a;
  if (c.send_tb < 0 || c.recv_tb < 0) {
    const bool no_recv = c.recv_tb < 0;
    const int g = no_recv ? c.src : c.dst;
    const Threadblock& tb = a.gpus[g].tbs[no_recv ? c.send_tb : c.recv_tb];
    const auto& steps = no_recv ? c.sends : c.recvs;
    if (steps.empty()) return absl::OkStatus();  // a tb that never uses it
    const Step& st = tb.steps[steps[0]];
    return Err(
        m, st.place,
        absl::StrCat(StepName(g, tb, st), " ",
                     no_recv ? "sends to" : "receives from", " gpu ",
                     no_recv ? c.dst : c.src, " on channel ", c.chan,
                     ", but gpu ", no_recv ? c.dst : c.src, " has no tb with ",
                     no_recv ? "recv" : "send", "=", g, " chan=", c.chan));
  }
  const Threadblock& stb = a.gpus[c.src].tbs[c.send_tb];
  const Threadblock& rtb = a.gpus[c.dst].tbs[c.recv_tb];
  if (c.sends.size() != c.recvs.size()) {
    const bool more_sends = c.sends.size() > c.recvs.size();
    const size_t k = std::min(c.sends.size(), c.recvs.size());
    const Step& st = more_sends ? stb.steps[c.sends[k]] : rtb.steps[c.recvs[k]];
    return Err(
        m, st.place,
        absl::StrCat(
            TbName(m, c.src, c.send_tb), " sends ", c.sends.size(),
            " time(s) to gpu ", c.dst, " on channel ", c.chan, ", but ",
            TbName(m, c.dst, c.recv_tb), " receives ", c.recvs.size(),
            " time(s) from gpu ", c.src, ": ",
            StepName(more_sends ? c.src : c.dst, more_sends ? stb : rtb, st),
            " has no matching ", more_sends ? "receive" : "send"));
  }
  for (size_t k = 0; k < c.sends.size(); ++k) {
    const Step& s = stb.steps[c.sends[k]];
    const Step& r = rtb.steps[c.recvs[k]];
    if (s.cnt != r.cnt) {
      return Err(m, r.place,
                 absl::StrCat(StepName(c.dst, rtb, r), " receives cnt=", r.cnt,
                              " chunk(s), but its matching send ",
                              StepName(c.src, stb, s), " at ", m.file, ":",
                              s.place.line, ":", s.place.column,
                              " sends cnt=", s.cnt));
    }
  }
  return absl::OkStatus();
}

// depid/deps: the step must exist and say hasdep="1" (the MSCCL runtime
// signals only such steps, so another dependency would hang there).
absl::Status BuildDeps(Model& m) {
  const Algo& a = *m.a;
  for (int g = 0; g < a.ngpus; ++g) {
    for (size_t t = 0; t < a.gpus[g].tbs.size(); ++t) {
      const Threadblock& tb = a.gpus[g].tbs[t];
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        const Step& st = tb.steps[k];
        if (st.depid < 0 && st.deps < 0) continue;
        auto it = m.tb_index[g].find(st.depid);
        const Threadblock* y =
            it == m.tb_index[g].end() ? nullptr : &a.gpus[g].tbs[it->second];
        if (y == nullptr || st.deps < 0 ||
            st.deps >= static_cast<int>(y->steps.size())) {
          return Err(m, st.place,
                     absl::StrCat(StepName(g, tb, st), " depends on tb ",
                                  st.depid, " step ", st.deps, " of gpu ", g,
                                  ", which does not exist"));
        }
        if (it->second == static_cast<int>(t)) {
          if (st.deps >= static_cast<int>(k)) {
            return Err(
                m, st.place,
                absl::StrCat(StepName(g, tb, st), " depends on step ", st.deps,
                             " of its own tb, which is not earlier"));
          }
          continue;  // stream order already gives it
        }
        const Step& target = y->steps[st.deps];
        if (!target.hasdep) {
          return Err(m, st.place,
                     absl::StrCat(StepName(g, tb, st), " depends on ",
                                  StepName(g, *y, target), " at ", m.file, ":",
                                  target.place.line, ":", target.place.column,
                                  ", which has hasdep=\"0\": MSCCL never "
                                  "signals it"));
        }
        auto& w = m.info[g][it->second][st.deps].waiters;
        if (std::find(w.begin(), w.end(), static_cast<int>(t)) == w.end())
          w.push_back(static_cast<int>(t));
      }
    }
  }
  return absl::OkStatus();
}

bool HasCrossDep(const Step& st, int own_id) {
  return st.depid >= 0 && st.depid != own_id;
}

// What a stream is known to have seen when a step issues its send part,
// from stream order, data messages and dependencies alone (no ready
// messages: they only add order, so this under-approximates).
struct Knowledge {
  std::vector<int> passed;    // [tb]: its steps <= passed finished waiting
  std::vector<bool> done;     // [step]: that step's send has landed
  std::vector<bool> started;  // [gpu]: the rank has begun the collective
  void Join(const Knowledge& o) {
    for (size_t i = 0; i < passed.size(); ++i)
      passed[i] = std::max(passed[i], o.passed[i]);
    for (size_t i = 0; i < done.size(); ++i) done[i] = done[i] || o.done[i];
    for (size_t i = 0; i < started.size(); ++i)
      started[i] = started[i] || o.started[i];
  }
};

// Global numbering of tbs and steps for Knowledge.
struct Ids {
  std::vector<int> tb0;                 // [gpu]: first global tb
  std::vector<std::vector<int>> step0;  // [gpu][tb]: first global step
  int tbs = 0, steps = 0;
  explicit Ids(const Algo& a) {
    for (const msccl::Gpu& g : a.gpus) {
      tb0.push_back(tbs);
      step0.emplace_back();
      for (const Threadblock& tb : g.tbs) {
        step0.back().push_back(steps);
        steps += static_cast<int>(tb.steps.size());
        ++tbs;
      }
    }
  }
};

// Knowledge at step (g, t, k), or false while an input is not computed.
bool KnowAt(const Model& m, const Ids& ids, int g, int t, int k,
            std::vector<std::optional<Knowledge>>& before) {
  const Threadblock& tb = m.a->gpus[g].tbs[t];
  const Step& st = tb.steps[k];
  const StepInfo& in = m.info[g][t][k];
  const Knowledge* prev = k > 0 ? &*before[ids.step0[g][t] + k - 1] : nullptr;
  const Knowledge* dep = nullptr;
  const Knowledge* send = nullptr;
  int y = -1, sg = -1;
  if (HasCrossDep(st, tb.id)) {
    y = m.tb_index[g].at(st.depid);
    const auto& d = before[ids.step0[g][y] + st.deps];
    if (!d) return false;
    dep = &*d;
  }
  if (in.in_conn >= 0) {
    const Conn& c = m.conns[in.in_conn];
    sg = ids.step0[c.src][c.send_tb] + c.sends[in.in_m];
    if (!before[sg]) return false;
    send = &*before[sg];
  }
  Knowledge kn;
  if (prev != nullptr) {
    kn = *prev;
  } else {
    kn.passed.assign(ids.tbs, -1);
    kn.done.assign(ids.steps, false);
    kn.started.assign(m.a->ngpus, false);
  }
  int& mine = kn.passed[ids.tb0[g] + t];
  mine = std::max(mine, k - 1);
  kn.started[g] = true;
  if (dep != nullptr) {
    // The signal follows a Fence: every send of Y's tb up to it landed.
    kn.Join(*dep);
    int& py = kn.passed[ids.tb0[g] + y];
    py = std::max(py, st.deps);
    for (int s = 0; s <= st.deps; ++s) kn.done[ids.step0[g][y] + s] = true;
  }
  if (send != nullptr) {
    kn.Join(*send);
    kn.done[sg] = true;
  }
  before[ids.step0[g][t] + k] = std::move(kn);
  return true;
}

// Marks the receives whose sender already knows, without a ready, that the
// receiver has finished with the landing range (docs/import-msccl.md).
void FindNeededReadies(Model& m) {
  const Algo& a = *m.a;
  const Ids ids(a);
  // Quadratic in steps: beyond this every receive keeps its ready.
  if (static_cast<int64_t>(ids.steps) * (ids.steps + ids.tbs) > (1 << 24))
    return;
  std::vector<std::optional<Knowledge>> before(ids.steps);
  for (bool progress = true; progress;) {
    progress = false;
    for (int g = 0; g < a.ngpus; ++g) {
      for (size_t t = 0; t < a.gpus[g].tbs.size(); ++t) {
        for (size_t k = 0; k < a.gpus[g].tbs[t].steps.size(); ++k) {
          if (before[ids.step0[g][t] + k]) continue;
          if (!KnowAt(m, ids, g, static_cast<int>(t), static_cast<int>(k),
                      before)) {
            break;
          }
          progress = true;
        }
      }
    }
  }
  for (int g = 0; g < a.ngpus; ++g) {
    for (size_t t = 0; t < a.gpus[g].tbs.size(); ++t) {
      const Threadblock& tb = a.gpus[g].tbs[t];
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        StepInfo& in = m.info[g][t][k];
        if (in.in_conn < 0) continue;
        const Conn& c = m.conns[in.in_conn];
        const auto& kn = before[ids.step0[c.src][c.send_tb] + c.sends[in.in_m]];
        in.needs_ready = !kn || HasCrossDep(tb.steps[k], tb.id) ||
                         (in.in_m == 0 && !kn->started[g]);
        for (size_t j = 0; j < k && !in.needs_ready; ++j) {
          const Step& x = tb.steps[j];
          bool touches = HasCrossDep(x, tb.id);
          for (const Range& r : m.info[g][t][j].touched)
            touches = touches || r.Overlaps(in.land);
          if (!touches) continue;
          // A send landed implies its step's receive part had finished.
          in.needs_ready =
              msccl::StepSends(x.type)
                  ? !kn->done[ids.step0[g][t] + j]
                  : kn->passed[ids.tb0[g] + t] < static_cast<int>(j);
        }
      }
    }
  }
}

// Where each receive's ready message goes in its stream: after the last
// earlier step of the tb that touches the landing range and right after the
// last dependency wait up to the receive (what they order before the
// receive must be complete before another rank may write there); never
// before an earlier receive's ready on the same connection, so the sender's
// k-th wait is released by the k-th ready.
void PlaceReadies(Model& m) {
  const Algo& a = *m.a;
  for (int g = 0; g < a.ngpus; ++g) {
    for (size_t t = 0; t < a.gpus[g].tbs.size(); ++t) {
      const Threadblock& tb = a.gpus[g].tbs[t];
      std::map<int, std::pair<int, int>> last;  // in_conn -> previous ready
      for (int k = 0; k < static_cast<int>(tb.steps.size()); ++k) {
        StepInfo& in = m.info[g][t][k];
        if (in.in_conn < 0 || !in.needs_ready) continue;
        // (j + 1, 0): before step j + 1, after the last step j touching
        // the range; (d, 1): right after the dependency wait of step d.
        std::pair<int, int> at{0, 0};
        for (int j = 0; j <= k; ++j) {
          if (HasCrossDep(tb.steps[j], tb.id)) at = std::max(at, {j, 1});
          if (j == k) break;
          // A send still reading the range needs a Fence first; one step
          // later the Fence rarely waits (docs/import-msccl.md, "Ready").
          const int after =
              msccl::StepSends(tb.steps[j].type) ? std::min(j + 2, k) : j + 1;
          for (const Range& r : m.info[g][t][j].touched)
            if (r.Overlaps(in.land)) at = std::max(at, {after, 0});
        }
        auto prev = last.find(in.in_conn);
        if (prev != last.end()) at = std::max(at, prev->second);
        in.ready = at;
        last[in.in_conn] = at;
      }
    }
  }
}

// Counter ids of one rank: K per incoming connection (one per stripe), one
// per outgoing connection that gets ready messages, one per (waiting tb, tb it
// waits for). Returns how many.
uint32_t AllocateCounters(Model& m, int g) {
  uint32_t next = 0;
  m.data_ctr[g].clear();
  m.ready_ctr[g].clear();
  m.dep_ctr[g].clear();
  for (size_t c = 0; c < m.conns.size(); ++c) {
    const Conn& conn = m.conns[c];
    if (conn.dst == g && !conn.recvs.empty()) {
      m.data_ctr[g][c] = next;
      next += m.k;
    }
  }
  for (size_t c = 0; c < m.conns.size(); ++c) {
    const Conn& conn = m.conns[c];
    if (conn.src != g || conn.recv_tb < 0) continue;
    bool readies = false;
    for (int k : conn.recvs)
      readies = readies || m.info[conn.dst][conn.recv_tb][k].needs_ready;
    if (readies) m.ready_ctr[g][c] = next++;
  }
  const auto& tbs = m.info[g];
  for (size_t y = 0; y < tbs.size(); ++y) {
    for (const StepInfo& in : tbs[y]) {
      for (int w : in.waiters) {
        if (m.dep_ctr[g]
                .emplace(std::pair{w, static_cast<int>(y)}, next)
                .second) {
          ++next;
        }
      }
    }
  }
  return next;
}

// Picks K (engines per channel) and gives every rank its counters.
absl::Status ChooseEngines(Model& m, const HwConfig& hw, uint32_t asked) {
  const Algo& a = *m.a;
  const uint32_t most = hw.cdma_engines / static_cast<uint32_t>(a.nchannels);
  if (most == 0 || asked > most) {
    return Err(
        m, a.place,
        absl::StrCat("nchannels=", a.nchannels, " x ", asked == 0 ? 1 : asked,
                     " engine(s) per channel need more CDMA engines "
                     "than the ",
                     hw.cdma_engines, " of ", hw.name));
  }
  m.data_ctr.assign(a.ngpus, {});
  m.ready_ctr.assign(a.ngpus, {});
  m.dep_ctr.assign(a.ngpus, {});
  for (m.k = asked == 0 ? most : asked; m.k >= 1; --m.k) {
    int worst = -1;
    uint32_t need = 0;
    for (int g = 0; g < a.ngpus; ++g) {
      const uint32_t n = AllocateCounters(m, g);
      if (n > hw.num_qps() && n > need) worst = g, need = n;
    }
    if (worst < 0) return absl::OkStatus();
    if (asked != 0 || m.k == 1) {
      return Err(m, a.gpus[worst].place,
                 absl::StrCat("gpu ", worst, " needs ", need,
                              " message counters with ", m.k,
                              " engine(s) per channel, but ", hw.name, " has ",
                              hw.num_qps(), " (", hw.cdma_engines,
                              " engines x 4 VC banks)"));
    }
  }
  return absl::OkStatus();
}

// Emits one threadblock's stream.
class TbEmitter {
 public:
  TbEmitter(const Model& m, int g, int t, v1::Stream* out)
      : m_(m), g_(g), t_(t), tb_(m.a->gpus[g].tbs[t]), out_(out) {
    engine0_ = static_cast<uint32_t>(tb_.chan) * m.k;
  }

  void Run() {
    for (int k = 0; k < static_cast<int>(tb_.steps.size()); ++k) {
      const Step& st = tb_.steps[k];
      const StepInfo& in = m_.info[g_][t_][k];
      Readies({k, 0});
      DepWait(st);
      Readies({k, 1});
      if (in.in_conn >= 0) Receive(in);
      if (st.type == StepType::kCopy || st.type == StepType::kReduce) {
        Local(in.src, in.dst, st.type == StepType::kReduce);
      }
      if (in.out_conn >= 0) Send(in);
      Signal(in);
    }
  }

 private:
  v1::Instruction* Add() { return out_->add_instructions(); }
  void Fence() {
    Add()->mutable_fence();
    unfenced_ = false;
  }
  void Wait(uint32_t counter, uint32_t count) {
    v1::MsgWait* w = Add()->mutable_msg_wait();
    w->set_qp_id(counter);
    w->set_count(count);
  }
  void Remote(uint32_t qp, int chip, uint32_t counter) {
    v1::RemoteMsgSend* r = Add()->mutable_remote_msg_send();
    r->set_qp_id(qp);
    r->set_dst_chip(static_cast<uint32_t>(chip));
    r->set_dst_qp_id(counter);
  }
  void Transfer(uint32_t qp, int chip, uint64_t src, uint64_t dst,
                uint64_t bytes, bool reduce) {
    v1::Transfer* x = Add()->mutable_transfer();
    x->set_qp_id(qp);
    x->set_dst_chip(static_cast<uint32_t>(chip));
    x->set_src_addr(src);
    x->set_dst_addr(dst);
    x->set_bytes(bytes);
    x->set_reduce(reduce ? v1::REDUCE_SUM : v1::REDUCE_NONE);
  }

  // Ready messages of the receives placed at `at` (PlaceReadies), behind a
  // Fence when a send of this stream may still be reading.
  void Readies(std::pair<int, int> at) {
    for (size_t k = 0; k < tb_.steps.size(); ++k) {
      const StepInfo& in = m_.info[g_][t_][k];
      if (in.in_conn < 0 || !in.needs_ready || in.ready != at) continue;
      if (unfenced_) Fence();
      const Conn& c = m_.conns[in.in_conn];
      Remote(MakeQp(engine0_, 1), c.src, m_.ready_ctr[c.src].at(in.in_conn));
    }
  }

  void DepWait(const Step& st) {
    if (!HasCrossDep(st, tb_.id)) return;
    const int y = m_.tb_index[g_].at(st.depid);
    // Y signals this tb once per step of Y that this tb depends on, in
    // Y's order: the wait for step deps needs all of those up to it.
    uint32_t need = 0;
    for (int s = 0; s <= st.deps; ++s) {
      const auto& w = m_.info[g_][y][s].waiters;
      if (std::find(w.begin(), w.end(), t_) != w.end()) ++need;
    }
    uint32_t& got = consumed_[y];
    if (need > got) Wait(m_.dep_ctr[g_].at({t_, y}), need - got);
    got = std::max(got, need);
  }

  void Receive(const StepInfo& in) {
    const uint32_t base = m_.data_ctr[g_].at(in.in_conn);
    const uint32_t stripes = lowering::NumStripes(in.land.bytes, m_.k);
    for (uint32_t j = 0; j < stripes; ++j) Wait(base + j, 1);
    if (in.local_reduce) Local(in.src, in.dst, true);
  }

  // A local copy or reduction, striped like a send, complete before the
  // next step (a threadblock runs its steps one after another).
  void Local(const Range& src, const Range& dst, bool reduce) {
    const uint32_t stripes = lowering::NumStripes(src.bytes, m_.k);
    for (uint32_t j = 0; j < stripes; ++j) {
      const uint64_t off = lowering::StripeOffset(src.bytes, m_.k, j);
      Transfer(MakeQp(engine0_ + j, 0), g_, src.addr + off, dst.addr + off,
               lowering::StripeSize(src.bytes, m_.k, j), reduce);
    }
    Fence();
  }

  void Send(const StepInfo& in) {
    const Conn& c = m_.conns[in.out_conn];
    const StepInfo& r = m_.info[c.dst][c.recv_tb][c.recvs[in.out_m]];
    if (r.needs_ready) Wait(m_.ready_ctr[g_].at(in.out_conn), 1);
    const uint32_t base = m_.data_ctr[c.dst].at(in.out_conn);
    const uint32_t stripes = lowering::NumStripes(in.fwd.bytes, m_.k);
    for (uint32_t j = 0; j < stripes; ++j) {
      const uint32_t qp = MakeQp(engine0_ + j, 0);
      const uint64_t off = lowering::StripeOffset(in.fwd.bytes, m_.k, j);
      Transfer(qp, c.dst, in.fwd.addr + off, r.land.addr + off,
               lowering::StripeSize(in.fwd.bytes, m_.k, j), r.reduce_on_write);
      Remote(qp, c.dst, base + j);  // behind the stripe, on its qp
    }
    unfenced_ = true;
  }

  void Signal(const StepInfo& in) {
    if (in.waiters.empty()) return;
    if (unfenced_) Fence();
    for (int w : in.waiters) {
      v1::MsgSend* s = Add()->mutable_msg_send();
      s->set_qp_id(MakeQp(engine0_, 2));
      s->set_dst_qp_id(m_.dep_ctr[g_].at({w, t_}));
    }
  }

  const Model& m_;
  int g_, t_;
  const Threadblock& tb_;
  v1::Stream* out_;
  uint32_t engine0_ = 0;
  bool unfenced_ = false;             // a remote Transfer since the last Fence
  std::map<int, uint32_t> consumed_;  // dep messages taken, per tb
};

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

v1::Trace Emit(const Model& m, const MscclImportOptions& opt) {
  const Algo& a = *m.a;
  v1::Trace trace;
  v1::TraceHeader* h = trace.mutable_header();
  h->set_format_version(v1::FORMAT_VERSION_1);
  h->set_num_chips(static_cast<uint32_t>(a.ngpus));
  h->set_generator("ccreplay import");
  v1::CollectiveInfo* c = h->mutable_collective();
  c->set_op(m.op);
  c->set_n(static_cast<uint32_t>(a.ngpus));
  c->set_bytes(opt.bytes);
  c->set_algorithm(absl::StrCat("msccl:", a.name));
  if (opt.topology)
    c->set_topology(std::string(TopologyName(opt.topology->first)));
  c->set_cdma_engines_used(static_cast<uint32_t>(a.nchannels) * m.k);
  c->set_in_place(a.inplace);
  c->set_sync("write+msg");
  v1::ImportSource* src = h->mutable_source();
  src->set_format("msccl-ir");
  src->set_file(BaseName(m.file));
  src->set_algorithm(a.name);
  src->set_protocol(a.proto);
  src->set_channels(static_cast<uint32_t>(a.nchannels));
  src->set_chunk_bytes(m.chunk);
  src->set_engines_per_channel(m.k);
  for (int g = 0; g < a.ngpus; ++g) {
    const Layout& l = m.layout[g];
    v1::ChipBuffers* b = c->add_buffers();
    b->set_chip(static_cast<uint32_t>(g));
    b->mutable_input()->set_addr(l.i.base);
    b->mutable_input()->set_bytes(l.i.chunks * m.chunk);
    b->mutable_output()->set_addr(l.o.base);
    b->mutable_output()->set_bytes(l.o.chunks * m.chunk);
    v1::ChipProgram* p = trace.add_chips();
    p->set_chip(static_cast<uint32_t>(g));
    for (size_t t = 0; t < a.gpus[g].tbs.size(); ++t) {
      v1::Stream* s = p->add_streams();
      s->set_id(static_cast<uint32_t>(a.gpus[g].tbs[t].id));
      TbEmitter(m, g, static_cast<int>(t), s).Run();
    }
  }
  return trace;
}

// The collective, the chunk size and whether the ranks fit.
absl::Status CheckShape(Model& m, const HwConfig& hw,
                        const MscclImportOptions& opt) {
  const Algo& a = *m.a;
  auto op = ParseCollectiveOp(a.coll);
  if (!op.ok() || (*op != v1::ALLREDUCE && *op != v1::ALLGATHER &&
                   *op != v1::REDUCESCATTER && *op != v1::ALLTOALL)) {
    return Err(m, a.place,
               absl::StrCat("coll=\"", a.coll,
                            "\" cannot be imported (allreduce, allgather, "
                            "reducescatter, alltoall can)"));
  }
  m.op = *op;
  if (a.ngpus < 2 || static_cast<uint32_t>(a.ngpus) > kMaxChips) {
    return Err(
        m, a.place,
        absl::StrCat("ngpus=", a.ngpus, " is not in [2, ", kMaxChips, "]"));
  }
  if (hw.num_chips != 0 && hw.num_chips != static_cast<uint32_t>(a.ngpus)) {
    return Err(m, a.place,
               absl::StrCat("ngpus=", a.ngpus, " but the hardware config '",
                            hw.name, "' has ", hw.num_chips, " chips"));
  }
  if (opt.topology) {
    auto t =
        Topology::Build(opt.topology->first, static_cast<uint32_t>(a.ngpus),
                        opt.topology->second);
    if (!t.ok()) {
      return Err(m, a.place,
                 absl::StrCat("ngpus=", a.ngpus, " does not fit topology ",
                              TopologyName(opt.topology->first), ": ",
                              t.status().message()));
    }
  }
  if (a.nchannels < 1 || a.nchunksperloop < 1) {
    return Err(m, a.place, "nchannels and nchunksperloop must be >= 1");
  }
  if (opt.bytes == 0 || opt.bytes % a.nchunksperloop != 0 ||
      opt.bytes > (uint64_t{1} << 60)) {
    return Err(m, a.place,
               absl::StrCat("--bytes ", opt.bytes,
                            " is not a positive "
                            "multiple of nchunksperloop=",
                            a.nchunksperloop,
                            " up to 2^60 (one chunk = bytes / "
                            "nchunksperloop)"));
  }
  m.chunk = opt.bytes / a.nchunksperloop;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Trace> ImportMsccl(absl::string_view xml,
                                      const std::string& file,
                                      const HwConfig& hw,
                                      const MscclImportOptions& options) {
  auto algo = msccl::ParseAlgo(xml, file);
  if (!algo.ok()) return algo.status();
  Model m;
  m.a = &*algo;
  m.file = file;
  if (auto s = CheckShape(m, hw, options); !s.ok()) return s;
  if (auto s = BuildLayout(m); !s.ok()) return s;
  if (auto s = BuildSteps(m); !s.ok()) return s;
  if (auto s = MatchSteps(m); !s.ok()) return s;
  for (const Conn& c : m.conns) {
    if (auto s = CheckConn(m, c); !s.ok()) return s;
  }
  if (auto s = BuildDeps(m); !s.ok()) return s;
  FindNeededReadies(m);
  PlaceReadies(m);
  if (auto s = ChooseEngines(m, hw, options.engines_per_channel); !s.ok())
    return s;
  return Emit(m, options);
}

absl::StatusOr<v1::Trace> ImportMscclFile(const std::string& path,
                                          const HwConfig& hw,
                                          const MscclImportOptions& options) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ImportMsccl(*text, path, hw, options);
}

bool IsMscclXmlPath(absl::string_view path) {
  return absl::EndsWith(path, ".xml");
}

}  // namespace ccreplay
