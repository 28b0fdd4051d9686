// The step view of a lowered schedule: what every analytic model of
// docs/models.md consumes instead of a per-algorithm formula. A step is one
// round of the schedule; its flows are the (source, destination) transfers
// issued in that round, each routed over the topology as the replay routes it.
#ifndef CCREPLAY_MODELS_STEPS_H_
#define CCREPLAY_MODELS_STEPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hw/topology.h"
#include "trace/program.h"

namespace ccreplay {

// Bytes from chip `src` to chip `dst` in one step that ride one path (no
// link when src == dst: a local copy, which only occupies the engines). A pair
// whose stripes hash onto different equal-cost paths (fat-tree) is split in
// one flow per distinct path; on single-path topologies a pair is one flow.
struct Flow {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint64_t bytes = 0;
  uint32_t stripes = 0;         // Transfers (one per CDMA engine) it carries
  std::vector<uint32_t> links;  // directed links, Topology::links() indices
  // The most bytes one CDMA engine (a stream's: qp_id >> 2) moves for its
  // (src, dst) pair in the step, over all the pair's sub-flows (an engine
  // whose Transfers of one pair took two paths serves both); 0: not
  // counted (all of the flow's bytes, as if on one engine).
  uint64_t busiest_engine_bytes = 0;
};

struct Step {
  std::vector<Flow> flows;  // sorted by (src, dst, first link): deterministic
  // Message-only sends that open the step before its data (rendezvous:
  // "my buffer is ready"), bytes 0, stripes 0, one per (src, dst); their
  // latency precedes the data on the critical path.
  std::vector<Flow> sync;
  bool reduce = false;  // any of its Transfers reduces (a RS-like phase)
};

struct StepView {
  uint32_t num_chips = 0;
  std::vector<Step> steps;  // only steps with data or sync between chips
};

// Splits every stream of `program` into steps: the k-th run of data-moving
// instructions that follows a MsgWait (or the stream's start) is step k,
// together with the RemoteMsgSends issued before that data (its sync), so
// a ring's step s on every chip lands in step s and a pairwise AllToAll's
// N-1 sends (issued without a wait between them) form one step. Local copies
// (dst == own chip) are flows without links; Receives are counted at their
// Send. Paths follow Topology::Path(src, dst, FlowHash(src,
// dst, qp)), the replay's own ECMP choice.
// REQUIRES: program decoded against a topology of program.num_chips chips.
// Returns InvalidArgument when the chip counts differ.
absl::StatusOr<StepView> BuildStepView(const Program& program,
                                       const Topology& topology);

// Per directed link, the number of communicating (src, dst) pairs of `step`
// whose flows cross it (F_i of LoGPC; the ECMP sub-flows of one pair count
// once), indexed like Topology::links().
std::vector<uint32_t> FlowsPerLink(const Step& step, size_t num_links);

}  // namespace ccreplay

#endif  // CCREPLAY_MODELS_STEPS_H_
