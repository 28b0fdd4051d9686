#include "check/check.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json.h"
#include "check/executor.h"
#include "hw/budget.h"
#include "trace/decode.h"
#include "trace/rules.h"

namespace ccreplay {
namespace {

// Runs the trace rules of trace/rules.h (reporting here, every finding) and
// then the rules that need the decoded program.
class Checker : public RuleSink {
 public:
  Checker(const v1::Trace& trace, const HwConfig& hw,
          const TraceLocations& locations, const CheckOptions& options)
      : trace_(trace), hw_(hw), loc_(locations), options_(options) {}

  std::vector<Finding> Run() {
    RuleOptions strict;
    strict.schema_strict = true;
    if (RunTraceRules(trace_, hw_.Target(), strict, this)) {
      num_chips_ = trace_.header().num_chips();
    }
    if (!HasErrors()) Semantic();
    std::stable_sort(
        out_.begin(), out_.end(), [](const Finding& a, const Finding& b) {
          return std::tie(a.place.chip, a.place.stream, a.place.instr, a.rule) <
                 std::tie(b.place.chip, b.place.stream, b.place.instr, b.rule);
        });
    return std::move(out_);
  }

  // RuleSink: a trace rule's finding, placed with its text location.
  void Report(absl::string_view rule, const TracePlace& place,
              absl::string_view place_text, std::string message,
              const TracePlace* related) override {
    (void)place_text;  // At() gives the place with its text location
    if (related == nullptr) {
      Add(rule, Severity::kError, At(place), std::move(message));
    } else {
      AddRelated(rule, Severity::kError, At(place), At(*related),
                 std::move(message));
    }
  }
  std::string Where(const TracePlace& p) const override {
    return Location(At(p));
  }

 private:
  bool HasErrors() const { return CountSeverity(out_, Severity::kError) > 0; }

  void Add(absl::string_view rule, Severity sev, FindingPlace place,
           std::string message) {
    Finding f;
    f.rule = std::string(rule);
    f.severity = sev;
    f.place = std::move(place);
    f.message = std::move(message);
    out_.push_back(std::move(f));
  }
  void AddRelated(absl::string_view rule, Severity sev, FindingPlace place,
                  FindingPlace related, std::string message) {
    Add(rule, sev, std::move(place), std::move(message));
    out_.back().has_related = true;
    out_.back().related = std::move(related);
  }

  // The place of trace.chips(c).streams(s).instructions(i); -1 = coarser.
  FindingPlace ProtoPlace(int c, int s = -1, int i = -1) const {
    FindingPlace p;
    const v1::ChipProgram& chip = trace_.chips(c);
    p.chip = chip.chip();
    const auto cs = static_cast<size_t>(c);
    if (s < 0) {
      if (cs < loc_.chips.size()) p.location = loc_.chips[cs];
      return p;
    }
    const auto ss = static_cast<size_t>(s);
    p.stream = chip.streams(s).id();
    if (i < 0) {
      if (cs < loc_.streams.size() && ss < loc_.streams[cs].size()) {
        p.location = loc_.streams[cs][ss];
      }
      return p;
    }
    p.instr = i;
    p.kind = std::string(InstructionKindName(chip.streams(s).instructions(i)));
    const auto is = static_cast<size_t>(i);
    if (cs < loc_.instructions.size() && ss < loc_.instructions[cs].size() &&
        is < loc_.instructions[cs][ss].size()) {
      p.location = loc_.instructions[cs][ss][is];
    }
    return p;
  }

  // The place of a decoded instruction.
  FindingPlace RefPlace(const InstrRef& r) const {
    return ProtoPlace(entry_of_[r.chip], static_cast<int>(r.stream),
                      static_cast<int>(r.instr));
  }

  FindingPlace At(const TracePlace& p) const {
    if (p.header) return HeaderPlace();
    if (p.chip < 0) return FindingPlace{};
    return ProtoPlace(p.chip, p.stream, p.instr);
  }

  // " at t.txtpb:40:5", or "" without a location.
  std::string Location(const FindingPlace& p) const {
    if (p.location.line <= 0 || options_.file_name.empty()) return "";
    return absl::StrCat(" at ", options_.file_name, ":", p.location.line, ":",
                        p.location.column);
  }

  // "chip 1, stream 0, instruction 7 (Transfer) at t.txtpb:40:5".
  std::string Mention(const FindingPlace& p) const {
    return p.Text() + Location(p);
  }

  FindingPlace HeaderPlace() const {
    FindingPlace p;
    p.location = loc_.header;
    return p;
  }

