#include "models/ladder.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectives/math.h"
#include "models/fluid.h"
#include "models/loggp.h"
#include "models/md1.h"
#include "models/net_params.h"
#include "models/netcalc.h"

namespace ccreplay {

std::vector<std::string> LadderModelNames() {
  return {"alpha-beta",    "alpha(n)-beta(n)", "LogGP", "PLogP", "LoGPC",
          "fluid max-min", "network calculus", "M/D/1"};
}

std::vector<ModelPrediction> PredictLadder(const LadderInput& in) {
  const StepView& view = *in.view;
  const Topology& topo = *in.topology;
  const NetParams net = NetParamsFromHw(*in.hw);
  std::vector<ModelPrediction> out;
  auto math = MathTimeUs(in.op, in.group, in.bytes, topo.kind(),
                         MathParamsFromHw(*in.hw));
  out.push_back({"alpha-beta", math.ok() ? *math : 0.0, math.ok(), false,
                 math.ok() ? "" : std::string(math.status().message())});
  if (in.calibration != nullptr) {
    out.push_back({"alpha(n)-beta(n)",
                   AlphaBetaNScheduleUs(view, *in.calibration), true, false,
                   ""});
  } else {
    out.push_back({"alpha(n)-beta(n)", 0.0, false, false, "not calibrated"});
  }
  out.push_back(
      {"LogGP", LogGpScheduleUs(view, topo, net, false), true, false, ""});
  if (in.calibration != nullptr) {
    out.push_back(
        {"PLogP", PlogpScheduleUs(view, *in.calibration), true, false, ""});
  } else {
    out.push_back({"PLogP", 0.0, false, false, "not calibrated"});
  }
  out.push_back(
      {"LoGPC", LogGpScheduleUs(view, topo, net, true), true, false,
       absl::StrFormat("worst F/C %.0f", LoGpcWorstFactor(view, topo))});
  out.push_back(
      {"fluid max-min", FluidScheduleUs(view, topo, net), true, false, ""});
  out.push_back({"network calculus", NcScheduleBoundUs(view, topo, net), true,
                 true, "worst-case bound"});
  const Md1Result md1 = Md1Schedule(view, topo, net);
  std::string note = absl::StrFormat("max rho %.2f", md1.max_rho);
  if (md1.ports_over_limit > 0) {
    absl::StrAppend(&note, "; ", md1.ports_over_limit,
                    " switch port-steps at rho >= 0.8, outside M/D/1's "
                    "validity");
  }
  out.push_back({"M/D/1", (math.ok() ? *math : 0.0) + md1.queueing_us,
                 math.ok() && md1.valid, false, note});
  return out;
}

}  // namespace ccreplay
