// Deadlock freedom (docs/hardware-model.md, "Virtual channels"): every
// algorithm on every shipped topology completes with finite buffers, and
// without channels the cycles of full buffers the theory predicts form.
// Its own binary: about a minute in Release, so the sanitizer pass skips it
// (label "slow"; scripts/test.sh).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/run.h"
#include "collectives/lower.h"
#include "gtest/gtest.h"
#include "hw/config_io.h"
#include "tests/path_check.h"

namespace ccreplay {
namespace {

// ------------------------------------------------------ deadlock freedom

struct Algo {
  v1::CollectiveOp op;
  const char* name;
};
constexpr Algo kAlgos[] = {
    {v1::ALLREDUCE, "ring"},       {v1::ALLREDUCE, "ring_2port"},
    {v1::ALLREDUCE, "rh"},         {v1::ALLREDUCE, "rd"},
    {v1::ALLREDUCE, "hd"},         {v1::ALLGATHER, "ring"},
    {v1::ALLGATHER, "ring_2port"}, {v1::ALLGATHER, "rh"},
    {v1::ALLGATHER, "rd"},         {v1::ALLGATHER, "hd"},
    {v1::REDUCESCATTER, "ring"},   {v1::REDUCESCATTER, "ring_2port"},
    {v1::REDUCESCATTER, "rh"},     {v1::REDUCESCATTER, "rd"},
    {v1::REDUCESCATTER, "hd"},     {v1::ALLTOALL, "pairwise"},
    {v1::ALLTOALL, "bruck"},       {v1::BROADCAST, "ring"},
    {v1::REDUCE, "ring"},
};

std::vector<std::string> ShippedConfigs() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(
           std::string(CCREPLAY_SOURCE_DIR) + "/traces")) {
    const std::string p = e.path().string();
    if (absl::EndsWith(p, ".hw.txtpb")) {
      paths.push_back(p);
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Replays `algo` on config `hw` over n chips; "" when it completes, else
// the error. Skips (returns "skip") a schedule the lowering refuses for
// this hardware.
std::string RunOne(const HwConfig& hw, const Algo& algo, uint32_t n,
                   uint64_t bytes) {
  CollectiveSpec spec;
  spec.op = algo.op;
  spec.n = n;
  spec.bytes = bytes;
  spec.algorithm = algo.name;
  spec.topology = hw.topology;
  // A schedule this hardware cannot hold (the recursive algorithms need 3
  // counters per engine per partner) is not a deadlock question.
  auto trace = LowerCollective(spec, hw);
  if (!trace.ok()) return "skip";
  ReplayOptions options;
  options.sum_critical_path = options.every_stream_path = true;
  auto run = ReplayTrace(*trace, hw, std::nullopt, options);
  if (!run.ok()) return std::string(run.status().message());
  // The breakdown summed as the replay ran, against the walk.
  return ccreplay_test::PathMismatch(run->program, run->result, hw,
                                     *run->topology);
}

// Every algorithm on every shipped topology completes, with receive
// buffers of only two packets per channel: far more prone to a cycle of
// full buffers than the shipped 1 MiB (a cycle needs every buffer on it
// full; two packets fill at any size), so sizes up to 1 MiB show what
// 64 MiB would. With channels switched off, the same sweep deadlocks.
TEST(DeadlockSweepTest, EveryAlgorithmOnEveryShippedTopologyCompletes) {
  const std::vector<std::string> configs = ShippedConfigs();
  ASSERT_GE(configs.size(), 7u);
  // Config file name -> the algorithms that deadlock with channels off.
  std::map<std::string, std::set<std::string>> deadlocked_without_channels;
  std::map<std::string, uint32_t> classes_of;  // the most any n needs
  int runs = 0;
  for (const std::string& path : configs) {
    const std::string name = std::filesystem::path(path).filename().string();
    auto hw = ReadHwConfigFile(path);
    ASSERT_TRUE(hw.ok()) << hw.status();
    hw->link_buffer_bytes =
        2 * (hw->packet_payload_bytes + hw->packet_header_bytes);
    ASSERT_EQ(hw->link_vcs, 0u) << path << ": the shipped default";
    for (uint32_t n : {8u, 64u}) {
      // Only the sizes the config's topology allows.
      if (hw->num_chips != 0 && hw->num_chips != n) continue;
      auto topo = Topology::Build(hw->topology, n, hw->topology_params);
      if (!topo.ok()) continue;
      classes_of[name] = std::max(classes_of[name], topo->DatelineClasses());
      for (const Algo& algo : kAlgos) {
        for (uint64_t bytes :
             {uint64_t{1024}, uint64_t{65536}, uint64_t{1} << 20}) {
          if (n == 64 && bytes > 65536) continue;  // CI time
          const std::string place =
              absl::StrCat(path, " ", algo.name, " op ", algo.op, " n ", n,
                           " bytes ", bytes);
          const std::string err = RunOne(*hw, algo, n, bytes);
          if (err == "skip") continue;
          ++runs;
          EXPECT_EQ(err, "") << place;
          if (bytes != 65536) continue;
          HwConfig off = *hw;
          off.link_vcs = 1;
          if (RunOne(off, algo, n, bytes).find("network deadlock") !=
              std::string::npos) {
            deadlocked_without_channels[name].insert(algo.name);
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 300);
  // Where the routes only climb (Topology::DatelineClasses == 1: switch,
  // fat-tree, full mesh) no cycle of buffers exists, so nothing deadlocks
  // even without channels. Where they descend the cycles exist and form:
  // on the ring, torus, board ring and dragonfly configs of TPS186 (the
  // alpha-beta config's two 1 MiB packets per buffer do not fill at these
  // sizes).
  for (const auto& [config, classes] : classes_of) {
    if (classes == 1) {
      EXPECT_EQ(deadlocked_without_channels.count(config), 0u) << config;
    }
  }
  for (const char* config :
       {"tps186.hw.txtpb", "torus-8x8.hw.txtpb", "tps186-board-ring.hw.txtpb",
        "tps186-board-dragonfly.hw.txtpb"}) {
    EXPECT_EQ(deadlocked_without_channels.count(config), 1u) << config;
  }
  for (const auto& [config, algos] : deadlocked_without_channels) {
    std::printf("without channels %s deadlocks: %s\n", config.c_str(),
                absl::StrJoin(algos, " ").c_str());
  }
}

}  // namespace
}  // namespace ccreplay
