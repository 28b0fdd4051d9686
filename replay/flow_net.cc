#include "replay/flow_net.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "base/max_min.h"

namespace ccreplay {
namespace {

// Relative slack for "full" and "at its demand": rates are sums of doubles.
constexpr double kSlack = 1e-9;

}  // namespace

FlowNet::FlowNet(size_t num_links, double capacity)
    : capacity_(capacity),
      on_link_(num_links),
      link_touched_(num_links, 0),
      bottleneck_(num_links, 0),
      bottleneck_known_(num_links, 0),
      link_moved_(num_links, 0),
      link_local_(num_links, 0),
      link_local_stamp_(num_links, 0),
      held_(num_links, 0) {
  // What counts here is the allocation (rates within kSlack), not the bits
  // of one order of fixes among levels equal within rounding.
  solver_.heap_order = false;
}

uint32_t FlowNet::Add(const std::vector<uint32_t>& links, double demand) {
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    rate_.push_back(0);
    trial_.push_back(0);
    in_set_.push_back(0);
    queued_.push_back(0);
    reported_.push_back(0);
  }
  Flow& f = flows_[id];
  f.links.assign(links.begin(), links.end());  // a reused id's storage
  f.demand = demand;
  rate_[id] = 0;
  trial_[id] = 0;
  f.live = true;
  for (uint32_t l : f.links) {
    on_link_[l].push_back(id);
    bottleneck_known_[l] = 0;
  }
  // Room for its whole demand on every link: it runs at its demand and no
  // one else moves (every other flow keeps its bottleneck).
  const bool room =
      demand > 0 &&
      std::all_of(f.links.begin(), f.links.end(), [&](uint32_t l) {
        return Load(l) + demand <= capacity_ * (1 - kSlack);
      });
  if (room) {
    rate_[id] = demand;
    trial_[id] = demand;
    f.unreported = true;
    started_.push_back(id);
  } else {
    Touch(f.links);
  }
  return id;
}

void FlowNet::Remove(uint32_t id) {
  Flow& f = flows_[id];
  // Off links none of which is full: no flow there had it as bottleneck,
  // so no rate moves.
  const bool slack = std::all_of(
      f.links.begin(), f.links.end(),
      [&](uint32_t l) { return Load(l) < capacity_ * (1 - kSlack); });
  for (uint32_t l : f.links) {
    std::vector<uint32_t>& on = on_link_[l];
    on.erase(std::find(on.begin(), on.end(), id));  // keeps the order
    bottleneck_known_[l] = 0;
  }
  if (!slack || rate_[id] == 0) Touch(f.links);
  f.live = false;
  f.unreported = false;
  rate_[id] = 0;
  trial_[id] = 0;
  free_.push_back(id);
}

void FlowNet::SetDemand(uint32_t id, double demand) {
  Flow& f = flows_[id];
  // A cap the flow is below, replaced by one it is below too (or none),
  // changes no one's rate: the allocation stands.
  const double rate = rate_[id];
  const auto below = [rate](double cap) {
    return cap == 0 || rate < cap * (1 - kSlack);
  };
  const bool same = f.live && rate > 0 && below(f.demand) && below(demand);
  f.demand = demand;
  if (!same) Touch(f.links);
}

double FlowNet::Load(uint32_t l) const {
  double load = 0;
  for (uint32_t g : on_link_[l]) load += rate_[g];
  return load;
}

void FlowNet::Touch(const std::vector<uint32_t>& links) {
  for (uint32_t l : links) {
    if (link_touched_[l] == touch_stamp_) continue;
    link_touched_[l] = touch_stamp_;
    touched_.push_back(l);
  }
}

void FlowNet::Include(uint32_t id) {
  in_set_[id] = stamp_;
  set_.push_back(id);
  for (uint32_t l : flows_[id].links) {
    if (link_local_stamp_[l] == stamp_) held_[l] -= rate_[id];
  }
  Queue(id);
}

void FlowNet::Queue(uint32_t id) {
  if (queued_[id] == queue_stamp_) return;
  queued_[id] = queue_stamp_;
  queue_.push_back(id);
}

void FlowNet::Seed() {
  ++stamp_;
  set_.clear();
  posed_ = 0;
  for (uint32_t l : touched_) {
    for (uint32_t id : on_link_[l]) {
      if (in_set_[id] != stamp_) Include(id);
    }
  }
  touched_.clear();
  ++touch_stamp_;
}

