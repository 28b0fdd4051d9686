#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/table.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "collectives/alltoallv.h"
#include "collectives/collective.h"
#include "collectives/lower.h"
#include "collectives/workload.h"
#include "hw/budget.h"
#include "hw/topology.h"
#include "replay/timeline.h"
#include "trace/decode.h"
#include "trace/trace_io.h"

namespace ccreplay {
namespace {

struct LowerArgs {
  std::string op = "allreduce";
  uint32_t n = kDefaultChips;
  bool n_given = false;  // else the config's or kDefaultChips (DefaultChips)
  std::string bytes = "1M";
  std::string algo;
  std::string topology;  // empty: the hardware config's
  uint32_t cdma = 0;
  uint32_t group_size = 0;
  std::string chunk = "0";
  uint32_t root = 0;
  std::optional<uint32_t> peer;  // default root+1
  uint32_t peer_flag = 0;        // --peer, when given
  std::string dist = "uniform";
  // AllToAllv volume per chip (docs/spec-notes.md §1): used when --ep is given.
  uint32_t ep = 0;
  uint32_t batch_tokens = 1024;
  uint32_t top_k = 8;
  uint32_t hidden = 7168;
  uint32_t dtype_bytes = kDispatchDtypeBytes;
  bool no_rendezvous = false;
  std::string output;
};

absl::StatusOr<CollectiveSpec> SpecFrom(const LowerArgs& a, HwConfig& hw) {
  CollectiveSpec spec;
  auto op = ParseCollectiveOp(a.op);
  if (!op.ok()) return op.status();
  spec.op = *op;
  spec.n = a.n;
  auto bytes = ParseByteSize(a.bytes);
  if (!bytes.ok()) return bytes.status();
  spec.bytes = *bytes;
  spec.algorithm = a.algo.empty() ? BaselineAlgorithm(*op) : a.algo;
  if (a.topology.empty()) {
    spec.topology = hw.topology;
  } else {
    // The parser replay and compare use: a name with parameters.
    auto topo = ParseTopologyChoice(a.topology, hw);
    if (!topo.ok()) return topo.status();
    spec.topology = topo->kind;
    hw.topology = topo->kind;
    if (topo->params) hw.topology_params = *topo->params;
    // Replay builds this topology for the trace's chips: one that cannot
    // hold them is refused now, before a trace is written that no replay
    // can run.
    auto built = Topology::Build(topo->kind, a.n, hw.topology_params);
    if (!built.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--topology '", a.topology, "' for --n ", a.n, ": ",
          built.status().message()));
    }
  }
  spec.cdma_engines = a.cdma;
  spec.group_size = a.group_size;
  auto chunk = ParseByteSize(a.chunk);
  if (!chunk.ok()) return chunk.status();
  spec.chunk_bytes = *chunk;
  spec.root = a.root;
  spec.no_rendezvous = a.no_rendezvous;
  if (a.peer) spec.peer = *a.peer;
  if (spec.op == v1::ALLTOALLV) {
    if (a.ep != 0) {
      EpParams ep;
      ep.ep = a.ep;
      ep.batch_tokens = a.batch_tokens;
      ep.top_k = a.top_k;
      ep.hidden = a.hidden;
      auto b = EpBytesPerChip(ep, a.dtype_bytes);
      if (!b.ok()) return b.status();
      spec.bytes = *b;
    }
    auto dist = ParseAllToAllvDist(a.dist);
    if (!dist.ok()) return dist.status();
    auto v = AllToAllvMatrix(*dist, spec.GroupSize(), spec.bytes);
    if (!v.ok()) return v.status();
    spec.alltoallv_bytes = *std::move(v);
    spec.distribution = AllToAllvDistName(*dist);
  }
  return spec;
}

// -o t.json: refused up front rather than writing binary under a JSON name.
CLI::Validator NotAJsonTraceName() {
  return CLI::Validator(
      [](std::string& s) {
        return absl::EndsWithIgnoreCase(s, ".json")
                   ? std::string(
                         "a trace is protobuf text (.txtpb) or binary (.pb), "
                         "which replay reads; ccreplay writes no JSON trace")
                   : std::string();
      },
      "");
}

// A chip whose first instruction that the picosecond clock cannot time
// (hw/budget.h InstrTimeProblem, check's clock-range rule) stops the
// lowering before anything is written: no replay of it could finish.
absl::Status CheckTimeable(const v1::ChipProgram& chip, const HwConfig& hw) {
  for (const auto& st : chip.streams()) {
    for (int i = 0; i < st.instructions_size(); ++i) {
      const Instr in = DecodeInstr(st.instructions(i));
      std::string why = InstrTimeProblem(in, chip.chip(), hw);
      if (why.empty()) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("the lowered trace cannot be timed on ", hw.name, ": ",
                       PlaceText(chip.chip(), st.id(), i, OpKindName(in.kind)),
                       ": ", why, "; lower fewer --bytes"));
    }
  }
  return absl::OkStatus();
}

