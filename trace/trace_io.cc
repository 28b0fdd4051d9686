#include "trace/trace_io.h"

#include <climits>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/unknown_field_set.h"
#include "google/protobuf/wire_format_lite.h"

namespace ccreplay {
namespace {

namespace pb = ::google::protobuf;

// protobuf parses and serializes at most INT_MAX bytes as one message.
constexpr size_t kMaxMessageBytes = INT_MAX;

constexpr absl::string_view kUtf8Bom = "\xEF\xBB\xBF";

absl::string_view StripBom(absl::string_view s) {
  if (absl::StartsWith(s, kUtf8Bom)) s.remove_prefix(kUtf8Bom.size());
  return s;
}

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsValidUtf8(absl::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;                               // continuation bytes
    unsigned char lo = 0x80, hi = 0xBF;  // range of the first continuation
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return false;
    }
    if (end - p <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int i = 2; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
    }
    p += n + 1;
  }
  return true;
}

// Keeps the first error the text parser reports (later ones are usually
// consequences of the first).
class FirstErrorCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string& message) override {
    if (has_error_) return;
    has_error_ = true;
    line_ = line;
    column_ = column;
    message_ = message;
  }

  bool has_error() const { return has_error_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

class IgnoreErrors : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

// protobuf 3.21 reports errors found after consuming a token (an unknown
// field name, an unknown enum value, a field set twice) at the position of
// the NEXT token, which may be on the next line. Those messages quote the
// offending token, so: if the token just before the reported position is
// quoted in the message, report that token's position instead. Syntax
// errors ("Expected integer, got: two") already point at the right token and
// do not quote the one before it.
// Returns the 0-based (line, column) to report.
std::pair<int, int> BlamedPosition(absl::string_view text, int line, int column,
                                   const std::string& message) {
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  IgnoreErrors ignore;
  pb::io::Tokenizer tokenizer(&input, &ignore);
  // As TextFormat::Parser configures its tokenizer.
  tokenizer.set_allow_f_after_float(true);
  tokenizer.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_require_space_after_number(false);
  tokenizer.set_allow_multiline_strings(true);
  bool have_prev = false;
  pb::io::Tokenizer::Token prev;
  while (tokenizer.Next()) {
    const pb::io::Tokenizer::Token& t = tokenizer.current();
    if (std::make_pair(t.line, t.column) >= std::make_pair(line, column)) {
      break;
    }
    prev = t;
    have_prev = true;
  }
  if (have_prev &&
      absl::StrContains(message, absl::StrCat("\"", prev.text, "\""))) {
    return {prev.line, prev.column};
  }
  return {line, column};
}

// REQUIRES: bytes.size() <= kMaxMessageBytes.
absl::Status ParseText(absl::string_view bytes, const std::string& name,
                       pb::Message* out) {
  bytes = StripBom(bytes);
  pb::io::ArrayInputStream input(bytes.data(), static_cast<int>(bytes.size()));
  FirstErrorCollector errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  {
    // Errors come back through `errors`; protobuf's own log lines (e.g.
    // about invalid UTF-8 in a string) would only repeat them on stderr.
    pb::LogSilencer quiet;
    if (parser.Parse(&input, out)) return absl::OkStatus();
  }
  if (!errors.has_error()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": text format parse failed"));
  }
  const auto [line, column] =
      BlamedPosition(bytes, errors.line(), errors.column(), errors.message());
  // io::ErrorCollector positions are 0-based; editors count from 1.
  return absl::InvalidArgumentError(absl::StrCat(
      name, ":", line + 1, ":", column + 1, ": ", errors.message()));
}

