// The system graph: chips and switches joined by directed links (one per
// direction of every full-duplex cable), with precomputed shortest-path
// routes. docs/topologies.md describes the cabling of every kind.
#ifndef CCREPLAY_HW_TOPOLOGY_H_
#define CCREPLAY_HW_TOPOLOGY_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hw/config.h"

namespace ccreplay {

// A directed link from node `src` to node `dst`. Nodes [0, num_chips) are
// chips; nodes from num_chips on are switches.
struct DirectedLink {
  uint32_t src = 0;
  uint32_t dst = 0;
};

class Topology {
 public:
  // Largest route table (nodes x chips) Build accepts: 2^26 entries, about
  // 8192 chips. Larger systems return InvalidArgument rather than allocate
  // gigabytes.
  static constexpr uint64_t kMaxRouteEntries = uint64_t{1} << 26;

  // Build(kind, n) = Build(kind, n, TopologyParams{}).
  static absl::StatusOr<Topology> Build(TopologyKind kind, uint32_t num_chips);
  // num_chips must be in [1, kMaxChips] (hw/config.h) and `params` must shape
  // num_chips chips as `kind` (ResolveTopologyParams); otherwise
  // InvalidArgument, e.g. "topology board-ring: chips_per_board: 60 chips is
  // not a multiple of 8". Every chip must reach every chip.
  static absl::StatusOr<Topology> Build(TopologyKind kind, uint32_t num_chips,
                                        const TopologyParams& params);

  // The nodes and directed links Build(kind, num_chips, params) would make,
  // computed from the numbers alone (nothing is allocated), so sizes can be
  // refused before cabling. REQUIRES: `params` resolved for (kind,
  // num_chips) by ResolveTopologyParams.
  static uint64_t CountNodes(TopologyKind kind, uint32_t num_chips,
                             const TopologyParams& params);
  static uint64_t CountLinks(TopologyKind kind, uint32_t num_chips,
                             const TopologyParams& params);

  TopologyKind kind() const { return kind_; }
  // The parameters with every "choose" (0) resolved, e.g. torus_x/torus_y.
  const TopologyParams& params() const { return params_; }
  uint32_t num_chips() const { return num_chips_; }
  uint32_t num_nodes() const { return num_nodes_; }
  uint32_t num_switches() const { return num_nodes_ - num_chips_; }
  bool IsSwitch(uint32_t node) const { return node >= num_chips_; }
  const std::vector<DirectedLink>& links() const { return links_; }
  // Links leaving `node`, in the order they were cabled. Its size is the
  // node's port count (a full-duplex cable is one port).
  const std::vector<uint32_t>& OutLinks(uint32_t node) const {
    return out_links_[node];
  }

  // Hops on a shortest path from `node` to chip `dst_chip`.
  uint32_t Hops(uint32_t node, uint32_t dst_chip) const {
    return hops_[Index(node, dst_chip)];
  }

  // Every next hop of a shortest path from `node` to `dst_chip`: the links
  // leaving `node` towards a node one hop closer, in cabling order.
  // REQUIRES: node != dst_chip, both in range.
  std::span<const uint32_t> NextLinks(uint32_t node, uint32_t dst_chip) const {
    const uint32_t& first = next_[NextIndex(node, dst_chip)];
    if (first == kNoLink) return {};
    if ((first & kManyRoutes) == 0) return {&first, 1};
    const uint32_t* list = &alt_[first & ~kManyRoutes];
    return {list + 1, list[0]};
  }
  // The first of NextLinks(node, dst_chip): the link cabled first wins ties.
  // REQUIRES: node != dst_chip, both in range.
  uint32_t NextLink(uint32_t node, uint32_t dst_chip) const {
    return NextLinks(node, dst_chip).front();
  }
  // One of NextLinks(node, dst_chip), chosen by flow_hash: candidate
  // floor(Mix(flow_hash, node) * count / 2^32). The same (flow_hash, node,
  // dst_chip) always gives the same link, so a flow (one qp) keeps one path;
  // mixing in `node` keeps the choices of successive hops independent.
  // REQUIRES: node != dst_chip, both in range.
  uint32_t NextLink(uint32_t node, uint32_t dst_chip,
                    uint32_t flow_hash) const {
    // One load where there is one route (a ring, a mesh, a chip's uplink):
    // the table is num_nodes x num_chips words, so this can be a cache
    // miss, and a second, dependent one into alt_ would double it.
    const uint32_t first = next_[NextIndex(node, dst_chip)];
    if ((first & kManyRoutes) == 0) return first;
    const uint32_t* list = &alt_[first & ~kManyRoutes];
    const uint64_t pick =
        (static_cast<uint64_t>(Mix(flow_hash, node)) * list[0]) >> 32;
    return list[1 + pick];
  }

  // Links on the path from chip `src` to chip `dst` (empty when equal), by
  // NextLink(node, dst) or NextLink(node, dst, flow_hash).
  std::vector<uint32_t> Path(uint32_t src, uint32_t dst) const;
  std::vector<uint32_t> Path(uint32_t src, uint32_t dst,
                             uint32_t flow_hash) const;
  // Path(src, dst, flow_hash) into *path (its storage reused).
  void PathInto(uint32_t src, uint32_t dst, uint32_t flow_hash,
                std::vector<uint32_t>* path) const;

