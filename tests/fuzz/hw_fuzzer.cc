// libFuzzer target over the hardware-config path: the reader (binary and
// text, unknown fields refused), HwConfigFromProto's validation, the
// round trip through HwConfigToProto, the topology the config names (built
// only after its size checks pass) and the replay budget of a small trace
// on it. Any crash, hang, leak or sanitizer report is a bug; every status is
// fine. Run by scripts/fuzz.sh hw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "hw/budget.h"
#include "hw/config.h"
#include "hw/config_io.h"
#include "hw/topology.h"
#include "tests/one_transfer.h"
#include "trace/program.h"

namespace {

// Bounds that keep one input fast: topologies of a few chips only.
constexpr uint32_t kMaxFuzzChips = 64;
constexpr uint64_t kMaxFuzzRouteWork = uint64_t{1} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccreplay;  // NOLINT: a fuzz entry point
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<HwConfig> hw = ParseHwConfig(bytes, "fuzz");
  if (!hw.ok()) return 0;
  // The round trip must give a config that validates again, equal.
  absl::StatusOr<HwConfig> again = HwConfigFromProto(HwConfigToProto(*hw));
  if (!again.ok() || HwConfigToProto(*again).SerializeAsString() !=
                         HwConfigToProto(*hw).SerializeAsString()) {
    __builtin_trap();
  }
  const uint32_t n = hw->num_chips == 0 ? 8 : hw->num_chips;
  if (n < 2 || n > kMaxFuzzChips) return 0;
  // Routing work as Build bounds it, but 2^10 times smaller: legitimate
  // topologies near Build's bound take 0.5 s in Release, over 10 s with
  // the sanitizers.
  absl::StatusOr<TopologyParams> params =
      ResolveTopologyParams(hw->topology, n, hw->topology_params);
  if (!params.ok() ||
      Topology::CountLinks(hw->topology, n, *params) * n > kMaxFuzzRouteWork) {
    return 0;
  }
  absl::StatusOr<Topology> topo =
      Topology::Build(hw->topology, n, hw->topology_params);
  if (!topo.ok()) return 0;
  // The counts Build checks before cabling are the ones it cabled.
  if (Topology::CountLinks(topo->kind(), n, topo->params()) !=
      topo->links().size()) {
    __builtin_trap();
  }
  for (uint64_t b : {uint64_t{1}, uint64_t{1} << 20, uint64_t{1} << 62}) {
    (void)CheckReplayBudget(ccreplay_test::OneTransfer(b, n), *hw, *topo,
                            ResourceBudget{});
    (void)EstimateReplay(ccreplay_test::OneTransfer(b, n), *hw, *topo);
  }
  return 0;
}
