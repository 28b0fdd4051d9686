// ccreplay import: an MSCCL-IR XML algorithm as a trace file
// (docs/import-msccl.md). The shared flags for XML inputs of replay, check
// and compare live here too.
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "collectives/collective.h"
#include "import/msccl_import.h"
#include "trace/trace_io.h"

namespace ccreplay {

void MscclFlags::Add(CLI::App* cmd) {
  cmd->add_option("--bytes", bytes,
                  "MSCCL-IR input only: M of the collective (binary units: "
                  "1M = 1048576); a chunk is M / nchunksperloop")
      ->capture_default_str();
  AddUnsignedOption(cmd, "--engines-per-channel", engines_per_channel,
                    "MSCCL-IR input only: CDMA engines each channel stripes "
                    "over (0 = as many as fit)")
      ->capture_default_str();
}

absl::StatusOr<v1::Trace> MscclFlags::Import(
    const std::string& path, const HwConfig& hw,
    std::optional<std::pair<TopologyKind, TopologyParams>> topology) const {
  auto m = ParseByteSize(bytes);
  if (!m.ok()) return m.status();
  MscclImportOptions opt;
  opt.bytes = *m;
  opt.engines_per_channel = engines_per_channel;
  opt.topology = topology;
  return ImportMscclFile(path, hw, opt);
}

namespace {

struct ImportArgs {
  std::string xml;
  std::string topology;
  std::string output;
  MscclFlags msccl;
};

int RunImport(const CommonFlags& c, const ImportArgs& a) {
  if (auto s = CheckOutputPaths({{"xml", a.xml}, {"--hw", c.hw_path}},
                                {{"-o", a.output}});
      !s.ok()) {
    return Fail(s);
  }
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  std::optional<std::pair<TopologyKind, TopologyParams>> topo;
  if (!a.topology.empty()) {
    auto t = ParseTopologySpec(a.topology, hw->topology_params);
    if (!t.ok()) return Fail(t.status());
    topo = *t;
  }
  auto trace = a.msccl.Import(a.xml, *hw, topo);
  if (!trace.ok()) return Fail(trace.status());
  if (auto s = WriteTraceFile(a.output, *trace); !s.ok()) return Fail(s);
  size_t instrs = 0;
  for (const auto& chip : trace->chips()) {
    for (const auto& st : chip.streams()) instrs += st.instructions_size();
  }
  const v1::TraceHeader& h = trace->header();
  std::cout << "wrote " << a.output << ": "
            << CollectiveOpName(h.collective().op()) << " "
            << h.collective().algorithm() << " (" << h.source().file()
            << ", proto " << h.source().protocol()
            << "), N=" << h.collective().n() << ", " << h.collective().bytes()
            << " bytes, chunk " << h.source().chunk_bytes() << " bytes, "
            << h.source().channels() << " channel(s) x "
            << h.source().engines_per_channel() << " engine(s), " << instrs
            << " instructions\n";
  return kExitOk;
}

}  // namespace

void AddImportCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    ImportArgs import;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "import", "import an MSCCL-IR XML algorithm as a trace file");
  cmd->add_option("xml", args->import.xml, "MSCCL-IR XML file")
      ->required()
      ->check(InputFile());
  args->common.AddHw(cmd);
  args->import.msccl.Add(cmd);
  cmd->add_option("--topology", args->import.topology,
                  "record this topology in the header (the ranks must fit "
                  "it)");
  AddOutputOption(cmd, "-o,--output", args->import.output,
                  "trace file (.txtpb/.textproto/.pbtxt/.txt = text, "
                  "else binary)")
      ->required();
  cmd->callback([args, exit_code] {
    *exit_code = RunImport(args->common, args->import);
  });
}

}  // namespace ccreplay
