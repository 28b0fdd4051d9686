#include "cli/sweep.h"

#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectives/collective.h"
#include "replay/fluid_engine.h"

namespace ccreplay {
namespace {

// `v` in at most `width` characters, as many decimals (2, 1, 0) as fit,
// else in exponent form: nccl-tests' convention for its time and bandwidth
// columns.
std::string Fit(double v, int width) {
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::string s = absl::StrFormat("%*.*f", width, decimals, v);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return absl::StrFormat("%*.*e", width, width >= 7 ? 1 : 0, v);
}

std::string OptionalFit(const std::optional<double>& v, int width,
                        int decimals) {
  if (!v) return absl::StrFormat("%*s", width, "-");
  return decimals < 0 ? Fit(*v, width)
                      : absl::StrFormat("%*.*f", width, decimals, *v);
}

bool SameBlock(const SweepPoint& a, const SweepPoint& b) {
  return a.spec.op == b.spec.op &&
         a.spec.topology_text == b.spec.topology_text &&
         a.spec.algorithm == b.spec.algorithm && a.spec.n == b.spec.n;
}

void AppendBlockHeader(const SweepPoint& p, std::string* out) {
  absl::StrAppend(out, "#\n# ", CollectiveOpName(p.spec.op), " ",
                  p.result.label, " on ", p.result.topology, ", N=", p.spec.n,
                  "\n");
  constexpr absl::string_view kHeader =
      "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %7s  %11s";
  const absl::ParsedFormat<'s', 's', 's', 's', 's', 's', 's', 's', 's', 's'>
      format(kHeader);
  for (const std::string& line :
       {absl::StrFormat(format, "size", "count", "type", "redop", "root",
                        "time", "algbw", "busbw", "math", "replay/math"),
        absl::StrFormat(format, "(B)", "(elements)", "", "", "", "(us)",
                        "(GB/s)", "(GB/s)", "(us)", "")}) {
    absl::StrAppend(out, absl::StripTrailingAsciiWhitespace(line), "\n");
  }
}

void AppendRow(const SweepReport& r, const SweepPoint& p, std::string* out) {
  const PointResult& x = p.result;
  absl::StrAppendFormat(
      out, "%12d  %12d  %8s  %6s  %6d  %7s  %6s  %6s  %7s  %11s\n",
      p.spec.bytes, p.count, r.datatype, SweepRedop(p.spec.op),
      SweepRoot(p.spec.op), Fit(x.replay_us, 7), Fit(x.algbw_gbps, 6),
      Fit(x.busbw_gbps, 6), OptionalFit(x.math_us, 7, -1),
      OptionalFit(x.ReplayOverMath(), 11, 3));
}

Json Nullable(const std::optional<double>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json PointJson(const SweepReport& r, const SweepPoint& p) {
  const PointResult& x = p.result;
  const std::string op(CollectiveOpName(p.spec.op));
  return {{"size", p.spec.bytes},
          {"count", p.count},
          {"type", r.datatype},
          {"redop", SweepRedop(p.spec.op)},
          {"root", SweepRoot(p.spec.op)},
          {"out_of_place",
           {{"time", x.replay_us},
            {"alg_bw", x.algbw_gbps},
            {"bus_bw", x.busbw_gbps},
            {"nwrong", nullptr}}},
          {"in_place", nullptr},
          {"op", op},
          {"algorithm", x.label},
          {"topology", x.topology},
          {"n", p.spec.n},
          {"math_time", Nullable(x.math_us)},
          {"replay_over_math", Nullable(x.ReplayOverMath())},
          {"events", x.events},
          {"breakdown", BreakdownJson(x.breakdown)},
          {"experiment_name",
           absl::StrCat(op, " ", x.label, " ", x.topology, " N=", p.spec.n)}};
}

// j[key] as T, or an error naming the key.
template <typename T>
absl::Status Get(const Json& j, const char* key, T* out) {
  if (!j.is_object() || !j.contains(key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("sweep JSON: no '", key, "'"));
  }
  try {
    *out = j.at(key).get<T>();
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("sweep JSON: '", key, "': ", e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<SweepPoint> PointFromJson(const Json& j) {
  SweepPoint p;
  std::string op;
  Json oop;
  absl::Status s = Get(j, "op", &op);
  if (s.ok()) s = Get(j, "size", &p.spec.bytes);
  if (s.ok()) s = Get(j, "count", &p.count);
  if (s.ok()) s = Get(j, "algorithm", &p.result.label);
  if (s.ok()) s = Get(j, "topology", &p.result.topology);
  if (s.ok()) s = Get(j, "n", &p.spec.n);
  if (s.ok()) s = Get(j, "out_of_place", &oop);
  if (s.ok()) s = Get(oop, "time", &p.result.replay_us);
  if (s.ok()) s = Get(oop, "alg_bw", &p.result.algbw_gbps);
  if (s.ok()) s = Get(oop, "bus_bw", &p.result.busbw_gbps);
  if (!s.ok()) return s;
  auto parsed = ParseCollectiveOp(op);
  if (!parsed.ok()) return parsed.status();
  p.spec.op = *parsed;
  p.spec.algorithm = p.result.label;
  p.spec.topology_text = p.result.topology;
  p.result.bytes = p.spec.bytes;
  p.result.group = p.spec.n;
  if (j.contains("math_time") && j["math_time"].is_number()) {
    p.result.math_us = j["math_time"].get<double>();
  }
  return p;
}

}  // namespace

std::string SweepRedop(v1::CollectiveOp op) {
  return op == v1::ALLREDUCE || op == v1::REDUCESCATTER || op == v1::REDUCE
             ? "sum"
             : "none";
}

int SweepRoot(v1::CollectiveOp op) {
  return op == v1::BROADCAST || op == v1::REDUCE ? 0 : -1;
}

std::string SweepText(const SweepReport& r) {
  std::string out = absl::StrCat(
      "# ccreplay sweep on ", r.hw,
      ": instruction-level replay beside Math, nccl-tests columns (one "
      "replay per size)\n");
  if (r.fluid_packets != kNone) {
    absl::StrAppend(&out, "# ", FluidEngineName(r.fluid_packets),
                    ": no critical-path breakdown\n");
  }
  for (size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    if (i == 0 || !SameBlock(r.points[i - 1], p)) {
      AppendBlockHeader(p, &out);
    }
    AppendRow(r, p, &out);
    if (i + 1 == r.points.size() || !SameBlock(r.points[i + 1], p)) {
      double sum = 0;
      size_t rows = 0;
      for (size_t k = i + 1; k-- > 0 && SameBlock(r.points[k], p);) {
        sum += r.points[k].result.busbw_gbps;
        ++rows;
      }
      absl::StrAppendFormat(&out, "# %-20s : %g\n", "Avg bus bandwidth",
                            sum / static_cast<double>(rows));
    }
  }
  return out;
}

absl::StatusOr<Table> SweepTable(const SweepReport& r) {
  Table t({Table::Column::String("op"), Table::Column::String("algorithm"),
           Table::Column::String("topology"), Table::Column::Integer("N"),
           Table::Column::Integer("size"), Table::Column::Integer("count"),
           Table::Column::String("type"), Table::Column::String("redop"),
           Table::Column::Integer("root"), Table::Column::Double("time_us", 4),
           Table::Column::Double("algbw_GBps", 2),
           Table::Column::Double("busbw_GBps", 2),
           Table::Column::Double("math_us", 4),
           Table::Column::Double("replay/math", 3)});
  for (const SweepPoint& p : r.points) {
    const PointResult& x = p.result;
    auto s = t.AddRow({std::string(CollectiveOpName(p.spec.op)), x.label,
                       x.topology, p.spec.n, p.spec.bytes, p.count, r.datatype,
                       SweepRedop(p.spec.op), SweepRoot(p.spec.op), x.replay_us,
                       x.algbw_gbps, x.busbw_gbps, OrNan(x.math_us),
                       OrNan(x.ReplayOverMath())});
    if (!s.ok()) return s;
  }
  return t;
}

Json SweepJson(const SweepReport& r) {
  Json config = {{"minimum_bytes", r.min_bytes},
                 {"maximum_bytes", r.max_bytes}};
  if (r.step_factor > 1) {
    config["step_factor"] = r.step_factor;
  } else {
    config["step_bytes"] = r.step_bytes;
  }
  config["type"] = r.datatype;
  Json results = Json::array();
  double sum = 0;
  for (const SweepPoint& p : r.points) {
    results.push_back(PointJson(r, p));
    sum += p.result.busbw_gbps;
  }
  const double avg =
      r.points.empty() ? 0.0 : sum / static_cast<double>(r.points.size());
  Json j = {{"tool", "ccreplay sweep"},
            {"hw", r.hw},
            {"config", config},
            {"results", results},
            {"average_bus_bandwidth", {{"bandwidth", avg}}}};
  if (r.fluid_packets != kNone) {
    j["engine"] = "fluid";
    j["fluid_packets"] = r.fluid_packets;
  }
  return j;
}

absl::StatusOr<SweepReport> SweepFromJson(const Json& j) {
  SweepReport r;
  Json config;
  Json results;
  absl::Status s = Get(j, "hw", &r.hw);
  if (s.ok()) s = Get(j, "config", &config);
  if (s.ok()) s = Get(j, "results", &results);
  if (s.ok()) s = Get(config, "type", &r.datatype);
  if (s.ok()) s = Get(config, "minimum_bytes", &r.min_bytes);
  if (s.ok()) s = Get(config, "maximum_bytes", &r.max_bytes);
  if (!s.ok()) return s;
  if (config.contains("step_factor")) {
    s = Get(config, "step_factor", &r.step_factor);
  } else {
    s = Get(config, "step_bytes", &r.step_bytes);
  }
  if (!s.ok()) return s;
  if (j.contains("fluid_packets")) {
    s = Get(j, "fluid_packets", &r.fluid_packets);
    if (!s.ok()) return s;
  }
  if (!results.is_array()) {
    return absl::InvalidArgumentError("sweep JSON: 'results' is not an array");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    auto p = PointFromJson(results[i]);
    if (!p.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("results[", i, "]: ", p.status().message()));
    }
    r.points.push_back(*std::move(p));
  }
  return r;
}

}  // namespace ccreplay
