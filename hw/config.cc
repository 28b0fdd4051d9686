#include "hw/config.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"

namespace ccreplay {

extern const char kTps186ConfigText[];  // generated from traces/

namespace {

struct KindInfo {
  TopologyKind kind;
  const char* name;
  v1::TopologyKind proto;
};

// One row per kind: its canonical name and its proto enum value.
constexpr KindInfo kKinds[] = {
    {TopologyKind::kRing, "ring", v1::RING},
    {TopologyKind::kSwitch, "switch", v1::SWITCH},
    {TopologyKind::kRingUni, "ring-uni", v1::RING_UNI},
    {TopologyKind::kFullMesh, "fullmesh", v1::FULL_MESH},
    {TopologyKind::kBoardRing, "board-ring", v1::BOARD_RING},
    {TopologyKind::kBoardFatTree, "board-fattree", v1::BOARD_FAT_TREE},
    {TopologyKind::kBoardDragonfly, "board-dragonfly", v1::BOARD_DRAGONFLY},
    {TopologyKind::kTorus2D, "torus2d", v1::TORUS_2D},
};

const KindInfo* FindKind(TopologyKind k) {
  for (const KindInfo& i : kKinds) {
    if (i.kind == k) return &i;
  }
  return nullptr;
}

std::string KnownNames() {
  std::string out;
  for (const KindInfo& i : kKinds) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", i.name);
  }
  return out;
}

bool IsBoardKind(TopologyKind k) {
  return k == TopologyKind::kBoardRing || k == TopologyKind::kBoardFatTree ||
         k == TopologyKind::kBoardDragonfly;
}

// Largest divisor of n that is <= limit (n, limit >= 1).
uint32_t LargestDivisorAtMost(uint32_t n, uint32_t limit) {
  for (uint32_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// Smallest s with s * s >= n.
uint32_t CeilSqrt(uint32_t n) {
  uint32_t s = 0;
  while (static_cast<uint64_t>(s) * s < n) ++s;
  return s;
}

// Largest s with s * s <= n.
uint32_t FloorSqrt(uint32_t n) {
  const uint32_t s = CeilSqrt(n);
  return static_cast<uint64_t>(s) * s == n ? s : s - 1;
}

// Parses a non-empty run of decimal digits no larger than kMaxChips.
absl::StatusOr<uint32_t> ParseCount(absl::string_view key,
                                    absl::string_view v) {
  if (v.empty() || v.size() > 10 ||
      v.find_first_not_of("0123456789") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", key, "' needs a decimal count, got '", v, "'"));
  }
  uint64_t x = 0;
  for (char c : v) x = x * 10 + static_cast<uint64_t>(c - '0');
  if (x > kMaxChips) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", key, "' = ", v, " is more than ", kMaxChips));
  }
  return static_cast<uint32_t>(x);
}

}  // namespace

absl::string_view TopologyName(TopologyKind k) {
  const KindInfo* i = FindKind(k);
  return i == nullptr ? "?" : i->name;
}

absl::StatusOr<TopologyKind> ParseTopologyName(absl::string_view name) {
  for (const KindInfo& i : kKinds) {
    if (name == i.name) return i.kind;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown topology '", name, "' (known: ", KnownNames(), ")"));
}

absl::StatusOr<TopologyParams> ResolveTopologyParams(
    TopologyKind kind, uint32_t num_chips, const TopologyParams& params) {
  TopologyParams r = params;
  if (num_chips < 1 || num_chips > kMaxChips) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_chips: ", num_chips, " is outside [1, ", kMaxChips, "]"));
  }
  if (IsBoardKind(kind)) {
    if (r.chips_per_board < 1 || r.chips_per_board > kMaxChips) {
      return absl::InvalidArgumentError(
          absl::StrCat("chips_per_board: must be in [1, ", kMaxChips, "], got ",
                       r.chips_per_board));
    }
    if (num_chips % r.chips_per_board != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("chips_per_board: ", num_chips,
                       " chips is not a multiple of ", r.chips_per_board));
    }
  }
  const uint32_t boards = IsBoardKind(kind) ? num_chips / r.chips_per_board : 0;
  switch (kind) {
    case TopologyKind::kBoardFatTree:
      if (r.fat_tree_spines == 0) r.fat_tree_spines = r.chips_per_board;
      if (r.fat_tree_spines > kMaxChips) {
        return absl::InvalidArgumentError(
            absl::StrCat("fat_tree_spines: ", r.fat_tree_spines,
                         " is more than ", kMaxChips));
      }
      break;
    case TopologyKind::kBoardDragonfly:
      if (r.dragonfly_group_boards == 0) {
        r.dragonfly_group_boards =
            LargestDivisorAtMost(boards, CeilSqrt(boards));
      }
      if (boards % r.dragonfly_group_boards != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("dragonfly_group_boards: ", boards, " boards (",
                         num_chips, " chips / ", r.chips_per_board,
                         ") are not a multiple of ", r.dragonfly_group_boards));
      }
      break;
    case TopologyKind::kTorus2D:
      if (r.torus_x == 0 && r.torus_y == 0) {
        r.torus_x = LargestDivisorAtMost(num_chips, FloorSqrt(num_chips));
      }
      if (r.torus_x == 0) {
        if (num_chips % r.torus_y != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("torus_y: ", num_chips,
                           " chips is not a multiple of ", r.torus_y));
        }
        r.torus_x = num_chips / r.torus_y;
      }
      if (r.torus_y == 0) {
        if (num_chips % r.torus_x != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("torus_x: ", num_chips,
                           " chips is not a multiple of ", r.torus_x));
        }
        r.torus_y = num_chips / r.torus_x;
      }
      if (static_cast<uint64_t>(r.torus_x) * r.torus_y != num_chips) {
        return absl::InvalidArgumentError(
            absl::StrCat("torus_x, torus_y: ", r.torus_x, " x ", r.torus_y,
                         " is not the system's ", num_chips, " chips"));
      }
      break;
    default:
      break;
  }
  return r;
}

