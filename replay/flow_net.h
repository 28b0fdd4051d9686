// The flows of the fluid engine (replay/fluid_engine.h) on the directed
// links, and their max-min fair rates (base/max_min.h), kept up to date
// locally: after flows start, end or change their demand, only the flows
// that share a link with a changed one are solved again, the rates of the
// others being held fixed (their use taken off the links' capacity); then
// the flows that may have lost their bottleneck (a full link on which no
// flow has more, or its own demand reached) are checked: those whose rate
// moved, and those on a link whose least bottleneck rate rose. A flow without
// one joins the solved set, and so do the flows outside it that have more on
// one of its full links, and the solve repeats. Which flows join changes the
// rounds, not the result: an allocation in which every flow has a
// bottleneck is the max-min fair one, so the result is the global
// allocation, found without touching the flows far from the change.
#ifndef CCREPLAY_REPLAY_FLOW_NET_H_
#define CCREPLAY_REPLAY_FLOW_NET_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/max_min.h"

namespace ccreplay {

class FlowNet {
 public:
  // `num_links` links of `capacity` (bytes/s) each.
  FlowNet(size_t num_links, double capacity);

  // A flow over `links` (listed once each, at least one) capped at `demand`
  // bytes/s (0 = no cap). Its rate is 0 until Reallocate. Ids of removed
  // flows are reused.
  uint32_t Add(const std::vector<uint32_t>& links, double demand);
  void Remove(uint32_t id);
  // A new cap; the flows around are solved again only if the old or the new
  // cap binds (or may: a flow not solved yet).
  void SetDemand(uint32_t id, double demand);

  // Max-min rates after the changes since the last call; returns the flows
  // whose rate changed (new ones included) with their old rate, in a
  // deterministic order.
  struct Change {
    uint32_t id = 0;
    double old_rate = 0;
  };
  const std::vector<Change>& Reallocate();

  double rate(uint32_t id) const { return rate_[id]; }
  double demand(uint32_t id) const { return flows_[id].demand; }
  const std::vector<uint32_t>& links(uint32_t id) const {
    return flows_[id].links;
  }
  // Size of the id space (ids are < this).
  size_t id_bound() const { return flows_.size(); }
  uint64_t solves() const { return solves_; }
  // Flows solved, summed over the solves.
  uint64_t solved_flows() const { return solved_flows_; }

 private:
  struct Flow {
    std::vector<uint32_t> links;
    double demand = 0;
    bool live = false;
    bool unreported = false;  // started at its demand, not yet reported
  };
  void Touch(const std::vector<uint32_t>& links);
  // Sum of the rates on link `l`.
  double Load(uint32_t l) const;
  // Flows on the touched links: the first set to solve.
  void Seed();
  // Solves set_ with the other flows' rates held; new rates in trial_.
  void Solve();
  // Adds to set_ the flows around set_ that lack a bottleneck; false if none.
  bool Expand();
  bool HasBottleneck(uint32_t id);
  // Link `l`'s bottleneck_ from trial_.
  void UpdateBottleneck(uint32_t l);
  void Include(uint32_t id);
  // To be checked by the next Expand.
  void Queue(uint32_t id);

  double capacity_;
  std::vector<Flow> flows_;
  // Per flow, apart from Flow: the loops over a link's flows read only these.
  std::vector<double> rate_;   // the allocation (as last reported)
  std::vector<double> trial_;  // rate_, or its new rate while in set_
  std::vector<uint32_t> free_;
  std::vector<std::vector<uint32_t>> on_link_;  // live flow ids per link
  std::vector<uint32_t> touched_;               // links changed since solve
  std::vector<uint32_t> link_touched_;          // per link: stamp
  uint32_t touch_stamp_ = 1;
  // Scratch of one Reallocate.
  uint32_t stamp_ = 0;
  std::vector<uint32_t> set_;
  std::vector<uint32_t> in_set_;  // per flow: stamp_ when in set_
  // Flows to check: those that joined the set or whose rate moved since the
  // last check, and the flows of the links whose bottleneck_ rose.
  std::vector<uint32_t> queue_;
  std::vector<uint32_t> checking_;
  std::vector<uint32_t> queued_;  // per flow: queue_stamp_ when in queue_
  uint32_t queue_stamp_ = 1;
  // Per link: the least rate for which it is a flow's bottleneck (the most
  // of its flows' rates, less the slack, if it is full; else +inf), kept
  // between Reallocates; known unless its flows or their rates changed
  // since (other than by a Solve, which updates it).
  std::vector<double> bottleneck_;
  std::vector<uint8_t> bottleneck_known_;
  std::vector<uint32_t> link_moved_;  // per link: local_stamp_ of a move
  std::vector<uint32_t> moved_;       // links whose rates the Solve moved
  // The problem of the last Solve: set_[0 .. posed_), and per link its
  // index there (link_local_, if link_local_stamp_ is stamp_) and the sum
  // of the rates of its flows outside set_ (summed when it is first posed,
  // less the rate of each flow that joins the set after).
  size_t posed_ = 0;
  std::vector<uint32_t> link_local_;
  std::vector<uint32_t> link_local_stamp_;
  std::vector<double> held_;
  uint32_t local_stamp_ = 0;  // counts the Solves
  std::vector<Change> changed_;
  std::vector<uint32_t> started_;   // added at their demand, not reported
  std::vector<uint32_t> reported_;  // per flow: report_stamp_ when reported
  uint32_t report_stamp_ = 0;
  MaxMinSolver solver_;
  uint64_t solves_ = 0;
  uint64_t solved_flows_ = 0;
};

}  // namespace ccreplay

#endif  // CCREPLAY_REPLAY_FLOW_NET_H_
