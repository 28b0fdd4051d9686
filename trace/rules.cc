#include "trace/rules.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/unknown_field_set.h"

namespace ccreplay {
namespace {

std::string RangeOverflowText(absl::string_view addr_field, uint64_t addr,
                              uint64_t bytes) {
  return absl::StrCat(addr_field, " ", addr, " + bytes ", bytes,
                      " overflows 2^64 (the range's end must fit in 64 bits)");
}

const google::protobuf::UnknownFieldSet& Unknown(
    const google::protobuf::Message& m) {
  return m.GetReflection()->GetUnknownFields(m);
}

// "5, 9": each unknown field number once, in the order first seen.
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

// One Send or Receive, for the matching rule, with the ids its place text
// names (its chip may be gone when the matching runs).
struct TwoSided {
  TracePlace place;
  uint32_t chip_id = 0;
  uint32_t stream_id = 0;
  uint64_t bytes = 0;
};

}  // namespace

// The runner: the rules in the order documented on RuleSink, fed the header
// and then one chip at a time.
class TraceRuleRunner::Rules {
 public:
  Rules(const v1::Trace* whole, const v1::TraceHeader* header,
        const TraceTarget& hw, const RuleOptions& options, RuleSink* sink)
      : whole_(whole),
        header_(header),
        hw_(hw),
        options_(options),
        sink_(*sink) {}

  bool Begin() {
    if (!Header()) return false;
    if (header_->has_collective()) Collective();
    return true;
  }
  void Chip(int c, const v1::ChipProgram& chip) {
    if (sink_.Done()) return;
    chip_ = &chip;
    CheckChip(c);
    chip_ = nullptr;
  }
  bool TakeCheckedChip(int c, uint32_t chip_id) {
    if (sink_.Done() || chip_id >= num_chips_) return false;
    return chip_entry_.try_emplace(chip_id, c).second;
  }
  void End() {
    if (!sink_.Done()) Matching();
  }
  bool Done() const { return sink_.Done(); }

 private:
  // The place text of `p`, a place in the chip being checked.
  std::string TextOf(const TracePlace& p) const {
    if (p.chip < 0 || chip_ == nullptr) return "";
    if (p.stream < 0) return PlaceText(chip_->chip());
    const v1::Stream& s = chip_->streams(p.stream);
    if (p.instr < 0) return PlaceText(chip_->chip(), s.id());
    return PlaceText(chip_->chip(), s.id(), p.instr,
                     InstructionKindName(s.instructions(p.instr)));
  }
  static std::string TextOf(const TwoSided& t, absl::string_view kind) {
    return PlaceText(t.chip_id, t.stream_id, t.place.instr, kind);
  }

  void Report(absl::string_view rule, const TracePlace& p, std::string m,
              const TracePlace* related = nullptr) {
    if (!sink_.Done()) sink_.Report(rule, p, TextOf(p), std::move(m), related);
  }
  void ReportAt(absl::string_view rule, const TracePlace& p,
                const std::string& text, std::string m,
                const TracePlace* related = nullptr) {
    if (!sink_.Done()) sink_.Report(rule, p, text, std::move(m), related);
  }

  void UnknownFields(const google::protobuf::Message& m, const TracePlace& p,
                     absl::string_view what) {
    if (!options_.schema_strict || Unknown(m).empty()) return;
    Report("unknown-field", p,
           absl::StrCat(what, " field(s) ", UnknownFieldNumbers(Unknown(m)),
                        " that schema v1 does not define"));
  }

