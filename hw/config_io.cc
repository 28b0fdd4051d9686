#include "hw/config_io.h"

#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "trace/trace_io.h"

namespace ccreplay {

absl::StatusOr<HwConfig> ParseHwConfig(absl::string_view bytes,
                                       const std::string& name) {
  absl::StatusOr<v1::HardwareConfig> proto = ParseHwConfigProto(bytes, name);
  if (!proto.ok()) return proto.status();
  absl::StatusOr<HwConfig> cfg = HwConfigFromProto(*proto);
  if (!cfg.ok()) {
    return absl::Status(cfg.status().code(),
                        absl::StrCat(name, ": ", cfg.status().message()));
  }
  return cfg;
}

absl::StatusOr<HwConfig> ReadHwConfigFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  return ParseHwConfig(*bytes, path);
}

absl::Status WriteHwConfigFile(const std::string& path, const HwConfig& cfg) {
  return WriteHwConfigProtoFile(path, HwConfigToProto(cfg));
}

}  // namespace ccreplay