// REQUIRES: bytes.size() <= kMaxMessageBytes.
bool ParseBinary(absl::string_view bytes, pb::Message* out) {
  pb::LogSilencer quiet;
  return out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// Walks the wire format of `bytes` against `type` to say where and why a
// binary parse failed, e.g. "chips[3].streams[0] at byte offset 1234 is 800
// bytes long, but only 12 bytes remain (truncated file?)". Reads through
// protobuf's CodedInputStream (varints, limits for nested messages); used
// only after protobuf has rejected the bytes, so it need not be fast.
class WireDiagnoser {
 public:
  // REQUIRES: bytes.size() <= kMaxMessageBytes.
  explicit WireDiagnoser(absl::string_view bytes)
      : input_(reinterpret_cast<const uint8_t*>(bytes.data()),
               static_cast<int>(bytes.size())) {
    input_.PushLimit(static_cast<int>(bytes.size()));
  }

  // Returns the first problem found, or "" if the walk finds none.
  std::string Diagnose(const pb::Descriptor* type) { return Walk(type, "", 0); }

 private:
  static constexpr int kMaxDepth = 100;  // protobuf's default

  static std::string Join(absl::string_view prefix, absl::string_view name) {
    return prefix.empty() ? std::string(name) : absl::StrCat(prefix, ".", name);
  }

  // Walks the fields up to the current limit: one message of `type`
  // (nullptr: unknown, its fields are only skipped).
  std::string Walk(const pb::Descriptor* type, const std::string& path,
                   int depth) {
    if (depth > kMaxDepth) {
      return absl::StrCat(path, ": nested more than ", kMaxDepth, " deep");
    }
    std::map<int, int> seen;  // field number -> occurrences so far
    while (input_.BytesUntilLimit() > 0) {
      const int at = input_.CurrentPosition();
      uint64_t tag;
      if (!input_.ReadVarint64(&tag)) {
        return absl::StrCat("field tag at byte offset ", at,
                            " is cut off (truncated file?)");
      }
      const uint64_t number = tag >> 3;
      if (number == 0 || number > pb::FieldDescriptor::kMaxNumber) {
        return absl::StrCat("invalid field number ", number, " at byte offset ",
                            at);
      }
      const pb::FieldDescriptor* field =
          type == nullptr ? nullptr
                          : type->FindFieldByNumber(static_cast<int>(number));
      std::string where;
      if (field == nullptr) {
        where = Join(path, absl::StrCat("<unknown field ", number, ">"));
      } else if (field->is_repeated()) {
        where = Join(path, absl::StrCat(field->name(), "[",
                                        seen[field->number()]++, "]"));
      } else {
        where = Join(path, field->name());
      }
      std::string problem =
          Value(field, static_cast<int>(tag & 7), where, at, depth);
      if (!problem.empty()) return problem;
    }
    return "";
  }

  // Reads the value of one field whose tag started at byte `at`.
  std::string Value(const pb::FieldDescriptor* field, int wire_type,
                    const std::string& where, int at, int depth) {
    const int remain = input_.BytesUntilLimit();
    switch (wire_type) {
      case 0: {  // varint
        uint64_t ignored;
        if (input_.ReadVarint64(&ignored)) return "";
        return absl::StrCat(where, " at byte offset ", at,
                            ": varint is cut off or too long");
      }
      case 1:    // fixed64
      case 5: {  // fixed32
        const int size = wire_type == 1 ? 8 : 4;
        if (remain >= size && input_.Skip(size)) return "";
        return absl::StrCat(where, " at byte offset ", at, " needs ", size,
                            " bytes, but only ", remain,
                            " remain (truncated file?)");
      }
      case 2:  // length-delimited
        return LengthDelimited(field, where, at, depth);
      default:
        return absl::StrCat("invalid wire type ", wire_type, " at byte offset ",
                            at, " (", where, ")");
    }
  }

  std::string LengthDelimited(const pb::FieldDescriptor* field,
                              const std::string& where, int at, int depth) {
    uint64_t len;
    if (!input_.ReadVarint64(&len)) {
      return absl::StrCat(where, " at byte offset ", at,
                          ": length is cut off or too long");
    }
    const int remain = input_.BytesUntilLimit();
    if (len > static_cast<uint64_t>(remain)) {
      return absl::StrCat(where, " at byte offset ", at, " is ", len,
                          " bytes long, but only ", remain,
                          " bytes remain (truncated file?)");
    }
    const int size = static_cast<int>(len);
    if (field != nullptr &&
        field->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
      const pb::io::CodedInputStream::Limit outer = input_.PushLimit(size);
      std::string inner = Walk(field->message_type(), where, depth + 1);
      input_.PopLimit(outer);
      return inner;
    }
    if (field != nullptr && field->type() == pb::FieldDescriptor::TYPE_STRING) {
      std::string text;
      input_.ReadString(&text, size);
      if (!IsValidUtf8(text)) {
        return absl::StrCat(where, " at byte offset ", at,
                            " is a string but not valid UTF-8");
      }
      return "";
    }
    input_.Skip(size);
    return "";
  }

  pb::io::CodedInputStream input_;
};

// Parses `bytes` as M in whichever format LooksLikeTextFormat() suggests;
// if that fails, tries the other format and keeps its result when
// `plausible` accepts it, so that a misjudged format never hides a good
// file. Otherwise reports the failure of the suggested format.
template <typename M>
absl::Status ParseEitherFormat(absl::string_view bytes, const std::string& name,
                               absl::string_view kind,
                               bool (*plausible)(const M&), M* out) {
  if (bytes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": empty file, not a ", kind));
  }
  if (bytes.size() > kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": ", bytes.size(),
        " bytes is more than protobuf's limit of 2 GiB for one message"));
  }
  if (LooksLikeTextFormat(bytes)) {
    absl::Status text = ParseText(bytes, name, out);
    if (text.ok()) return text;
    M alt;
    if (ParseBinary(bytes, &alt) && plausible(alt)) {
      *out = std::move(alt);
      return absl::OkStatus();
    }
    return text;
  }
  if (ParseBinary(bytes, out)) return absl::OkStatus();
  M alt;
  if (ParseText(bytes, name, &alt).ok() && plausible(alt)) {
    *out = std::move(alt);
    return absl::OkStatus();
  }
  std::string why = WireDiagnoser(bytes).Diagnose(M::descriptor());
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": not a ", kind, " (binary protobuf parse failed",
                   why.empty() ? "" : ": ", why, ")"));
}

