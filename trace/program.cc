#include "trace/program.h"

#include "absl/strings/str_cat.h"

namespace ccreplay {

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

std::string InstrPlace(const Program& p, uint32_t chip, uint32_t stream_index,
                       uint32_t instr_index) {
  const StreamProgram& s = p.chips[chip].streams[stream_index];
  return absl::StrCat("chip ", chip, ", stream ", s.id, ", instruction ",
                      instr_index, " (", OpKindName(s.instrs[instr_index].kind),
                      ")");
}

}  // namespace ccreplay
