#include "hw/config.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"

namespace ccreplay {

extern const char kTps186ConfigText[];  // generated from traces/

absl::string_view TopologyName(TopologyKind k) {
  switch (k) {
    case TopologyKind::kRing:
      return "ring";
    case TopologyKind::kSwitch:
      return "switch";
  }
  return "?";
}

absl::StatusOr<TopologyKind> ParseTopologyName(absl::string_view name) {
  if (name == "ring") return TopologyKind::kRing;
  if (name == "switch") return TopologyKind::kSwitch;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown topology '", name, "' (known: ring, switch)"));
}

namespace {

// Largest time a parameter may take: 1 s. Larger values are certainly typos
// and would risk overflow in sums of many latencies.
constexpr uint64_t kMaxParamPs = kPsPerSecond;
// Largest packet: 1 MiB; larger is no packet.
constexpr uint32_t kMaxPacketBytes = 1u << 20;
// Largest engine count: keeps qp_id = (cdma << 2) | vc well inside uint32.
constexpr uint32_t kMaxEngines = 1u << 16;

absl::Status Bad(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

absl::Status CheckTime(absl::string_view field, uint64_t ps) {
  if (ps > kMaxParamPs) {
    return Bad(field, absl::StrCat(ps, " ps is more than 1 s"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HwConfig> HwConfigFromProto(const v1::HardwareConfig& p) {
  HwConfig c;
  c.name = p.name();
  if (!p.has_cdma()) return Bad("cdma", "missing");
  if (!p.has_link()) return Bad("link", "missing");
  if (p.cdma().engines_per_chip() == 0 ||
      p.cdma().engines_per_chip() > kMaxEngines) {
    return Bad("cdma.engines_per_chip",
               absl::StrCat("must be in [1, ", kMaxEngines, "], got ",
                            p.cdma().engines_per_chip()));
  }
  if (p.cdma().bandwidth_bytes_per_s() == 0) {
    return Bad("cdma.bandwidth_bytes_per_s", "must be > 0");
  }
  if (auto s =
          CheckTime("cdma.startup_latency_ps", p.cdma().startup_latency_ps());
      !s.ok()) {
    return s;
  }
  if (p.link().bandwidth_bytes_per_s() == 0) {
    return Bad("link.bandwidth_bytes_per_s", "must be > 0");
  }
  if (auto s = CheckTime("link.latency_ps", p.link().latency_ps()); !s.ok()) {
    return s;
  }
  if (auto s = CheckTime("link.propagation_ps", p.link().propagation_ps());
      !s.ok()) {
    return s;
  }
  if (p.link().packet_payload_bytes() == 0 ||
      p.link().packet_payload_bytes() > kMaxPacketBytes) {
    return Bad("link.packet_payload_bytes",
               absl::StrCat("must be in [1, ", kMaxPacketBytes, "], got ",
                            p.link().packet_payload_bytes()));
  }
  if (p.link().packet_header_bytes() > kMaxPacketBytes) {
    return Bad("link.packet_header_bytes",
               absl::StrCat("must be at most ", kMaxPacketBytes));
  }
  if (p.link().message_payload_bytes() > kMaxPacketBytes) {
    return Bad("link.message_payload_bytes",
               absl::StrCat("must be at most ", kMaxPacketBytes));
  }
  if (p.link().packet_header_bytes() + p.link().message_payload_bytes() == 0) {
    return Bad("link.message_payload_bytes",
               "a message must have at least one byte on the wire "
               "(header + message payload > 0)");
  }
  if (auto s = CheckTime("switch_config.forwarding_latency_ps",
                         p.switch_config().forwarding_latency_ps());
      !s.ok()) {
    return s;
  }
  if (auto s =
          CheckTime("message.local_latency_ps", p.message().local_latency_ps());
      !s.ok()) {
    return s;
  }
  switch (p.topology().kind()) {
    case v1::RING:
      c.topology = TopologyKind::kRing;
      break;
    case v1::SWITCH:
      c.topology = TopologyKind::kSwitch;
      break;
    default:
      return Bad("topology.kind", "must be RING or SWITCH");
  }
  c.cdma_engines = p.cdma().engines_per_chip();
  c.cdma_bytes_per_s = p.cdma().bandwidth_bytes_per_s();
  c.cdma_startup = TimePs(static_cast<int64_t>(p.cdma().startup_latency_ps()));
  c.cdma_max_outstanding = p.cdma().max_outstanding();
  c.link_bytes_per_s = p.link().bandwidth_bytes_per_s();
  c.link_latency = TimePs(static_cast<int64_t>(p.link().latency_ps()));
  c.link_propagation = TimePs(static_cast<int64_t>(p.link().propagation_ps()));
  c.packet_payload_bytes = p.link().packet_payload_bytes();
  c.packet_header_bytes = p.link().packet_header_bytes();
  c.message_payload_bytes = p.link().message_payload_bytes();
  c.switch_forwarding =
      TimePs(static_cast<int64_t>(p.switch_config().forwarding_latency_ps()));
  c.msg_local_latency =
      TimePs(static_cast<int64_t>(p.message().local_latency_ps()));
  c.num_chips = p.topology().num_chips();
  return c;
}

v1::HardwareConfig HwConfigToProto(const HwConfig& c) {
  v1::HardwareConfig p;
  p.set_name(c.name);
  p.mutable_cdma()->set_engines_per_chip(c.cdma_engines);
  p.mutable_cdma()->set_bandwidth_bytes_per_s(c.cdma_bytes_per_s);
  p.mutable_cdma()->set_startup_latency_ps(c.cdma_startup.ps());
  p.mutable_cdma()->set_max_outstanding(c.cdma_max_outstanding);
  p.mutable_link()->set_bandwidth_bytes_per_s(c.link_bytes_per_s);
  p.mutable_link()->set_latency_ps(c.link_latency.ps());
  p.mutable_link()->set_propagation_ps(c.link_propagation.ps());
  p.mutable_link()->set_packet_payload_bytes(c.packet_payload_bytes);
  p.mutable_link()->set_packet_header_bytes(c.packet_header_bytes);
  p.mutable_link()->set_message_payload_bytes(c.message_payload_bytes);
  p.mutable_switch_config()->set_forwarding_latency_ps(
      c.switch_forwarding.ps());
  p.mutable_message()->set_local_latency_ps(c.msg_local_latency.ps());
  p.mutable_topology()->set_kind(
      c.topology == TopologyKind::kRing ? v1::RING : v1::SWITCH);
  p.mutable_topology()->set_num_chips(c.num_chips);
  return p;
}

absl::string_view Tps186ConfigText() { return kTps186ConfigText; }

const HwConfig& DefaultTps186() {
  static const HwConfig* cfg = [] {
    v1::HardwareConfig p;
    // The built-in text is checked by tests; failing here is a build defect.
    if (!google::protobuf::TextFormat::ParseFromString(
            std::string(Tps186ConfigText()), &p)) {
      std::abort();
    }
    auto c = HwConfigFromProto(p);
    if (!c.ok()) std::abort();
    return new HwConfig(*std::move(c));
  }();
  return *cfg;
}

}  // namespace ccreplay
