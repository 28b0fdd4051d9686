#include "base/max_min.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>

namespace ccreplay {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The filling state: per resource its capacity left by fixed flows and its
// unfixed flows, and a heap of (level at which it is full, resource) whose
// stale entries are skipped.
class Filling {
 public:
  Filling(const std::vector<double>& capacity,
          const std::vector<FluidFlow>& flows)
      : flows_(flows),
        left_(capacity),
        unfixed_(capacity.size(), 0),
        begin_(capacity.size() + 1, 0),
        rate_(flows.size(), kInf),
        fixed_(flows.size(), false) {
    for (const FluidFlow& f : flows) {
      for (uint32_t r : f.resources) ++unfixed_[r];
    }
    // Flows per resource, flat (CSR).
    for (size_t r = 0; r < unfixed_.size(); ++r) {
      begin_[r + 1] = begin_[r] + unfixed_[r];
    }
    on_.resize(begin_.back());
    std::vector<uint32_t> fill(begin_.begin(), begin_.end() - 1);
    for (uint32_t i = 0; i < flows.size(); ++i) {
      for (uint32_t r : flows[i].resources) on_[fill[r]++] = i;
    }
    for (uint32_t r = 0; r < unfixed_.size(); ++r) Push(r);
  }

  std::vector<double> Run() {
    std::vector<uint32_t> by_demand;
    for (uint32_t i = 0; i < flows_.size(); ++i) {
      if (flows_[i].demand_bps > 0) by_demand.push_back(i);
    }
    std::stable_sort(by_demand.begin(), by_demand.end(),
                     [&](uint32_t a, uint32_t b) {
                       return flows_[a].demand_bps < flows_[b].demand_bps;
                     });
    size_t next = 0;
    while (true) {
      while (next < by_demand.size() && fixed_[by_demand[next]]) ++next;
      const uint32_t r = TopResource();
      const double full = r == kNoResource ? kInf : heap_.top().first;
      const double demand =
          next < by_demand.size() ? flows_[by_demand[next]].demand_bps : kInf;
      if (full == kInf && demand == kInf) break;
      if (demand <= full) {
        Fix(by_demand[next], demand);
        continue;
      }
      heap_.pop();
      for (uint32_t k = begin_[r]; k < begin_[r + 1]; ++k) {
        if (!fixed_[on_[k]]) Fix(on_[k], full);
      }
    }
    return std::move(rate_);
  }

 private:
  static constexpr uint32_t kNoResource = ~0u;
  using Entry = std::pair<double, uint32_t>;

  void Push(uint32_t r) {
    if (unfixed_[r] > 0) {
      heap_.push({std::max(left_[r], 0.0) / unfixed_[r], r});
    }
  }
  // The resource that is full first, skipping entries made stale by Fix.
  uint32_t TopResource() {
    while (!heap_.empty()) {
      const auto [level, r] = heap_.top();
      if (unfixed_[r] > 0 && level == std::max(left_[r], 0.0) / unfixed_[r]) {
        return r;
      }
      heap_.pop();
    }
    return kNoResource;
  }
  void Fix(uint32_t i, double rate) {
    fixed_[i] = true;
    rate_[i] = rate;
    for (uint32_t r : flows_[i].resources) {
      left_[r] -= rate;
      --unfixed_[r];
      Push(r);
    }
  }

  const std::vector<FluidFlow>& flows_;
  std::vector<double> left_;
  std::vector<uint32_t> unfixed_;
  std::vector<uint32_t> begin_;
  std::vector<uint32_t> on_;
  std::vector<double> rate_;
  std::vector<bool> fixed_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
};

}  // namespace

std::vector<double> MaxMinRates(const std::vector<double>& capacity_bps,
                                const std::vector<FluidFlow>& flows) {
  return Filling(capacity_bps, flows).Run();
}

}  // namespace ccreplay
