// ccreplay calibrate: the PLogP / alpha(n)-beta(n) measurements of seed 004
// (a one-message ping and a back-to-back stream at K message sizes), run on
// the replay engine instead of hardware, written as a PlogpCalibration in
// protobuf text format (proto/models.proto, docs/models.md "Calibration").
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "collectives/collective.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "hw/topology.h"

namespace ccreplay {
namespace {

// What one P2P replay from chip 0 to chip 1 shows, in ps (absolute).
struct P2pTimes {
  int64_t first_issue = 0;  // the sender reached its first Transfer
  int64_t last_end = 0;     // its last byte left the sender's engines
  int64_t last_landed = 0;  // ... and is in chip 1's GMEM
  int64_t done = 0;         // chip 1's stream is released
};

absl::StatusOr<P2pTimes> ReplayP2p(const HwConfig& hw,
                                   const CalibrationSetup& setup,
                                   uint64_t bytes, uint64_t chunk) {
  CollectiveSpec spec;
  spec.op = v1::P2P;
  spec.algorithm = "direct";
  spec.n = setup.n;
  spec.bytes = bytes;
  spec.chunk_bytes = chunk;
  spec.topology = hw.topology;
  auto run = LowerAndReplay(spec, hw, ReplayOptions{}, setup.budget);
  if (!run.ok()) return run.status();
  P2pTimes t{INT64_MAX, 0, 0, 0};
  const ReplayResult& r = run->result;
  for (uint32_t g = 0; g < r.instrs.size(); ++g) {
    const InstrTiming& it = r.instrs[g];
    if (it.chip == 0 && MovesData(r.InstrOf(run->program, g).kind)) {
      t.first_issue = std::min(t.first_issue, it.issue.ps());
      t.last_end = std::max(t.last_end, it.end.ps());
      t.last_landed = std::max(t.last_landed, it.landed.ps());
    }
    if (it.chip == 1) t.done = std::max(t.done, it.end.ps());
  }
  return t;
}

}  // namespace

std::vector<uint64_t> DefaultCalibrationSizes() {
  std::vector<uint64_t> sizes;  // 64 B .. 64 MiB, powers of 2: K = 21
  for (uint64_t m = 64; m <= (uint64_t{64} << 20); m *= 2) sizes.push_back(m);
  return sizes;
}

absl::StatusOr<v1::PlogpCalibration> CalibrateOnReplay(
    const HwConfig& base_hw, const CalibrationSetup& setup) {
  if (setup.stream_messages < 2) {
    return absl::InvalidArgumentError("calibrate: --stream must be >= 2");
  }
  HwConfig hw = base_hw;
  hw.topology = setup.kind;
  hw.topology_params = setup.params;
  v1::PlogpCalibration cal;
  *cal.mutable_hw() = HwConfigToProto(base_hw);
  cal.set_topology(TopologySpecString(setup.kind, setup.params));
  cal.set_num_chips(setup.n);
  cal.set_stream_messages(setup.stream_messages);
  for (uint64_t m : setup.sizes) {
    auto one = ReplayP2p(hw, setup, m, 0);
    if (!one.ok()) return one.status();
    auto stream = ReplayP2p(hw, setup, m * setup.stream_messages, m);
    if (!stream.ok()) return stream.status();
    v1::PlogpCalibration::Point* p = cal.add_points();
    p->set_bytes(m);
    p->set_os_ps(one->last_end - one->first_issue);
    p->set_l_ps(one->last_landed - one->last_end);
    p->set_or_ps(one->done - one->last_landed);
    const int64_t t1 = one->done - one->first_issue;
    const int64_t tk = stream->done - stream->first_issue;
    p->set_g_ps(static_cast<double>(tk - t1) / (setup.stream_messages - 1));
  }
  return cal;
}

absl::StatusOr<PlogpTable> PlogpTableFromCalibration(
    const v1::PlogpCalibration& cal, const std::string& name,
    const HwConfig& workload_hw) {
  const v1::HardwareConfig want = HwConfigToProto(workload_hw);
  if (!google::protobuf::util::MessageDifferencer::Equals(cal.hw(), want)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": calibrated on hardware '", cal.hw().name(),
        "', but the workload runs on '", workload_hw.name,
        "' with a different config: calibrate again with this --hw"));
  }
  std::vector<PlogpPoint> points;
  for (const auto& p : cal.points()) {
    points.push_back({p.bytes(), p.l_ps() / 1e6, p.os_ps() / 1e6,
                      p.or_ps() / 1e6, p.g_ps() / 1e6});
  }
  auto t = PlogpTable::Create(std::move(points), cal.hw().name());
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", t.status().message()));
  }
  return t;
}

