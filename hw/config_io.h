// Hardware config files: read (binary or text format) and validate, or
// write. The protobuf side is trace/trace_io.h; the values' validation is
// HwConfigFromProto (hw/config.h).
#ifndef CCREPLAY_HW_CONFIG_IO_H_
#define CCREPLAY_HW_CONFIG_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hw/config.h"

namespace ccreplay {

// Parses a hardware config (binary or text format, detected as for traces)
// and validates it with HwConfigFromProto(), whose errors are prefixed with
// `name`: "hw.txtpb: link.bandwidth_bytes_per_s: must be > 0".
absl::StatusOr<HwConfig> ParseHwConfig(absl::string_view bytes,
                                       const std::string& name);

// ReadFileToString(path) + ParseHwConfig(bytes, path).
absl::StatusOr<HwConfig> ReadHwConfigFile(const std::string& path);

// Writes HwConfigToProto(cfg) to `path` in FormatForPath(path), atomically.
absl::Status WriteHwConfigFile(const std::string& path, const HwConfig& cfg);

}  // namespace ccreplay

#endif  // CCREPLAY_HW_CONFIG_IO_H_