  // True if the header allows checking the chips.
  bool Header() {
    if (header_ == nullptr) {
      Report("header", TracePlace{}, "trace has no header");
      return false;
    }
    const v1::TraceHeader& h = *header_;
    const TracePlace at = TracePlace::Header();
    UnknownFields(h, at, "header has");
    if (whole_ != nullptr) UnknownFields(*whole_, TracePlace{}, "trace has");
    if (h.format_version() != v1::FORMAT_VERSION_1) {
      Report("header", at,
             absl::StrCat("header.format_version is ",
                          static_cast<int>(h.format_version()),
                          ", expected 1 (FORMAT_VERSION_1)"));
      return false;
    }
    if (h.num_chips() < 1 || h.num_chips() > kMaxChips) {
      Report("header", at,
             absl::StrCat("header.num_chips is ", h.num_chips(),
                          ", must be in [1, ", kMaxChips, "]"));
      return false;
    }
    if (hw_.cdma_engines == 0) {
      Report("hw-mismatch", TracePlace{},
             "hardware config has no CDMA engines (cdma.engines_per_chip is "
             "0)");
      return false;
    }
    if (hw_.num_chips != 0 && hw_.num_chips != h.num_chips()) {
      Report("hw-mismatch", at,
             absl::StrCat(
                 "the trace has ", h.num_chips(),
                 " chips (header.num_chips), but the hardware config '",
                 hw_.name, "' has ", hw_.num_chips, " (topology.num_chips)"));
      return false;
    }
    num_chips_ = h.num_chips();
    return !sink_.Done();
  }

