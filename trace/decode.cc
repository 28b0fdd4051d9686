#include "trace/decode.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ccreplay {
namespace {

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// "addr + bytes" must leave the end of the range representable.
bool RangeOverflows(uint64_t addr, uint64_t bytes) {
  return bytes > std::numeric_limits<uint64_t>::max() - addr;
}

std::string RangeOverflowText(absl::string_view addr_field, uint64_t addr,
                              uint64_t bytes) {
  return absl::StrCat(addr_field, " ", addr, " + bytes ", bytes,
                      " overflows 2^64");
}

// One Send or Receive, for the two-sided matching check.
struct TwoSided {
  uint32_t src = 0;  // data flows src -> dst
  uint32_t dst = 0;
  uint32_t chip = 0;  // where the instruction is
  uint32_t stream_index = 0;
  uint32_t instr_index = 0;
  uint64_t bytes = 0;
};

class Decoder {
 public:
  Decoder(const v1::Trace& trace, const TraceTarget& hw)
      : trace_(trace), hw_(hw) {}

  absl::StatusOr<Program> Run() {
    if (absl::Status s = CheckHeader(); !s.ok()) return s;
    if (absl::Status s = CheckCollective(); !s.ok()) return s;
    program_.num_chips = num_chips_;
    program_.chips.resize(num_chips_);
    // chip id -> index in trace.chips, to name both places of a duplicate.
    std::vector<int> seen(num_chips_, -1);
    for (int i = 0; i < trace_.chips_size(); ++i) {
      const v1::ChipProgram& chip = trace_.chips(i);
      if (chip.chip() >= num_chips_) {
        return Invalid(absl::StrCat("chips[", i, "]: chip ", chip.chip(),
                                    " out of range [0, ", num_chips_, ")"));
      }
      if (seen[chip.chip()] >= 0) {
        return Invalid(absl::StrCat("chips[", i, "]: chip ", chip.chip(),
                                    " listed twice (also chips[",
                                    seen[chip.chip()], "])"));
      }
      seen[chip.chip()] = i;
      if (absl::Status s = DecodeChip(chip); !s.ok()) return s;
    }
    if (absl::Status s = CheckMatching(); !s.ok()) return s;
    return std::move(program_);
  }

 private:
  absl::Status CheckHeader() {
    if (hw_.cdma_engines == 0) {
      return Invalid(
          "hardware config has no CDMA engines (cdma.engines_per_chip is 0)");
    }
    if (!trace_.has_header()) return Invalid("trace has no header");
    const v1::TraceHeader& h = trace_.header();
    if (h.format_version() != v1::FORMAT_VERSION_1) {
      return Invalid(absl::StrCat("header.format_version is ",
                                  static_cast<int>(h.format_version()),
                                  ", expected 1 (FORMAT_VERSION_1)"));
    }
    if (h.num_chips() < 1 || h.num_chips() > kMaxChips) {
      return Invalid(absl::StrCat("header.num_chips is ", h.num_chips(),
                                  ", must be in [1, ", kMaxChips, "]"));
    }
    if (hw_.num_chips != 0 && hw_.num_chips != h.num_chips()) {
      return Invalid(absl::StrCat(
          "the trace has ", h.num_chips(),
          " chips (header.num_chips), but the hardware config '", hw_.name,
          "' has ", hw_.num_chips, " (topology.num_chips)"));
    }
    num_chips_ = h.num_chips();
    return absl::OkStatus();
  }

