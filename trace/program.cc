#include "trace/program.h"

#include <stdexcept>

#include "absl/strings/str_cat.h"

namespace ccreplay {

InstrList::InstrList(std::initializer_list<Instr> list) {
  packed_.reserve(list.size());
  for (const Instr& in : list) push_back(in);
}

InstrList::InstrList(const std::vector<Instr>& list) {
  packed_.reserve(list.size());
  for (const Instr& in : list) push_back(in);
}

Instr InstrList::at(size_t i) const {
  if (i >= size()) {
    throw std::out_of_range(absl::StrCat("instruction ", i, " of ", size()));
  }
  return (*this)[i];
}

InstrList::Packed InstrList::PackWhole(const Instr& in) {
  Packed p;
  p.w[0] = kEscaped;
  p.w[1] = whole_.size();
  p.w[2] = 0;
  whole_.push_back(in);
  return p;
}

absl::string_view OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kTransfer:
      return "Transfer";
    case OpKind::kSend:
      return "Send";
    case OpKind::kReceive:
      return "Receive";
    case OpKind::kMsgSend:
      return "MsgSend";
    case OpKind::kMsgWait:
      return "MsgWait";
    case OpKind::kRemoteMsgSend:
      return "RemoteMsgSend";
    case OpKind::kFence:
      return "Fence";
  }
  return "?";
}

std::string PlaceText(int64_t chip, int64_t stream_id, int64_t instr,
                      absl::string_view kind) {
  if (chip < 0) return "";
  std::string s = absl::StrCat("chip ", chip);
  if (stream_id < 0) return s;
  absl::StrAppend(&s, ", stream ", stream_id);
  if (instr >= 0) absl::StrAppend(&s, ", instruction ", instr, " (", kind, ")");
  return s;
}

std::string InstrPlace(const Program& p, uint32_t chip, uint32_t stream_index,
                       uint32_t instr_index) {
  const StreamProgram& s = p.chips[chip].streams[stream_index];
  return PlaceText(chip, s.id, instr_index,
                   OpKindName(s.instrs[instr_index].kind));
}

}  // namespace ccreplay
