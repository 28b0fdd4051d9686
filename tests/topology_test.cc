// Topologies (docs/topologies.md): cabling, port counts, shortest paths
// worked out by hand, equal-cost spreading, names and specs, config fields,
// and the shipped traces/*.hw.txtpb files.
#include "hw/topology.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "hw/config.h"
#include "hw/config_io.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr TopologyKind kAllKinds[] = {
    TopologyKind::kRing,           TopologyKind::kSwitch,
    TopologyKind::kRingUni,        TopologyKind::kFullMesh,
    TopologyKind::kBoardRing,      TopologyKind::kBoardFatTree,
    TopologyKind::kBoardDragonfly, TopologyKind::kTorus2D,
};

Topology MustBuild(TopologyKind kind, uint32_t n,
                   const TopologyParams& params = {}) {
  absl::StatusOr<Topology> t = Topology::Build(kind, n, params);
  EXPECT_TRUE(t.ok()) << TopologyName(kind) << " " << n << ": " << t.status();
  return *std::move(t);
}

std::string BuildError(TopologyKind kind, uint32_t n,
                       const TopologyParams& params = {}) {
  absl::StatusOr<Topology> t = Topology::Build(kind, n, params);
  EXPECT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(t.status().message());
}

// The link from node a to node b (there must be exactly one).
uint32_t LinkBetween(const Topology& t, uint32_t a, uint32_t b) {
  uint32_t found = UINT32_MAX;
  for (uint32_t l : t.OutLinks(a)) {
    if (t.links()[l].dst == b) {
      EXPECT_EQ(found, UINT32_MAX) << "two links " << a << " -> " << b;
      found = l;
    }
  }
  EXPECT_NE(found, UINT32_MAX) << "no link " << a << " -> " << b;
  return found;
}

// Nodes visited by a path from `src`: src, then every link's dst.
std::vector<uint32_t> Nodes(const Topology& t, uint32_t src,
                            const std::vector<uint32_t>& path) {
  std::vector<uint32_t> nodes = {src};
  for (uint32_t l : path) {
    EXPECT_EQ(t.links()[l].src, nodes.back());
    nodes.push_back(t.links()[l].dst);
  }
  return nodes;
}

// Every chip reaches every chip on a path of Hops() links, with the first
// next hop and with several flow hashes; every candidate is one hop closer.
void ExpectAllPairsRouted(const Topology& t) {
  for (uint32_t s = 0; s < t.num_chips(); ++s) {
    for (uint32_t d = 0; d < t.num_chips(); ++d) {
      if (s == d) {
        EXPECT_EQ(t.Hops(s, d), 0u);
        EXPECT_TRUE(t.Path(s, d).empty());
        continue;
      }
      const std::vector<uint32_t> p = t.Path(s, d);
      ASSERT_EQ(p.size(), t.Hops(s, d)) << s << " -> " << d;
      ASSERT_EQ(Nodes(t, s, p).back(), d);
      for (uint32_t h : {0u, 1u, 0xdeadbeefu}) {
        const std::vector<uint32_t> q = t.Path(s, d, h);
        ASSERT_EQ(q.size(), t.Hops(s, d)) << s << " -> " << d << " hash " << h;
        ASSERT_EQ(Nodes(t, s, q).back(), d);
      }
    }
  }
  for (uint32_t u = 0; u < t.num_nodes(); ++u) {
    for (uint32_t d = 0; d < t.num_chips(); ++d) {
      if (u == d) continue;
      const auto c = t.NextLinks(u, d);
      ASSERT_FALSE(c.empty()) << t.NodeName(u) << " -> chip " << d;
      EXPECT_EQ(c[0], t.NextLink(u, d));
      // Exactly the out links one hop closer, in cabling order; on a torus
      // only those of the first dimension still to travel (x, then y).
      std::vector<uint32_t> want;
      for (uint32_t l : t.OutLinks(u)) {
        const uint32_t v = t.links()[l].dst;
        if (t.Hops(v, d) + 1 != t.Hops(u, d)) continue;
        if (t.kind() == TopologyKind::kTorus2D) {
          const uint32_t nx = t.params().torus_x;
          const bool y_move = v % nx == u % nx;
          if (y_move && u % nx != d % nx) continue;
        }
        want.push_back(l);
      }
      EXPECT_EQ(std::vector<uint32_t>(c.begin(), c.end()), want);
      // A flow's pick is one of them (the only one where there is one).
      for (uint32_t h : {0u, 1u, 0xdeadbeefu}) {
        const uint32_t l = t.NextLink(u, d, h);
        EXPECT_NE(std::find(c.begin(), c.end(), l), c.end())
            << t.NodeName(u) << " -> chip " << d << " hash " << h;
        if (c.size() == 1) {
          EXPECT_EQ(l, c[0]);
        }
      }
    }
  }
}

std::vector<size_t> ChipPorts(const Topology& t) {
  std::vector<size_t> ports;
  for (uint32_t c = 0; c < t.num_chips(); ++c) {
    ports.push_back(t.OutLinks(c).size());
  }
  return ports;
}

