#include "hw/topology.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ccreplay {

namespace {

constexpr uint16_t kUnreached = std::numeric_limits<uint16_t>::max();
// Backwards-BFS work (links x destination chips) Build accepts: a few
// seconds. Board topologies of several thousand chips fit; a full mesh fits
// up to 1024 chips (1M links, about 3 s).
constexpr uint64_t kMaxRouteWork = uint64_t{1} << 30;

// Cables between `n` nodes joined pairwise.
uint64_t MeshCables(uint64_t n) { return n * (n - 1) / 2; }

// Cables of a ring of `n` nodes (Cable(): 2 has one cable, 1 none).
uint64_t RingCables(uint64_t n) { return n > 2 ? n : (n == 2 ? 1 : 0); }

}  // namespace

uint64_t Topology::CountNodes(TopologyKind kind, uint32_t num_chips,
                              const TopologyParams& p) {
  const uint64_t n = num_chips;
  if (kind == TopologyKind::kSwitch) return n + 1;
  if (kind == TopologyKind::kBoardFatTree) {
    return n + (p.chips_per_board == 0 ? 0 : n / p.chips_per_board) +
           p.fat_tree_spines;
  }
  return n;
}

uint64_t Topology::CountLinks(TopologyKind kind, uint32_t num_chips,
                              const TopologyParams& p) {
  const uint64_t n = num_chips;
  const uint64_t cpb = p.chips_per_board;
  const uint64_t boards = cpb == 0 ? 0 : n / cpb;
  const uint64_t meshes = boards * MeshCables(cpb);
  switch (kind) {
    case TopologyKind::kRing:
      return 2 * RingCables(n);
    case TopologyKind::kRingUni:
      return n == 2 ? 2 : (n > 2 ? n : 0);
    case TopologyKind::kSwitch:
      return 2 * n;
    case TopologyKind::kFullMesh:
      return 2 * MeshCables(n);
    case TopologyKind::kBoardRing:
      return 2 * (meshes + RingCables(boards) * cpb);
    case TopologyKind::kBoardFatTree:
      return 2 * (meshes + n + boards * uint64_t{p.fat_tree_spines});
    case TopologyKind::kBoardDragonfly: {
      const uint64_t g = p.dragonfly_group_boards;
      const uint64_t group_chips = g * cpb;
      const uint64_t groups = group_chips == 0 ? 0 : n / group_chips;
      uint64_t global = 0;
      if (groups >= 2) {
        const uint64_t peers = groups - 1;
        const uint64_t h = (peers + group_chips - 1) / group_chips;
        global = MeshCables(groups) * (h * group_chips / peers);
      }
      return 2 * (meshes + groups * MeshCables(g) * cpb + global);
    }
    case TopologyKind::kTorus2D:
      return 2 * (uint64_t{p.torus_y} * RingCables(p.torus_x) +
                  uint64_t{p.torus_x} * RingCables(p.torus_y));
  }
  return 0;
}

absl::StatusOr<Topology> Topology::Build(TopologyKind kind,
                                         uint32_t num_chips) {
  return Build(kind, num_chips, TopologyParams{});
}

absl::StatusOr<Topology> Topology::Build(TopologyKind kind, uint32_t num_chips,
                                         const TopologyParams& params) {
  auto fail = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology ", TopologyName(kind), ": ", what));
  };
  if (num_chips < 1 || num_chips > kMaxChips) {
    return fail(
        absl::StrCat(num_chips, " chips is outside [1, ", kMaxChips, "]"));
  }
  auto resolved = ResolveTopologyParams(kind, num_chips, params);
  if (!resolved.ok()) return fail(resolved.status().message());
  // Sizes first, from the parameters alone: nothing is cabled (a full mesh
  // of 65536 chips would be 2^32 links) before they pass.
  const uint64_t nodes = CountNodes(kind, num_chips, *resolved);
  const uint64_t links = CountLinks(kind, num_chips, *resolved);
  if (nodes * num_chips > kMaxRouteEntries) {
    return fail(absl::StrCat(nodes, " nodes x ", num_chips,
                             " chips is more than the ", kMaxRouteEntries,
                             " route-table entries ccreplay supports "
                             "(docs/limits.md)"));
  }
  if (links * num_chips > kMaxRouteWork) {
    return fail(absl::StrCat(
        links, " links x ", num_chips, " chips is more routing work than the ",
        kMaxRouteWork, " ccreplay supports (docs/limits.md)"));
  }
  Topology t;
  t.kind_ = kind;
  t.params_ = *resolved;
  t.num_chips_ = num_chips;
  t.num_nodes_ = num_chips;
  t.Cable();
  t.RankLinks();
  if (auto s = t.ComputeRoutes(); !s.ok()) return s;
  t.dateline_classes_ = t.ComputeDatelineClasses();
  return t;
}