bool HasV1Header(const v1::Trace& t) {
  return t.has_header() && t.header().format_version() == v1::FORMAT_VERSION_1;
}

bool HasCdmaAndLink(const v1::HardwareConfig& c) {
  return c.has_cdma() && c.has_link();
}

absl::Status CheckTraceHeader(const v1::Trace& t, const std::string& name) {
  if (!t.has_header()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": not a ccreplay trace: no header"));
  }
  const int version = t.header().format_version();
  if (version == v1::FORMAT_VERSION_1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      name, ": not a ccreplay trace", version == 0 ? "" : " of a known version",
      ": header.format_version is ", version,
      ", expected 1 (FORMAT_VERSION_1)"));
}

// The first field of `m` (depth first) that its schema does not know, as
// "link.<unknown field 99>", or "" if none: binary configs are as strict as
// text ones, whose parser rejects unknown names.
std::string FirstUnknownField(const pb::Message& m, const std::string& where) {
  const pb::Reflection* r = m.GetReflection();
  const pb::UnknownFieldSet& u = r->GetUnknownFields(m);
  if (u.field_count() > 0) {
    return absl::StrCat(where, where.empty() ? "" : ".", "<unknown field ",
                        u.field(0).number(), ">");
  }
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor* f : fields) {
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string at =
        absl::StrCat(where, where.empty() ? "" : ".", f->name());
    const int count = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < count; ++i) {
      const pb::Message& sub = f->is_repeated() ? r->GetRepeatedMessage(m, f, i)
                                                : r->GetMessage(m, f);
      std::string found = FirstUnknownField(
          sub, f->is_repeated() ? absl::StrCat(at, "[", i, "]") : at);
      if (!found.empty()) return found;
    }
  }
  return "";
}

absl::StatusOr<v1::HardwareConfig> ParseHwConfigProtoNoHint(
    absl::string_view bytes, const std::string& name) {
  v1::HardwareConfig proto;
  absl::Status s = ParseEitherFormat<v1::HardwareConfig>(
      bytes, name, "ccreplay hardware config", &HasCdmaAndLink, &proto);
  if (!s.ok()) return s;
  if (std::string unknown = FirstUnknownField(proto, ""); !unknown.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": hardware config has ", unknown,
                     ", a field this ccreplay does not know (from a newer "
                     "version, or corrupt?)"));
  }
  return proto;
}

// True if `bytes` hold a hardware config / trace message: used only to add a
// hint to an error, so the other kind's errors are dropped.
bool IsHwConfig(absl::string_view bytes) {
  absl::StatusOr<v1::HardwareConfig> c = ParseHwConfigProtoNoHint(bytes, "");
  return c.ok() && HasCdmaAndLink(*c);
}
bool IsTrace(absl::string_view bytes) {
  v1::Trace t;
  return ParseEitherFormat<v1::Trace>(bytes, "", "", &HasV1Header, &t).ok() &&
         HasV1Header(t);
}

absl::Status WithHint(const absl::Status& s, absl::string_view hint) {
  return absl::Status(s.code(), absl::StrCat(s.message(), " (", hint, ")"));
}