// Every chip has `ports` ports (links leaving it).
void ExpectUniformPorts(const Topology& t, size_t ports) {
  for (uint32_t c = 0; c < t.num_chips(); ++c) {
    EXPECT_EQ(t.OutLinks(c).size(), ports) << "chip " << c;
  }
}

// ---------------------------------------------------------------- names

TEST(TopologyNameTest, EveryKindRoundTrips) {
  std::set<std::string> names;
  for (TopologyKind k : kAllKinds) {
    const std::string name(TopologyName(k));
    names.insert(name);
    absl::StatusOr<TopologyKind> back = ParseTopologyName(name);
    ASSERT_TRUE(back.ok()) << name;
    EXPECT_EQ(*back, k) << name;
  }
  EXPECT_EQ(names.size(), std::size(kAllKinds));
  EXPECT_EQ(TopologyName(TopologyKind::kRing), "ring");
  EXPECT_EQ(TopologyName(TopologyKind::kSwitch), "switch");
  EXPECT_EQ(TopologyName(TopologyKind::kTorus2D), "torus2d");
}

TEST(TopologyNameTest, UnknownNameListsTheKnownOnes) {
  absl::StatusOr<TopologyKind> k = ParseTopologyName("torus");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().message(),
            "unknown topology 'torus' (known: ring, switch, ring-uni, "
            "fullmesh, board-ring, board-fattree, board-dragonfly, torus2d)");
}

TEST(TopologySpecTest, NamesAndParameters) {
  auto s = ParseTopologySpec("ring");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->first, TopologyKind::kRing);
  EXPECT_EQ(s->second, TopologyParams{});

  s = ParseTopologySpec("torus2d:8x4");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->first, TopologyKind::kTorus2D);
  EXPECT_EQ(s->second.torus_x, 8u);
  EXPECT_EQ(s->second.torus_y, 4u);

  s = ParseTopologySpec("torus2d:y=16");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->second.torus_x, 0u);
  EXPECT_EQ(s->second.torus_y, 16u);

  s = ParseTopologySpec("board-ring:cpb=4");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->first, TopologyKind::kBoardRing);
  EXPECT_EQ(s->second.chips_per_board, 4u);

  s = ParseTopologySpec("board-fattree:cpb=4,spines=2");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->second.chips_per_board, 4u);
  EXPECT_EQ(s->second.fat_tree_spines, 2u);

  s = ParseTopologySpec("board-dragonfly:group=4");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->first, TopologyKind::kBoardDragonfly);
  EXPECT_EQ(s->second.dragonfly_group_boards, 4u);

  // Parameters not named keep the defaults passed in (e.g. the --hw file's).
  TopologyParams defaults;
  defaults.chips_per_board = 4;
  defaults.fat_tree_spines = 3;
  s = ParseTopologySpec("board-fattree:spines=2", defaults);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->second.chips_per_board, 4u);
  EXPECT_EQ(s->second.fat_tree_spines, 2u);
}

TEST(TopologySpecTest, BadSpecsSayWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"bogus", "unknown topology 'bogus'"},
      {"bogus:x=1", "unknown topology 'bogus'"},
      {"ring:cpb=8", "'cpb' is not a parameter of ring"},
      {"torus2d:spines=2", "'spines' is not a parameter of torus2d"},
      {"board-ring:8x8", "expected key=value, got '8x8'"},
      {"board-ring:", "no parameters after ':'"},
      {"board-ring:cpb", "expected key=value, got 'cpb'"},
      {"board-ring:cpb=", "'cpb' needs a decimal count, got ''"},
      {"board-ring:cpb=-1", "'cpb' needs a decimal count, got '-1'"},
      {"board-ring:cpb=+8", "'cpb' needs a decimal count, got '+8'"},
      {"board-ring:cpb=0", "'cpb' must be >= 1"},
      {"board-ring:cpb=99999999999", "needs a decimal count"},
      {"board-ring:cpb=70000", "'cpb' = 70000 is more than 65536"},
      {"board-ring:cpb=8,cpb=4", "'cpb' given twice"},
      {"board-ring:cpb=8,", "expected key=value, got ''"},
      {"torus2d:8x", "'y' needs a decimal count, got ''"},
      {"torus2d:8x8,x=4", "'x' given twice"},
  };
  for (const auto& [text, want] : cases) {
    auto s = ParseTopologySpec(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(s.status().message(), HasSubstr(want)) << text;
  }
  EXPECT_EQ(ParseTopologySpec("ring:cpb=8").status().message(),
            "topology 'ring:cpb=8': 'cpb' is not a parameter of ring (cpb: "
            "board-*; x, y or XxY: torus2d; spines: board-fattree; group: "
            "board-dragonfly)");
}