void Topology::Cable() {
  const uint32_t cpb = params_.chips_per_board;
  switch (kind_) {
    case TopologyKind::kRing:
    case TopologyKind::kRingUni:
      out_links_.resize(num_nodes_);
      // Cable i joins chip i and chip i+1. Adding i -> i+1 before i+1 -> i
      // for every cable makes ties go in the increasing direction.
      if (num_chips_ == 2) {
        AddCable(0, 1);
      } else if (num_chips_ > 2) {
        for (uint32_t i = 0; i < num_chips_; ++i) {
          if (kind_ == TopologyKind::kRing) {
            AddCable(i, (i + 1) % num_chips_);
          } else {
            AddLink(i, (i + 1) % num_chips_);
          }
        }
      }
      break;
    case TopologyKind::kSwitch:
      num_nodes_ = num_chips_ + 1;
      out_links_.resize(num_nodes_);
      for (uint32_t i = 0; i < num_chips_; ++i) AddCable(i, num_chips_);
      break;
    case TopologyKind::kFullMesh:
      out_links_.resize(num_nodes_);
      for (uint32_t a = 0; a < num_chips_; ++a) {
        for (uint32_t b = a + 1; b < num_chips_; ++b) AddCable(a, b);
      }
      break;
    case TopologyKind::kBoardRing: {
      out_links_.resize(num_nodes_);
      CableBoardMeshes();
      // Chip k of board b to chip k of board b+1: every chip has two
      // external ports (one when there are two boards, none for one).
      const uint32_t boards = num_chips_ / cpb;
      const uint32_t cables = boards == 2 ? 1 : (boards > 2 ? boards : 0);
      for (uint32_t b = 0; b < cables; ++b) {
        for (uint32_t k = 0; k < cpb; ++k) {
          AddCable(b * cpb + k, ((b + 1) % boards) * cpb + k);
        }
      }
      break;
    }
    case TopologyKind::kBoardFatTree: {
      const uint32_t boards = num_chips_ / cpb;
      const uint32_t spines = params_.fat_tree_spines;
      num_nodes_ = num_chips_ + boards + spines;
      out_links_.resize(num_nodes_);
      CableBoardMeshes();
      for (uint32_t c = 0; c < num_chips_; ++c) {
        AddCable(c, num_chips_ + c / cpb);  // uplink to the board's leaf
      }
      for (uint32_t b = 0; b < boards; ++b) {
        for (uint32_t s = 0; s < spines; ++s) {
          AddCable(num_chips_ + b, num_chips_ + boards + s);
        }
      }
      break;
    }
    case TopologyKind::kBoardDragonfly:
      out_links_.resize(num_nodes_);
      CableBoardMeshes();
      CableDragonfly();
      break;
    case TopologyKind::kTorus2D:
      out_links_.resize(num_nodes_);
      CableTorus();
      break;
  }
}

void Topology::CableBoardMeshes() {
  const uint32_t cpb = params_.chips_per_board;
  for (uint32_t first = 0; first < num_chips_; first += cpb) {
    for (uint32_t a = first; a < first + cpb; ++a) {
      for (uint32_t b = a + 1; b < first + cpb; ++b) AddCable(a, b);
    }
  }
}

