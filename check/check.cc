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
#include "google/protobuf/unknown_field_set.h"
#include "trace/decode.h"

namespace ccreplay {
namespace {

bool RangeOverflows(uint64_t addr, uint64_t bytes) {
  return bytes > std::numeric_limits<uint64_t>::max() - addr;
}

absl::string_view KindName(const v1::Instruction& in) {
  switch (in.kind_case()) {
    case v1::Instruction::kTransfer:
      return OpKindName(OpKind::kTransfer);
    case v1::Instruction::kSend:
      return OpKindName(OpKind::kSend);
    case v1::Instruction::kReceive:
      return OpKindName(OpKind::kReceive);
    case v1::Instruction::kMsgSend:
      return OpKindName(OpKind::kMsgSend);
    case v1::Instruction::kMsgWait:
      return OpKindName(OpKind::kMsgWait);
    case v1::Instruction::kRemoteMsgSend:
      return OpKindName(OpKind::kRemoteMsgSend);
    case v1::Instruction::kFence:
      return OpKindName(OpKind::kFence);
    case v1::Instruction::KIND_NOT_SET:
      break;
  }
  return "no kind";
}

const google::protobuf::UnknownFieldSet& Unknown(
    const google::protobuf::Message& m) {
  return m.GetReflection()->GetUnknownFields(m);
}

std::string UnknownFieldNumbers(const google::protobuf::UnknownFieldSet& u) {
  std::vector<int> numbers;
  for (int i = 0; i < u.field_count(); ++i) {
    if (std::find(numbers.begin(), numbers.end(), u.field(i).number()) ==
        numbers.end()) {
      numbers.push_back(u.field(i).number());
    }
  }
  return absl::StrJoin(numbers, ", ");
}

class Checker {
 public:
  Checker(const v1::Trace& trace, const HwConfig& hw,
          const TraceLocations& locations, const CheckOptions& options)
      : trace_(trace), hw_(hw), loc_(locations), options_(options) {}

