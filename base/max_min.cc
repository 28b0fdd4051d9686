#include "base/max_min.h"

#include <algorithm>
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

// The filling state: per resource its capacity left by fixed flows, its
// unfixed flows, the level at which it is full (+inf without unfixed
// flows) and that level as last seen by TopResource.
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
  level_.resize(num_res);
  for (uint32_t r = 0; r < num_res; ++r) UpdateLevel(r);
  seen_.assign(level_.begin(), level_.end());
  active_.clear();
  for (uint32_t r = 0; r < num_res; ++r) {
    if (unfixed_[r] > 0) active_.push_back(r);
  }
  rate_.assign(num_flows, kInf);
  fixed_.assign(num_flows, 0);
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
    const double full = r == kNoResource ? kInf : level_[r];
    const double d = next < by_demand_.size() ? demand[by_demand_[next]] : kInf;
    if (full == kInf && d == kInf) break;
    if (d <= full) {
      Fix(by_demand_[next], d);
      continue;
    }
    for (uint32_t k = begin_[r]; k < begin_[r + 1]; ++k) {
      if (!fixed_[on_[k]]) Fix(on_[k], full);
    }
  }
  return rate_;
}

void MaxMinSolver::UpdateLevel(uint32_t r) {
  level_[r] = unfixed_[r] > 0 ? std::max(left_[r], 0.0) / unfixed_[r] : kInf;
}

// The resource that is full first: the lowest level, the lowest index among
// equal ones, as a lazy min-heap finds it; its order decides, through the
// rounding, the last bits of the rates, which are kept so. The heap held
// one entry per resource, its level as last seen: Fix only lowers `left_`
// by rates no higher than the current level and takes one unfixed flow, so
// a level never falls, and a seen level is low; the lowest seen one was
// brought up to date until it was current. If no level seen is above the
// current one, that finds the lowest current level, and brings up to date
// the levels seen below it; the scan does both. A level can fall by a
// rounding, though: then the heap's steps are taken one by one. Without
// heap_order, the lowest current level is the answer.
uint32_t MaxMinSolver::TopResource() {
  uint32_t top = kNoResource;
  double low = kInf;
  bool fell = false;
  size_t kept = 0;
  for (const uint32_t r : active_) {
    if (unfixed_[r] == 0) continue;  // full or passed: out for good
    active_[kept++] = r;
    fell |= seen_[r] > level_[r];
    if (level_[r] < low || (level_[r] == low && r < top)) {
      low = level_[r];
      top = r;
    }
  }
  active_.resize(kept);
  if (!heap_order) return top;
  if (fell) return HeapOrderTop();
  for (const uint32_t r : active_) {
    if (seen_[r] < low || (seen_[r] == low && r < top)) seen_[r] = level_[r];
  }
  return top;
}

uint32_t MaxMinSolver::HeapOrderTop() {
  while (true) {
    uint32_t top = kNoResource;
    double low = kInf;
    for (const uint32_t r : active_) {
      if (seen_[r] < low || (seen_[r] == low && r < top)) {
        low = seen_[r];
        top = r;
      }
    }
    if (top == kNoResource || level_[top] == low) return top;
    seen_[top] = level_[top];
  }
}

void MaxMinSolver::Fix(uint32_t i, double rate) {
  fixed_[i] = 1;
  rate_[i] = rate;
  for (uint32_t k = flow_begin[i]; k < flow_begin[i + 1]; ++k) {
    const uint32_t r = resources[k];
    left_[r] -= rate;
    --unfixed_[r];
    UpdateLevel(r);
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