void Topology::CableDragonfly() {
  const uint32_t cpb = params_.chips_per_board;
  const uint32_t g = params_.dragonfly_group_boards;
  const uint32_t group_chips = g * cpb;
  const uint32_t groups = num_chips_ / group_chips;
  // Local: within a group, every pair of boards joined chip k to chip k.
  for (uint32_t first = 0; first < num_chips_; first += group_chips) {
    for (uint32_t p = 0; p < g; ++p) {
      for (uint32_t q = p + 1; q < g; ++q) {
        for (uint32_t k = 0; k < cpb; ++k) {
          AddCable(first + p * cpb + k, first + q * cpb + k);
        }
      }
    }
  }
  if (groups < 2) return;
  // Global: group i has h * group_chips global port slots (h ports per
  // chip, the fewest that give every other group a cable); slot s sits on
  // the group's chip s mod group_chips. Each group pair gets
  // `per_pair` cables; the t-th cable between i and j uses slot
  // t * (groups - 1) + rank_i(j) of i, where rank_i(j) is j's position among
  // the groups other than i (j < i ? j : j - 1).
  const uint32_t peers = groups - 1;
  const uint32_t h = (peers + group_chips - 1) / group_chips;
  const uint32_t per_pair = h * group_chips / peers;
  auto chip_of = [&](uint32_t group, uint32_t peer_rank, uint32_t t) {
    return group * group_chips + (t * peers + peer_rank) % group_chips;
  };
  for (uint32_t i = 0; i < groups; ++i) {
    for (uint32_t j = i + 1; j < groups; ++j) {
      for (uint32_t t = 0; t < per_pair; ++t) {
        AddCable(chip_of(i, j - 1, t), chip_of(j, i, t));
      }
    }
  }
}

void Topology::CableTorus() {
  const uint32_t nx = params_.torus_x;
  const uint32_t ny = params_.torus_y;
  // All x cables first, then all y cables: a chip's out links list x moves
  // before y moves, so the first equal-cost next hop is dimension-ordered
  // (x first). A dimension of 2 has one cable, of 1 none.
  for (uint32_t y = 0; y < ny; ++y) {
    for (uint32_t x = 0; x < nx; ++x) {
      if (nx > 2 || (nx == 2 && x == 0)) {
        AddCable(y * nx + x, y * nx + (x + 1) % nx);
      }
    }
  }
  for (uint32_t y = 0; y < ny; ++y) {
    for (uint32_t x = 0; x < nx; ++x) {
      if (ny > 2 || (ny == 2 && y == 0)) {
        AddCable(y * nx + x, ((y + 1) % ny) * nx + x);
      }
    }
  }
}

void Topology::AddCable(uint32_t a, uint32_t b) {
  AddLink(a, b);
  AddLink(b, a);
}

void Topology::AddLink(uint32_t a, uint32_t b) {
  out_links_[a].push_back(static_cast<uint32_t>(links_.size()));
  links_.push_back({a, b});
}

absl::Status Topology::ComputeRoutes() {
  if (absl::Status s = ComputeHops(); !s.ok()) return s;
  return ComputeCandidates();
}

// hops_: the hop count from every node to every chip, by BFS backwards from
// each chip; an error if some chip cannot reach another.
absl::Status Topology::ComputeHops() {
  const size_t entries = static_cast<size_t>(num_nodes_) * num_chips_;
  hops_.assign(entries, kUnreached);
  // Incoming links per node, for the backwards search from each destination.
  std::vector<std::vector<uint32_t>> in_links(num_nodes_);
  for (uint32_t l = 0; l < links_.size(); ++l) {
    in_links[links_[l].dst].push_back(l);
  }
  // One BFS per destination on a small contiguous distance array (it stays
  // in cache), then scattered into the node-major table.
  std::vector<uint16_t> dist(num_nodes_);
  std::vector<uint32_t> frontier;
  for (uint32_t dst = 0; dst < num_chips_; ++dst) {
    dist.assign(num_nodes_, kUnreached);
    dist[dst] = 0;
    frontier.assign(1, dst);
    for (size_t head = 0; head < frontier.size(); ++head) {
      const uint32_t v = frontier[head];
      for (uint32_t l : in_links[v]) {
        const uint32_t u = links_[l].src;
        if (dist[u] == kUnreached) {
          dist[u] = static_cast<uint16_t>(dist[v] + 1);
          frontier.push_back(u);
        }
      }
    }
    for (uint32_t u = 0; u < num_nodes_; ++u) {
      if (u < num_chips_ && dist[u] == kUnreached) {
        return absl::InvalidArgumentError(
            absl::StrCat("topology ", TopologyName(kind_), ": ", NodeName(u),
                         " cannot reach chip ", dst));
      }
      hops_[Index(u, dst)] = dist[u];
    }
  }
  return absl::OkStatus();
}