namespace {

// file:line:col for text-format errors (1-based, as every ccreplay error).
class Collector : public google::protobuf::io::ErrorCollector {
 public:
  explicit Collector(std::string name) : name_(std::move(name)) {}
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) {
      first_ =
          absl::StrCat(name_, ":", line + 1, ":", column + 1, ": ", message);
    }
  }
  const std::string& first() const { return first_; }

 private:
  std::string name_;
  std::string first_;
};

}  // namespace

absl::StatusOr<v1::PlogpCalibration> ReadCalibrationFile(
    const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  Collector errors(path);
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  v1::PlogpCalibration cal;
  if (!parser.ParseFromString(*text, &cal)) {
    return absl::InvalidArgumentError(
        errors.first().empty() ? absl::StrCat(path, ": not a PlogpCalibration")
                               : errors.first());
  }
  return cal;
}

namespace {

// The system of a calibration without --n where the config fixes no chip
// count: the fewest chips (at least 2) the topology can shape (a board or
// torus may need more than 2); 2 if none up to 4096 fits (the calibration
// then reports why).
uint32_t FewestChips(const std::pair<TopologyKind, TopologyParams>& topo) {
  for (uint32_t k = 2; k <= 4096; ++k) {
    if (Topology::Build(topo.first, k, topo.second).ok()) return k;
  }
  return 2;
}

}  // namespace

void AddCalibrateCommand(CLI::App& app, int* exit_code) {
  struct Args {
    CommonFlags common;
    std::string topology;  // empty: the hardware config's
    uint32_t n = 2;        // unless the config fixes its chip count
    uint32_t stream = 4;
    BudgetFlags budget;
    std::string output;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "measure PLogP / alpha(n)-beta(n) parameters on the replay engine");
  args->common.AddHw(cmd);
  cmd->add_option("--topology", args->topology,
                  "topology joining chip 0 and chip 1 (default: the "
                  "hardware config's)");
  CLI::Option* n_opt =
      AddUnsignedOption(cmd, "--n", args->n,
                        "chips in the system (P2P from 0 to 1; default: the "
                        "hardware config's topology.num_chips, else 2)");
  AddUnsignedOption(cmd, "--stream", args->stream,
                    "messages in the gap stream (>= 2)")
      ->capture_default_str();
  args->budget.Add(cmd);
  AddOutputOption(cmd, "-o,--output", args->output,
                  "PlogpCalibration, protobuf text format")
      ->required();
  cmd->callback([args, exit_code, n_opt] {
    // Refused before the replays rather than after them.
    std::vector<OutputFile> outputs = {{"-o", args->output, ""}};
    if (auto s = CheckOutputs(args->common.Inputs(), outputs); !s.ok()) {
      *exit_code = Fail(s);
      return;
    }
    auto hw = args->common.Hw();
    if (!hw.ok()) {
      *exit_code = Fail(hw.status());
      return;
    }
    if (args->topology.empty()) args->topology = DefaultTopology(*hw);
    auto topo = ParseTopologySpec(args->topology, hw->topology_params);
    if (!topo.ok()) {
      *exit_code = Fail(absl::InvalidArgumentError(absl::StrCat(
          "--topology '", args->topology, "': ", topo.status().message())));
      return;
    }
    if (n_opt->count() == 0) {
      args->n = DefaultChips(*hw, "calibrate", FewestChips(*topo));
    }
    auto budget = args->budget.Budget();
    if (!budget.ok()) {
      *exit_code = Fail(budget.status());
      return;
    }
    CalibrationSetup setup{topo->first,  topo->second,
                           args->n,      DefaultCalibrationSizes(),
                           args->stream, *budget};
    auto cal = CalibrateOnReplay(*hw, setup);
    if (!cal.ok()) {
      *exit_code = Fail(cal.status());
      return;
    }
    std::string text;
    google::protobuf::TextFormat::PrintToString(*cal, &text);
    outputs[0].contents = std::move(text);
    auto s = WriteOutputs(args->common.Inputs(), outputs);
    if (!s.ok()) {
      *exit_code = Fail(s);
      return;
    }
    std::cout << "wrote " << args->output << ": " << cal->points_size()
              << " sizes on " << hw->name << ", " << cal->topology() << "\n";
    *exit_code = kExitOk;
  });
}

}  // namespace ccreplay
