// Reading and writing trace files (ccreplay.v1.Trace, proto/trace.proto) and
// hardware config files (ccreplay.v1.HardwareConfig), in protobuf binary or
// text format. Readers detect the format from the content, so a file's name
// never decides how it is parsed; writers pick the format from the name.
//
// Errors are InvalidArgument (bad content) or the errno-derived code of the
// failing system call, and always start with the file's name:
//   "t.txtpb:12:7: Expected integer, got: foo"          (text, 1-based)
//   "t.pb: not a ccreplay trace (binary protobuf parse failed)"
//   "t.pb: not a ccreplay trace: header.format_version is 0, expected 1
//    (FORMAT_VERSION_1)"
//
// Reading a trace checks only that it is a ccreplay trace of a version this
// reader understands; ValidateAndDecode() (trace/decode.h) checks the rest.
#ifndef CCREPLAY_TRACE_TRACE_IO_H_
#define CCREPLAY_TRACE_TRACE_IO_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/arena.h"
#include "proto/hw_config.pb.h"
#include "proto/trace.pb.h"

namespace ccreplay {

enum class TraceFormat { kBinary, kText };

// The format a writer uses for `path`: kText for the extensions ".txtpb",
// ".textproto", ".pbtxt" and ".txt" (compared case-sensitively), kBinary for
// every other name.
TraceFormat FormatForPath(const std::string& path);

// True if `bytes` should be parsed as protobuf text format: non-empty, valid
// UTF-8 (an optional leading byte-order mark aside), no NUL byte, and at most
// 1% control characters other than whitespace. Every binary trace or config
// fails this test (its field tags are control characters), and a text file
// with a stray control character still passes, so that its error is reported
// with a line and column.
bool LooksLikeTextFormat(absl::string_view bytes);

// Parses a trace from `bytes` (binary or text format, detected by
// LooksLikeTextFormat(); if the detected format fails to parse, the other is
// tried before giving up). `name` starts every error message (a file name, or
// e.g. "<stdin>"). Succeeds only for a trace with a header whose
// format_version is FORMAT_VERSION_1. Any input, including truncated or
// random bytes, gives a status, never a crash.
// A binary trace cut exactly between two top-level fields is still a
// well-formed, shorter trace; the binary format cannot tell.
absl::StatusOr<v1::Trace> ParseTrace(absl::string_view bytes,
                                     const std::string& name);

// ReadFileToString(path) + ParseTrace(bytes, path).
absl::StatusOr<v1::Trace> ReadTraceFile(const std::string& path);

// A trace whose protobuf objects live on an arena of their own: parsing
// allocates from large blocks instead of one heap object per message, and
// freeing is one step (about 0.6 s less CPU for a 6.3 M-instruction trace;
// docs/architecture.md, "Memory per instruction"). For a replay of a trace
// the chip-by-chip reader (StreamValidateAndDecode, trace/decode.h) leaves
// to the whole-message path, which decodes it and frees it at once.
class ArenaTrace {
 public:
  ArenaTrace();
  ArenaTrace(ArenaTrace&&) = default;
  ArenaTrace& operator=(ArenaTrace&&) = default;
  v1::Trace& operator*() const { return *trace_; }
  v1::Trace* operator->() const { return trace_; }

 private:
  std::unique_ptr<google::protobuf::Arena> arena_;
  v1::Trace* trace_;  // on arena_
};

// ParseTrace(bytes, name), onto an arena.
absl::StatusOr<ArenaTrace> ParseTraceOnArena(absl::string_view bytes,
                                             const std::string& name);

// Where the parts of a text-format trace are: 1-based line and column of the
// field name that starts each part. Empty (all vectors empty) for a binary
// trace. Indices follow the trace: chips[c] is trace.chips(c) (not chip id c),
// streams[c][s] is trace.chips(c).streams(s), instructions[c][s][i] is
// trace.chips(c).streams(s).instructions(i).
struct TextLocation {
  int line = 0;  // 1-based; 0 = unknown
  int column = 0;
};
struct TraceLocations {
  TextLocation header;
  std::vector<TextLocation> chips;
  std::vector<std::vector<TextLocation>> streams;
  std::vector<std::vector<std::vector<TextLocation>>> instructions;

  bool empty() const { return chips.empty() && header.line == 0; }
};

// ParseTrace(bytes, name), and for a text-format trace also the locations of
// its parts in *locations (cleared first; left empty for a binary trace).
absl::StatusOr<v1::Trace> ParseTraceWithLocations(absl::string_view bytes,
                                                  const std::string& name,
                                                  TraceLocations* locations);

// Writes `trace` to `path` in FormatForPath(path), atomically (see
// WriteFileAtomically in base/file_util.h). Fails, writing nothing, if the
// binary encoding would exceed protobuf's 2 GiB limit for one message.
absl::Status WriteTraceFile(const std::string& path, const v1::Trace& trace);

// A binary trace built one top-level field at a time: the header, then each
// chip's program as it is made. Its bytes are exactly those of serialising
// the whole v1::Trace (protobuf writes the fields in field-number order, and
// a repeated message field is a run of length-delimited records), but the
// trace never has to exist whole as a protobuf: `ccreplay lower` holds only
// this serialized form and one chip (collectives/lower.h, LowerCollectiveTo).
class BinaryTraceBuilder {
 public:
  void AddHeader(const v1::TraceHeader& header);  // first, once
  void AddChip(const v1::ChipProgram& chip);
  // Writes the trace to `path` atomically (WriteFileAtomically); fails,
  // writing nothing, if it is over protobuf's 2 GiB limit for one message.
  absl::Status WriteFile(const std::string& path) const;
  size_t size() const { return bytes_.size(); }

 private:
  std::string bytes_;
};

// Parses a hardware config file's message (binary or text format, detected
// as for traces) without validating its values: HwConfigFromProto
// (hw/config.h) does that, and hw/config_io.h joins the two. Errors name
// `name`; bytes that hold a trace say so.
absl::StatusOr<v1::HardwareConfig> ParseHwConfigProto(absl::string_view bytes,
                                                      const std::string& name);

// Writes `proto` to `path` in FormatForPath(path), atomically.
absl::Status WriteHwConfigProtoFile(const std::string& path,
                                    const v1::HardwareConfig& proto);

}  // namespace ccreplay

#endif  // CCREPLAY_TRACE_TRACE_IO_H_