  void Semantic() {
    absl::StatusOr<Program> program = ValidateAndDecode(trace_, hw_.Target());
    if (!program.ok()) {
      // A rule above should have caught it; never hide an error.
      Add("decode", Severity::kError, {},
          std::string(program.status().message()));
      return;
    }
    const Program& p = *program;
    entry_of_.assign(num_chips_, -1);
    for (int c = 0; c < trace_.chips_size(); ++c) {
      entry_of_[trace_.chips(c).chip()] = c;
    }
    uint64_t total = 0;
    for (const ChipProgram& c : p.chips) {
      for (const StreamProgram& s : c.streams) total += s.instrs.size();
    }
    if (total == 0) {
      Add("empty-trace", Severity::kError, HeaderPlace(),
          absl::StrCat("the trace has no instructions (", num_chips_,
                       " chip(s), ", trace_.chips_size(),
                       " chip program(s)): nothing to check or replay"));
      return;
    }
    TransferOverlap(p);
    ClockRange(p);
    MessageCounts(p);
    WriteMsg(p);
    if (options_.happens_before) HappensBeforeRules(p);
  }

  template <typename F>
  void ForEachInstr(const Program& p, F f) {
    for (uint32_t c = 0; c < p.num_chips; ++c) {
      for (uint32_t s = 0; s < p.chips[c].streams.size(); ++s) {
        const StreamProgram& sp = p.chips[c].streams[s];
        for (uint32_t i = 0; i < sp.instrs.size(); ++i) {
          f(InstrRef{c, s, i}, sp.instrs[i]);
        }
      }
    }
  }

  void TransferOverlap(const Program& p) {
    ForEachInstr(p, [&](InstrRef r, const Instr& in) {
      if (in.kind != OpKind::kTransfer || in.peer != r.chip) return;
      const uint64_t lo = std::max(in.src_addr, in.dst_addr);
      const uint64_t hi =
          std::min(in.src_addr + in.bytes, in.dst_addr + in.bytes);
      if (lo >= hi) return;
      Add("transfer-overlap", Severity::kError, RefPlace(r),
          absl::StrCat("local copy reads [", in.src_addr, ", ",
                       in.src_addr + in.bytes, ") and writes [", in.dst_addr,
                       ", ", in.dst_addr + in.bytes,
                       ") of the same GMEM: the ranges overlap on [", lo, ", ",
                       hi, "), so the result depends on the copy order"));
    });
  }

  // An instruction whose own time, one hop from its peer, passes the
  // picosecond clock's range (hw/budget.h) could only wrap in a replay.
  void ClockRange(const Program& p) {
    ForEachInstr(p, [&](InstrRef r, const Instr& in) {
      std::string why = InstrTimeProblem(in, r.chip, hw_);
      if (!why.empty()) {
        Add("clock-range", Severity::kError, RefPlace(r), std::move(why));
      }
    });
  }

  void MessageCounts(const Program& p) {
    struct Counter {
      uint64_t delivered = 0;
      InstrRef a_sender;
      bool has_sender = false;
      uint64_t demand = 0;  // all streams
      InstrRef last_wait;
      uint32_t streams = 0;
    };
    std::map<std::pair<uint32_t, uint32_t>, Counter> counters;
    ForEachInstr(p, [&](InstrRef r, const Instr& in) {
      if (!IsMessage(in.kind)) return;
      const uint32_t dest = MessageDest(r.chip, in);
      Counter& k = counters[{dest, in.dst_qp}];
      ++k.delivered;
      if (!k.has_sender) k.a_sender = r;
      k.has_sender = true;
    });
    for (uint32_t c = 0; c < p.num_chips; ++c) {
      for (uint32_t s = 0; s < p.chips[c].streams.size(); ++s) {
        const StreamProgram& sp = p.chips[c].streams[s];
        absl::flat_hash_map<uint32_t, uint64_t> demand;
        for (uint32_t i = 0; i < sp.instrs.size(); ++i) {
          const Instr& in = sp.instrs[i];
          if (in.kind != OpKind::kMsgWait) continue;
          Counter& k = counters[{c, in.dst_qp}];
          uint64_t& d = demand[in.dst_qp];
          const bool was_ok = d <= k.delivered;
          if (d == 0) ++k.streams;
          d += in.count;
          k.demand += in.count;
          k.last_wait = InstrRef{c, s, i};
          if (was_ok && d > k.delivered) {
            std::string from =
                k.has_sender ? absl::StrCat(" (the first from ",
                                            Mention(RefPlace(k.a_sender)), ")")
                             : std::string();
            Add("msg-count", Severity::kError, RefPlace(InstrRef{c, s, i}),
                absl::StrCat("waits for a total of ", d,
                             " message(s) on counter ", in.dst_qp, " of chip ",
                             c,
                             " (this stream's waits up to here), but the "
                             "trace sends only ",
                             k.delivered, " message(s) to it", from,
                             ": the wait can never be released"));
          }
        }
      }
    }
    for (const auto& [key, k] : counters) {
      if (k.demand > k.delivered && k.streams > 1 &&
          !AnyError("msg-count", key)) {
        Add("msg-count", Severity::kError, RefPlace(k.last_wait),
            absl::StrCat("the waits of ", k.streams, " streams on counter ",
                         key.second, " of chip ", key.first, " consume ",
                         k.demand,
                         " message(s) together, but the trace sends only ",
                         k.delivered, ": some wait can never be released"));
      } else if (k.delivered > k.demand) {
        FindingPlace place;
        place.chip = key.first;
        Add("msg-unconsumed", Severity::kWarning, place,
            absl::StrCat(
                "counter ", key.second, " of chip ", key.first, " receives ",
                k.delivered, " message(s) (the first from ",
                Mention(RefPlace(k.a_sender)), ") but its waits consume ",
                k.demand, ": ", k.delivered - k.demand,
                " remain when the trace ends and would satisfy a "
                "later trace's wait"));
      }
    }
  }

