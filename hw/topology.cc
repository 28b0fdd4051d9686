#include "hw/topology.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace ccreplay {

namespace {
constexpr uint32_t kNoLink = std::numeric_limits<uint32_t>::max();
}  // namespace

absl::StatusOr<Topology> Topology::Build(TopologyKind kind,
                                         uint32_t num_chips) {
  if (num_chips < 1 || num_chips > kMaxChips) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology ", TopologyName(kind), ": ", num_chips,
                     " chips is outside [1, ", kMaxChips, "]"));
  }
  Topology t;
  t.kind_ = kind;
  t.num_chips_ = num_chips;
  switch (kind) {
    case TopologyKind::kRing:
      t.num_nodes_ = num_chips;
      t.out_links_.resize(t.num_nodes_);
      // Cable i joins chip i and chip i+1. Adding i -> i+1 before i+1 -> i
      // for every cable makes ties go in the increasing direction.
      if (num_chips == 2) {
        t.AddCable(0, 1);
      } else if (num_chips > 2) {
        for (uint32_t i = 0; i < num_chips; ++i) {
          t.AddCable(i, (i + 1) % num_chips);
        }
      }
      break;
    case TopologyKind::kSwitch:
      t.num_nodes_ = num_chips + 1;
      t.out_links_.resize(t.num_nodes_);
      for (uint32_t i = 0; i < num_chips; ++i) t.AddCable(i, num_chips);
      break;
  }
  if (auto s = t.ComputeRoutes(); !s.ok()) return s;
  return t;
}

void Topology::AddCable(uint32_t a, uint32_t b) {
  out_links_[a].push_back(static_cast<uint32_t>(links_.size()));
  links_.push_back({a, b});
  out_links_[b].push_back(static_cast<uint32_t>(links_.size()));
  links_.push_back({b, a});
}

absl::Status Topology::ComputeRoutes() {
  next_.assign(static_cast<size_t>(num_nodes_) * num_chips_, kNoLink);
  // Incoming links per node, for the backwards search from each destination.
  std::vector<std::vector<uint32_t>> in_links(num_nodes_);
  for (uint32_t l = 0; l < links_.size(); ++l) {
    in_links[links_[l].dst].push_back(l);
  }
  std::vector<uint32_t> dist(num_nodes_);
  std::vector<uint32_t> frontier;
  for (uint32_t dst = 0; dst < num_chips_; ++dst) {
    dist.assign(num_nodes_, kNoLink);
    dist[dst] = 0;
    frontier.assign(1, dst);
    for (size_t head = 0; head < frontier.size(); ++head) {
      const uint32_t v = frontier[head];
      for (uint32_t l : in_links[v]) {
        const uint32_t u = links_[l].src;
        if (dist[u] == kNoLink) {
          dist[u] = dist[v] + 1;
          frontier.push_back(u);
        }
      }
    }
    for (uint32_t u = 0; u < num_nodes_; ++u) {
      if (u == dst) continue;
      if (dist[u] == kNoLink) {
        if (u < num_chips_) {
          return absl::InvalidArgumentError(
              absl::StrCat("topology ", TopologyName(kind_), ": ", NodeName(u),
                           " cannot reach chip ", dst));
        }
        continue;
      }
      for (uint32_t l : out_links_[u]) {
        if (dist[links_[l].dst] + 1 == dist[u]) {
          next_[static_cast<size_t>(u) * num_chips_ + dst] = l;
          break;
        }
      }
    }
  }
  return absl::OkStatus();
}

std::vector<uint32_t> Topology::Path(uint32_t src, uint32_t dst) const {
  std::vector<uint32_t> path;
  for (uint32_t node = src; node != dst;) {
    const uint32_t l = NextLink(node, dst);
    path.push_back(l);
    node = links_[l].dst;
  }
  return path;
}

std::string Topology::NodeName(uint32_t node) const {
  if (node < num_chips_) return absl::StrCat("chip ", node);
  return absl::StrCat("switch ", node - num_chips_);
}

std::string Topology::LinkName(uint32_t link) const {
  return absl::StrCat(NodeName(links_[link].src), " -> ",
                      NodeName(links_[link].dst));
}

}  // namespace ccreplay
