// The system graph: chips and switches joined by directed links (one per
// direction of every full-duplex cable), with a precomputed next-hop table.
#ifndef CCREPLAY_HW_TOPOLOGY_H_
#define CCREPLAY_HW_TOPOLOGY_H_

#include <cstdint>
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
  // num_chips must be in [1, kMaxChips] (hw/config.h); otherwise
  // InvalidArgument.
  static absl::StatusOr<Topology> Build(TopologyKind kind, uint32_t num_chips);

  TopologyKind kind() const { return kind_; }
  uint32_t num_chips() const { return num_chips_; }
  uint32_t num_nodes() const { return num_nodes_; }
  bool IsSwitch(uint32_t node) const { return node >= num_chips_; }
  const std::vector<DirectedLink>& links() const { return links_; }

  // The link a packet at `node` takes towards chip `dst_chip`.
  // REQUIRES: node != dst_chip, both in range.
  uint32_t NextLink(uint32_t node, uint32_t dst_chip) const {
    return next_[static_cast<size_t>(node) * num_chips_ + dst_chip];
  }
  // Links on the path from chip `src` to chip `dst` (empty when equal).
  std::vector<uint32_t> Path(uint32_t src, uint32_t dst) const;

  // "chip 3", "switch 0".
  std::string NodeName(uint32_t node) const;
  // "chip 3 -> switch 0".
  std::string LinkName(uint32_t link) const;

 private:
  Topology() = default;
  void AddCable(uint32_t a, uint32_t b);
  // Shortest paths by hop count; among equal next hops the link added first
  // wins, which makes routing deterministic.
  absl::Status ComputeRoutes();

  TopologyKind kind_ = TopologyKind::kRing;
  uint32_t num_chips_ = 0;
  uint32_t num_nodes_ = 0;
  std::vector<DirectedLink> links_;
  std::vector<std::vector<uint32_t>> out_links_;  // per node, in add order
  std::vector<uint32_t> next_;                    // num_nodes x num_chips
};

}  // namespace ccreplay

#endif  // CCREPLAY_HW_TOPOLOGY_H_