void FlowNet::Solve() {
  ++solves_;
  solved_flows_ += set_.size();
  ++local_stamp_;
  // The problem of the last Solve stands but for the flows that joined the
  // set since (appended, as in set_) and the capacity left on their links.
  if (posed_ == 0) solver_.Clear();
  for (size_t i = posed_; i < set_.size(); ++i) {
    const Flow& f = flows_[set_[i]];
    solver_.AddFlow(f.demand);
    for (uint32_t l : f.links) {
      if (link_local_stamp_[l] != stamp_) {
        link_local_stamp_[l] = stamp_;
        link_local_[l] = static_cast<uint32_t>(solver_.capacity.size());
        solver_.capacity.push_back(0);
        double held = 0;
        for (uint32_t g : on_link_[l]) {
          if (in_set_[g] != stamp_) held += rate_[g];
        }
        held_[l] = held;
      }
      solver_.resources.push_back(link_local_[l]);
    }
  }
  for (size_t i = posed_; i < set_.size(); ++i) {
    for (uint32_t l : flows_[set_[i]].links) {
      solver_.capacity[link_local_[l]] = std::max(capacity_ - held_[l], 0.0);
    }
  }
  posed_ = set_.size();
  const std::vector<double>& rate = solver_.Solve();
  for (size_t i = 0; i < set_.size(); ++i) {
    const uint32_t id = set_[i];
    if (trial_[id] == rate[i]) continue;
    trial_[id] = rate[i];
    Queue(id);
    for (uint32_t l : flows_[id].links) {
      if (link_moved_[l] == local_stamp_) continue;
      link_moved_[l] = local_stamp_;
      moved_.push_back(l);
    }
  }
  // A flow keeps its bottleneck while its rate stays and no bottleneck rate
  // of its links rises (one that falls only adds bottlenecks): on a link
  // whose rate rose (or was not known), every flow is checked again.
  for (uint32_t l : moved_) {
    const bool known = bottleneck_known_[l];
    const double was = bottleneck_[l];
    UpdateBottleneck(l);
    if (known && bottleneck_[l] <= was) continue;
    for (uint32_t g : on_link_[l]) Queue(g);
  }
  moved_.clear();
}

void FlowNet::UpdateBottleneck(uint32_t l) {
  double load = 0;
  double most = 0;
  for (uint32_t g : on_link_[l]) {
    const double r = trial_[g];
    load += r;
    most = std::max(most, r);
  }
  bottleneck_[l] = load >= capacity_ * (1 - kSlack)
                       ? most * (1 - kSlack)
                       : std::numeric_limits<double>::infinity();
  bottleneck_known_[l] = 1;
}

bool FlowNet::HasBottleneck(uint32_t id) {
  const Flow& f = flows_[id];
  const double r = trial_[id];
  if (f.demand > 0 && r >= f.demand * (1 - kSlack)) return true;
  for (uint32_t l : f.links) {
    if (!bottleneck_known_[l]) UpdateBottleneck(l);
    if (r >= bottleneck_[l]) return true;
  }
  return false;
}

bool FlowNet::Expand() {
  ++queue_stamp_;  // flows that join now are checked after the next solve
  checking_.swap(queue_);
  const size_t solved = set_.size();
  for (uint32_t g : checking_) {
    if (HasBottleneck(g)) continue;
    if (in_set_[g] != stamp_) Include(g);
    // The flows outside the set with more than `g` on one of its full links
    // (each has its bottleneck_ from the check) join too: if `g` was
    // solved, they are what holds it below its share; if not, they will be
    // once it has grown, and joining them now saves that round. The others
    // on its links keep their bottlenecks as far as `g` is concerned;
    // joining them too made the solves larger for no fewer rounds.
    const double r = trial_[g];
    for (uint32_t m : flows_[g].links) {
      if (bottleneck_[m] == std::numeric_limits<double>::infinity()) {
        continue;
      }
      for (uint32_t h : on_link_[m]) {
        if (in_set_[h] != stamp_ && r < trial_[h] * (1 - kSlack)) Include(h);
      }
    }
  }
  checking_.clear();
  return set_.size() > solved;
}

const std::vector<FlowNet::Change>& FlowNet::Reallocate() {
  changed_.clear();
  // Flows started at their demand without a solve (Add): reported first.
  ++report_stamp_;
  for (uint32_t id : started_) {
    if (!flows_[id].unreported) continue;
    flows_[id].unreported = false;
    reported_[id] = report_stamp_;
    changed_.push_back({id, 0});
  }
  started_.clear();
  if (touched_.empty()) return changed_;
  Seed();
  if (set_.empty()) return changed_;
  do {
    Solve();
  } while (Expand());
  for (uint32_t id : set_) {
    // Within rounding of the old rate: unchanged (no new end to schedule).
    if (std::abs(trial_[id] - rate_[id]) <= kSlack * rate_[id]) {
      if (trial_[id] != rate_[id]) {
        trial_[id] = rate_[id];
        for (uint32_t l : flows_[id].links) bottleneck_known_[l] = 0;
      }
      continue;
    }
    // Not if started above and solved again: reported already.
    if (reported_[id] != report_stamp_) changed_.push_back({id, rate_[id]});
    rate_[id] = trial_[id];
  }
  return changed_;
}

}  // namespace ccreplay
