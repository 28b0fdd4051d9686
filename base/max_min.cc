#include "base/max_min.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace ccreplay {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint32_t kNoResource = ~0u;

}  // namespace

void MaxMinSolver::Clear() {
  capacity.clear();
  demand.clear();
  flow_begin.assign(1, 0);
  resources.clear();
}

void MaxMinSolver::AddFlow(double demand_bps) {
  if (flow_begin.empty()) flow_begin.push_back(0);
  // Close the previous flow's resource list, open this one's.
  flow_begin.back() = static_cast<uint32_t>(resources.size());
  flow_begin.push_back(0);
  demand.push_back(demand_bps);
}

// The filling state: per resource its capacity left by fixed flows and its
// unfixed flows, and a heap of (level at which it is full, resource) whose
// stale entries are skipped.
void MaxMinSolver::Build() {
  const size_t num_flows = demand.size();
  const size_t num_res = capacity.size();
  flow_begin.back() = static_cast<uint32_t>(resources.size());
  left_.assign(capacity.begin(), capacity.end());
  unfixed_.assign(num_res, 0);
  for (uint32_t r : resources) ++unfixed_[r];
  // Flows per resource, flat (CSR).
  begin_.assign(num_res + 1, 0);
  for (size_t r = 0; r < num_res; ++r) begin_[r + 1] = begin_[r] + unfixed_[r];
  on_.resize(begin_.back());
  fill_.assign(begin_.begin(), begin_.end() - 1);
  for (uint32_t i = 0; i < num_flows; ++i) {
    for (uint32_t k = flow_begin[i]; k < flow_begin[i + 1]; ++k) {
      on_[fill_[resources[k]]++] = i;
    }
  }
  rate_.assign(num_flows, kInf);
  fixed_.assign(num_flows, 0);
  heap_.clear();
  for (uint32_t r = 0; r < num_res; ++r) Push(r);
}

const std::vector<double>& MaxMinSolver::Solve() {
  Build();
  by_demand_.clear();
  for (uint32_t i = 0; i < demand.size(); ++i) {
    if (demand[i] > 0) by_demand_.push_back(i);
  }
  std::stable_sort(
      by_demand_.begin(), by_demand_.end(),
      [&](uint32_t a, uint32_t b) { return demand[a] < demand[b]; });
  size_t next = 0;
  while (true) {
    while (next < by_demand_.size() && fixed_[by_demand_[next]]) ++next;
    const uint32_t r = TopResource();
    const double full = r == kNoResource ? kInf : heap_.front().first;
    const double d = next < by_demand_.size() ? demand[by_demand_[next]] : kInf;
    if (full == kInf && d == kInf) break;
    if (d <= full) {
      Fix(by_demand_[next], d);
      continue;
    }
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
    heap_.pop_back();
    for (uint32_t k = begin_[r]; k < begin_[r + 1]; ++k) {
      if (!fixed_[on_[k]]) Fix(on_[k], full);
    }
  }
  return rate_;
}

void MaxMinSolver::Push(uint32_t r) {
  if (unfixed_[r] > 0) {
    heap_.emplace_back(std::max(left_[r], 0.0) / unfixed_[r], r);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
  }
}

// The resource that is full first. Every resource with unfixed flows has
// one entry, whose level may be stale: Fix only lowers `left_` by rates no
// higher than the current level and takes one unfixed flow, so a level
// never falls, and a stale entry is low. A top entry that is stale is
// raised to its level and sifted down; a current one is the lowest.
uint32_t MaxMinSolver::TopResource() {
  while (!heap_.empty()) {
    const uint32_t r = heap_.front().second;
    if (unfixed_[r] > 0) {
      const double level = std::max(left_[r], 0.0) / unfixed_[r];
      if (heap_.front().first == level) return r;
    }
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
    if (unfixed_[r] > 0) {
      heap_.back().first = std::max(left_[r], 0.0) / unfixed_[r];
      std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
    } else {
      heap_.pop_back();
    }
  }
  return kNoResource;
}

void MaxMinSolver::Fix(uint32_t i, double rate) {
  fixed_[i] = 1;
  rate_[i] = rate;
  for (uint32_t k = flow_begin[i]; k < flow_begin[i + 1]; ++k) {
    const uint32_t r = resources[k];
    left_[r] -= rate;
    --unfixed_[r];  // its heap entry is now stale (TopResource)
  }
}

std::vector<double> MaxMinRates(const std::vector<double>& capacity_bps,
                                const std::vector<FluidFlow>& flows) {
  MaxMinSolver s;
  s.Clear();
  s.capacity = capacity_bps;
  for (const FluidFlow& f : flows) {
    s.AddFlow(f.demand_bps);
    s.resources.insert(s.resources.end(), f.resources.begin(),
                       f.resources.end());
  }
  return s.Solve();
}

}  // namespace ccreplay