TEST(TopologySpecTest, SpecStringRoundTrips) {
  TopologyParams p;
  EXPECT_EQ(TopologySpecString(TopologyKind::kRing, p), "ring");
  EXPECT_EQ(TopologySpecString(TopologyKind::kBoardRing, p), "board-ring");
  p.chips_per_board = 4;
  p.torus_x = 8;
  p.torus_y = 2;
  p.fat_tree_spines = 3;
  p.dragonfly_group_boards = 5;
  EXPECT_EQ(TopologySpecString(TopologyKind::kRing, p), "ring");
  EXPECT_EQ(TopologySpecString(TopologyKind::kTorus2D, p), "torus2d:x=8,y=2");
  EXPECT_EQ(TopologySpecString(TopologyKind::kBoardFatTree, p),
            "board-fattree:cpb=4,spines=3");
  EXPECT_EQ(TopologySpecString(TopologyKind::kBoardDragonfly, p),
            "board-dragonfly:cpb=4,group=5");
  for (TopologyKind k : kAllKinds) {
    const std::string text = TopologySpecString(k, p);
    auto back = ParseTopologySpec(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    EXPECT_EQ(back->first, k);
    EXPECT_EQ(TopologySpecString(back->first, back->second), text);
  }
}

// ---------------------------------------------------------------- rings

TEST(RingTest, CablesPortsAndTies) {
  const Topology t = MustBuild(TopologyKind::kRing, 8);
  EXPECT_EQ(t.num_nodes(), 8u);
  EXPECT_EQ(t.links().size(), 16u);  // 8 cables, both directions
  ExpectUniformPorts(t, 2);
  // Chip 4 is 4 hops either way; the increasing direction wins the tie.
  EXPECT_EQ(t.Hops(0, 4), 4u);
  EXPECT_THAT(Nodes(t, 0, t.Path(0, 4)), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_EQ(t.NextLinks(0, 4).size(), 2u);
  // Chip 7 is one hop back.
  EXPECT_THAT(t.Path(0, 7), ElementsAre(LinkBetween(t, 0, 7)));
  ExpectAllPairsRouted(t);
}

TEST(RingTest, TwoChipsShareOneCableAndOneChipHasNone) {
  const Topology two = MustBuild(TopologyKind::kRing, 2);
  EXPECT_EQ(two.links().size(), 2u);
  ExpectUniformPorts(two, 1);
  ExpectAllPairsRouted(two);
  const Topology one = MustBuild(TopologyKind::kRing, 1);
  EXPECT_TRUE(one.links().empty());
}

TEST(RingUniTest, OnePortAndTheLongWayBack) {
  const Topology t = MustBuild(TopologyKind::kRingUni, 8);
  EXPECT_EQ(t.links().size(), 8u);  // i -> i+1 only
  ExpectUniformPorts(t, 1);
  EXPECT_EQ(t.Hops(0, 1), 1u);
  EXPECT_EQ(t.Hops(1, 0), 7u);  // 1 -> 2 -> ... -> 7 -> 0
  EXPECT_THAT(Nodes(t, 1, t.Path(1, 0)), ElementsAre(1, 2, 3, 4, 5, 6, 7, 0));
  ExpectAllPairsRouted(t);
  // N = 2 is the bidirectional ring.
  const Topology two = MustBuild(TopologyKind::kRingUni, 2);
  EXPECT_EQ(two.links().size(), 2u);
  EXPECT_EQ(two.Hops(1, 0), 1u);
}

// --------------------------------------------------------- switch, mesh

TEST(SwitchTest, OneSwitchTwoHops) {
  const Topology t = MustBuild(TopologyKind::kSwitch, 8);
  EXPECT_EQ(t.num_nodes(), 9u);
  EXPECT_EQ(t.num_switches(), 1u);
  EXPECT_EQ(t.links().size(), 16u);
  ExpectUniformPorts(t, 1);
  EXPECT_EQ(t.OutLinks(8).size(), 8u);
  EXPECT_THAT(Nodes(t, 3, t.Path(3, 5)), ElementsAre(3, 8, 5));
  EXPECT_EQ(t.NodeName(8), "switch 0");
  ExpectAllPairsRouted(t);
}

TEST(FullMeshTest, EightChipBoardIsOneHopEverywhere) {
  const Topology t = MustBuild(TopologyKind::kFullMesh, 8);
  EXPECT_EQ(t.num_nodes(), 8u);
  EXPECT_EQ(t.links().size(), 56u);  // 8 * 7 / 2 = 28 cables
  ExpectUniformPorts(t, 7);
  for (uint32_t s = 0; s < 8; ++s) {
    for (uint32_t d = 0; d < 8; ++d) {
      if (s == d) continue;
      EXPECT_THAT(t.Path(s, d), ElementsAre(LinkBetween(t, s, d)));
      EXPECT_EQ(t.NextLinks(s, d).size(), 1u);
    }
  }
  ExpectAllPairsRouted(t);
}

// ------------------------------------------------------------ board ring

TEST(BoardRingTest, EightBoardsOfEight) {
  const Topology t = MustBuild(TopologyKind::kBoardRing, 64);
  EXPECT_EQ(t.num_nodes(), 64u);
  // 8 boards x 28 mesh cables + 8 ring positions x 8 chips.
  EXPECT_EQ(t.links().size(), 2u * (8 * 28 + 64));
  ExpectUniformPorts(t, 7 + 2);
  // Chip 0 (board 0, k 0) to chip 17 (board 2, k 1): two ring hops and one
  // mesh hop. First equal-cost next hops (cabling order: mesh before ring)
  // take the mesh hop first: 0 -> 1 -> 9 -> 17.
  EXPECT_EQ(t.Hops(0, 17), 3u);
  EXPECT_THAT(t.Path(0, 17),
              ElementsAre(LinkBetween(t, 0, 1), LinkBetween(t, 1, 9),
                          LinkBetween(t, 9, 17)));
  // The three orders of (mesh, ring, ring) are all equal cost at chip 0:
  // 0 -> 1 (mesh first) and 0 -> 8 (ring first).
  EXPECT_THAT(t.NextLinks(0, 17),
              ElementsAre(LinkBetween(t, 0, 1), LinkBetween(t, 0, 8)));
  // Same k: ring hops only; board 4 is 4 boards away both ways.
  EXPECT_EQ(t.Hops(0, 8), 1u);
  EXPECT_EQ(t.Hops(0, 56), 1u);  // board 7 wraps around
  EXPECT_EQ(t.Hops(0, 32), 4u);
  EXPECT_EQ(t.Hops(0, 33), 5u);
  EXPECT_EQ(t.Hops(3, 6), 1u);  // inside a board
  ExpectAllPairsRouted(t);
}

TEST(BoardRingTest, TwoBoardsAndOneBoard) {
  const Topology two = MustBuild(TopologyKind::kBoardRing, 16);
  EXPECT_EQ(two.links().size(), 2u * (2 * 28 + 8));
  ExpectUniformPorts(two, 7 + 1);
  ExpectAllPairsRouted(two);
  const Topology one = MustBuild(TopologyKind::kBoardRing, 8);
  EXPECT_EQ(one.links().size(), 56u);
  ExpectUniformPorts(one, 7);
}

TEST(BoardRingTest, ChipsPerBoardIsAParameter) {
  TopologyParams p;
  p.chips_per_board = 4;
  const Topology t = MustBuild(TopologyKind::kBoardRing, 16, p);
  EXPECT_EQ(t.links().size(), 2u * (4 * 6 + 16));
  ExpectUniformPorts(t, 3 + 2);
  EXPECT_EQ(t.Hops(0, 9), 3u);  // board 0 k 0 -> board 2 k 1
  ExpectAllPairsRouted(t);
}

// -------------------------------------------------------------- fat-tree

TEST(BoardFatTreeTest, LeavesAndSpines) {
  const Topology t = MustBuild(TopologyKind::kBoardFatTree, 64);
  EXPECT_EQ(t.params().fat_tree_spines, 8u);  // 0 = chips_per_board
  EXPECT_EQ(t.num_switches(), 8u + 8u);
  EXPECT_EQ(t.num_nodes(), 80u);
  // Mesh 8 x 28, uplinks 64, leaf-spine 8 x 8.
  EXPECT_EQ(t.links().size(), 2u * (8 * 28 + 64 + 64));
  ExpectUniformPorts(t, 7 + 1);
  for (uint32_t leaf = 64; leaf < 72; ++leaf) {
    EXPECT_EQ(t.OutLinks(leaf).size(), 16u);  // 8 down, 8 up
  }
  for (uint32_t spine = 72; spine < 80; ++spine) {
    EXPECT_EQ(t.OutLinks(spine).size(), 8u);
  }
  // Inside a board: the mesh link. Across boards: chip -> leaf -> spine ->
  // leaf -> chip, any of the 8 spines.
  EXPECT_EQ(t.Hops(0, 7), 1u);
  EXPECT_EQ(t.Hops(0, 9), 4u);
  EXPECT_THAT(Nodes(t, 0, t.Path(0, 9)), ElementsAre(0, 64, 72, 65, 9));
  EXPECT_EQ(t.NextLinks(0, 9).size(), 1u);   // the uplink
  EXPECT_EQ(t.NextLinks(64, 9).size(), 8u);  // every spine
  ExpectAllPairsRouted(t);
}

TEST(BoardFatTreeTest, FlowHashesSpreadOverSpines) {
  const Topology t = MustBuild(TopologyKind::kBoardFatTree, 64);
  std::set<uint32_t> spines;
  for (uint32_t qp = 0; qp < 64; ++qp) {
    const uint32_t h = Topology::FlowHash(0, 9, qp);
    const std::vector<uint32_t> path = t.Path(0, 9, h);
    const std::vector<uint32_t> nodes = Nodes(t, 0, path);
    ASSERT_EQ(nodes.size(), 5u);
    spines.insert(nodes[2]);
    EXPECT_EQ(t.Path(0, 9, h), path);  // one flow, one path
  }
  // 64 flows over 8 spines: every spine used (the hash is fixed, so this is
  // a deterministic fact, not a probability).
  EXPECT_EQ(spines.size(), 8u);
}

TEST(BoardFatTreeTest, SpineCountIsAParameter) {
  TopologyParams p;
  p.fat_tree_spines = 2;
  const Topology t = MustBuild(TopologyKind::kBoardFatTree, 32, p);
  EXPECT_EQ(t.num_switches(), 4u + 2u);
  EXPECT_EQ(t.NextLinks(32, 9).size(), 2u);
  ExpectAllPairsRouted(t);
}

// ------------------------------------------------------------- dragonfly

TEST(BoardDragonflyTest, FourGroupsOfTwoBoards) {
  const Topology t = MustBuild(TopologyKind::kBoardDragonfly, 64);
  // 8 boards: group = largest divisor of 8 <= ceil(sqrt(8)) = 3, i.e. 2.
  EXPECT_EQ(t.params().dragonfly_group_boards, 2u);
  EXPECT_EQ(t.num_switches(), 0u);
  // Mesh 8 x 28; local 4 groups x 8; global 6 group pairs x 5
  // (16 slots per group / 3 peers).
  EXPECT_EQ(t.links().size(), 2u * (8 * 28 + 4 * 8 + 6 * 5));
  // Slots 0..14 of a group (its chips 0..14) carry one global cable each;
  // the group's chip 15 has none.
  std::vector<size_t> want;
  for (uint32_t c = 0; c < 64; ++c) want.push_back(c % 16 == 15 ? 8 : 9);
  EXPECT_EQ(ChipPorts(t), want);
  // Group 0 slot 0 = rank 0 among its peers = group 1, cable t = 0, which
  // lands on group 1's slot for rank 0 (group 0): chip 16.
  EXPECT_THAT(t.Path(0, 16), ElementsAre(LinkBetween(t, 0, 16)));
  EXPECT_EQ(t.Hops(0, 17), 2u);  // global, then mesh in board 2
  // Group 0 slot 1 (chip 1) goes to group 2 (rank 1) slot 0 (rank of group 0
  // is 0): chip 32. Slot 2 (chip 2) to group 3 slot 0: chip 48.
  EXPECT_EQ(t.Hops(1, 32), 1u);
  EXPECT_EQ(t.Hops(2, 48), 1u);
  // Local cable: board 0 chip 3 to board 1 chip 3.
  EXPECT_EQ(t.Hops(3, 11), 1u);
  ExpectAllPairsRouted(t);
}

TEST(BoardDragonflyTest, GroupSizeIsAParameter) {
  TopologyParams p;
  p.dragonfly_group_boards = 4;  // 2 groups of 32 chips, 32 global cables
  const Topology t = MustBuild(TopologyKind::kBoardDragonfly, 64, p);
  EXPECT_EQ(t.links().size(), 2u * (8 * 28 + 2 * 6 * 8 + 32));
  ExpectUniformPorts(t, 7 + 3 + 1);
  EXPECT_EQ(t.Hops(5, 37), 1u);  // chip k of group 0 <-> chip k of group 1
  ExpectAllPairsRouted(t);
}

TEST(BoardDragonflyTest, ManyGroupsGiveChipsSeveralGlobalPorts) {
  // 11 boards of 2 chips (11 prime: groups of 1 board), 10 peers per group
  // but 2 chips: h = 5 global ports per chip, one cable per group pair.
  TopologyParams p;
  p.chips_per_board = 2;
  const Topology t = MustBuild(TopologyKind::kBoardDragonfly, 22, p);
  EXPECT_EQ(t.params().dragonfly_group_boards, 1u);
  EXPECT_EQ(t.links().size(), 2u * (11 * 1 + 55));
  ExpectUniformPorts(t, 1 + 5);
  ExpectAllPairsRouted(t);
}

// ----------------------------------------------------------------- torus

TEST(TorusTest, EightByEightWrapsAround) {
  TopologyParams p;
  p.torus_x = 8;
  p.torus_y = 8;
  const Topology t = MustBuild(TopologyKind::kTorus2D, 64, p);
  EXPECT_EQ(t.links().size(), 2u * 128u);
  ExpectUniformPorts(t, 4);
  EXPECT_THAT(t.Path(0, 7), ElementsAre(LinkBetween(t, 0, 7)));    // x wrap
  EXPECT_THAT(t.Path(0, 56), ElementsAre(LinkBetween(t, 0, 56)));  // y wrap
  EXPECT_EQ(t.Hops(0, 36), 8u);  // (4, 4): 4 + 4
  EXPECT_EQ(t.Hops(0, 63), 2u);  // (7, 7): one wrap in each dimension
  // First next hops are dimension-ordered: x first.
  EXPECT_THAT(Nodes(t, 0, t.Path(0, 18)), ElementsAre(0, 1, 2, 10, 18));
  ExpectAllPairsRouted(t);
}

TEST(TorusTest, RoutesAreDimensionOrdered) {
  const Topology t = MustBuild(TopologyKind::kTorus2D, 64);
  EXPECT_EQ(t.params().torus_x, 8u);
  EXPECT_EQ(t.params().torus_y, 8u);
  // Chip 0 to chip 9 = (1, 1): x first, so only via chip 1 (not chip 8),
  // then y.
  EXPECT_THAT(t.NextLinks(0, 9), ElementsAre(LinkBetween(t, 0, 1)));
  EXPECT_THAT(Nodes(t, 0, t.Path(0, 9)), ElementsAre(0, 1, 9));
  EXPECT_THAT(Nodes(t, 0, t.Path(0, 9, 0xdeadbeefu)), ElementsAre(0, 1, 9));
}

TEST(TorusTest, FlowHashesTakeBothWaysRoundAHalfRing) {
  const Topology t = MustBuild(TopologyKind::kTorus2D, 64);
  // Chip 0 to chip 4 = (4, 0): half-way round the x ring, 4 hops either
  // way: via chip 1 or via chip 7.
  EXPECT_THAT(t.NextLinks(0, 4),
              ElementsAre(LinkBetween(t, 0, 1), LinkBetween(t, 0, 7)));
  std::set<uint32_t> first_hops;
  for (uint32_t qp = 0; qp < 16; ++qp) {
    const uint32_t h = Topology::FlowHash(0, 4, qp);
    first_hops.insert(t.NextLink(0, 4, h));
    EXPECT_EQ(t.NextLink(0, 4, h), t.NextLink(0, 4, h));
  }
  EXPECT_EQ(first_hops.size(), 2u);
  // Past the first hop the way is unique: exactly two paths.
  std::set<std::vector<uint32_t>> paths;
  for (uint32_t h = 0; h < 16; ++h) paths.insert(t.Path(0, 4, h));
  EXPECT_EQ(paths.size(), 2u);
}

TEST(TorusTest, FactorisationAndSmallDimensions) {
  struct Case {
    uint32_t n, x, y;
  } cases[] = {{64, 8, 8}, {32, 4, 8}, {12, 3, 4}, {7, 1, 7}, {1, 1, 1}};
  for (const Case& c : cases) {
    const Topology t = MustBuild(TopologyKind::kTorus2D, c.n);
    EXPECT_EQ(t.params().torus_x, c.x) << c.n;
    EXPECT_EQ(t.params().torus_y, c.y) << c.n;
    ExpectAllPairsRouted(t);
  }
  TopologyParams p;
  p.torus_x = 4;  // y = 16 / 4
  EXPECT_EQ(MustBuild(TopologyKind::kTorus2D, 16, p).params().torus_y, 4u);
  // 2 x 2: a dimension of 2 has one cable, so 2 ports per chip.
  const Topology t = MustBuild(TopologyKind::kTorus2D, 4);
  EXPECT_EQ(t.links().size(), 8u);
  ExpectUniformPorts(t, 2);
  // 1 x 7 is a ring.
  ExpectUniformPorts(MustBuild(TopologyKind::kTorus2D, 7), 2);
}

// ----------------------------------------------------- all kinds at once

TEST(TopologyTest, EveryKindBuildsDeterministically) {
  for (TopologyKind k : kAllKinds) {
    const Topology a = MustBuild(k, 64);
    const Topology b = MustBuild(k, 64);
    ASSERT_EQ(a.links().size(), b.links().size()) << TopologyName(k);
    for (size_t l = 0; l < a.links().size(); ++l) {
      EXPECT_EQ(a.links()[l].src, b.links()[l].src);
      EXPECT_EQ(a.links()[l].dst, b.links()[l].dst);
    }
    for (uint32_t u = 0; u < a.num_nodes(); ++u) {
      for (uint32_t d = 0; d < 64; ++d) {
        if (u == d) continue;
        for (uint32_t h : {0u, 7u, 123456789u}) {
          ASSERT_EQ(a.NextLink(u, d, h), b.NextLink(u, d, h));
        }
      }
    }
    ExpectAllPairsRouted(a);
  }
}

TEST(TopologyTest, ThousandChipSystemsBuild) {
  for (TopologyKind k : kAllKinds) {
    if (k == TopologyKind::kFullMesh) continue;  // 1M links; see below
    const Topology t = MustBuild(k, 1024);
    EXPECT_EQ(t.num_chips(), 1024u);
    EXPECT_EQ(t.Path(0, 1023).size(), t.Hops(0, 1023)) << TopologyName(k);
  }
  const Topology ring = MustBuild(TopologyKind::kBoardRing, 1024);
  EXPECT_EQ(ring.Hops(0, 512), 64u);  // 128 boards: board 64 is 64 away
  const Topology torus = MustBuild(TopologyKind::kTorus2D, 1024);
  EXPECT_EQ(torus.params().torus_x, 32u);
  EXPECT_EQ(torus.Hops(0, 16 * 32 + 16), 32u);
}

// The virtual channels a deadlock-free replay needs (Topology::
// DatelineClasses): 1 + the most rank descents along any allowed route.
TEST(TopologyTest, DatelineClassesPerKind) {
  // Routes that only climb: one hop (full mesh), up then down (switch,
  // fat-tree).
  EXPECT_EQ(MustBuild(TopologyKind::kFullMesh, 8).DatelineClasses(), 1u);
  EXPECT_EQ(MustBuild(TopologyKind::kSwitch, 64).DatelineClasses(), 1u);
  EXPECT_EQ(MustBuild(TopologyKind::kBoardFatTree, 64).DatelineClasses(), 1u);
  // A ring: at most one wrap-around per route, either direction.
  EXPECT_EQ(MustBuild(TopologyKind::kRing, 64).DatelineClasses(), 2u);
  EXPECT_EQ(MustBuild(TopologyKind::kRingUni, 64).DatelineClasses(), 2u);
  // A 2-chip ring has no wrap: its one cable is the whole ring, and a
  // route is one hop.
  EXPECT_EQ(MustBuild(TopologyKind::kRing, 2).DatelineClasses(), 1u);
  // Torus, dimension-ordered: an x wrap, then (y ranks above x) a y wrap.
  EXPECT_EQ(MustBuild(TopologyKind::kTorus2D, 64).DatelineClasses(), 3u);
  // Board ring: an inter-board wrap, then the step down from an inter-board
  // link to a board-internal one.
  EXPECT_EQ(MustBuild(TopologyKind::kBoardRing, 64).DatelineClasses(), 3u);
  // Dragonfly: board -> group -> global -> group -> board descends twice.
  EXPECT_EQ(MustBuild(TopologyKind::kBoardDragonfly, 64).DatelineClasses(), 3u);
}

TEST(TopologyTest, FlowHashIsFixed) {
  EXPECT_EQ(Topology::FlowHash(0, 9, 4), Topology::FlowHash(0, 9, 4));
  EXPECT_NE(Topology::FlowHash(0, 9, 4), Topology::FlowHash(0, 9, 5));
  EXPECT_NE(Topology::FlowHash(0, 9, 4), Topology::FlowHash(9, 0, 4));
}

TEST(TopologyTest, BadShapesSayWhy) {
  EXPECT_EQ(BuildError(TopologyKind::kBoardRing, 60),
            "topology board-ring: chips_per_board: 60 chips is not a "
            "multiple of 8");
  TopologyParams zero;
  zero.chips_per_board = 0;
  EXPECT_THAT(BuildError(TopologyKind::kBoardFatTree, 64, zero),
              HasSubstr("chips_per_board: must be in [1, 65536], got 0"));
  TopologyParams torus;
  torus.torus_x = 8;
  torus.torus_y = 4;
  EXPECT_EQ(BuildError(TopologyKind::kTorus2D, 64, torus),
            "topology torus2d: torus_x, torus_y: 8 x 4 is not the system's "
            "64 chips");
  torus.torus_y = 0;
  torus.torus_x = 5;
  EXPECT_EQ(BuildError(TopologyKind::kTorus2D, 64, torus),
            "topology torus2d: torus_x: 64 chips is not a multiple of 5");
  TopologyParams df;
  df.dragonfly_group_boards = 3;
  EXPECT_EQ(BuildError(TopologyKind::kBoardDragonfly, 64, df),
            "topology board-dragonfly: dragonfly_group_boards: 8 boards (64 "
            "chips / 8) are not a multiple of 3");
  EXPECT_THAT(BuildError(TopologyKind::kRing, 0),
              HasSubstr("0 chips is outside [1, 65536]"));
  EXPECT_THAT(BuildError(TopologyKind::kFullMesh, 2048),
              HasSubstr("more routing work than"));
  EXPECT_THAT(BuildError(TopologyKind::kRing, 16384),
              HasSubstr("route-table entries"));
  // Parameters of other kinds are ignored.
  EXPECT_TRUE(Topology::Build(TopologyKind::kRing, 60, zero).ok());
}

// ---------------------------------------------------------------- config

TEST(TopologyConfigTest, ParamsRoundTripThroughProto) {
  HwConfig c = DefaultTps186();
  EXPECT_EQ(c.topology_params, TopologyParams{});
  c.topology = TopologyKind::kBoardDragonfly;
  c.num_chips = 128;
  c.topology_params.chips_per_board = 4;
  c.topology_params.torus_x = 2;
  c.topology_params.torus_y = 64;
  c.topology_params.fat_tree_spines = 3;
  c.topology_params.dragonfly_group_boards = 8;
  const v1::HardwareConfig p = HwConfigToProto(c);
  EXPECT_EQ(p.topology().kind(), v1::BOARD_DRAGONFLY);
  EXPECT_EQ(p.topology().chips_per_board(), 4u);
  EXPECT_EQ(p.topology().dragonfly_group_boards(), 8u);
  absl::StatusOr<HwConfig> back = HwConfigFromProto(p);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->topology, c.topology);
  EXPECT_EQ(back->num_chips, 128u);
  EXPECT_EQ(back->topology_params, c.topology_params);
  for (TopologyKind k : kAllKinds) {
    HwConfig d = DefaultTps186();
    d.topology = k;
    absl::StatusOr<HwConfig> e = HwConfigFromProto(HwConfigToProto(d));
    ASSERT_TRUE(e.ok()) << TopologyName(k) << ": " << e.status();
    EXPECT_EQ(e->topology, k);
  }
}

TEST(TopologyConfigTest, ZeroMeansTheDefault) {
  v1::HardwareConfig p = HwConfigToProto(DefaultTps186());
  p.mutable_topology()->set_chips_per_board(0);
  absl::StatusOr<HwConfig> c = HwConfigFromProto(p);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->topology_params.chips_per_board, 8u);
}