  absl::Status CheckCollective() {
    if (!trace_.header().has_collective()) return absl::OkStatus();
    const v1::CollectiveInfo& c = trace_.header().collective();
    const std::string where = "header.collective";
    if (!v1::CollectiveOp_IsValid(c.op())) {
      return Invalid(absl::StrCat(where, ".op ", static_cast<int>(c.op()),
                                  " is not a known CollectiveOp"));
    }
    if (c.n() < 1 || c.n() > num_chips_) {
      return Invalid(absl::StrCat(where, ".n is ", c.n(), ", must be in [1, ",
                                  num_chips_, "] (header.num_chips)"));
    }
    if (c.cdma_engines_used() > hw_.cdma_engines) {
      return Invalid(absl::StrCat(where, ".cdma_engines_used is ",
                                  c.cdma_engines_used(),
                                  ", but the hardware has ", hw_.cdma_engines,
                                  " CDMA engines per chip"));
    }
    std::vector<int> seen(num_chips_, -1);
    for (int i = 0; i < c.buffers_size(); ++i) {
      const v1::ChipBuffers& b = c.buffers(i);
      const std::string place = absl::StrCat(where, ".buffers[", i, "]");
      if (b.chip() >= num_chips_) {
        return Invalid(absl::StrCat(place, ": chip ", b.chip(),
                                    " out of range [0, ", num_chips_, ")"));
      }
      if (seen[b.chip()] >= 0) {
        return Invalid(absl::StrCat(place, ": chip ", b.chip(),
                                    " listed twice (also buffers[",
                                    seen[b.chip()], "])"));
      }
      seen[b.chip()] = i;
      for (const auto& [name, range] :
           {std::pair<absl::string_view, const v1::BufferRange*>("input",
                                                                 &b.input()),
            std::pair<absl::string_view, const v1::BufferRange*>(
                "output", &b.output())}) {
        if (RangeOverflows(range->addr(), range->bytes())) {
          return Invalid(absl::StrCat(
              place, ".", name, ": ",
              RangeOverflowText("addr", range->addr(), range->bytes())));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status DecodeChip(const v1::ChipProgram& chip) {
    const uint32_t id = chip.chip();
    std::vector<StreamProgram>& streams = program_.chips[id].streams;
    streams.resize(static_cast<size_t>(chip.streams_size()));
    for (int si = 0; si < chip.streams_size(); ++si) {
      const v1::Stream& in = chip.streams(si);
      // Streams per chip are few: a quadratic duplicate check is cheapest.
      for (int sj = 0; sj < si; ++sj) {
        if (chip.streams(sj).id() == in.id()) {
          return Invalid(absl::StrCat("chip ", id, ": stream id ", in.id(),
                                      " listed twice (streams[", sj,
                                      "] and streams[", si, "])"));
        }
      }
      StreamProgram& out = streams[static_cast<size_t>(si)];
      out.id = in.id();
      out.instrs.resize(static_cast<size_t>(in.instructions_size()));
      for (int ii = 0; ii < in.instructions_size(); ++ii) {
        const Place place{id, in.id(), static_cast<uint32_t>(si),
                          static_cast<uint32_t>(ii)};
        if (absl::Status s = DecodeInstr(place, in.instructions(ii),
                                         &out.instrs[static_cast<size_t>(ii)]);
            !s.ok()) {
          return s;
        }
      }
    }
    return absl::OkStatus();
  }

  struct Place {
    uint32_t chip;
    uint32_t stream_id;
    uint32_t stream_index;
    uint32_t instr_index;
  };

  // "chip 3, stream 1, instruction 12 (Transfer): <what>", the words of
  // InstrPlace() in trace/program.h.
  static absl::Status InstrError(const Place& p, OpKind kind,
                                 absl::string_view what) {
    return Invalid(absl::StrCat("chip ", p.chip, ", stream ", p.stream_id,
                                ", instruction ", p.instr_index, " (",
                                OpKindName(kind), "): ", what));
  }

  absl::Status CheckQp(const Place& p, OpKind kind, uint32_t qp_id) const {
    if (CdmaOfQp(qp_id) < hw_.cdma_engines) return absl::OkStatus();
    return InstrError(
        p, kind,
        absl::StrCat("qp_id ", qp_id, " names cdma_id ", CdmaOfQp(qp_id),
                     " (vc_bank ", VcOfQp(qp_id),
                     ", by the encoding qp_id = (cdma_id << 2) | vc_bank), "
                     "but cdma_id must be in [0, ",
                     hw_.cdma_engines, "): the hardware has ", hw_.cdma_engines,
                     " CDMA engines per chip"));
  }

  absl::Status CheckCounter(const Place& p, OpKind kind,
                            absl::string_view field, uint32_t id) const {
    if (id < hw_.num_qps()) return absl::OkStatus();
    return InstrError(
        p, kind,
        absl::StrCat(field, " ", id, " out of range [0, ", hw_.num_qps(),
                     ") (message counters are qp ids: ", hw_.cdma_engines,
                     " CDMA engines x ", kVcBanksPerCdma, " VC banks)"));
  }

  absl::Status CheckPeer(const Place& p, OpKind kind, absl::string_view field,
                         uint32_t peer, bool must_be_remote) const {
    if (peer >= num_chips_) {
      return InstrError(p, kind,
                        absl::StrCat(field, " ", peer, " out of range [0, ",
                                     num_chips_, ")"));
    }
    if (must_be_remote && peer == p.chip) {
      return InstrError(
          p, kind,
          absl::StrCat(field, " ", peer, " is the instruction's own chip; ",
                       OpKindName(kind),
                       " needs another chip (a local copy is a "
                       "Transfer to the own chip)"));
    }
    return absl::OkStatus();
  }

  static absl::Status CheckBytes(const Place& p, OpKind kind, uint64_t bytes) {
    if (bytes > 0) return absl::OkStatus();
    return InstrError(p, kind, "bytes is 0, must be > 0");
  }

  static absl::Status CheckRange(const Place& p, OpKind kind,
                                 absl::string_view addr_field, uint64_t addr,
                                 uint64_t bytes) {
    if (!RangeOverflows(addr, bytes)) return absl::OkStatus();
    return InstrError(p, kind, RangeOverflowText(addr_field, addr, bytes));
  }

  void AddTwoSided(const Place& p, uint32_t src, uint32_t dst, uint64_t bytes,
                   std::vector<TwoSided>* to) {
    to->push_back(
        TwoSided{src, dst, p.chip, p.stream_index, p.instr_index, bytes});
  }

  absl::Status DecodeInstr(const Place& p, const v1::Instruction& in,
                           Instr* out) {
    absl::Status s;
    switch (in.kind_case()) {
      case v1::Instruction::kTransfer: {
        const v1::Transfer& t = in.transfer();
        constexpr OpKind k = OpKind::kTransfer;
        if (!(s = CheckQp(p, k, t.qp_id())).ok()) return s;
        if (!(s = CheckPeer(p, k, "dst_chip", t.dst_chip(), false)).ok()) {
          return s;
        }
        if (!(s = CheckBytes(p, k, t.bytes())).ok()) return s;
        if (!(s = CheckRange(p, k, "src_addr", t.src_addr(), t.bytes())).ok()) {
          return s;
        }
        if (!(s = CheckRange(p, k, "dst_addr", t.dst_addr(), t.bytes())).ok()) {
          return s;
        }
        if (!v1::ReduceOp_IsValid(t.reduce())) {
          return InstrError(
              p, k,
              absl::StrCat("reduce ", static_cast<int>(t.reduce()),
                           " is not a known ReduceOp (REDUCE_NONE = 0, "
                           "REDUCE_SUM = 1)"));
        }
        out->kind = k;
        out->qp_id = t.qp_id();
        out->peer = t.dst_chip();
        out->src_addr = t.src_addr();
        out->dst_addr = t.dst_addr();
        out->bytes = t.bytes();
        out->reduce_sum = t.reduce() == v1::REDUCE_SUM;
        return s;
      }
      case v1::Instruction::kSend: {
        const v1::Send& t = in.send();
        constexpr OpKind k = OpKind::kSend;
        if (!(s = CheckQp(p, k, t.qp_id())).ok()) return s;
        if (!(s = CheckPeer(p, k, "dst_chip", t.dst_chip(), true)).ok()) {
          return s;
        }
        if (!(s = CheckBytes(p, k, t.bytes())).ok()) return s;
        if (!(s = CheckRange(p, k, "src_addr", t.src_addr(), t.bytes())).ok()) {
          return s;
        }
        out->kind = k;
        out->qp_id = t.qp_id();
        out->peer = t.dst_chip();
        out->src_addr = t.src_addr();
        out->bytes = t.bytes();
        AddTwoSided(p, p.chip, t.dst_chip(), t.bytes(), &sends_);
        return s;
      }
      case v1::Instruction::kReceive: {
        const v1::Receive& t = in.receive();
        constexpr OpKind k = OpKind::kReceive;
        if (!(s = CheckQp(p, k, t.qp_id())).ok()) return s;
        if (!(s = CheckPeer(p, k, "src_chip", t.src_chip(), true)).ok()) {
          return s;
        }
        if (!(s = CheckBytes(p, k, t.bytes())).ok()) return s;
        if (!(s = CheckRange(p, k, "dst_addr", t.dst_addr(), t.bytes())).ok()) {
          return s;
        }
        out->kind = k;
        out->qp_id = t.qp_id();
        out->peer = t.src_chip();
        out->dst_addr = t.dst_addr();
        out->bytes = t.bytes();
        AddTwoSided(p, t.src_chip(), p.chip, t.bytes(), &receives_);
        return s;
      }
      case v1::Instruction::kMsgSend: {
        const v1::MsgSend& t = in.msg_send();
        constexpr OpKind k = OpKind::kMsgSend;
        if (!(s = CheckQp(p, k, t.qp_id())).ok()) return s;
        if (!(s = CheckCounter(p, k, "dst_qp_id", t.dst_qp_id())).ok()) {
          return s;
        }
        out->kind = k;
        out->qp_id = t.qp_id();
        out->dst_qp = t.dst_qp_id();
        return s;
      }
      case v1::Instruction::kMsgWait: {
        const v1::MsgWait& t = in.msg_wait();
        constexpr OpKind k = OpKind::kMsgWait;
        if (!(s = CheckCounter(p, k, "qp_id", t.qp_id())).ok()) return s;
        if (t.count() < 1) {
          return InstrError(p, k, "count is 0, must be >= 1");
        }
        out->kind = k;
        out->qp_id = t.qp_id();
        out->dst_qp = t.qp_id();
        out->count = t.count();
        return s;
      }
      case v1::Instruction::kRemoteMsgSend: {
        const v1::RemoteMsgSend& t = in.remote_msg_send();
        constexpr OpKind k = OpKind::kRemoteMsgSend;
        if (!(s = CheckQp(p, k, t.qp_id())).ok()) return s;
        if (!(s = CheckPeer(p, k, "dst_chip", t.dst_chip(), true)).ok()) {
          return s;
        }
        if (!(s = CheckCounter(p, k, "dst_qp_id", t.dst_qp_id())).ok()) {
          return s;
        }
        out->kind = k;
        out->qp_id = t.qp_id();
        out->peer = t.dst_chip();
        out->dst_qp = t.dst_qp_id();
        return s;
      }
      case v1::Instruction::kFence:
        out->kind = OpKind::kFence;
        return s;
      case v1::Instruction::KIND_NOT_SET:
        break;
    }
    return Invalid(absl::StrCat(
        "chip ", p.chip, ", stream ", p.stream_id, ", instruction ",
        p.instr_index,
        ": instruction has no kind (none of transfer, send, receive, "
        "msg_send, msg_wait, remote_msg_send, fence is set)"));
  }

  std::string PlaceOf(const TwoSided& t) const {
    return InstrPlace(program_, t.chip, t.stream_index, t.instr_index);
  }

  // The k-th Send from chip A to chip B pairs with the k-th Receive on chip B
  // from chip A (proto/trace.proto), in the order the chips issue them. With
  // one stream per side that order is the stream's, so sizes are compared in
  // order; across several streams it is decided at run time, so only the
  // multiset of sizes can be checked here.
  absl::Status CheckMatching() {
    auto by_pair = [](const TwoSided& a, const TwoSided& b) {
      return a.src != b.src ? a.src < b.src : a.dst < b.dst;
    };
    // Stable: within a pair, entries stay in trace order (stream, index).
    std::stable_sort(sends_.begin(), sends_.end(), by_pair);
    std::stable_sort(receives_.begin(), receives_.end(), by_pair);
    size_t s = 0, r = 0;
    while (s < sends_.size() || r < receives_.size()) {
      // The next pair in order, from whichever side has it first.
      const TwoSided& key =
          r >= receives_.size() ||
                  (s < sends_.size() && !by_pair(receives_[r], sends_[s]))
              ? sends_[s]
              : receives_[r];
      size_t s_end = s, r_end = r;
      while (s_end < sends_.size() && !by_pair(key, sends_[s_end]) &&
             !by_pair(sends_[s_end], key)) {
        ++s_end;
      }
      while (r_end < receives_.size() && !by_pair(key, receives_[r_end]) &&
             !by_pair(receives_[r_end], key)) {
        ++r_end;
      }
      if (absl::Status st = CheckPair(s, s_end, r, r_end); !st.ok()) return st;
      s = s_end;
      r = r_end;
    }
    return absl::OkStatus();
  }

  // Sends [s, s_end) and Receives [r, r_end) of one ordered chip pair.
  absl::Status CheckPair(size_t s, size_t s_end, size_t r, size_t r_end) {
    const size_t num_sends = s_end - s;
    const size_t num_receives = r_end - r;
    const TwoSided& any = num_sends > 0 ? sends_[s] : receives_[r];
    const std::string counts =
        absl::StrCat("chip ", any.src, " has ", num_sends, " Send(s) to chip ",
                     any.dst, ", but chip ", any.dst, " has ", num_receives,
                     " Receive(s) from chip ", any.src);
    if (num_sends > num_receives) {
      return Invalid(absl::StrCat(PlaceOf(sends_[s + num_receives]),
                                  ": no matching Receive: ", counts));
    }
    if (num_receives > num_sends) {
      return Invalid(absl::StrCat(PlaceOf(receives_[r + num_sends]),
                                  ": no matching Send: ", counts));
    }
    auto one_stream = [](const std::vector<TwoSided>& v, size_t b, size_t e) {
      for (size_t i = b + 1; i < e; ++i) {
        if (v[i].stream_index != v[b].stream_index) return false;
      }
      return true;
    };
    if (one_stream(sends_, s, s_end) && one_stream(receives_, r, r_end)) {
      for (size_t i = 0; i < num_sends; ++i) {
        const TwoSided& snd = sends_[s + i];
        const TwoSided& rcv = receives_[r + i];
        if (snd.bytes != rcv.bytes) {
          return Invalid(absl::StrCat(
              PlaceOf(snd), ": sends ", snd.bytes, " bytes to chip ", snd.dst,
              ", but its matching Receive (Send/Receive number ", i,
              " between these chips), ", PlaceOf(rcv), ", expects ", rcv.bytes,
              " bytes"));
        }
      }
      return absl::OkStatus();
    }
    // Sizes as multisets: sort (bytes, position) and compare.
    auto sorted = [](const std::vector<TwoSided>& v, size_t b, size_t e) {
      std::vector<std::pair<uint64_t, size_t>> out;
      out.reserve(e - b);
      for (size_t i = b; i < e; ++i) out.emplace_back(v[i].bytes, i);
      std::sort(out.begin(), out.end());
      return out;
    };
    const auto ss = sorted(sends_, s, s_end);
    const auto rs = sorted(receives_, r, r_end);
    for (size_t i = 0; i < ss.size(); ++i) {
      if (ss[i].first == rs[i].first) continue;
      // The smaller size is the one in excess on its side.
      if (ss[i].first < rs[i].first) {
        const TwoSided& snd = sends_[ss[i].second];
        return Invalid(absl::StrCat(
            PlaceOf(snd), ": sends ", snd.bytes, " bytes to chip ", snd.dst,
            ", but no Receive of that size on chip ", snd.dst, " from chip ",
            snd.src,
            " is left to match it (sizes compared as a multiset, since the "
            "Sends or Receives of this pair are spread over several "
            "streams)"));
      }
      const TwoSided& rcv = receives_[rs[i].second];
      return Invalid(absl::StrCat(
          PlaceOf(rcv), ": expects ", rcv.bytes, " bytes from chip ", rcv.src,
          ", but no Send of that size from chip ", rcv.src, " to chip ",
          rcv.dst,
          " is left to match it (sizes compared as a multiset, since the "
          "Sends or Receives of this pair are spread over several streams)"));
    }
    return absl::OkStatus();
  }

  const v1::Trace& trace_;
  const TraceTarget& hw_;
  uint32_t num_chips_ = 0;
  Program program_;
  std::vector<TwoSided> sends_;
  std::vector<TwoSided> receives_;
};

}  // namespace

absl::StatusOr<Program> ValidateAndDecode(const v1::Trace& trace,
                                          const TraceTarget& hw) {
  return Decoder(trace, hw).Run();
}

}  // namespace ccreplay
