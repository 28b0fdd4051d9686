#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectives/collective.h"
#include "collectives/lower.h"
#include "replay/cli/commands.h"
#include "replay/cli/run.h"
#include "replay/table.h"
#include "replay/timeline.h"
#include "replay/trace_io.h"

namespace ccreplay {
namespace {

struct LowerArgs {
  std::string op = "allreduce";
  uint32_t n = 2;
  std::string bytes = "1M";
  std::string algo;
  std::string topology = "ring";
  uint32_t cdma = 0;
  std::string output;
};

absl::StatusOr<CollectiveSpec> SpecFrom(const LowerArgs& a) {
  CollectiveSpec spec;
  auto op = ParseCollectiveOp(a.op);
  if (!op.ok()) return op.status();
  spec.op = *op;
  spec.n = a.n;
  auto bytes = ParseByteSize(a.bytes);
  if (!bytes.ok()) return bytes.status();
  spec.bytes = *bytes;
  spec.algorithm = a.algo.empty() ? BaselineAlgorithm(*op) : a.algo;
  auto topo = ParseTopologyName(a.topology);
  if (!topo.ok()) return topo.status();
  spec.topology = *topo;
  spec.cdma_engines = a.cdma;
  return spec;
}

int RunLower(const CommonFlags& c, const LowerArgs& a) {
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  auto spec = SpecFrom(a);
  if (!spec.ok()) return Fail(spec.status());
  auto trace = LowerCollective(*spec, *hw);
  if (!trace.ok()) return Fail(trace.status());
  if (auto s = WriteTraceFile(a.output, *trace); !s.ok()) return Fail(s);
  size_t instrs = 0;
  for (const auto& chip : trace->chips()) {
    for (const auto& st : chip.streams()) instrs += st.instructions_size();
  }
  std::cout << "wrote " << a.output << ": " << CollectiveOpName(spec->op) << " "
            << spec->algorithm << ", N=" << spec->n << ", " << spec->bytes
            << " bytes, " << instrs << " instructions\n";
  return kExitOk;
}

}  // namespace

void AddLowerCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    LowerArgs lower;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd =
      app.add_subcommand("lower", "lower a collective to a trace file");
  args->common.AddHw(cmd);
  cmd->add_option("--op", args->lower.op,
                  "allreduce, allgather, reducescatter, alltoall")
      ->capture_default_str();
  cmd->add_option("--n", args->lower.n, "number of chips")
      ->capture_default_str();
  cmd->add_option("--bytes", args->lower.bytes,
                  "M of SPEC.md section 2; binary units: 1M = 1048576")
      ->capture_default_str();
  cmd->add_option("--algo", args->lower.algo,
                  "ring (AR/AG/RS), pairwise (alltoall); default by op");
  cmd->add_option("--topology", args->lower.topology, "ring or switch")
      ->capture_default_str();
  cmd->add_option("--cdma", args->lower.cdma,
                  "CDMA engines to stripe over (0 = all)")
      ->capture_default_str();
  cmd->add_option("-o,--output", args->lower.output,
                  "trace file (.txtpb/.textproto/.pbtxt/.txt = text, "
                  "else binary)")
      ->required();

  cmd->callback(
      [args, exit_code] { *exit_code = RunLower(args->common, args->lower); });
}

}  // namespace ccreplay
