#include "trace/decode.h"

#include <cstddef>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "trace/rules.h"

namespace ccreplay {
namespace {

// Keeps the first error of the rules. An instruction's error starts with its
// place, "chip 3, stream 1, instruction 12 (Transfer): <what>"; the messages
// of coarser places name them already ("chips[2]: chip 1 listed twice").
class FirstError : public RuleSink {
 public:
  explicit FirstError(const v1::Trace& trace) : trace_(trace) {}

  void Report(absl::string_view rule, const TracePlace& place,
              std::string message, const TracePlace* related) override {
    (void)rule;
    (void)related;
    status_ = absl::InvalidArgumentError(
        place.instr < 0
            ? message
            : absl::StrCat(TracePlaceText(trace_, place), ": ", message));
  }
  bool Done() const override { return !status_.ok(); }
  const absl::Status& status() const { return status_; }

 private:
  const v1::Trace& trace_;
  absl::Status status_;
};

// The first error of the rules, or OK.
absl::Status Validate(const v1::Trace& trace, const TraceTarget& hw) {
  FirstError first(trace);
  RunTraceRules(trace, hw, RuleOptions{}, &first);
  return first.status();
}

}  // namespace

// One instruction, mapped as documented on Instr. REQUIRES: it passed the
// rules.
Instr DecodeInstr(const v1::Instruction& in) {
  Instr out;
  switch (in.kind_case()) {
    case v1::Instruction::kTransfer: {
      const v1::Transfer& t = in.transfer();
      out.kind = OpKind::kTransfer;
      out.qp_id = t.qp_id();
      out.peer = t.dst_chip();
      out.src_addr = t.src_addr();
      out.dst_addr = t.dst_addr();
      out.bytes = t.bytes();
      out.reduce_sum = t.reduce() == v1::REDUCE_SUM;
      break;
    }
    case v1::Instruction::kSend: {
      const v1::Send& t = in.send();
      out.kind = OpKind::kSend;
      out.qp_id = t.qp_id();
      out.peer = t.dst_chip();
      out.src_addr = t.src_addr();
      out.bytes = t.bytes();
      break;
    }
    case v1::Instruction::kReceive: {
      const v1::Receive& t = in.receive();
      out.kind = OpKind::kReceive;
      out.qp_id = t.qp_id();
      out.peer = t.src_chip();
      out.dst_addr = t.dst_addr();
      out.bytes = t.bytes();
      break;
    }
    case v1::Instruction::kMsgSend:
      out.kind = OpKind::kMsgSend;
      out.qp_id = in.msg_send().qp_id();
      out.dst_qp = in.msg_send().dst_qp_id();
      break;
    case v1::Instruction::kMsgWait:
      out.kind = OpKind::kMsgWait;
      out.qp_id = out.dst_qp = in.msg_wait().qp_id();
      out.count = in.msg_wait().count();
      break;
    case v1::Instruction::kRemoteMsgSend: {
      const v1::RemoteMsgSend& t = in.remote_msg_send();
      out.kind = OpKind::kRemoteMsgSend;
      out.qp_id = t.qp_id();
      out.peer = t.dst_chip();
      out.dst_qp = t.dst_qp_id();
      break;
    }
    case v1::Instruction::kFence:
    case v1::Instruction::KIND_NOT_SET:  // rejected by the no-kind rule
      out.kind = OpKind::kFence;
      break;
  }
  return out;
}

namespace {

// Decodes one chip's streams into `out`.
void DecodeChip(const v1::ChipProgram& chip, std::vector<StreamProgram>* out) {
  out->resize(static_cast<size_t>(chip.streams_size()));
  for (int si = 0; si < chip.streams_size(); ++si) {
    const v1::Stream& in = chip.streams(si);
    StreamProgram& s = (*out)[static_cast<size_t>(si)];
    s.id = in.id();
    s.instrs.reserve(static_cast<size_t>(in.instructions_size()));
    for (const v1::Instruction& instr : in.instructions()) {
      s.instrs.push_back(DecodeInstr(instr));
    }
  }
}

}  // namespace

Program DecodeValidated(const v1::Trace& trace) {
  Program program;
  program.num_chips = trace.header().num_chips();
  program.chips.resize(program.num_chips);
  for (const v1::ChipProgram& chip : trace.chips()) {
    DecodeChip(chip, &program.chips[chip.chip()].streams);
  }
  return program;
}

absl::StatusOr<Program> ValidateAndDecode(const v1::Trace& trace,
                                          const TraceTarget& hw) {
  if (absl::Status s = Validate(trace, hw); !s.ok()) return s;
  return DecodeValidated(trace);
}

}  // namespace ccreplay
