#include "trace/decode.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "trace/rules.h"
#include "trace/trace_io.h"
#include "trace/wire_chip.h"

namespace ccreplay {
namespace {

// Keeps the first error of the rules. An instruction's error starts with its
// place, "chip 3, stream 1, instruction 12 (Transfer): <what>"; the messages
// of coarser places name them already ("chips[2]: chip 1 listed twice").
class FirstError : public RuleSink {
 public:
  void Report(absl::string_view rule, const TracePlace& place,
              absl::string_view place_text, std::string message,
              const TracePlace* related) override {
    (void)rule;
    (void)related;
    status_ = absl::InvalidArgumentError(
        place.instr < 0 ? message : absl::StrCat(place_text, ": ", message));
  }
  bool Done() const override { return !status_.ok(); }
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

}  // namespace

// One instruction, mapped as documented on Instr. REQUIRES: it passed the
// rules.
Instr DecodeInstr(const v1::Instruction& in) {
  switch (in.kind_case()) {
    case v1::Instruction::kTransfer: {
      const v1::Transfer& t = in.transfer();
      return TransferInstr(t.qp_id(), t.dst_chip(), t.src_addr(), t.dst_addr(),
                           t.bytes(), t.reduce() == v1::REDUCE_SUM);
    }
    case v1::Instruction::kSend: {
      const v1::Send& t = in.send();
      return SendInstr(t.qp_id(), t.dst_chip(), t.src_addr(), t.bytes());
    }
    case v1::Instruction::kReceive: {
      const v1::Receive& t = in.receive();
      return ReceiveInstr(t.qp_id(), t.src_chip(), t.dst_addr(), t.bytes());
    }
    case v1::Instruction::kMsgSend:
      return MsgSendInstr(in.msg_send().qp_id(), in.msg_send().dst_qp_id());
    case v1::Instruction::kMsgWait:
      return MsgWaitInstr(in.msg_wait().qp_id(), in.msg_wait().count());
    case v1::Instruction::kRemoteMsgSend: {
      const v1::RemoteMsgSend& t = in.remote_msg_send();
      return RemoteMsgSendInstr(t.qp_id(), t.dst_chip(), t.dst_qp_id());
    }
    case v1::Instruction::kFence:
    case v1::Instruction::KIND_NOT_SET:  // rejected by the no-kind rule
      break;
  }
  return FenceInstr();
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

namespace {

namespace pb = google::protobuf;
using pb::internal::WireFormatLite;

// Where a length-delimited field's bytes are in the buffer.
struct Span {
  int offset = 0;
  int size = 0;
};
size_t SpanEnd(Span s) { return static_cast<size_t>(s.offset) + s.size; }

// Protobuf's parser reads a tag or a length as a varint of at most 5 bytes
// and rejects a larger value (a length within 16 bytes of 2^31 too), where
// CodedInputStream::ReadVarint32 would read up to 10 bytes and drop the
// high bits: so the scan reads them the parser's way, to accept exactly
// what it accepts.
constexpr uint64_t kMaxLength = INT_MAX - 16;
bool ReadShortVarint(pb::io::CodedInputStream* in, uint64_t max,
                     uint32_t* value) {
  const int before = in->CurrentPosition();
  uint64_t v = 0;
  if (!in->ReadVarint64(&v) || in->CurrentPosition() - before > 5 || v > max) {
    return false;
  }
  *value = static_cast<uint32_t>(v);
  return true;
}

// The top level of a binary trace: its header spans and chips spans in
// order. False unless every field is a header or chips entry whose length
// fits in what remains.
bool ScanTopLevel(absl::string_view bytes, std::vector<Span>* headers,
                  std::vector<Span>* chips) {
  pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                              static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  while (in.CurrentPosition() < static_cast<int>(bytes.size())) {
    uint32_t tag = 0;
    if (!ReadShortVarint(&in, UINT32_MAX, &tag)) return false;
    if (WireFormatLite::GetTagWireType(tag) !=
        WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      return false;
    }
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field != v1::Trace::kHeaderFieldNumber &&
        field != v1::Trace::kChipsFieldNumber) {
      return false;
    }
    uint32_t length = 0;
    if (!ReadShortVarint(&in, kMaxLength, &length)) return false;
    const Span span{in.CurrentPosition(), static_cast<int>(length)};
    if (!in.Skip(span.size)) return false;
    (field == v1::Trace::kHeaderFieldNumber ? headers : chips)->push_back(span);
  }
  return true;
}

// Merges `span` of `bytes` into `m`, as protobuf merges a field it meets
// again; false if its bytes do not parse.
bool MergeSpan(absl::string_view bytes, Span span, pb::Message* m) {
  return m->MergeFromString(std::string(bytes.substr(span.offset, span.size)));
}

// Parses `span` of `bytes` into `m` (empty).
bool ParseSpan(absl::string_view bytes, Span span, pb::Message* m) {
  return m->ParseFromArray(bytes.data() + span.offset, span.size);
}

}  // namespace

struct TraceDecoder::State {
  State(const v1::TraceHeader* header, const TraceTarget& hw)
      : hw(hw), rules(header, hw, RuleOptions{}, &first) {}
  TraceTarget hw;
  FirstError first;
  TraceRuleRunner rules;
  bool chips_checked = false;
  int next = 0;  // index of the next chips entry
  Program program;
  WireChip wire;  // AddChipBytes' chip, its storage reused
  std::unique_ptr<InterleavePlan> plan;  // PlanLayout's, if it made one
  bool written_in_place = false;
  int64_t wire_chips = 0;
};

TraceDecoder::TraceDecoder(const v1::TraceHeader* header, const TraceTarget& hw)
    : state_(std::make_unique<State>(header, hw)) {
  state_->chips_checked = state_->rules.Begin();
  if (state_->chips_checked) {
    state_->program.num_chips = header->num_chips();
    state_->program.chips.resize(state_->program.num_chips);
  }
}

TraceDecoder::~TraceDecoder() = default;

void TraceDecoder::AddChip(const v1::ChipProgram& chip) {
  State& st = *state_;
  const int index = st.next++;
  if (!st.chips_checked || st.first.Done()) return;
  st.rules.Chip(index, chip);
  if (!st.first.Done()) {
    DecodeChip(chip, &st.program.chips[chip.chip()].streams);
  }
}

bool TraceDecoder::AddChipBytes(absl::string_view bytes) {
  State& st = *state_;
  if (!st.chips_checked || st.first.Done()) {
    // The rules have stopped: the chip need only parse.
    if (!ReadWireChip(bytes, nullptr, &st.wire)) return false;
  } else {
    const WireRules rules{&st.hw, st.program.num_chips};
    if (!ReadWireChip(bytes, &rules, &st.wire) ||
        !st.rules.TakeCheckedChip(st.next, st.wire.chip)) {
      return false;
    }
    std::vector<StreamProgram>& streams =
        st.program.chips[st.wire.chip].streams;
    streams.resize(st.wire.streams.size());
    const Instr* in = st.wire.instrs.data();
    for (size_t si = 0; si < streams.size(); ++si) {
      const WireChip::Stream& ws = st.wire.streams[si];
      StreamProgram& s = streams[si];
      s.id = ws.id;
      if (st.plan == nullptr ||
          !st.plan->Fill(st.wire.chip, static_cast<uint32_t>(si), in, ws.size,
                         &s.instrs)) {
        s.instrs.reserve(ws.size);
        for (uint32_t i = 0; i < ws.size; ++i) s.instrs.push_back(in[i]);
      }
      in += ws.size;
    }
  }
  ++st.next;
  ++st.wire_chips;
  return true;
}

void TraceDecoder::PlanLayout(const std::vector<absl::string_view>& chips) {
  State& st = *state_;
  if (!st.chips_checked || st.next != 0) return;
  const uint32_t n = st.program.num_chips;
  std::vector<std::vector<uint32_t>> lengths(n);
  std::vector<bool> seen(n, false);
  uint32_t chip = 0;
  std::vector<uint32_t> chip_lengths;
  for (const absl::string_view bytes : chips) {
    if (!CountWireChip(bytes, &chip, &chip_lengths) || chip >= n ||
        seen[chip]) {
      return;  // the rules will say what is wrong, or protobuf will read it
    }
    seen[chip] = true;
    lengths[chip] = chip_lengths;
  }
  auto plan = std::make_unique<InterleavePlan>(lengths);
  if (plan->ok()) st.plan = std::move(plan);
}

int64_t TraceDecoder::wire_chips() const { return state_->wire_chips; }

bool TraceDecoder::written_in_place() const { return state_->written_in_place; }

absl::StatusOr<Program> TraceDecoder::Finish() {
  State& st = *state_;
  if (st.chips_checked) st.rules.End();
  if (!st.first.status().ok()) return st.first.status();
  // Laid out for the replay, whose streams step together (already, if
  // every stream was written where PlanLayout placed it).
  st.written_in_place = st.plan != nullptr && st.plan->complete();
  if (!st.written_in_place) InterleaveStreams(st.program);
  st.plan.reset();
  return std::move(st.program);
}

absl::StatusOr<Program> ValidateAndDecode(const v1::Trace& trace,
                                          const TraceTarget& hw) {
  TraceDecoder decoder(trace.has_header() ? &trace.header() : nullptr, hw);
  for (const v1::ChipProgram& chip : trace.chips()) decoder.AddChip(chip);
  return decoder.Finish();
}

DecodedTrace DecodeTrace(const v1::Trace& trace, const TraceTarget& hw) {
  DecodedTrace out;
  *out.header.mutable_header() = trace.header();
  out.program = ValidateAndDecode(trace, hw);
  return out;
}

std::optional<DecodedTrace> StreamValidateAndDecode(
    absl::string_view bytes, const TraceTarget& hw,
    const std::function<void(size_t)>& consumed) {
  if (bytes.empty() || bytes.size() > INT_MAX || LooksLikeTextFormat(bytes)) {
    return std::nullopt;
  }
  std::vector<Span> headers;
  std::vector<Span> chips;
  if (!ScanTopLevel(bytes, &headers, &chips)) return std::nullopt;
  DecodedTrace out;
  for (const Span& h : headers) {
    if (!MergeSpan(bytes, h, out.header.mutable_header())) return std::nullopt;
  }
  if (headers.empty() ||
      out.header.header().format_version() != v1::FORMAT_VERSION_1) {
    return std::nullopt;  // the whole-message path names what is missing
  }
  TraceDecoder decoder(&out.header.header(), hw);
  // One chip's protobuf at a time, on blocks reused from chip to chip.
  // The first block, kept by Reset(), is where most chips fit; it is not
  // written here, so only what the chips use becomes resident.
  constexpr size_t kFirstBlock = size_t{4} << 20;
  const std::unique_ptr<char[]> first_block(new char[kFirstBlock]);
  pb::ArenaOptions arena_options;
  arena_options.initial_block = first_block.get();
  arena_options.initial_block_size = kFirstBlock;
  arena_options.start_block_size = size_t{1} << 20;
  arena_options.max_block_size = size_t{16} << 20;
  pb::Arena arena(arena_options);
  // What is behind the last chip parsed is read no more when every header
  // comes before it (the headers were merged above; chips are in order).
  size_t last_header_end = 0;
  for (const Span& h : headers) {
    last_header_end = std::max(last_header_end, SpanEnd(h));
  }
  {
    std::vector<absl::string_view> chip_bytes;
    chip_bytes.reserve(chips.size());
    for (const Span& span : chips) {
      chip_bytes.push_back(bytes.substr(span.offset, span.size));
    }
    decoder.PlanLayout(chip_bytes);
  }
  for (const Span& span : chips) {
    // Most chips are read straight from their bytes; the rest (and any
    // that breaks a rule) are parsed by protobuf and checked by the rules.
    if (!decoder.AddChipBytes(bytes.substr(span.offset, span.size))) {
      auto* chip = pb::Arena::CreateMessage<v1::ChipProgram>(&arena);
      if (!ParseSpan(bytes, span, chip)) return std::nullopt;
      decoder.AddChip(*chip);
      arena.Reset();
    }
    if (consumed && SpanEnd(span) >= last_header_end) consumed(SpanEnd(span));
  }
  out.wire_chips = decoder.wire_chips();
  out.program = decoder.Finish();
  out.written_in_place = decoder.written_in_place();
  return out;
}

}  // namespace ccreplay
