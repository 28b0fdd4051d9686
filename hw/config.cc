#include "hw/config.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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
  // Digits only: SimpleAtoi alone would also take a sign and whitespace.
  uint64_t x = 0;
  if (v.empty() || v.size() > 10 ||
      v.find_first_not_of("0123456789") != absl::string_view::npos ||
      !absl::SimpleAtoi(v, &x)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", key, "' needs a decimal count, got '", v, "'"));
  }
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

namespace {

// Marks `key` as given; an error if it was given before in the same spec.
absl::Status GiveOnce(absl::string_view key, std::vector<std::string>* seen) {
  if (std::find(seen->begin(), seen->end(), key) != seen->end()) {
    return absl::InvalidArgumentError(absl::StrCat("'", key, "' given twice"));
  }
  seen->emplace_back(key);
  return absl::OkStatus();
}

// torus2d's "XxY" shorthand for x=X,y=Y.
absl::Status ApplyTorusShorthand(absl::string_view item, TopologyParams* p,
                                 std::vector<std::string>* seen) {
  const std::pair<absl::string_view, absl::string_view> xy =
      absl::StrSplit(item, absl::MaxSplits('x', 1));
  auto nx = ParseCount("x", xy.first);
  if (!nx.ok()) return nx.status();
  auto ny = ParseCount("y", xy.second);
  if (!ny.ok()) return ny.status();
  for (const char* key : {"x", "y"}) {
    if (absl::Status s = GiveOnce(key, seen); !s.ok()) return s;
  }
  p->torus_x = *nx;
  p->torus_y = *ny;
  return absl::OkStatus();
}

// The field that `key` sets in a topology of kind `k`, or nullptr.
uint32_t* ParamField(TopologyKind k, absl::string_view key, TopologyParams* p) {
  if (key == "cpb" && IsBoardKind(k)) return &p->chips_per_board;
  if (key == "x" && k == TopologyKind::kTorus2D) return &p->torus_x;
  if (key == "y" && k == TopologyKind::kTorus2D) return &p->torus_y;
  if (key == "spines" && k == TopologyKind::kBoardFatTree) {
    return &p->fat_tree_spines;
  }
  if (key == "group" && k == TopologyKind::kBoardDragonfly) {
    return &p->dragonfly_group_boards;
  }
  return nullptr;
}

// One "key=value" (or torus2d "XxY") item of a topology spec's parameters.
absl::Status ApplyTopologyParam(TopologyKind k, absl::string_view name,
                                absl::string_view item, TopologyParams* p,
                                std::vector<std::string>* seen) {
  if (item.find('=') == absl::string_view::npos) {
    if (k == TopologyKind::kTorus2D && absl::StrContains(item, 'x')) {
      return ApplyTorusShorthand(item, p, seen);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("expected key=value, got '", item, "'"));
  }
  const std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(item, absl::MaxSplits('=', 1));
  uint32_t* field = ParamField(k, kv.first, p);
  if (field == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", kv.first, "' is not a parameter of ", name,
        " (cpb: board-*; x, y or XxY: torus2d; spines: board-fattree; group: "
        "board-dragonfly)"));
  }
  if (absl::Status s = GiveOnce(kv.first, seen); !s.ok()) return s;
  auto v = ParseCount(kv.first, kv.second);
  if (!v.ok()) return v.status();
  if (kv.first == "cpb" && *v == 0) {
    return absl::InvalidArgumentError("'cpb' must be >= 1");
  }
  *field = *v;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::pair<TopologyKind, TopologyParams>> ParseTopologySpec(
    absl::string_view text, TopologyParams defaults) {
  const std::pair<absl::string_view, absl::string_view> name_params =
      absl::StrSplit(text, absl::MaxSplits(':', 1));
  const absl::string_view name = name_params.first;
  auto kind = ParseTopologyName(name);
  if (!kind.ok()) return kind.status();
  std::pair<TopologyKind, TopologyParams> out(*kind, defaults);
  if (!absl::StrContains(text, ':')) return out;
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology '", text, "': ", what));
  };
  if (name_params.second.empty()) return bad("no parameters after ':'");
  std::vector<std::string> seen;
  for (absl::string_view item : absl::StrSplit(name_params.second, ',')) {
    absl::Status s = ApplyTopologyParam(*kind, name, item, &out.second, &seen);
    if (!s.ok()) return bad(s.message());
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

// The cdma block's fields, each in its range.
absl::Status CheckCdma(const v1::HardwareConfig& p) {
  if (p.cdma().engines_per_chip() == 0 ||
      p.cdma().engines_per_chip() > kMaxEngines) {
    return Bad("cdma.engines_per_chip",
               absl::StrCat("must be in [1, ", kMaxEngines, "], got ",
                            p.cdma().engines_per_chip()));
  }
  if (p.cdma().unbounded_bandwidth()) {
    if (p.cdma().bandwidth_bytes_per_s() != 0) {
      return Bad("cdma.bandwidth_bytes_per_s",
                 "must be 0 with cdma.unbounded_bandwidth");
    }
  } else if (p.cdma().bandwidth_bytes_per_s() == 0) {
    return Bad("cdma.bandwidth_bytes_per_s",
               "must be > 0 (or cdma.unbounded_bandwidth: true)");
  }
  if (auto s =
          CheckTime("cdma.startup_latency_ps", p.cdma().startup_latency_ps());
      !s.ok()) {
    return s;
  }
  return absl::OkStatus();
}

// One full packet serialised on one lane group (link rate / lane groups)
// must take less than 2^62 ps, the picosecond clock's safe range
// (docs/limits.md): 1 B/s links with 64 lane groups and 1 MiB packets
// would not. REQUIRES: CheckLink passed.
absl::Status CheckPacketTime(const v1::HardwareConfig& p) {
  const uint64_t wire = uint64_t{p.link().packet_payload_bytes()} +
                        p.link().packet_header_bytes();
  const uint64_t lgs = std::max<uint32_t>(p.link().lane_groups(), 1);
  const unsigned __int128 ps =
      (static_cast<unsigned __int128>(wire) * lgs * kPsPerSecond +
       p.link().bandwidth_bytes_per_s() - 1) /
      p.link().bandwidth_bytes_per_s();
  if (ps >= (static_cast<unsigned __int128>(1) << 62)) {
    return Bad(
        "link.bandwidth_bytes_per_s",
        absl::StrCat("one packet of ", wire, " wire bytes on one of ", lgs,
                     " lane groups at ", p.link().bandwidth_bytes_per_s(),
                     " bytes/s takes about ", static_cast<double>(ps),
                     " ps, past the picosecond clock's range (2^62 ps)"));
  }
  return absl::OkStatus();
}

// The link block's fields, each in its range and consistent with the others.
absl::Status CheckLink(const v1::HardwareConfig& p) {
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
  if (p.link().virtual_channels() > kMaxVirtualChannels) {
    return Bad("link.virtual_channels",
               absl::StrCat("must be at most ", kMaxVirtualChannels, ", got ",
                            p.link().virtual_channels()));
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
  return absl::OkStatus();
}

// The switch and message blocks (both optional: zeros are valid).
absl::Status CheckSwitchAndMessage(const v1::HardwareConfig& p) {
  if (p.switch_config().arbitration() != v1::ARBITRATION_ROUND_ROBIN &&
      p.switch_config().arbitration() != v1::ARBITRATION_FIFO) {
    return Bad("switch_config.arbitration", "unknown value");
  }
  if (p.switch_config().input_queues() != v1::INPUT_QUEUES_VOQ &&
      p.switch_config().input_queues() != v1::INPUT_QUEUES_FIFO) {
    return Bad("switch_config.input_queues", "unknown value");
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
  return absl::OkStatus();
}

// Sets c->topology and c->topology_params from the topology block, checking
// its kind, counts and (when num_chips is given) that they fit together.
absl::Status TopologyFromProto(const v1::HardwareConfig& p, HwConfig* out) {
  HwConfig& c = *out;
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
  return absl::OkStatus();
}

// Copies the checked fields, applying the documented defaults for zeros.
void CopyParams(const v1::HardwareConfig& p, HwConfig* out) {
  HwConfig& c = *out;
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
  c.link_vcs = p.link().virtual_channels();
  c.switch_input_fifo =
      p.switch_config().input_queues() == v1::INPUT_QUEUES_FIFO;
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
}

}  // namespace

absl::StatusOr<HwConfig> HwConfigFromProto(const v1::HardwareConfig& p) {
  HwConfig c;
  c.name = p.name();
  if (!p.has_cdma()) return Bad("cdma", "missing");
  if (!p.has_link()) return Bad("link", "missing");
  if (auto s = CheckCdma(p); !s.ok()) return s;
  if (auto s = CheckLink(p); !s.ok()) return s;
  if (auto s = CheckPacketTime(p); !s.ok()) return s;
  if (auto s = CheckSwitchAndMessage(p); !s.ok()) return s;
  if (auto s = TopologyFromProto(p, &c); !s.ok()) return s;
  CopyParams(p, &c);
  return c;
}

v1::HardwareConfig HwConfigToProto(const HwConfig& c) {
  v1::HardwareConfig p;
  p.set_name(c.name);
  p.mutable_cdma()->set_engines_per_chip(c.cdma_engines);
  p.mutable_cdma()->set_bandwidth_bytes_per_s(c.cdma_bytes_per_s);
  p.mutable_cdma()->set_unbounded_bandwidth(c.cdma_bytes_per_s == 0);
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
  p.mutable_link()->set_virtual_channels(c.link_vcs);
  p.mutable_switch_config()->set_input_queues(
      c.switch_input_fifo ? v1::INPUT_QUEUES_FIFO : v1::INPUT_QUEUES_VOQ);
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