  bool AnyError(absl::string_view rule, std::pair<uint32_t, uint32_t> key) {
    const std::string needle =
        absl::StrCat("counter ", key.second, " of chip ", key.first, " ");
    for (const Finding& f : out_) {
      if (f.rule == rule && f.message.find(needle) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  // Every cross-chip Transfer must be followed, in its stream, by a
  // RemoteMsgSend to the same chip on the same qp (or by a Fence and then a
  // RemoteMsgSend to that chip on any qp); otherwise the destination cannot
  // know when the data has landed.
  void WriteMsg(const Program& p) {
    // Per chip: ranges read there (Transfer/Send sources) and the header's
    // output buffer, to tell whether a write's data is consumed.
    std::vector<std::vector<std::pair<uint64_t, uint64_t>>> reads(p.num_chips);
    ForEachInstr(p, [&](InstrRef r, const Instr& in) {
      if (in.kind == OpKind::kTransfer || in.kind == OpKind::kSend) {
        reads[r.chip].push_back({in.src_addr, in.src_addr + in.bytes});
      }
    });
    if (trace_.header().has_collective()) {
      for (const v1::ChipBuffers& b : trace_.header().collective().buffers()) {
        if (b.output().bytes() > 0) {
          reads[b.chip()].push_back(
              {b.output().addr(), b.output().addr() + b.output().bytes()});
        }
      }
    }
    std::vector<std::vector<uint64_t>> max_hi(p.num_chips);
    for (uint32_t c = 0; c < p.num_chips; ++c) {
      std::sort(reads[c].begin(), reads[c].end());
      uint64_t m = 0;
      for (const auto& [lo, hi] : reads[c]) {
        m = std::max(m, hi);
        max_hi[c].push_back(m);
      }
    }
    auto consumed = [&](uint32_t chip, uint64_t lo, uint64_t hi) {
      const auto& v = reads[chip];
      // Intervals starting before hi; any of them ending after lo overlaps.
      const auto n = static_cast<size_t>(
          std::lower_bound(v.begin(), v.end(),
                           std::make_pair(hi, uint64_t{0})) -
          v.begin());
      return n > 0 && max_hi[chip][n - 1] > lo;
    };
    for (uint32_t c = 0; c < p.num_chips; ++c) {
      for (uint32_t s = 0; s < p.chips[c].streams.size(); ++s) {
        const StreamProgram& sp = p.chips[c].streams[s];
        absl::flat_hash_set<uint64_t> msg_later;  // (qp, dst)
        absl::flat_hash_set<uint32_t> any_later;  // dst, any qp
        absl::flat_hash_set<uint32_t> fenced;     // dst: Fence, then a msg
        for (uint32_t i = static_cast<uint32_t>(sp.instrs.size()); i-- > 0;) {
          const Instr& in = sp.instrs[i];
          if (in.kind == OpKind::kRemoteMsgSend) {
            msg_later.insert((uint64_t{in.qp_id} << 32) | in.peer);
            any_later.insert(in.peer);
          } else if (in.kind == OpKind::kFence) {
            fenced.insert(any_later.begin(), any_later.end());
          } else if (in.kind == OpKind::kTransfer && in.peer != c) {
            if (msg_later.contains((uint64_t{in.qp_id} << 32) | in.peer) ||
                fenced.contains(in.peer)) {
              continue;
            }
            const bool used =
                consumed(in.peer, in.dst_addr, in.dst_addr + in.bytes);
            Add("write-msg", used ? Severity::kError : Severity::kWarning,
                RefPlace(InstrRef{c, s, i}),
                absl::StrCat(
                    "writes [", in.dst_addr, ", ", in.dst_addr + in.bytes,
                    ") on chip ", in.peer, " but no RemoteMsgSend to chip ",
                    in.peer, " on qp ", in.qp_id,
                    " follows it in this stream (nor a Fence and then a "
                    "message to that chip): chip ",
                    in.peer, " cannot know when the data has landed",
                    used ? absl::StrCat(", and it uses that memory (reads it "
                                        "or returns it as output)")
                         : std::string(" (write + msg contract, "
                                       "docs/spec-notes.md §4)")));
          }
        }
      }
    }
  }

  std::string Range(uint64_t lo, uint64_t hi) {
    return absl::StrCat("[", lo, ", ", hi, ")");
  }

  // What instruction `r` does to GMEM [lo, hi) of `chip`, for race messages.
  std::string Role(const Program& p, InstrRef r, uint32_t chip, bool writes) {
    const Instr& in = p.chips[r.chip].streams[r.stream].instrs[r.instr];
    switch (in.kind) {
      case OpKind::kTransfer:
        if (writes) {
          return absl::StrCat(
              in.reduce_sum ? "reduces into it (REDUCE_SUM, " : "writes it (",
              r.chip == chip ? std::string("local copy)")
                             : absl::StrCat("from chip ", r.chip, ")"));
        }
        return absl::StrCat("reads it (source of a Transfer to chip ", in.peer,
                            ")");
      case OpKind::kSend:
        return absl::StrCat("reads it (source of a Send to chip ", in.peer,
                            ")");
      case OpKind::kReceive:
        return absl::StrCat("writes it (Receive from chip ", in.peer, ")");
      default:
        return "accesses it";
    }
  }

  void HappensBeforeRules(const Program& p) {
    const HbResult hb = AnalyzeHappensBefore(p, options_.race);
    for (const WaitCycle& cyc : hb.cycles) {
      std::vector<std::string> steps;
      for (const WaitCycle::Link& l : cyc.links) {
        const Instr& w =
            p.chips[l.wait.chip].streams[l.wait.stream].instrs[l.wait.instr];
        steps.push_back(absl::StrCat(Mention(RefPlace(l.wait)),
                                     " waits on counter ", w.dst_qp, " for ",
                                     Mention(RefPlace(l.message)),
                                     ", which its stream issues only after"));
      }
      steps.push_back(absl::StrCat("the first wait again"));
      std::string behind;
      if (cyc.blocked_behind > 0) {
        behind = absl::StrCat(" (", cyc.blocked_behind,
                              " more stream(s) are blocked behind it)");
      }
      AddRelated("deadlock", Severity::kError, RefPlace(cyc.links[0].wait),
                 RefPlace(cyc.links[0].message),
                 absl::StrCat("cycle of waits, no schedule can release it: ",
                              absl::StrJoin(steps, " "), behind));
    }
    for (const InstrRef& w : hb.unsatisfiable) {
      const FindingPlace place = RefPlace(w);
      bool counted = false;  // already a msg-count finding
      for (const Finding& f : out_) {
        counted |= f.rule == "msg-count" && f.place.chip == place.chip &&
                   f.place.stream == place.stream &&
                   f.place.instr <= place.instr;
      }
      if (counted) continue;
      const Instr& in = p.chips[w.chip].streams[w.stream].instrs[w.instr];
      Add("deadlock", Severity::kError, place,
          absl::StrCat("can never be released: of the messages sent to "
                       "counter ",
                       in.dst_qp, " of chip ", w.chip,
                       ", too few can arrive before it (the others are "
                       "issued only after this wait)"));
    }
    for (const MemoryRace& race : hb.races) {
      const FindingPlace first = RefPlace(race.first);
      std::string msg = absl::StrCat(
          "race on chip ", race.chip, " GMEM ", Range(race.begin, race.end),
          ": this instruction ",
          Role(p, race.second, race.chip, race.second_writes), " and ",
          Mention(first), " ",
          Role(p, race.first, race.chip, race.first_writes),
          "; neither is ordered before the other by stream order, messages "
          "or fences");
      if (race.both_reduce) {
        absl::StrAppend(&msg,
                        " (both are REDUCE_SUM: the sum is the same in any "
                        "order up to rounding)");
      }
      AddRelated(race.both_reduce ? "race-reduce" : "race",
                 race.both_reduce ? Severity::kWarning : Severity::kError,
                 RefPlace(race.second), first, std::move(msg));
    }
    if (hb.races_found > hb.races.size()) {
      Add("race", Severity::kError, {},
          absl::StrCat(hb.races_found - hb.races.size(),
                       " more race(s) not listed (", hb.races_found,
                       " in all)"));
    }
    if (!hb.complete) {
      Add("analysis-limit", Severity::kWarning, {},
          absl::StrCat(hb.note,
                       "; races and wait cycles beyond it are not "
                       "reported"));
    }
  }

  const v1::Trace& trace_;
  const HwConfig& hw_;
  const TraceLocations& loc_;
  const CheckOptions& options_;
  uint32_t num_chips_ = 0;
  std::vector<int> entry_of_;  // chip id -> index in trace.chips, -1 = none
  std::vector<Finding> out_;
};

}  // namespace

std::string FindingPlace::Text() const {
  return PlaceText(chip, stream, instr, kind);
}

std::string FormatFinding(const Finding& f, const std::string& file) {
  std::string s = file;
  if (f.place.location.line > 0) {
    absl::StrAppend(&s, ":", f.place.location.line, ":",
                    f.place.location.column);
  }
  absl::StrAppend(&s, ": ");
  const std::string place = f.place.Text();
  if (!place.empty()) absl::StrAppend(&s, place, ": ");
  absl::StrAppend(&s, SeverityName(f.severity), " [", f.rule, "]: ", f.message);
  return s;
}

namespace {
void AddPlace(Json* object, const FindingPlace& p) {
  Json& o = *object;
  o["chip"] = p.chip;
  o["stream"] = p.stream;
  o["instruction"] = p.instr;
  o["kind"] = p.kind;
  o["line"] = p.location.line;
  o["column"] = p.location.column;
}
}  // namespace

std::string FindingsJson(const std::vector<Finding>& findings,
                         const std::string& file) {
  Json list = Json::array();
  for (const Finding& f : findings) {
    Json o = {{"rule", f.rule}, {"severity", SeverityName(f.severity)}};
    AddPlace(&o, f.place);
    o["message"] = f.message;
    if (f.has_related) {
      Json related = Json::object();
      AddPlace(&related, f.related);
      o["related"] = std::move(related);
    }
    list.push_back(std::move(o));
  }
  return JsonText({{"file", file},
                   {"errors", CountSeverity(findings, Severity::kError)},
                   {"warnings", CountSeverity(findings, Severity::kWarning)},
                   {"findings", std::move(list)}});
}

size_t CountSeverity(const std::vector<Finding>& findings, Severity s) {
  return static_cast<size_t>(
      std::count_if(findings.begin(), findings.end(),
                    [s](const Finding& f) { return f.severity == s; }));
}

std::vector<Finding> CheckTrace(const v1::Trace& trace, const HwConfig& hw,
                                const TraceLocations& locations,
                                const CheckOptions& options) {
  return Checker(trace, hw, locations, options).Run();
}

const std::vector<RuleInfo>& CheckRules() {
  static const auto* rules = [] {
    auto* all = new std::vector<RuleInfo>(TraceRules());
    all->insert(
        all->end(),
        {
            {"empty-trace", Severity::kError, "the trace has instructions"},
            {"transfer-overlap", Severity::kError,
             "a local copy's source and destination do not overlap"},
            {"clock-range", Severity::kError,
             "each instruction's own time on the hardware fits the "
             "picosecond clock (2^62 ps)"},
            {"msg-count", Severity::kError,
             "every MsgWait can be satisfied by the messages sent to its "
             "counter"},
            {"msg-unconsumed", Severity::kWarning,
             "every message sent is consumed by some wait"},
            {"write-msg", Severity::kError,
             "a cross-chip Transfer is followed by a RemoteMsgSend to the same "
             "chip "
             "on the same qp (error if the data is used, else warning)"},
            {"deadlock", Severity::kError, "no cycle of waits"},
            {"race", Severity::kError,
             "no unordered pair of overlapping GMEM accesses with a write"},
            {"race-reduce", Severity::kWarning,
             "no unordered pair of REDUCE_SUM writes to overlapping GMEM"},
            {"analysis-limit", Severity::kWarning,
             "the happens-before analysis ran to completion"},
            {"decode", Severity::kError,
             "the trace decodes (a safety net behind the rules above)"},
        });
    return all;
  }();
  return *rules;
}

}  // namespace ccreplay