TEST(TopologyConfigTest, BadFieldsAreNamed) {
  const v1::HardwareConfig good = HwConfigToProto(DefaultTps186());
  auto error = [](const v1::HardwareConfig& p) {
    absl::StatusOr<HwConfig> c = HwConfigFromProto(p);
    EXPECT_FALSE(c.ok());
    return std::string(c.status().message());
  };
  v1::HardwareConfig p = good;
  p.mutable_topology()->set_kind(static_cast<v1::TopologyKind>(99));
  EXPECT_THAT(error(p), HasSubstr("topology.kind: must be one of RING"));
  p = good;
  p.mutable_topology()->set_chips_per_board(70000);
  EXPECT_EQ(error(p), "topology.chips_per_board: 70000 is more than 65536");
  p = good;
  p.mutable_topology()->set_num_chips(70000);
  EXPECT_EQ(error(p), "topology.num_chips: 70000 is more than 65536");
  // With num_chips given the shape is checked at once.
  p = good;
  p.mutable_topology()->set_kind(v1::TORUS_2D);
  p.mutable_topology()->set_num_chips(64);
  p.mutable_topology()->set_torus_x(8);
  p.mutable_topology()->set_torus_y(4);
  EXPECT_EQ(error(p),
            "topology.torus_x, torus_y: 8 x 4 is not the system's 64 chips");
  p = good;
  p.mutable_topology()->set_kind(v1::BOARD_RING);
  p.mutable_topology()->set_num_chips(12);
  EXPECT_EQ(error(p),
            "topology.chips_per_board: 12 chips is not a multiple of 8");
}