  void Collective() {
    const v1::CollectiveInfo& c = header_->collective();
    const std::string w = "header.collective";
    auto bad = [&](std::string m) {
      Report("collective", TracePlace::Header(), std::move(m));
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

  void CheckChip(int c) {
    const v1::ChipProgram& chip = *chip_;
    const TracePlace at{c, -1, -1, false};
    UnknownFields(chip, at, absl::StrCat("chips[", c, "] has"));
    if (chip.chip() >= num_chips_) {
      Report("chip-range", at,
             absl::StrCat("chips[", c, "]: chip ", chip.chip(),
                          " out of range [0, ", num_chips_,
                          ") (header.num_chips)"));
      return;
    }
    if (auto [it, ins] = chip_entry_.try_emplace(chip.chip(), c); !ins) {
      const TracePlace other{it->second, -1, -1, false};
      Report("chip-duplicate", at,
             absl::StrCat("chips[", c, "]: chip ", chip.chip(),
                          " listed twice (also chips[", it->second, "]",
                          sink_.Where(other), ")"),
             &other);
      return;
    }
    // The first entry of each stream id: linear in the streams, however
    // many a chip has.
    absl::flat_hash_map<uint32_t, int> first_of_id;
    for (int s = 0; s < chip.streams_size() && !sink_.Done(); ++s) {
      const v1::Stream& st = chip.streams(s);
      const TracePlace sp{c, s, -1, false};
      UnknownFields(st, sp, "stream has");
      if (auto [it, ins] = first_of_id.try_emplace(st.id(), s); !ins) {
        const int s2 = it->second;
        const TracePlace other{c, s2, -1, false};
        Report("stream-duplicate", sp,
               absl::StrCat("chip ", chip.chip(), ": stream id ", st.id(),
                            " listed twice (streams[", s2, "] and streams[", s,
                            "])"),
               &other);
      }
      for (int i = 0; i < st.instructions_size() && !sink_.Done(); ++i) {
        Instruction(TracePlace{c, s, i, false}, st.instructions(i));
      }
    }
  }

  void Err(absl::string_view rule, const TracePlace& p, std::string m) {
    Report(rule, p, std::move(m));
  }

  void Qp(const TracePlace& p, uint32_t qp) {
    if (QpInRange(hw_, qp)) return;
    Err("qp-encoding", p,
        absl::StrCat("qp_id ", qp, " names cdma_id ", CdmaOfQp(qp),
                     " (vc_bank ", VcOfQp(qp),
                     ", by the encoding qp_id = (cdma_id << 2) | vc_bank), "
                     "but cdma_id must be in [0, ",
                     hw_.cdma_engines, "): the hardware has ", hw_.cdma_engines,
                     " CDMA engines per chip"));
  }

  void Counter(const TracePlace& p, absl::string_view field, uint32_t id) {
    if (CounterInRange(hw_, id)) return;
    Err("counter-range", p,
        absl::StrCat(field, " ", id, " out of range [0, ", hw_.num_qps(),
                     ") (message counters are qp ids: ", hw_.cdma_engines,
                     " CDMA engines x ", kVcBanksPerCdma, " VC banks)"));
  }

  // True if `peer` names a chip the instruction may address.
  bool Peer(const TracePlace& p, absl::string_view kind,
            absl::string_view field, uint32_t peer, bool must_be_remote) {
    if (peer >= num_chips_) {
      Err("peer-range", p,
          absl::StrCat(field, " ", peer, " out of range [0, ", num_chips_,
                       ") (header.num_chips)"));
      return false;
    }
    if (must_be_remote && peer == chip_->chip()) {
      Err("peer-self", p,
          absl::StrCat(field, " ", peer, " is the instruction's own chip; ",
                       kind,
                       " needs another chip (a local copy is a Transfer to "
                       "the own chip)"));
      return false;
    }
    return true;
  }

  // Transfer, Send, Receive: bytes > 0 and each named range fits in 64 bits.
  void Data(const TracePlace& p, uint64_t bytes, absl::string_view field1,
            uint64_t addr1, absl::string_view field2 = "", uint64_t addr2 = 0) {
    if (bytes == 0) Err("zero-bytes", p, "bytes is 0, must be > 0");
    if (RangeOverflows(addr1, bytes)) {
      Err("range-overflow", p, RangeOverflowText(field1, addr1, bytes));
    }
    if (!field2.empty() && RangeOverflows(addr2, bytes)) {
      Err("range-overflow", p, RangeOverflowText(field2, addr2, bytes));
    }
  }

  // Fields the schema does not know, inside the instruction's own message.
  // On a message-only instruction they are data it must not carry.
  void KindFields(const TracePlace& p, const google::protobuf::Message& m,
                  absl::string_view kind, bool msg_only) {
    if (!options_.schema_strict || Unknown(m).empty()) return;
    const std::string numbers = UnknownFieldNumbers(Unknown(m));
    if (msg_only) {
      Err("msg-data-fields", p,
          absl::StrCat(kind, " carries field(s) ", numbers,
                       " beyond its schema: message-only instructions "
                       "(MsgSend, MsgWait, RemoteMsgSend, Fence) move no data "
                       "and take no addresses or sizes"));
    } else {
      Err("unknown-field", p,
          absl::StrCat("instruction carries field(s) ", numbers,
                       " that schema v1 does not define"));
    }
  }

  void Instruction(const TracePlace& p, const v1::Instruction& in) {
    UnknownFields(in, p, "instruction has");
    const absl::string_view kind = InstructionKindName(in);
    const uint32_t chip = chip_->chip();
    const uint32_t stream_id = chip_->streams(p.stream).id();
    switch (in.kind_case()) {
      case v1::Instruction::kTransfer: {
        const v1::Transfer& t = in.transfer();
        KindFields(p, t, kind, false);
        Qp(p, t.qp_id());
        Peer(p, kind, "dst_chip", t.dst_chip(), false);
        Data(p, t.bytes(), "src_addr", t.src_addr(), "dst_addr", t.dst_addr());
        if (!ReduceOpKnown(t.reduce())) {
          Err("reduce-op", p,
              absl::StrCat("reduce ", static_cast<int>(t.reduce()),
                           " is not a known ReduceOp (REDUCE_NONE = 0, "
                           "REDUCE_SUM = 1)"));
        }
        return;
      }
      case v1::Instruction::kSend: {
        const v1::Send& t = in.send();
        KindFields(p, t, kind, false);
        Qp(p, t.qp_id());
        const bool peer_ok = Peer(p, kind, "dst_chip", t.dst_chip(), true);
        Data(p, t.bytes(), "src_addr", t.src_addr());
        if (peer_ok)
          pairs_[{chip, t.dst_chip()}].first.push_back(
              {p, chip, stream_id, t.bytes()});
        return;
      }
      case v1::Instruction::kReceive: {
        const v1::Receive& t = in.receive();
        KindFields(p, t, kind, false);
        Qp(p, t.qp_id());
        const bool peer_ok = Peer(p, kind, "src_chip", t.src_chip(), true);
        Data(p, t.bytes(), "dst_addr", t.dst_addr());
        if (peer_ok) {
          pairs_[{t.src_chip(), chip}].second.push_back(
              {p, chip, stream_id, t.bytes()});
        }
        return;
      }
      default:
        MessageInstruction(p, in, kind);
    }
  }

  void MessageInstruction(const TracePlace& p, const v1::Instruction& in,
                          absl::string_view kind) {
    switch (in.kind_case()) {
      case v1::Instruction::kMsgSend: {
        const v1::MsgSend& t = in.msg_send();
        KindFields(p, t, kind, true);
        Qp(p, t.qp_id());
        Counter(p, "dst_qp_id", t.dst_qp_id());
        return;
      }
      case v1::Instruction::kMsgWait: {
        const v1::MsgWait& t = in.msg_wait();
        KindFields(p, t, kind, true);
        Counter(p, "qp_id", t.qp_id());
        if (t.count() < 1) Err("wait-count", p, "count is 0, must be >= 1");
        return;
      }
      case v1::Instruction::kRemoteMsgSend: {
        const v1::RemoteMsgSend& t = in.remote_msg_send();
        KindFields(p, t, kind, true);
        Qp(p, t.qp_id());
        Peer(p, kind, "dst_chip", t.dst_chip(), true);
        Counter(p, "dst_qp_id", t.dst_qp_id());
        return;
      }
      case v1::Instruction::kFence:
        KindFields(p, in.fence(), kind, true);
        return;
      default:
        Err("no-kind", p,
            "instruction has no kind (none of transfer, send, receive, "
            "msg_send, msg_wait, remote_msg_send, fence is set)");
    }
  }

  // The k-th Send from chip A to chip B pairs with the k-th Receive on chip B
  // from chip A (proto/trace.proto), in the order the chips issue them. With
  // one stream per side that order is the stream's, so sizes are compared in
  // order; across several streams it is decided at run time, so only the
  // multiset of sizes can be checked here.
  void Matching() {
    for (auto& [key, sides] : pairs_) {
      if (sink_.Done()) return;
      MatchPair(key.first, key.second, sides.first, sides.second);
    }
  }

  void MatchPair(uint32_t src, uint32_t dst, const std::vector<TwoSided>& sends,
                 const std::vector<TwoSided>& receives) {
    const std::string counts =
        absl::StrCat("chip ", src, " has ", sends.size(), " Send(s) to chip ",
                     dst, ", but chip ", dst, " has ", receives.size(),
                     " Receive(s) from chip ", src);
    if (sends.size() > receives.size()) {
      const TwoSided& t = sends[receives.size()];
      ReportAt("send-receive", t.place, TextOf(t, OpKindName(OpKind::kSend)),
               absl::StrCat("no matching Receive: ", counts));
      return;
    }
    if (receives.size() > sends.size()) {
      const TwoSided& t = receives[sends.size()];
      ReportAt("send-receive", t.place, TextOf(t, OpKindName(OpKind::kReceive)),
               absl::StrCat("no matching Send: ", counts));
      return;
    }
    auto one_stream = [](const std::vector<TwoSided>& v) {
      for (const TwoSided& t : v) {
        if (t.place.chip != v[0].place.chip ||
            t.place.stream != v[0].place.stream) {
          return false;
        }
      }
      return true;
    };
    if (one_stream(sends) && one_stream(receives)) {
      for (size_t k = 0; k < sends.size(); ++k) {
        if (sends[k].bytes == receives[k].bytes) continue;
        const TracePlace& rp = receives[k].place;
        ReportAt("send-receive", sends[k].place,
                 TextOf(sends[k], OpKindName(OpKind::kSend)),
                 absl::StrCat("sends ", sends[k].bytes, " bytes to chip ", dst,
                              ", but its matching Receive (number ", k,
                              " between these chips), ",
                              TextOf(receives[k], OpKindName(OpKind::kReceive)),
                              sink_.Where(rp), ", expects ", receives[k].bytes,
                              " bytes"),
                 &rp);
        return;
      }
      return;
    }
    MatchMultiset(src, dst, sends, receives);
  }

  // Sizes as multisets: sort each side by size (stable: trace order within a
  // size) and report the first difference, at the smaller size, which is the
  // one in excess on its side.
  void MatchMultiset(uint32_t src, uint32_t dst, std::vector<TwoSided> ss,
                     std::vector<TwoSided> rs) {
    auto by_bytes = [](const TwoSided& a, const TwoSided& b) {
      return a.bytes < b.bytes;
    };
    std::stable_sort(ss.begin(), ss.end(), by_bytes);
    std::stable_sort(rs.begin(), rs.end(), by_bytes);
    for (size_t k = 0; k < ss.size(); ++k) {
      if (ss[k].bytes == rs[k].bytes) continue;
      const bool send = ss[k].bytes < rs[k].bytes;
      const TwoSided& t = send ? ss[k] : rs[k];
      ReportAt(
          "send-receive", t.place,
          TextOf(t, OpKindName(send ? OpKind::kSend : OpKind::kReceive)),
          absl::StrCat("no ", send ? "Receive" : "Send", " of ", t.bytes,
                       " bytes between chip ", src, " and chip ", dst,
                       " is left to match it (sizes compared as a multiset: "
                       "the pair's Sends or Receives are in several streams)"));
      return;
    }
  }

  const v1::Trace* whole_;                 // for its unknown fields, or null
  const v1::TraceHeader* header_;          // null: the trace has none
  const v1::ChipProgram* chip_ = nullptr;  // the chip being checked
  const TraceTarget hw_;                   // copies: the runner may outlive the
  const RuleOptions options_;              // arguments it was made with
  RuleSink& sink_;
  uint32_t num_chips_ = 0;
  absl::flat_hash_map<uint32_t, int> chip_entry_;  // chip id -> chips index
  // (src, dst) -> (Sends, Receives) in trace order.
  std::map<std::pair<uint32_t, uint32_t>,
           std::pair<std::vector<TwoSided>, std::vector<TwoSided>>>
      pairs_;
};

TraceRuleRunner::TraceRuleRunner(const v1::TraceHeader* header,
                                 const TraceTarget& target,
                                 const RuleOptions& options, RuleSink* sink,
                                 const v1::Trace* whole)
    : rules_(std::make_unique<Rules>(whole, header, target, options, sink)) {}

TraceRuleRunner::~TraceRuleRunner() = default;

bool TraceRuleRunner::Begin() { return rules_->Begin(); }

void TraceRuleRunner::Chip(int index, const v1::ChipProgram& chip) {
  rules_->Chip(index, chip);
}

bool TraceRuleRunner::TakeCheckedChip(int index, uint32_t chip_id) {
  return rules_->TakeCheckedChip(index, chip_id);
}

void TraceRuleRunner::End() { rules_->End(); }

bool TraceRuleRunner::Done() const { return rules_->Done(); }

absl::string_view SeverityName(Severity s) {
  return s == Severity::kError ? "error" : "warning";
}

absl::string_view InstructionKindName(const v1::Instruction& in) {
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

std::string TracePlaceText(const v1::Trace& trace, const TracePlace& p) {
  if (p.chip < 0) return "";
  const v1::ChipProgram& chip = trace.chips(p.chip);
  if (p.stream < 0) return PlaceText(chip.chip());
  const v1::Stream& s = chip.streams(p.stream);
  if (p.instr < 0) return PlaceText(chip.chip(), s.id());
  return PlaceText(chip.chip(), s.id(), p.instr,
                   InstructionKindName(s.instructions(p.instr)));
}

bool RunTraceRules(const v1::Trace& trace, const TraceTarget& target,
                   const RuleOptions& options, RuleSink* sink) {
  TraceRuleRunner rules(trace.has_header() ? &trace.header() : nullptr, target,
                        options, sink, &trace);
  if (!rules.Begin()) return false;
  for (int c = 0; c < trace.chips_size() && !rules.Done(); ++c) {
    rules.Chip(c, trace.chips(c));
  }
  rules.End();
  return true;
}

const std::vector<RuleInfo>& TraceRules() {
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
  };
  return *rules;
}

}  // namespace ccreplay