// next_, alt_: from hops_, each node's links that lead one hop
// closer to each chip.
absl::Status Topology::ComputeCandidates() {
  const size_t entries = static_cast<size_t>(num_nodes_) * num_chips_;
  if (links_.size() >= kManyRoutes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "topology ", TopologyName(kind_), ": too many links to number"));
  }
  // Per node two passes over its out links (count, then fill), each
  // streaming two rows of hops_; a link is a candidate when its far end is
  // one hop closer. Within a list the links keep cabling order.
  next_.assign(entries, kNoLink);
  alt_.clear();
  std::vector<uint32_t> count(num_chips_);
  std::vector<uint32_t> cursor(num_chips_);
  for (uint32_t u = 0; u < num_nodes_; ++u) {
    const uint16_t* row_u = &hops_[Index(u, 0)];
    const auto candidate = [&](uint32_t l, const uint16_t* row_v,
                               uint32_t dst) {
      return row_v[dst] + 1 == row_u[dst] && RouteAllows(l, u, dst);
    };
    std::fill(count.begin(), count.end(), 0);
    for (uint32_t l : out_links_[u]) {
      const uint16_t* row_v = &hops_[Index(links_[l].dst, 0)];
      for (uint32_t dst = 0; dst < num_chips_; ++dst) {
        count[dst] += candidate(l, row_v, dst) ? 1 : 0;
      }
    }
    uint64_t at = alt_.size();
    for (uint32_t dst = 0; dst < num_chips_; ++dst) {
      if (count[dst] < 2) continue;
      if (at + 1 + count[dst] > kManyRoutes) {
        return absl::InvalidArgumentError(
            absl::StrCat("topology ", TopologyName(kind_),
                         ": too many equal-cost routes to store"));
      }
      next_[NextIndex(u, dst)] = kManyRoutes | static_cast<uint32_t>(at);
      cursor[dst] = static_cast<uint32_t>(at + 1);
      at += 1 + count[dst];
    }
    alt_.resize(at);
    for (uint32_t dst = 0; dst < num_chips_; ++dst) {
      if (count[dst] >= 2) {
        alt_[next_[NextIndex(u, dst)] & ~kManyRoutes] = count[dst];
      }
    }
    for (uint32_t l : out_links_[u]) {
      const uint16_t* row_v = &hops_[Index(links_[l].dst, 0)];
      for (uint32_t dst = 0; dst < num_chips_; ++dst) {
        if (!candidate(l, row_v, dst)) continue;
        if (count[dst] == 1) {
          next_[NextIndex(u, dst)] = l;
        } else {
          alt_[cursor[dst]++] = l;
        }
      }
    }
  }
  alt_.shrink_to_fit();
  return absl::OkStatus();
}

bool Topology::RouteAllows(uint32_t link, uint32_t node, uint32_t dst) const {
  if (kind_ != TopologyKind::kTorus2D) return true;
  const uint32_t nx = params_.torus_x;
  const bool y_move = links_[link].dst % nx == node % nx;
  return !y_move || node % nx == dst % nx;
}

namespace {
// A rank: the class of a link (which kind of hop it is) above its position
// within the class.
constexpr uint32_t Rank(uint32_t cls, uint32_t pos) { return cls << 24 | pos; }
}  // namespace

void Topology::RankLinks() {
  rank_.resize(links_.size());
  for (uint32_t l = 0; l < links_.size(); ++l) rank_[l] = RankOf(l);
}

