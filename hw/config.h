// Hardware configuration: the decoded, validated form of
// ccreplay.v1.HardwareConfig (proto/hw_config.proto). Plain values only.
#ifndef CCREPLAY_HW_CONFIG_H_
#define CCREPLAY_HW_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hw/units.h"
#include "proto/hw_config.pb.h"

namespace ccreplay {

// Largest number of chips any part of ccreplay accepts (trace header,
// topology, lowering): 2^16. A documented limit of this replayer, not of the
// schema; per-chip tables stay small enough to allocate up front.
inline constexpr uint32_t kMaxChips = 1u << 16;

enum class TopologyKind : uint8_t { kRing, kSwitch };

absl::string_view TopologyName(TopologyKind k);
absl::StatusOr<TopologyKind> ParseTopologyName(absl::string_view name);

struct HwConfig {
  std::string name;
  // CDMA engines.
  uint32_t cdma_engines = 0;
  uint64_t cdma_bytes_per_s = 0;
  TimePs cdma_startup;
  uint32_t cdma_max_outstanding = 0;  // 0 = unbounded
  // c2c link (also chip <-> switch cables).
  uint64_t link_bytes_per_s = 0;
  TimePs link_latency;
  TimePs link_propagation;
  uint32_t packet_payload_bytes = 0;
  uint32_t packet_header_bytes = 0;
  uint32_t message_payload_bytes = 0;
  // Switch.
  TimePs switch_forwarding;
  // Message path.
  TimePs msg_local_latency;
  // Topology.
  TopologyKind topology = TopologyKind::kRing;
  uint32_t num_chips = 0;  // 0 = from the trace

  uint32_t num_qps() const { return cdma_engines * 4; }
};

// Validates and converts. Errors name the field, e.g.
// "link.bandwidth_bytes_per_s: must be > 0".
absl::StatusOr<HwConfig> HwConfigFromProto(const v1::HardwareConfig& proto);
v1::HardwareConfig HwConfigToProto(const HwConfig& cfg);

// The text of traces/tps186.hw.txtpb, compiled in.
absl::string_view Tps186ConfigText();
// The built-in TPS186 default (parsed from Tps186ConfigText()).
const HwConfig& DefaultTps186();

}  // namespace ccreplay

#endif  // CCREPLAY_HW_CONFIG_H_