absl::StatusOr<std::pair<TopologyKind, TopologyParams>> ParseTopologySpec(
    absl::string_view text, TopologyParams defaults) {
  const size_t colon = text.find(':');
  const absl::string_view name = text.substr(0, colon);
  auto kind = ParseTopologyName(name);
  if (!kind.ok()) return kind.status();
  std::pair<TopologyKind, TopologyParams> out(*kind, defaults);
  if (colon == absl::string_view::npos) return out;
  TopologyParams& p = out.second;
  const TopologyKind k = *kind;
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology '", text, "': ", what));
  };
  std::vector<std::string> seen;
  absl::string_view rest = text.substr(colon + 1);
  if (rest.empty()) return bad("no parameters after ':'");
  while (true) {
    const size_t comma = rest.find(',');
    const absl::string_view item = rest.substr(0, comma);
    absl::string_view key, value;
    const size_t eq = item.find('=');
    if (eq != absl::string_view::npos) {
      key = item.substr(0, eq);
      value = item.substr(eq + 1);
    } else if (k == TopologyKind::kTorus2D &&
               item.find('x') != absl::string_view::npos) {
      // X "x" Y shorthand.
      const size_t x = item.find('x');
      auto nx = ParseCount("x", item.substr(0, x));
      if (!nx.ok()) return bad(nx.status().message());
      auto ny = ParseCount("y", item.substr(x + 1));
      if (!ny.ok()) return bad(ny.status().message());
      for (const char* kk : {"x", "y"}) {
        for (const std::string& s : seen) {
          if (s == kk) return bad(absl::StrCat("'", kk, "' given twice"));
        }
        seen.emplace_back(kk);
      }
      p.torus_x = *nx;
      p.torus_y = *ny;
      if (comma == absl::string_view::npos) break;
      rest = rest.substr(comma + 1);
      continue;
    } else {
      return bad(absl::StrCat("expected key=value, got '", item, "'"));
    }
    uint32_t* field = nullptr;
    if (key == "cpb" && IsBoardKind(k)) {
      field = &p.chips_per_board;
    } else if ((key == "x" || key == "y") && k == TopologyKind::kTorus2D) {
      field = key == "x" ? &p.torus_x : &p.torus_y;
    } else if (key == "spines" && k == TopologyKind::kBoardFatTree) {
      field = &p.fat_tree_spines;
    } else if (key == "group" && k == TopologyKind::kBoardDragonfly) {
      field = &p.dragonfly_group_boards;
    } else {
      return bad(absl::StrCat("'", key, "' is not a parameter of ", name,
                              " (cpb: board-*; x, y or XxY: torus2d; "
                              "spines: board-fattree; group: "
                              "board-dragonfly)"));
    }
    for (const std::string& s : seen) {
      if (s == key) return bad(absl::StrCat("'", key, "' given twice"));
    }
    seen.emplace_back(key);
    auto v = ParseCount(key, value);
    if (!v.ok()) return bad(v.status().message());
    if (key == "cpb" && *v == 0) return bad("'cpb' must be >= 1");
    *field = *v;
    if (comma == absl::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

std::string TopologySpecString(TopologyKind kind,
                               const TopologyParams& params) {
  const TopologyParams d;
  std::vector<std::string> parts;
  if (IsBoardKind(kind) && params.chips_per_board != d.chips_per_board) {
    parts.push_back(absl::StrCat("cpb=", params.chips_per_board));
  }
  if (kind == TopologyKind::kTorus2D) {
    if (params.torus_x != d.torus_x) {
      parts.push_back(absl::StrCat("x=", params.torus_x));
    }
    if (params.torus_y != d.torus_y) {
      parts.push_back(absl::StrCat("y=", params.torus_y));
    }
  }
  if (kind == TopologyKind::kBoardFatTree &&
      params.fat_tree_spines != d.fat_tree_spines) {
    parts.push_back(absl::StrCat("spines=", params.fat_tree_spines));
  }
  if (kind == TopologyKind::kBoardDragonfly &&
      params.dragonfly_group_boards != d.dragonfly_group_boards) {
    parts.push_back(absl::StrCat("group=", params.dragonfly_group_boards));
  }
  std::string out(TopologyName(kind));
  if (!parts.empty()) absl::StrAppend(&out, ":", absl::StrJoin(parts, ","));
  return out;
}

namespace {

// Largest time a parameter may take: 1 s. Larger values are certainly typos
// and would risk overflow in sums of many latencies.
constexpr uint64_t kMaxParamPs = kPsPerSecond;
// Largest packet: 1 MiB; larger is no packet.
constexpr uint32_t kMaxPacketBytes = 1u << 20;
// Largest engine count: keeps qp_id = (cdma << 2) | vc well inside uint32.
constexpr uint32_t kMaxEngines = 1u << 16;
// Largest lane-group count: far beyond any link, keeps per-link state small.
constexpr uint32_t kMaxLaneGroups = 64;

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
  if (p.link().lane_groups() > kMaxLaneGroups) {
    return Bad("link.lane_groups",
               absl::StrCat("must be at most ", kMaxLaneGroups, ", got ",
                            p.link().lane_groups()));
  }
  if (p.link().buffer_bytes() != 0 &&
      p.link().buffer_bytes() <
          static_cast<uint64_t>(p.link().packet_payload_bytes()) +
              p.link().packet_header_bytes()) {
    return Bad(
        "link.buffer_bytes",
        absl::StrCat(
            p.link().buffer_bytes(), " bytes cannot hold one packet of ",
            p.link().packet_payload_bytes() + p.link().packet_header_bytes(),
            " wire bytes (use 0 for unbounded)"));
  }
  if (p.link().interleave() != v1::INTERLEAVE_HASH &&
      p.link().interleave() != v1::INTERLEAVE_ROUND_ROBIN &&
      p.link().interleave() != v1::INTERLEAVE_XOR) {
    return Bad("link.interleave", "unknown value");
  }
  if (p.link().interleave() == v1::INTERLEAVE_XOR) {
    const uint32_t lgs = std::max<uint32_t>(p.link().lane_groups(), 1);
    if ((lgs & (lgs - 1)) != 0) {
      return Bad("link.interleave",
                 absl::StrCat("INTERLEAVE_XOR needs a power-of-two "
                              "link.lane_groups, got ",
                              lgs));
    }
  }
  if (p.switch_config().arbitration() != v1::ARBITRATION_ROUND_ROBIN &&
      p.switch_config().arbitration() != v1::ARBITRATION_FIFO) {
    return Bad("switch_config.arbitration", "unknown value");
  }
  if (auto s = CheckTime("switch_config.port_latency_ps",
                         p.switch_config().port_latency_ps());
      !s.ok()) {
    return s;
  }
  if (auto s = CheckTime("switch_config.port_propagation_ps",
                         p.switch_config().port_propagation_ps());
      !s.ok()) {
    return s;
  }
  if (auto s = CheckTime("switch_config.forwarding_latency_ps",
                         p.switch_config().forwarding_latency_ps());
      !s.ok()) {
    return s;
  }
  if (auto s = CheckTime("message.remote_latency_ps",
                         p.message().remote_latency_ps());
      !s.ok()) {
    return s;
  }
  if (auto s =
          CheckTime("message.local_latency_ps", p.message().local_latency_ps());
      !s.ok()) {
    return s;
  }
  {
    const KindInfo* kind = nullptr;
    for (const KindInfo& i : kKinds) {
      if (i.proto == p.topology().kind()) kind = &i;
    }
    if (kind == nullptr) {
      return Bad("topology.kind",
                 "must be one of RING, SWITCH, RING_UNI, FULL_MESH, "
                 "BOARD_RING, BOARD_FAT_TREE, BOARD_DRAGONFLY, TORUS_2D");
    }
    c.topology = kind->kind;
  }
  if (p.topology().num_chips() > kMaxChips) {
    return Bad("topology.num_chips", absl::StrCat(p.topology().num_chips(),
                                                  " is more than ", kMaxChips));
  }
  {
    const v1::TopologyConfig& t = p.topology();
    const struct {
      const char* field;
      uint32_t value;
      uint32_t* out;
    } counts[] = {
        {"topology.chips_per_board", t.chips_per_board(),
         &c.topology_params.chips_per_board},
        {"topology.torus_x", t.torus_x(), &c.topology_params.torus_x},
        {"topology.torus_y", t.torus_y(), &c.topology_params.torus_y},
        {"topology.fat_tree_spines", t.fat_tree_spines(),
         &c.topology_params.fat_tree_spines},
        {"topology.dragonfly_group_boards", t.dragonfly_group_boards(),
         &c.topology_params.dragonfly_group_boards},
    };
    for (const auto& f : counts) {
      if (f.value > kMaxChips) {
        return Bad(f.field, absl::StrCat(f.value, " is more than ", kMaxChips));
      }
      // 0 keeps the documented default (chips_per_board 8, the others
      // "choose").
      if (f.value != 0) *f.out = f.value;
    }
    if (t.num_chips() != 0) {
      auto r =
          ResolveTopologyParams(c.topology, t.num_chips(), c.topology_params);
      if (!r.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("topology.", r.status().message()));
      }
    }
  }
  c.cdma_engines = p.cdma().engines_per_chip();
  c.cdma_bytes_per_s = p.cdma().bandwidth_bytes_per_s();
  c.cdma_startup = TimePs(static_cast<int64_t>(p.cdma().startup_latency_ps()));
  c.cdma_max_outstanding = p.cdma().max_outstanding();
  c.cdma_staging_packets =
      p.cdma().staging_packets() == 0 ? 2 : p.cdma().staging_packets();
  c.link_bytes_per_s = p.link().bandwidth_bytes_per_s();
  c.link_latency = TimePs(static_cast<int64_t>(p.link().latency_ps()));
  c.link_propagation = TimePs(static_cast<int64_t>(p.link().propagation_ps()));
  c.packet_payload_bytes = p.link().packet_payload_bytes();
  c.packet_header_bytes = p.link().packet_header_bytes();
  c.message_payload_bytes = p.link().message_payload_bytes();
  c.lane_groups = p.link().lane_groups() == 0 ? 1 : p.link().lane_groups();
  c.interleave = p.link().interleave() == v1::INTERLEAVE_ROUND_ROBIN
                     ? InterleaveKind::kRoundRobin
                 : p.link().interleave() == v1::INTERLEAVE_XOR
                     ? InterleaveKind::kXor
                     : InterleaveKind::kHash;
  c.interleave_block_bytes = p.link().interleave_block_bytes() != 0
                                 ? p.link().interleave_block_bytes()
                                 : c.packet_payload_bytes;
  c.link_buffer_bytes = p.link().buffer_bytes();
  c.switch_fifo = p.switch_config().arbitration() == v1::ARBITRATION_FIFO;
  c.switch_forwarding =
      TimePs(static_cast<int64_t>(p.switch_config().forwarding_latency_ps()));
  c.switch_port_latency =
      TimePs(static_cast<int64_t>(p.switch_config().port_latency_ps()));
  c.switch_port_propagation =
      TimePs(static_cast<int64_t>(p.switch_config().port_propagation_ps()));
  c.msg_local_latency =
      TimePs(static_cast<int64_t>(p.message().local_latency_ps()));
  c.msg_remote_latency =
      TimePs(static_cast<int64_t>(p.message().remote_latency_ps()));
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
  p.mutable_cdma()->set_staging_packets(c.cdma_staging_packets);
  p.mutable_link()->set_bandwidth_bytes_per_s(c.link_bytes_per_s);
  p.mutable_link()->set_latency_ps(c.link_latency.ps());
  p.mutable_link()->set_propagation_ps(c.link_propagation.ps());
  p.mutable_link()->set_packet_payload_bytes(c.packet_payload_bytes);
  p.mutable_link()->set_packet_header_bytes(c.packet_header_bytes);
  p.mutable_link()->set_message_payload_bytes(c.message_payload_bytes);
  p.mutable_link()->set_lane_groups(c.lane_groups);
  p.mutable_link()->set_interleave(
      c.interleave == InterleaveKind::kRoundRobin ? v1::INTERLEAVE_ROUND_ROBIN
      : c.interleave == InterleaveKind::kXor      ? v1::INTERLEAVE_XOR
                                                  : v1::INTERLEAVE_HASH);
  p.mutable_link()->set_interleave_block_bytes(c.interleave_block_bytes);
  p.mutable_link()->set_buffer_bytes(c.link_buffer_bytes);
  p.mutable_switch_config()->set_arbitration(
      c.switch_fifo ? v1::ARBITRATION_FIFO : v1::ARBITRATION_ROUND_ROBIN);
  p.mutable_switch_config()->set_forwarding_latency_ps(
      c.switch_forwarding.ps());
  p.mutable_switch_config()->set_port_latency_ps(c.switch_port_latency.ps());
  p.mutable_switch_config()->set_port_propagation_ps(
      c.switch_port_propagation.ps());
  p.mutable_message()->set_local_latency_ps(c.msg_local_latency.ps());
  p.mutable_message()->set_remote_latency_ps(c.msg_remote_latency.ps());
  const KindInfo* kind = FindKind(c.topology);
  v1::TopologyConfig* t = p.mutable_topology();
  t->set_kind(kind == nullptr ? v1::TOPOLOGY_KIND_UNSPECIFIED : kind->proto);
  t->set_num_chips(c.num_chips);
  t->set_chips_per_board(c.topology_params.chips_per_board);
  t->set_torus_x(c.topology_params.torus_x);
  t->set_torus_y(c.topology_params.torus_y);
  t->set_fat_tree_spines(c.topology_params.fat_tree_spines);
  t->set_dragonfly_group_boards(c.topology_params.dragonfly_group_boards);
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