// Lowers `spec` and writes it to a.output; returns the instructions written.
// A binary trace is serialised one chip at a time as the lowering makes it
// (BinaryTraceBuilder), so only its serialized form and one chip are held; a
// text trace is built whole and printed.
absl::StatusOr<uint64_t> LowerToFile(const LowerArgs& a,
                                     const CollectiveSpec& spec,
                                     const HwConfig& hw) {
  const bool text = FormatForPath(a.output) == TraceFormat::kText;
  v1::Trace trace;  // text only
  BinaryTraceBuilder binary;
  uint64_t instrs = 0;
  LoweredTraceSink sink;
  sink.header = [&](v1::TraceHeader* h) {
    if (!a.topology.empty()) {
      // The whole spec (torus2d:x=8,y=8), which replay reads back.
      h->mutable_collective()->set_topology(
          TopologySpecString(hw.topology, hw.topology_params));
    }
    if (text) {
      trace.mutable_header()->Swap(h);
    } else {
      binary.AddHeader(*h);
    }
    return absl::OkStatus();
  };
  sink.chip = [&](v1::ChipProgram* chip) {
    if (auto s = CheckTimeable(*chip, hw); !s.ok()) return s;
    for (const auto& st : chip->streams()) instrs += st.instructions_size();
    if (text) {
      trace.add_chips()->Swap(chip);
    } else {
      binary.AddChip(*chip);
    }
    return absl::OkStatus();
  };
  if (auto s = LowerCollectiveTo(spec, hw, sink); !s.ok()) return s;
  absl::Status written =
      text ? WriteTraceFile(a.output, trace) : binary.WriteFile(a.output);
  if (!written.ok()) return written;
  return instrs;
}

int RunLower(const CommonFlags& c, LowerArgs a) {
  std::vector<NamedPath> inputs = c.Inputs();
  if (absl::StartsWith(a.dist, "file:")) {
    inputs.push_back({"--dist", a.dist.substr(5)});
  }
  if (auto s = CheckOutputPaths(inputs, {{"-o", a.output}}); !s.ok()) {
    return Fail(s);
  }
  auto hw = c.Hw();
  if (!hw.ok()) return Fail(hw.status());
  if (!a.n_given) a.n = DefaultChips(*hw, "lower");
  auto spec = SpecFrom(a, *hw);
  if (!spec.ok()) return Fail(spec.status());
  auto instrs = LowerToFile(a, *spec, *hw);
  if (!instrs.ok()) return Fail(instrs.status());
  std::cout << "wrote " << a.output << ": " << CollectiveOpName(spec->op) << " "
            << spec->algorithm << ", N=" << spec->n << ", " << spec->bytes
            << " bytes, " << *instrs << " instructions";
  if (spec->GroupSize() != spec->n) {
    std::cout << ", " << spec->n / spec->GroupSize() << " groups of "
              << spec->GroupSize();
  }
  std::cout << "\n";
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
                  "allreduce, allgather, reducescatter, alltoall, alltoallv, "
                  "broadcast, reduce, p2p (any case)")
      ->transform(CollectiveOpValidator())
      ->capture_default_str();
  CLI::Option* n =
      AddUnsignedOption(cmd, "--n", args->lower.n,
                        "number of chips (default: the hardware config's "
                        "topology.num_chips, else 8)");
  cmd->add_option(
         "--bytes", args->lower.bytes,
         "M of docs/spec-notes.md section 2; binary units: 1M = 1048576")
      ->capture_default_str();
  cmd->add_option("--algo", args->lower.algo,
                  "ring, ring_2port, rh, rd, hd (AR/AG/RS); pairwise, bruck "
                  "(alltoall); pairwise (alltoallv); ring (broadcast, "
                  "reduce); direct (p2p); default by op")
      ->transform(AlgorithmListValidator());
  cmd->add_option("--topology", args->lower.topology,
                  "the topology recorded in the trace, which replay uses "
                  "unless told otherwise: name[:params], e.g. torus2d:8x8 "
                  "(docs/topologies.md); default: the hardware config's");
  cmd->add_flag("--no-rendezvous", args->lower.no_rendezvous,
                "ring, ring_2port: no ready message before the first write "
                "(pre-registered buffers; docs/lowering.md)");
  AddUnsignedOption(cmd, "--cdma", args->lower.cdma,
                    "CDMA engines to stripe over (0 = all)")
      ->capture_default_str();
  LowerArgs& l = args->lower;
  AddUnsignedOption(cmd, "--group-size", l.group_size,
                    "chips per communicator group (0 = one group of n)")
      ->capture_default_str();
  cmd->add_option("--chunk", l.chunk,
                  "pipelining piece size (ring, ring_2port, chains; 0 = "
                  "whole blocks)")
      ->capture_default_str();
  AddUnsignedOption(cmd, "--root", l.root, "broadcast/reduce/p2p source rank")
      ->capture_default_str();
  CLI::Option* peer = AddUnsignedOption(cmd, "--peer", l.peer_flag,
                                        "p2p destination rank (default "
                                        "root+1)");
  cmd->add_option("--dist", l.dist,
                  "alltoallv routing: uniform, zipf:S[:SEED], file:PATH")
      ->capture_default_str();
  AddUnsignedOption(cmd, "--ep", l.ep,
                    "alltoallv: EP group size; sets --bytes to "
                    "ceil(batch*top_k/ep)*hidden*dtype")
      ->capture_default_str();
  AddUnsignedOption(cmd, "--batch-tokens", l.batch_tokens, "")
      ->capture_default_str();
  AddUnsignedOption(cmd, "--top-k", l.top_k, "")->capture_default_str();
  AddUnsignedOption(cmd, "--hidden", l.hidden, "")->capture_default_str();
  AddUnsignedOption(cmd, "--dtype-bytes", l.dtype_bytes,
                    "1 = dispatch (int8), 2 = combine (bf16)")
      ->capture_default_str();
  AddOutputOption(cmd, "-o,--output", args->lower.output,
                  "trace file (.txtpb/.textproto/.pbtxt/.txt = text, "
                  "else binary; not .json)")
      ->check(NotAJsonTraceName())
      ->required();

  cmd->callback([args, exit_code, peer, n] {
    args->lower.n_given = n->count() > 0;
    if (peer->count() > 0) args->lower.peer = args->lower.peer_flag;
    *exit_code = RunLower(args->common, args->lower);
  });
}

}  // namespace ccreplay