template <typename M>
absl::Status WriteMessage(const std::string& path, const M& msg) {
  std::string bytes;
  if (FormatForPath(path) == TraceFormat::kText) {
    pb::TextFormat::Printer printer;
    if (!printer.PrintToString(msg, &bytes)) {
      return absl::InternalError(
          absl::StrCat(path, ": text format printing failed"));
    }
  } else {
    const size_t size = msg.ByteSizeLong();
    if (size > kMaxMessageBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": the encoding would be ", size,
          " bytes, more than protobuf's limit of 2 GiB for one message"));
    }
    if (!msg.SerializeToString(&bytes)) {
      return absl::InternalError(
          absl::StrCat(path, ": binary serialization failed"));
    }
  }
  return WriteFileAtomically(path, bytes);
}

}  // namespace

TraceFormat FormatForPath(const std::string& path) {
  for (absl::string_view ext : {".txtpb", ".textproto", ".pbtxt", ".txt"}) {
    if (absl::EndsWith(path, ext)) return TraceFormat::kText;
  }
  return TraceFormat::kBinary;
}

bool LooksLikeTextFormat(absl::string_view bytes) {
  bytes = StripBom(bytes);
  if (bytes.empty() || !IsValidUtf8(bytes)) return false;
  size_t control = 0;
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) return false;
    const bool space =
        c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
    if ((c < 0x20 && !space) || c == 0x7F) ++control;
  }
  return control * 100 <= bytes.size();
}

namespace {

// ParseTrace() into `*trace` (which may live on an arena).
absl::Status ParseTraceInto(absl::string_view bytes, const std::string& name,
                            v1::Trace* trace) {
  absl::Status s = ParseEitherFormat<v1::Trace>(bytes, name, "ccreplay trace",
                                                &HasV1Header, trace);
  if (s.ok()) s = CheckTraceHeader(*trace, name);
  if (!s.ok() && !bytes.empty() && IsHwConfig(bytes)) {
    return WithHint(s, "this is a ccreplay hardware config, not a trace");
  }
  return s;
}

// Arena blocks from 64 KiB up to 64 MiB: a large trace takes a few dozen
// blocks, a small one a few.
pb::ArenaOptions TraceArenaOptions() {
  pb::ArenaOptions o;
  o.start_block_size = size_t{64} << 10;
  o.max_block_size = size_t{64} << 20;
  return o;
}

}  // namespace

absl::StatusOr<v1::Trace> ParseTrace(absl::string_view bytes,
                                     const std::string& name) {
  v1::Trace trace;
  if (absl::Status s = ParseTraceInto(bytes, name, &trace); !s.ok()) return s;
  return trace;
}

ArenaTrace::ArenaTrace()
    : arena_(std::make_unique<pb::Arena>(TraceArenaOptions())),
      trace_(pb::Arena::CreateMessage<v1::Trace>(arena_.get())) {}

absl::StatusOr<ArenaTrace> ParseTraceOnArena(absl::string_view bytes,
                                             const std::string& name) {
  ArenaTrace trace;
  if (absl::Status s = ParseTraceInto(bytes, name, &*trace); !s.ok()) {
    return s;
  }
  return trace;
}