TEST(TopologyConfigTest, ShippedConfigsParseAndBuild) {
  const std::filesystem::path dir =
      std::filesystem::path(CCREPLAY_SOURCE_DIR) / "traces";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 10 && name.ends_with(".hw.txtpb")) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  EXPECT_THAT(
      files,
      ::testing::IsSupersetOf(
          {"board8.hw.txtpb", "tps186-board-dragonfly.hw.txtpb",
           "tps186-board-fattree.hw.txtpb", "tps186-board-ring.hw.txtpb",
           "tps186-switch.hw.txtpb", "tps186.hw.txtpb", "torus-8x8.hw.txtpb"}));
  const HwConfig& tps = DefaultTps186();
  for (const std::string& name : files) {
    SCOPED_TRACE(name);
    absl::StatusOr<HwConfig> c = ReadHwConfigFile((dir / name).string());
    ASSERT_TRUE(c.ok()) << c.status();
    // The alpha-beta model's machine is meant to differ.
    if (name == "alpha-beta.hw.txtpb") continue;
    // Same hardware as traces/tps186.hw.txtpb; only the name and the
    // topology differ (a copy that drifted from TPS186 fails here).
    v1::HardwareConfig got = HwConfigToProto(*c);
    v1::HardwareConfig want = HwConfigToProto(tps);
    for (v1::HardwareConfig* p : {&got, &want}) {
      p->clear_name();
      p->clear_topology();
    }
    EXPECT_TRUE(MessageDifferencer::Equals(got, want))
        << got.DebugString() << "\nvs TPS186\n"
        << want.DebugString();
    const uint32_t n = c->num_chips == 0 ? 64 : c->num_chips;
    absl::StatusOr<Topology> t =
        Topology::Build(c->topology, n, c->topology_params);
    ASSERT_TRUE(t.ok()) << t.status();
    ExpectAllPairsRouted(*t);
  }
  struct Want {
    const char* file;
    TopologyKind kind;
    uint32_t chips;
  } wants[] = {
      {"board8.hw.txtpb", TopologyKind::kFullMesh, 8},
      {"tps186-board-ring.hw.txtpb", TopologyKind::kBoardRing, 64},
      {"tps186-board-fattree.hw.txtpb", TopologyKind::kBoardFatTree, 64},
      {"tps186-board-dragonfly.hw.txtpb", TopologyKind::kBoardDragonfly, 64},
      {"torus-8x8.hw.txtpb", TopologyKind::kTorus2D, 64},
      {"tps186-switch.hw.txtpb", TopologyKind::kSwitch, 64},
  };
  for (const Want& w : wants) {
    absl::StatusOr<HwConfig> c = ReadHwConfigFile((dir / w.file).string());
    ASSERT_TRUE(c.ok()) << w.file << ": " << c.status();
    EXPECT_EQ(c->topology, w.kind) << w.file;
    EXPECT_EQ(c->num_chips, w.chips) << w.file;
  }
  absl::StatusOr<HwConfig> torus =
      ReadHwConfigFile((dir / "torus-8x8.hw.txtpb").string());
  ASSERT_TRUE(torus.ok());
  EXPECT_EQ(torus->topology_params.torus_x, 8u);
  EXPECT_EQ(torus->topology_params.torus_y, 8u);
}

}  // namespace
}  // namespace ccreplay
