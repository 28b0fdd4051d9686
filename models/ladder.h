// Every model of the ladder (docs/models.md) on one lowered collective: the
// predictions `ccreplay models` prints beside the replay. Units: us.
#ifndef CCREPLAY_MODELS_LADDER_H_
#define CCREPLAY_MODELS_LADDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hw/config.h"
#include "hw/topology.h"
#include "models/plogp.h"
#include "models/steps.h"
#include "proto/trace.pb.h"

namespace ccreplay {

struct ModelPrediction {
  std::string model;  // "alpha-beta", "alpha(n)-beta(n)", "LogGP", ...
  double us = 0;
  bool valid = true;   // false: outside the model's validity (note says why)
  bool bound = false;  // a worst-case bound, not an estimate
  std::string note;
};

// The ladder's models in the order they are printed.
std::vector<std::string> LadderModelNames();

struct LadderInput {
  v1::CollectiveOp op = v1::ALLREDUCE;
  uint32_t group = 2;  // chips per group (Math's N)
  uint64_t bytes = 0;  // M
  const StepView* view = nullptr;
  const Topology* topology = nullptr;
  const HwConfig* hw = nullptr;
  // Calibration for PLogP and alpha(n)-beta(n); null = those two are not
  // valid ("not calibrated").
  const PlogpTable* calibration = nullptr;
};

// One prediction per LadderModelNames() entry, in that order.
// REQUIRES: view, topology and hw non-null.
std::vector<ModelPrediction> PredictLadder(const LadderInput& in);

}  // namespace ccreplay

#endif  // CCREPLAY_MODELS_LADDER_H_
