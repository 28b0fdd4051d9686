// Hardware configuration: the decoded, validated form of
// ccreplay.v1.HardwareConfig (proto/hw_config.proto). Plain values only.
#ifndef CCREPLAY_HW_CONFIG_H_
#define CCREPLAY_HW_CONFIG_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/units.h"
#include "proto/hw_config.pb.h"
#include "trace/program.h"

namespace ccreplay {

// The system topologies (docs/topologies.md has the cabling of each). Every
// cable is a full-duplex c2c link of the same type (one DirectedLink per
// direction) unless stated otherwise.
enum class TopologyKind : uint8_t {
  // Bidirectional ring, two ports per chip: chip i cabled to chip (i+1) mod N;
  // N = 2 has one cable.
  kRing,
  // Single switch: every chip cabled to one switch.
  kSwitch,
  // Unidirectional ring, one port per chip: only the direction i -> (i+1)
  // mod N exists, so traffic (and acknowledgements) back to i-1 goes all the
  // way around. N = 2 is the same as kRing.
  kRingUni,
  // All N chips cabled pairwise (N = 8 is one board).
  kFullMesh,
  // Boards of chips_per_board chips in full mesh; chip k of board b cabled to
  // chip k of board (b+1) mod B.
  kBoardRing,
  // Boards in full mesh; chip k of board b has one uplink to leaf switch b;
  // every leaf has one cable to each of fat_tree_spines spine switches.
  kBoardFatTree,
  // Boards in full mesh; groups of dragonfly_group_boards boards joined
  // all-to-all by local cables (chip k to chip k), groups joined all-to-all by
  // global cables spread round-robin over each group's chips (one global
  // port per chip while groups - 1 <= chips per group).
  kBoardDragonfly,
  // torus_x x torus_y torus, chip id = y * torus_x + x.
  kTorus2D,
};

// Canonical name of a kind: "ring", "switch", "ring-uni", "fullmesh",
// "board-ring", "board-fattree", "board-dragonfly", "torus2d".
// ParseTopologyName(TopologyName(k)) == k for every kind.
absl::string_view TopologyName(TopologyKind k);
absl::StatusOr<TopologyKind> ParseTopologyName(absl::string_view name);

// Shape parameters of the topologies. Each applies to some kinds only and is
// ignored by the others. Counts are numbers of chips, boards or switches.
struct TopologyParams {
  // Chips per board (board topologies). >= 1; the system's chip count must be
  // a multiple of it. docs/spec-notes.md §1: CHIPS_PER_BOARD = 8.
  uint32_t chips_per_board = 8;
  // Torus dimensions (kTorus2D). 0 and 0 = the near-square factorisation of
  // N (torus_x = the largest divisor of N that is <= sqrt(N), torus_y =
  // N / torus_x); one of them 0 = N divided by the other. When both are set,
  // torus_x * torus_y must equal N.
  uint32_t torus_x = 0;
  uint32_t torus_y = 0;
  // Spine switches of the 2-level fat-tree (kBoardFatTree). 0 =
  // chips_per_board (as many uplinks per leaf as downlinks: full bisection).
  uint32_t fat_tree_spines = 0;
  // Boards per dragonfly group (kBoardDragonfly); must divide the number of
  // boards. 0 = the largest divisor of the board count that is <=
  // ceil(sqrt(boards)).
  uint32_t dragonfly_group_boards = 0;

  bool operator==(const TopologyParams&) const = default;
};

// Checks that `params` can shape `num_chips` chips as `kind` and returns them
// with every 0 ("choose") replaced by its resolved value. Errors start with
// the parameter's name, e.g.
// "chips_per_board: 60 chips is not a multiple of 8".
absl::StatusOr<TopologyParams> ResolveTopologyParams(
    TopologyKind kind, uint32_t num_chips, const TopologyParams& params);

// Parses a topology named on the command line. Grammar:
//   spec   := name [ ":" params ]
//   params := param { "," param }
//   param  := key "=" uint | X "x" Y          (X "x" Y: torus2d only)
//   key    := "cpb" (chips_per_board; board-*) | "x" | "y" (torus2d)
//           | "spines" (board-fattree) | "group" (board-dragonfly)
// e.g. "ring", "torus2d:8x8", "board-ring:cpb=4", "board-fattree:spines=4".
// Parameters not given keep their value in `defaults`; a key that does not
// apply to the named kind, a repeated key or a malformed number is an error.
absl::StatusOr<std::pair<TopologyKind, TopologyParams>> ParseTopologySpec(
    absl::string_view text, TopologyParams defaults = {});

// The spec text of (kind, params): the name, then the parameters that apply
// to the kind and differ from TopologyParams{} ("torus2d:x=8,y=8").
// ParseTopologySpec(text) gives back the kind and the same values of every
// parameter that applies to it (the others come back as defaults).
std::string TopologySpecString(TopologyKind kind, const TopologyParams& params);

// How a link spreads packets over its lane groups (docs/hardware-model.md,
// "Interleaving").
enum class InterleaveKind : uint8_t { kHash, kRoundRobin, kXor };

// Virtual channels per link direction: at most this many dateline classes.
inline constexpr uint32_t kMaxVirtualChannels = 8;

struct HwConfig {
  std::string name;
  // CDMA engines.
  uint32_t cdma_engines = 0;
  uint64_t cdma_bytes_per_s = 0;  // 0 = unbounded (reads take no time)
  TimePs cdma_startup;
  uint32_t cdma_max_outstanding = 0;  // 0 = unbounded
  uint32_t cdma_staging_packets = 2;  // per (engine, lane group) queue, >= 1
  // c2c link (also chip <-> switch cables).
  uint64_t link_bytes_per_s = 0;
  TimePs link_latency;
  TimePs link_propagation;
  uint32_t packet_payload_bytes = 0;
  uint32_t packet_header_bytes = 0;
  uint32_t message_payload_bytes = 0;
  uint32_t lane_groups = 1;  // >= 1
  InterleaveKind interleave = InterleaveKind::kXor;
  uint32_t interleave_block_bytes = 0;  // kXor: 0 = packet_payload_bytes
  uint64_t link_buffer_bytes = 0;       // per virtual channel; 0 = unbounded
  uint32_t link_vcs = 0;  // virtual channels per link, 1..8; 0 = as many as
                          // the routes need (Topology::DatelineClasses)
  // Switch.
  TimePs switch_forwarding;
  bool switch_fifo = false;        // false = round-robin over inputs
  bool switch_input_fifo = false;  // false = virtual output queues
  TimePs switch_port_latency;      // a switch output's protocol latency
  TimePs switch_port_propagation;  // its cable's propagation
  // Message path.
  TimePs msg_local_latency;
  TimePs msg_remote_latency;  // A4S handshake + msg_central counting
  // Topology.
  TopologyKind topology = TopologyKind::kRing;
  TopologyParams topology_params;
  uint32_t num_chips = 0;  // 0 = from the trace

  uint32_t num_qps() const { return cdma_engines * kVcBanksPerCdma; }
  // One engine reading `bytes`: 0 with unbounded bandwidth.
  TimePs CdmaReadTime(uint64_t bytes) const {
    return cdma_bytes_per_s == 0 ? TimePs::Zero()
                                 : SerializationTime(bytes, cdma_bytes_per_s);
  }
  // What traces are validated against on this hardware.
  TraceTarget Target() const { return {name, num_chips, cdma_engines}; }
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