absl::StatusOr<v1::Trace> ParseTraceWithLocations(absl::string_view bytes,
                                                  const std::string& name,
                                                  TraceLocations* locations) {
  *locations = TraceLocations();
  if (bytes.size() > kMaxMessageBytes || !LooksLikeTextFormat(bytes)) {
    return ParseTrace(bytes, name);
  }
  // A text parse that records where every field is. If it fails, or is not a
  // v1 trace, ParseTrace() says why (or finds a binary trace after all).
  const absl::string_view text = StripBom(bytes);
  // StripBom removes 3 bytes from line 1 only: columns there shift by the
  // BOM's one (invisible) character as editors count it; ignored.
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  IgnoreErrors ignore;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&ignore);
  pb::TextFormat::ParseInfoTree tree;
  parser.WriteLocationsTo(&tree);
  v1::Trace again;
  {
    pb::LogSilencer quiet;
    if (!parser.Parse(&input, &again) || !HasV1Header(again)) {
      return ParseTrace(bytes, name);
    }
  }
  const pb::Descriptor* trace_d = v1::Trace::descriptor();
  const pb::FieldDescriptor* header_f = trace_d->FindFieldByName("header");
  const pb::FieldDescriptor* chips_f = trace_d->FindFieldByName("chips");
  const pb::FieldDescriptor* streams_f =
      v1::ChipProgram::descriptor()->FindFieldByName("streams");
  const pb::FieldDescriptor* instrs_f =
      v1::Stream::descriptor()->FindFieldByName("instructions");
  auto loc = [](const pb::TextFormat::ParseLocation& l) {
    // ParseLocation is 0-based; -1 when the field was not seen.
    return l.line < 0 ? TextLocation{} : TextLocation{l.line + 1, l.column + 1};
  };
  locations->header = loc(tree.GetLocation(header_f, -1));
  const int num_chips = again.chips_size();
  locations->chips.resize(static_cast<size_t>(num_chips));
  locations->streams.resize(static_cast<size_t>(num_chips));
  locations->instructions.resize(static_cast<size_t>(num_chips));
  for (int c = 0; c < num_chips; ++c) {
    const size_t cs = static_cast<size_t>(c);
    locations->chips[cs] = loc(tree.GetLocation(chips_f, c));
    pb::TextFormat::ParseInfoTree* chip_tree =
        tree.GetTreeForNested(chips_f, c);
    const v1::ChipProgram& chip = again.chips(c);
    locations->streams[cs].resize(static_cast<size_t>(chip.streams_size()));
    locations->instructions[cs].resize(
        static_cast<size_t>(chip.streams_size()));
    if (chip_tree == nullptr) continue;
    for (int s = 0; s < chip.streams_size(); ++s) {
      const size_t ss = static_cast<size_t>(s);
      locations->streams[cs][ss] = loc(chip_tree->GetLocation(streams_f, s));
      pb::TextFormat::ParseInfoTree* stream_tree =
          chip_tree->GetTreeForNested(streams_f, s);
      const int n = chip.streams(s).instructions_size();
      std::vector<TextLocation>& out = locations->instructions[cs][ss];
      out.resize(static_cast<size_t>(n));
      if (stream_tree == nullptr) continue;
      for (int i = 0; i < n; ++i) {
        out[static_cast<size_t>(i)] =
            loc(stream_tree->GetLocation(instrs_f, i));
      }
    }
  }
  return again;
}

absl::StatusOr<v1::Trace> ReadTraceFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  return ParseTrace(*bytes, path);
}

absl::Status WriteTraceFile(const std::string& path, const v1::Trace& trace) {
  return WriteMessage(path, trace);
}

namespace {

// Appends field `number` of a message holding `m`, as its serialisation
// writes it: the tag, the length, the bytes.
void AppendMessageField(int number, const pb::MessageLite& m,
                        std::string* out) {
  const size_t size = m.ByteSizeLong();
  uint8_t head[16];
  uint8_t* end = pb::io::CodedOutputStream::WriteTagToArray(
      pb::internal::WireFormatLite::MakeTag(
          number, pb::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED),
      head);
  end = pb::io::CodedOutputStream::WriteVarint64ToArray(size, end);
  out->append(reinterpret_cast<const char*>(head),
              static_cast<size_t>(end - head));
  m.AppendToString(out);
}

}  // namespace

void BinaryTraceBuilder::AddHeader(const v1::TraceHeader& header) {
  AppendMessageField(v1::Trace::kHeaderFieldNumber, header, &bytes_);
}

void BinaryTraceBuilder::AddChip(const v1::ChipProgram& chip) {
  AppendMessageField(v1::Trace::kChipsFieldNumber, chip, &bytes_);
}

absl::Status BinaryTraceBuilder::WriteFile(const std::string& path) const {
  if (bytes_.size() > kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the encoding would be ", bytes_.size(),
        " bytes, more than protobuf's limit of 2 GiB for one message"));
  }
  return WriteFileAtomically(path, bytes_);
}

absl::StatusOr<v1::HardwareConfig> ParseHwConfigProto(absl::string_view bytes,
                                                      const std::string& name) {
  absl::StatusOr<v1::HardwareConfig> proto =
      ParseHwConfigProtoNoHint(bytes, name);
  if (!proto.ok() && !bytes.empty() && IsTrace(bytes)) {
    return WithHint(proto.status(),
                    "this is a ccreplay trace, not a hardware config");
  }
  return proto;
}

absl::Status WriteHwConfigProtoFile(const std::string& path,
                                    const v1::HardwareConfig& proto) {
  return WriteMessage(path, proto);
}

}  // namespace ccreplay