  std::vector<Finding> Run() {
    CheckHeader();
    if (num_chips_ > 0) {
      CheckChips();
      CheckMatching();
    }
    if (!HasErrors()) Semantic();
    std::stable_sort(
        out_.begin(), out_.end(), [](const Finding& a, const Finding& b) {
          return std::tie(a.place.chip, a.place.stream, a.place.instr, a.rule) <
                 std::tie(b.place.chip, b.place.stream, b.place.instr, b.rule);
        });
    return std::move(out_);
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
    p.kind = std::string(KindName(chip.streams(s).instructions(i)));
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

  // "chip 1, stream 0, instruction 7 (Transfer) at t.txtpb:40:5".
  std::string Mention(const FindingPlace& p) const {
    std::string s = p.Text();
    if (p.location.line > 0 && !options_.file_name.empty()) {
      absl::StrAppend(&s, " at ", options_.file_name, ":", p.location.line, ":",
                      p.location.column);
    }
    return s;
  }

  FindingPlace HeaderPlace() const {
    FindingPlace p;
    p.location = loc_.header;
    return p;
  }

  void CheckHeader() {
    if (!trace_.has_header()) {
      Add("header", Severity::kError, {}, "trace has no header");
      return;
    }
    const v1::TraceHeader& h = trace_.header();
    if (!Unknown(h).empty()) {
      Add("unknown-field", Severity::kError, HeaderPlace(),
          absl::StrCat("header has field(s) ", UnknownFieldNumbers(Unknown(h)),
                       " that schema v1 does not define"));
    }
    if (!Unknown(trace_).empty()) {
      Add("unknown-field", Severity::kError, {},
          absl::StrCat("trace has field(s) ",
                       UnknownFieldNumbers(Unknown(trace_)),
                       " that schema v1 does not define"));
    }
    if (h.format_version() != v1::FORMAT_VERSION_1) {
      Add("header", Severity::kError, HeaderPlace(),
          absl::StrCat("header.format_version is ",
                       static_cast<int>(h.format_version()),
                       ", expected 1 (FORMAT_VERSION_1)"));
      return;
    }
    if (h.num_chips() < 1 || h.num_chips() > kMaxChips) {
      Add("header", Severity::kError, HeaderPlace(),
          absl::StrCat("header.num_chips is ", h.num_chips(),
                       ", must be in [1, ", kMaxChips, "]"));
      return;
    }
    if (hw_.cdma_engines == 0) {
      Add("hw-mismatch", Severity::kError, {},
          "hardware config has no CDMA engines (cdma.engines_per_chip is 0)");
      return;
    }
    if (hw_.num_chips != 0 && hw_.num_chips != h.num_chips()) {
      Add("hw-mismatch", Severity::kError, HeaderPlace(),
          absl::StrCat("the trace has ", h.num_chips(),
                       " chips (header.num_chips), but the hardware config '",
                       hw_.name, "' has ", hw_.num_chips,
                       " (topology.num_chips)"));
      return;
    }
    num_chips_ = h.num_chips();
    if (h.has_collective()) CheckCollective(h.collective());
  }

  void CheckCollective(const v1::CollectiveInfo& c) {
    const std::string w = "header.collective";
    auto bad = [&](std::string m) {
      Add("collective", Severity::kError, HeaderPlace(), std::move(m));
    };
    if (!v1::CollectiveOp_IsValid(c.op())) {
      bad(absl::StrCat(w, ".op ", static_cast<int>(c.op()),
                       " is not a known CollectiveOp"));
    }
    if (c.n() < 1 || c.n() > num_chips_) {
      bad(absl::StrCat(w, ".n is ", c.n(), ", must be in [1, ", num_chips_,
                       "] (header.num_chips)"));
    }
    if (c.cdma_engines_used() > hw_.cdma_engines) {
      bad(absl::StrCat(w, ".cdma_engines_used is ", c.cdma_engines_used(),
                       ", but the hardware has ", hw_.cdma_engines,
                       " CDMA engines per chip"));
    }
    absl::flat_hash_map<uint32_t, int> seen;
    for (int i = 0; i < c.buffers_size(); ++i) {
      const v1::ChipBuffers& b = c.buffers(i);
      const std::string place = absl::StrCat(w, ".buffers[", i, "]");
      if (b.chip() >= num_chips_) {
        bad(absl::StrCat(place, ": chip ", b.chip(), " out of range [0, ",
                         num_chips_, ")"));
      } else if (auto [it, ins] = seen.try_emplace(b.chip(), i); !ins) {
        bad(absl::StrCat(place, ": chip ", b.chip(),
                         " listed twice (also buffers[", it->second, "])"));
      }
      for (const auto& [name, r] :
           {std::pair<const char*, const v1::BufferRange*>("input", &b.input()),
            std::pair<const char*, const v1::BufferRange*>("output",
                                                           &b.output())}) {
        if (RangeOverflows(r->addr(), r->bytes())) {
          bad(absl::StrCat(place, ".", name, ": addr ", r->addr(), " + bytes ",
                           r->bytes(), " overflows 2^64"));
        }
      }
    }
  }

  void CheckChips() {
    absl::flat_hash_map<uint32_t, int> seen;
    entry_of_.assign(num_chips_, -1);
    for (int c = 0; c < trace_.chips_size(); ++c) {
      const v1::ChipProgram& chip = trace_.chips(c);
      if (!Unknown(chip).empty()) {
        Add("unknown-field", Severity::kError, ProtoPlace(c),
            absl::StrCat("chips[", c, "] has field(s) ",
                         UnknownFieldNumbers(Unknown(chip)),
                         " that schema v1 does not define"));
      }
      if (chip.chip() >= num_chips_) {
        FindingPlace p = ProtoPlace(c);
        Add("chip-range", Severity::kError, p,
            absl::StrCat("chips[", c, "]: chip ", chip.chip(),
                         " out of range [0, ", num_chips_,
                         ") (header.num_chips)"));
        continue;
      }
      if (auto [it, ins] = seen.try_emplace(chip.chip(), c); !ins) {
        AddRelated("chip-duplicate", Severity::kError, ProtoPlace(c),
                   ProtoPlace(it->second),
                   absl::StrCat("chips[", c, "]: chip ", chip.chip(),
                                " listed twice (also chips[", it->second, "], ",
                                Mention(ProtoPlace(it->second)), ")"));
        continue;
      }
      entry_of_[chip.chip()] = c;
      absl::flat_hash_map<uint32_t, int> ids;
      for (int s = 0; s < chip.streams_size(); ++s) {
        const v1::Stream& st = chip.streams(s);
        if (!Unknown(st).empty()) {
          Add("unknown-field", Severity::kError, ProtoPlace(c, s),
              absl::StrCat("stream has field(s) ",
                           UnknownFieldNumbers(Unknown(st)),
                           " that schema v1 does not define"));
        }
        if (auto [it, ins] = ids.try_emplace(st.id(), s); !ins) {
          AddRelated("stream-duplicate", Severity::kError, ProtoPlace(c, s),
                     ProtoPlace(c, it->second),
                     absl::StrCat("chip ", chip.chip(), ": stream id ", st.id(),
                                  " listed twice (streams[", it->second,
                                  "] and streams[", s, "])"));
        }
        for (int i = 0; i < st.instructions_size(); ++i) {
          CheckInstr(c, s, i);
        }
      }
    }
  }

  void InstrErr(absl::string_view rule, int c, int s, int i,
                std::string message) {
    Add(rule, Severity::kError, ProtoPlace(c, s, i), std::move(message));
  }

  bool CheckQp(int c, int s, int i, uint32_t qp) {
    if (CdmaOfQp(qp) < hw_.cdma_engines) return true;
    InstrErr("qp-encoding", c, s, i,
             absl::StrCat("qp_id ", qp, " names cdma_id ", CdmaOfQp(qp),
                          " (vc_bank ", VcOfQp(qp),
                          ", by the encoding qp_id = (cdma_id << 2) | "
                          "vc_bank), but cdma_id must be in [0, ",
                          hw_.cdma_engines, "): the hardware has ",
                          hw_.cdma_engines, " CDMA engines per chip"));
    return false;
  }
  void CheckCounter(int c, int s, int i, absl::string_view field, uint32_t id) {
    if (id < hw_.num_qps()) return;
    InstrErr("counter-range", c, s, i,
             absl::StrCat(field, " ", id, " out of range [0, ", hw_.num_qps(),
                          ") (message counters are qp ids: ", hw_.cdma_engines,
                          " CDMA engines x ", kVcBanksPerCdma, " VC banks)"));
  }
  bool CheckPeer(int c, int s, int i, absl::string_view field, uint32_t peer,
                 bool remote) {
    if (peer >= num_chips_) {
      InstrErr("peer-range", c, s, i,
               absl::StrCat(field, " ", peer, " out of range [0, ", num_chips_,
                            ") (header.num_chips)"));
      return false;
    }
    if (remote && peer == trace_.chips(c).chip()) {
      InstrErr(
          "peer-self", c, s, i,
          absl::StrCat(field, " ", peer, " is the instruction's own chip; ",
                       KindName(trace_.chips(c).streams(s).instructions(i)),
                       " needs another chip (a local copy is a Transfer "
                       "to the own chip)"));
      return false;
    }
    return true;
  }
  void CheckBytes(int c, int s, int i, uint64_t bytes) {
    if (bytes == 0) InstrErr("zero-bytes", c, s, i, "bytes is 0, must be > 0");
  }
  void CheckRange(int c, int s, int i, absl::string_view field, uint64_t addr,
                  uint64_t bytes) {
    if (!RangeOverflows(addr, bytes)) return;
    InstrErr("range-overflow", c, s, i,
             absl::StrCat(field, " ", addr, " + bytes ", bytes,
                          " overflows 2^64 (the range's end must fit in 64 "
                          "bits)"));
  }

  struct TwoSided {
    int c, s, i;
    uint64_t bytes;
  };

  void CheckInstr(int c, int s, int i) {
    const v1::Instruction& in = trace_.chips(c).streams(s).instructions(i);
    const uint32_t chip = trace_.chips(c).chip();
    if (!Unknown(in).empty()) {
      InstrErr("unknown-field", c, s, i,
               absl::StrCat("instruction has field(s) ",
                            UnknownFieldNumbers(Unknown(in)),
                            " that schema v1 does not define"));
    }
    switch (in.kind_case()) {
      case v1::Instruction::kTransfer: {
        const v1::Transfer& t = in.transfer();
        UnknownData(c, s, i, t, false);
        CheckQp(c, s, i, t.qp_id());
        CheckPeer(c, s, i, "dst_chip", t.dst_chip(), false);
        CheckBytes(c, s, i, t.bytes());
        CheckRange(c, s, i, "src_addr", t.src_addr(), t.bytes());
        CheckRange(c, s, i, "dst_addr", t.dst_addr(), t.bytes());
        if (!v1::ReduceOp_IsValid(t.reduce())) {
          InstrErr("reduce-op", c, s, i,
                   absl::StrCat("reduce ", static_cast<int>(t.reduce()),
                                " is not a known ReduceOp (REDUCE_NONE = 0, "
                                "REDUCE_SUM = 1)"));
        }
        return;
      }
      case v1::Instruction::kSend: {
        const v1::Send& t = in.send();
        UnknownData(c, s, i, t, false);
        CheckQp(c, s, i, t.qp_id());
        const bool peer_ok = CheckPeer(c, s, i, "dst_chip", t.dst_chip(), true);
        CheckBytes(c, s, i, t.bytes());
        CheckRange(c, s, i, "src_addr", t.src_addr(), t.bytes());
        if (peer_ok) {
          pairs_[{chip, t.dst_chip()}].first.push_back({c, s, i, t.bytes()});
        }
        return;
      }
      case v1::Instruction::kReceive: {
        const v1::Receive& t = in.receive();
        UnknownData(c, s, i, t, false);
        CheckQp(c, s, i, t.qp_id());
        const bool peer_ok = CheckPeer(c, s, i, "src_chip", t.src_chip(), true);
        CheckBytes(c, s, i, t.bytes());
        CheckRange(c, s, i, "dst_addr", t.dst_addr(), t.bytes());
        if (peer_ok) {
          pairs_[{t.src_chip(), chip}].second.push_back({c, s, i, t.bytes()});
        }
        return;
      }
      case v1::Instruction::kMsgSend: {
        const v1::MsgSend& t = in.msg_send();
        UnknownData(c, s, i, t, true);
        CheckQp(c, s, i, t.qp_id());
        CheckCounter(c, s, i, "dst_qp_id", t.dst_qp_id());
        return;
      }
      case v1::Instruction::kMsgWait: {
        const v1::MsgWait& t = in.msg_wait();
        UnknownData(c, s, i, t, true);
        CheckCounter(c, s, i, "qp_id", t.qp_id());
        if (t.count() < 1) {
          InstrErr("wait-count", c, s, i, "count is 0, must be >= 1");
        }
        return;
      }
      case v1::Instruction::kRemoteMsgSend: {
        const v1::RemoteMsgSend& t = in.remote_msg_send();
        UnknownData(c, s, i, t, true);
        CheckQp(c, s, i, t.qp_id());
        CheckPeer(c, s, i, "dst_chip", t.dst_chip(), true);
        CheckCounter(c, s, i, "dst_qp_id", t.dst_qp_id());
        return;
      }
      case v1::Instruction::kFence:
        UnknownData(c, s, i, in.fence(), true);
        return;
      case v1::Instruction::KIND_NOT_SET:
        break;
    }
    InstrErr("no-kind", c, s, i,
             "instruction has no kind (none of transfer, send, receive, "
             "msg_send, msg_wait, remote_msg_send, fence is set)");
  }

  // Fields the schema does not know, inside the instruction's own message.
  // On a message-only instruction they are data it must not carry.
  template <typename M>
  void UnknownData(int c, int s, int i, const M& m, bool msg_only) {
    if (Unknown(m).empty()) return;
    const std::string numbers = UnknownFieldNumbers(Unknown(m));
    if (msg_only) {
      InstrErr("msg-data-fields", c, s, i,
               absl::StrCat(
                   KindName(trace_.chips(c).streams(s).instructions(i)),
                   " carries field(s) ", numbers,
                   " beyond its schema: message-only instructions (MsgSend, "
                   "MsgWait, RemoteMsgSend, Fence) move no data and take no "
                   "addresses or sizes"));
    } else {
      InstrErr("unknown-field", c, s, i,
               absl::StrCat("instruction carries field(s) ", numbers,
                            " that schema v1 does not define"));
    }
  }

  // The k-th Send from A to B matches the k-th Receive on B from A.
  void CheckMatching() {
    for (auto& [key, sides] : pairs_) {
      const auto [src, dst] = key;
      std::vector<TwoSided>& sends = sides.first;
      std::vector<TwoSided>& receives = sides.second;
      const std::string counts =
          absl::StrCat("chip ", src, " has ", sends.size(), " Send(s) to chip ",
                       dst, ", but chip ", dst, " has ", receives.size(),
                       " Receive(s) from chip ", src);
      if (sends.size() > receives.size()) {
        const TwoSided& t = sends[receives.size()];
        InstrErr("send-receive", t.c, t.s, t.i,
                 absl::StrCat("no matching Receive: ", counts));
        continue;
      }
      if (receives.size() > sends.size()) {
        const TwoSided& t = receives[sends.size()];
        InstrErr("send-receive", t.c, t.s, t.i,
                 absl::StrCat("no matching Send: ", counts));
        continue;
      }
      auto one_stream = [](const std::vector<TwoSided>& v) {
        for (const TwoSided& t : v) {
          if (t.c != v[0].c || t.s != v[0].s) return false;
        }
        return true;
      };
      if (one_stream(sends) && one_stream(receives)) {
        for (size_t k = 0; k < sends.size(); ++k) {
          if (sends[k].bytes == receives[k].bytes) continue;
          const FindingPlace rp =
              ProtoPlace(receives[k].c, receives[k].s, receives[k].i);
          AddRelated("send-receive", Severity::kError,
                     ProtoPlace(sends[k].c, sends[k].s, sends[k].i), rp,
                     absl::StrCat("sends ", sends[k].bytes, " bytes to chip ",
                                  dst, ", but its matching Receive (number ", k,
                                  " between these chips), ", Mention(rp),
                                  ", expects ", receives[k].bytes, " bytes"));
          break;
        }
        continue;
      }
      auto by_bytes = [](const TwoSided& a, const TwoSided& b) {
        return a.bytes < b.bytes;
      };
      std::vector<TwoSided> ss = sends, rs = receives;
      std::stable_sort(ss.begin(), ss.end(), by_bytes);
      std::stable_sort(rs.begin(), rs.end(), by_bytes);
      for (size_t k = 0; k < ss.size(); ++k) {
        if (ss[k].bytes == rs[k].bytes) continue;
        const TwoSided& t = ss[k].bytes < rs[k].bytes ? ss[k] : rs[k];
        InstrErr("send-receive", t.c, t.s, t.i,
                 absl::StrCat(
                     "no ", &t == &ss[k] ? "Receive" : "Send", " of ", t.bytes,
                     " bytes between chip ", src, " and chip ", dst,
                     " is left to match it (sizes compared as a multiset: "
                     "the pair's Sends or Receives are in several streams)"));
        break;
      }
    }
  }

  // ---- Rules on the decoded program. ----

  void Semantic() {
    absl::StatusOr<Program> program = ValidateAndDecode(trace_, hw_.Target());
    if (!program.ok()) {
      // A rule above should have caught it; never hide an error.
      Add("decode", Severity::kError, {},
          std::string(program.status().message()));
      return;
    }
    const Program& p = *program;
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
      if (in.kind != OpKind::kMsgSend && in.kind != OpKind::kRemoteMsgSend)
        return;
      const uint32_t dest = in.kind == OpKind::kMsgSend ? r.chip : in.peer;
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
                         : std::string(" (write + msg contract, SPEC.md §4)")));
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
  std::map<std::pair<uint32_t, uint32_t>,
           std::pair<std::vector<TwoSided>, std::vector<TwoSided>>>
      pairs_;  // (src, dst) -> (Sends, Receives) in trace order
  std::vector<Finding> out_;
};

}  // namespace

absl::string_view SeverityName(Severity s) {
  return s == Severity::kError ? "error" : "warning";
}

std::string FindingPlace::Text() const {
  if (chip < 0) return "";
  std::string s = absl::StrCat("chip ", chip);
  if (stream >= 0) absl::StrAppend(&s, ", stream ", stream);
  if (instr >= 0) absl::StrAppend(&s, ", instruction ", instr, " (", kind, ")");
  return s;
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
  static const auto* rules = new std::vector<RuleInfo>{
      {"header", Severity::kError,
       "header present, format_version 1, num_chips in [1, 65536]"},
      {"hw-mismatch", Severity::kError,
       "trace and hardware config agree (num_chips, CDMA engines)"},
      {"collective", Severity::kError,
       "header.collective: known op, n, buffers, cdma_engines_used"},
      {"unknown-field", Severity::kError,
       "no field outside schema v1 (binary traces keep unknown fields)"},
      {"chip-range", Severity::kError, "chip ids below num_chips"},
      {"chip-duplicate", Severity::kError, "each chip listed at most once"},
      {"stream-duplicate", Severity::kError, "stream ids unique per chip"},
      {"no-kind", Severity::kError, "every instruction has a kind"},
      {"qp-encoding", Severity::kError,
       "qp_id = (cdma_id << 2) | vc_bank with cdma_id below the CDMA count"},
      {"counter-range", Severity::kError,
       "message counter ids below 4 x CDMA engines"},
      {"peer-range", Severity::kError, "peer chips below num_chips"},
      {"peer-self", Severity::kError,
       "Send, Receive and RemoteMsgSend name another chip"},
      {"zero-bytes", Severity::kError,
       "data-moving instructions move > 0 bytes"},
      {"range-overflow", Severity::kError, "addr + bytes fits in 64 bits"},
      {"reduce-op", Severity::kError, "Transfer.reduce is a known ReduceOp"},
      {"wait-count", Severity::kError, "MsgWait count >= 1"},
      {"msg-data-fields", Severity::kError,
       "message-only instructions carry no data fields"},
      {"send-receive", Severity::kError,
       "the k-th Send A->B matches the k-th Receive on B from A, same size"},
      {"empty-trace", Severity::kError, "the trace has instructions"},
      {"transfer-overlap", Severity::kError,
       "a local copy's source and destination do not overlap"},
      {"msg-count", Severity::kError,
       "every MsgWait can be satisfied by the messages sent to its counter"},
      {"msg-unconsumed", Severity::kWarning,
       "every message sent is consumed by some wait"},
      {"write-msg", Severity::kError,
       "a cross-chip Transfer is followed by a RemoteMsgSend to the same chip "
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
  };
  return *rules;
}

}  // namespace ccreplay