  // The flow hash the replay uses for a packet stream: a fixed mix of the
  // source chip, destination chip and qp_id (no seed, no state).
  static uint32_t FlowHash(uint32_t src_chip, uint32_t dst_chip, uint32_t qp);
  // The per-hop mix of NextLink: splitmix64's finaliser of
  // (flow_hash << 32 | node), upper 32 bits. Hand-written on purpose, not a
  // library hash (std::hash, absl::Hash): routes, and so every replay result
  // and golden output, must be the same on every build, platform and run,
  // and absl::Hash is seeded per process while std::hash is unspecified.
  static uint32_t Mix(uint32_t flow_hash, uint32_t node) {
    uint64_t z =
        (static_cast<uint64_t>(flow_hash) << 32 | node) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<uint32_t>((z ^ (z >> 31)) >> 32);
  }

  // The dateline rank of `link` (docs/hardware-model.md, "Virtual
  // channels"): a packet keeps its virtual channel while each link it takes
  // ranks above the one it came on, and moves to the next channel when it
  // does not. Ranks follow the direction of travel (around a ring, along a
  // torus dimension, up then down a tree), so only a wrap-around link or a
  // turn back to a lower class of link costs a channel.
  uint32_t LinkRank(uint32_t link) const { return rank_[link]; }
  // The channels the routes can use: 1 + the most rank descents along any
  // shortest path the routing may choose (every tie). With this many
  // channels the dependencies between (link, channel) buffers form no
  // cycle: within a channel ranks only rise, and channels only rise.
  // Computed once, at Build.
  uint32_t DatelineClasses() const { return dateline_classes_; }

  // "chip 3", "switch 0". Fat-tree: switches [0, boards) are the leaves
  // (leaf b serves board b), the rest the spines.
  std::string NodeName(uint32_t node) const;
  // "chip 3 -> switch 0".
  std::string LinkName(uint32_t link) const;

 private:
  Topology() = default;
  size_t Index(uint32_t node, uint32_t dst_chip) const {
    return static_cast<size_t>(node) * num_chips_ + dst_chip;
  }
  // next_'s order: the chips' entries by the destination's place relative
  // to the chip (k for chip (node + k) mod num_chips), then by chip; then
  // the switches', row by row. Collectives name their peers that way (a
  // ring's neighbour, the k-th step of a pairwise exchange), so the
  // lookups of all chips in one step read neighbouring words, where row by
  // row they would read one page per chip; a switch looks up every
  // destination, and its row keeps them together (docs/architecture.md,
  // "Route lookups").
  size_t NextIndex(uint32_t node, uint32_t dst_chip) const {
    const size_t c = num_chips_;
    if (node >= num_chips_) return c * node + dst_chip;
    const uint32_t rel =
        dst_chip >= node ? dst_chip - node : dst_chip + num_chips_ - node;
    return c * rel + node;
  }
  void AddCable(uint32_t a, uint32_t b);
  void AddLink(uint32_t a, uint32_t b);  // one direction only
  // Adds the nodes and links of kind_ over num_chips_ chips.
  void Cable();
  void CableBoardMeshes();
  void CableDragonfly();
  void CableTorus();
  // Shortest paths by hop count, one backwards BFS per destination chip.
  absl::Status ComputeRoutes();
  absl::Status ComputeHops();
  absl::Status ComputeCandidates();
  // May `link` leaving `node` be a next hop towards `dst` (beyond being one
  // hop closer)? Tori route dimension-ordered: x first, then y.
  bool RouteAllows(uint32_t link, uint32_t node, uint32_t dst) const;
  // rank_ from the kind's cabling (LinkRank).
  void RankLinks();
  uint32_t ComputeDatelineClasses() const;
  uint32_t RankOf(uint32_t link) const;

  TopologyKind kind_ = TopologyKind::kRing;
  TopologyParams params_;
  uint32_t num_chips_ = 0;
  uint32_t num_nodes_ = 0;
  std::vector<DirectedLink> links_;
  std::vector<uint32_t> rank_;  // per link: LinkRank
  uint32_t dateline_classes_ = 1;
  std::vector<std::vector<uint32_t>> out_links_;  // per node, in add order
  // Set in next_ where a (node, dst chip) has more than one next link.
  static constexpr uint32_t kManyRoutes = 1u << 31;
  // In next_ where there is no next link (node == dst chip).
  static constexpr uint32_t kNoLink = ~0u;
  // Per (node, dst chip), in NextIndex's order: the only next link, or
  // kManyRoutes | b where there are several: b is where their list starts
  // in alt_, its length first, then the links. The lists are kept only for
  // the pairs that have more than one (none on a ring or a torus), and a
  // lookup reads one line of each table.
  std::vector<uint32_t> next_;
  std::vector<uint16_t> hops_;  // shortest distance
  std::vector<uint32_t> alt_;   // the lists of next_'s kManyRoutes pairs
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_TOPOLOGY_H_
