#include "models/steps.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ccreplay {
namespace {

// Flows of one step keyed by (src, dst, path) so that stripes sharing a path
// merge; std::map keeps the order deterministic.
using FlowKey = std::tuple<uint32_t, uint32_t, std::vector<uint32_t>>;
struct StepAcc {
  std::map<FlowKey, Flow> flows;
  std::map<FlowKey, Flow> sync;
  bool reduce = false;
  // Per (src, dst) pair, its bytes per engine (all its sub-flows').
  std::map<std::pair<uint32_t, uint32_t>, std::map<uint32_t, uint64_t>>
      engine_bytes;
};

void AddSend(const Topology& topo, uint32_t chip, const Instr& in,
             std::map<FlowKey, Flow>& flows) {
  std::vector<uint32_t> path =
      topo.Path(chip, in.peer, Topology::FlowHash(chip, in.peer, in.qp_id));
  FlowKey key{chip, in.peer, in.bytes > 0 ? path : std::vector<uint32_t>{}};
  auto [it, inserted] = flows.try_emplace(key);
  Flow& f = it->second;
  if (inserted) {
    f.src = chip;
    f.dst = in.peer;
    f.links = std::move(path);
  }
  f.bytes += in.bytes;
  f.stripes += in.bytes > 0 ? 1 : 0;
}

}  // namespace

absl::StatusOr<StepView> BuildStepView(const Program& program,
                                       const Topology& topology) {
  if (program.num_chips != topology.num_chips()) {
    return absl::InvalidArgumentError(
        absl::StrCat("step view: the program has ", program.num_chips,
                     " chips, the topology ", topology.num_chips()));
  }
  std::vector<StepAcc> acc;
  for (uint32_t chip = 0; chip < program.num_chips; ++chip) {
    for (const StreamProgram& stream : program.chips[chip].streams) {
      size_t step = 0;
      bool moved = false;  // the current step has data already
      for (const Instr& in : stream.instrs) {
        if (in.kind == OpKind::kMsgWait && moved) {
          ++step;
          moved = false;
        }
        // Local copies cross no link but occupy the chip's engines.
        const bool remote_data =
            (in.kind == OpKind::kTransfer || in.kind == OpKind::kSend) &&
            in.bytes > 0;
        // A message sent before any data of the step is its rendezvous; one
        // after data is that data's arrival notice (write + msg), whose
        // latency the data flow already carries.
        const bool sync =
            in.kind == OpKind::kRemoteMsgSend && !moved && in.peer != chip;
        if (!remote_data && !sync) continue;
        if (acc.size() <= step) acc.resize(step + 1);
        if (sync) {
          AddSend(topology, chip, in, acc[step].sync);
          continue;
        }
        AddSend(topology, chip, in, acc[step].flows);
        acc[step].engine_bytes[{chip, in.peer}][in.qp_id >> 2] += in.bytes;
        acc[step].reduce = acc[step].reduce || in.reduce_sum;
        moved = true;
      }
    }
  }
  StepView view;
  view.num_chips = program.num_chips;
  for (StepAcc& a : acc) {
    if (a.flows.empty() && a.sync.empty()) continue;
    Step s;
    s.reduce = a.reduce;
    for (auto& [key, flow] : a.flows) {
      for (const auto& [engine, bytes] : a.engine_bytes[{flow.src, flow.dst}]) {
        flow.busiest_engine_bytes = std::max(flow.busiest_engine_bytes, bytes);
      }
      s.flows.push_back(std::move(flow));
    }
    for (auto& [key, flow] : a.sync) s.sync.push_back(std::move(flow));
    view.steps.push_back(std::move(s));
  }
  return view;
}

std::vector<uint32_t> FlowsPerLink(const Step& step, size_t num_links) {
  std::vector<uint32_t> f(num_links, 0);
  // Flows are sorted by (src, dst): the sub-flows of one pair are adjacent,
  // so remembering the last pair counted on a link counts each pair once.
  std::vector<uint64_t> last(num_links, ~uint64_t{0});
  for (const Flow& flow : step.flows) {
    const uint64_t pair = uint64_t{flow.src} << 32 | flow.dst;
    for (uint32_t l : flow.links) {
      if (last[l] == pair) continue;
      last[l] = pair;
      ++f[l];
    }
  }
  return f;
}

}  // namespace ccreplay