uint32_t Topology::RankOf(uint32_t l) const {
  const uint32_t a = links_[l].src;
  const uint32_t b = links_[l].dst;
  const uint32_t n = num_chips_;
  const uint32_t cpb = params_.chips_per_board;
  // Around a ring: forward links by the position they leave, backward
  // links by the position they leave counted backwards; the one wrap-around
  // of each direction is the dateline.
  auto ring = [](uint32_t from, uint32_t to, uint32_t size, uint32_t cls) {
    return to == (from + 1) % size ? Rank(cls, from)
                                   : Rank(cls + 1, size - 1 - from);
  };
  switch (kind_) {
    case TopologyKind::kRing:
    case TopologyKind::kRingUni:
      return ring(a, b, n, 0);
    case TopologyKind::kTorus2D: {
      const uint32_t nx = params_.torus_x;
      if (a / nx == b / nx) return ring(a % nx, b % nx, nx, 0);  // x move
      return ring(a / nx, b / nx, params_.torus_y, 2);
    }
    case TopologyKind::kBoardRing:
      if (a / cpb == b / cpb) return Rank(0, l);  // inside a board
      return ring(a / cpb, b / cpb, n / cpb, 1);
    case TopologyKind::kSwitch:
    case TopologyKind::kBoardFatTree: {
      // Up before down: chip -> leaf, leaf -> spine, spine -> leaf, leaf ->
      // chip; board-internal links below them all.
      const uint32_t boards = cpb == 0 ? 1 : n / cpb;
      auto level = [&](uint32_t node) {
        if (node < n) return 0u;
        return kind_ == TopologyKind::kSwitch || node < n + boards ? 1u : 2u;
      };
      const uint32_t la = level(a), lb = level(b);
      if (la == 0 && lb == 0) return Rank(0, l);
      return lb > la ? Rank(la + 1, l) : Rank(5 - lb, l);
    }
    case TopologyKind::kBoardDragonfly: {
      const uint32_t group = params_.dragonfly_group_boards * cpb;
      const uint32_t cls =
          a / cpb == b / cpb ? 0 : (a / group == b / group ? 1 : 2);
      return Rank(cls, l);
    }
    case TopologyKind::kFullMesh:
      break;
  }
  return Rank(0, l);
}

uint32_t Topology::ComputeDatelineClasses() const {
  // A route of at most one link descends nowhere (a full mesh, one chip).
  if (hops_.empty() || *std::max_element(hops_.begin(), hops_.end()) <= 1) {
    return 1;
  }
  // most[l]: the most descents a packet that has just crossed link l can
  // still meet on its way to `dst`. Links are visited nearest-first, so
  // every next hop's value is known (shortest paths only go closer).
  std::vector<uint16_t> most(links_.size());
  std::vector<std::vector<uint32_t>> by_dist;
  uint32_t worst = 0;
  for (uint32_t dst = 0; dst < num_chips_; ++dst) {
    // Emptied, not destroyed: their storage serves every destination.
    for (std::vector<uint32_t>& links : by_dist) links.clear();
    for (uint32_t u = 0; u < num_nodes_; ++u) {
      if (u == dst) continue;
      const uint16_t h = hops_[Index(u, dst)];
      if (by_dist.size() <= h) by_dist.resize(h + 1);
      for (uint32_t l : NextLinks(u, dst)) by_dist[h].push_back(l);
    }
    for (const auto& links : by_dist) {
      for (uint32_t l : links) {
        uint16_t m = 0;
        const uint32_t v = links_[l].dst;
        if (v != dst) {
          for (uint32_t next : NextLinks(v, dst)) {
            const uint16_t d = rank_[next] <= rank_[l] ? 1 : 0;
            m = std::max<uint16_t>(m, static_cast<uint16_t>(most[next] + d));
          }
        }
        most[l] = m;
        if (links_[l].src < num_chips_) worst = std::max<uint32_t>(worst, m);
      }
    }
  }
  return worst + 1;
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

std::vector<uint32_t> Topology::Path(uint32_t src, uint32_t dst,
                                     uint32_t flow_hash) const {
  std::vector<uint32_t> path;
  PathInto(src, dst, flow_hash, &path);
  return path;
}

void Topology::PathInto(uint32_t src, uint32_t dst, uint32_t flow_hash,
                        std::vector<uint32_t>* path) const {
  path->clear();
  for (uint32_t node = src; node != dst;) {
    const uint32_t l = NextLink(node, dst, flow_hash);
    path->push_back(l);
    node = links_[l].dst;
  }
}

uint32_t Topology::FlowHash(uint32_t src_chip, uint32_t dst_chip, uint32_t qp) {
  // Two rounds of the per-hop mix: (src, dst) then qp.
  return Mix(Mix(src_chip, dst_chip), qp);
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
