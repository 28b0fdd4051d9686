#include "cli/plots.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "collectives/collective.h"
#include "collectives/math.h"

namespace ccreplay {
namespace {

// The points of one (op, N), grouped by (algorithm, topology) in sweep order.
struct PlotGroup {
  v1::CollectiveOp op;
  uint32_t n;
  std::vector<std::pair<std::string, std::vector<const SweepPoint*>>> curves;
};

std::vector<PlotGroup> Groups(const SweepReport& r) {
  std::vector<PlotGroup> groups;
  for (const SweepPoint& p : r.points) {
    auto g =
        std::find_if(groups.begin(), groups.end(), [&](const PlotGroup& x) {
          return x.op == p.spec.op && x.n == p.spec.n;
        });
    if (g == groups.end()) {
      groups.push_back({p.spec.op, p.spec.n, {}});
      g = groups.end() - 1;
    }
    const std::string name =
        absl::StrCat(p.result.label, " on ", p.result.topology);
    auto c = std::find_if(g->curves.begin(), g->curves.end(),
                          [&](const auto& x) { return x.first == name; });
    if (c == g->curves.end()) {
      g->curves.push_back({name, {}});
      c = g->curves.end() - 1;
    }
    c->second.push_back(&p);
  }
  return groups;
}

// One plot of a group: busbw (GB/s) or time (us) against size.
LogLogPlot GroupPlot(const PlotGroup& g, const std::string& hw, bool busbw) {
  LogLogPlot plot;
  plot.title = absl::StrCat(CollectiveOpName(g.op), ", N=", g.n, " on ", hw,
                            busbw ? ": bus bandwidth" : ": time");
  plot.x_label = "size (bytes)";
  plot.y_label = busbw ? "busbw (GB/s)" : "time (us)";
  int color = 0;
  for (const auto& [name, points] : g.curves) {
    PlotSeries replay{name, {}, color, false};
    PlotSeries math{absl::StrCat(name, " (Math)"), {}, color, true};
    for (const SweepPoint* p : points) {
      const double size = static_cast<double>(p->spec.bytes);
      const PointResult& x = p->result;
      replay.points.push_back({size, busbw ? x.busbw_gbps : x.replay_us});
      if (x.math_us) {
        math.points.push_back(
            {size, busbw ? BusBwGBps(g.op, x.group, p->spec.bytes, *x.math_us)
                         : *x.math_us});
      }
    }
    plot.series.push_back(std::move(replay));
    if (!math.points.empty()) plot.series.push_back(std::move(math));
    ++color;
  }
  return plot;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SweepPlots(const SweepReport& r,
                                                    const SvgOptions& o) {
  std::vector<std::string> out;
  for (const PlotGroup& g : Groups(r)) {
    for (bool busbw : {true, false}) {
      auto svg = RenderLogLogPlot(GroupPlot(g, r.hw, busbw), o);
      if (!svg.ok()) return svg.status();
      out.push_back(*std::move(svg));
    }
  }
  return out;
}

absl::StatusOr<std::string> BaselineBars(const Baseline& b,
                                         const SvgOptions& o) {
  BarChart chart;
  chart.title =
      "Where each baseline row's time goes: critical path by mechanism";
  chart.y_label = "time (us)";
  for (int c = 0; c < kNumPathCauses; ++c) {
    chart.parts.emplace_back(PathCauseName(static_cast<PathCause>(c)));
  }
  for (const BaselineRow& row : b.rows) {
    BarChart::Bar bar;
    bar.name = absl::StrCat(row.work.module, " ", row.work.op_name);
    for (TimePs v : row.breakdown.by_cause) bar.values.push_back(v.us());
    chart.bars.push_back(std::move(bar));
  }
  return RenderBarChart(chart, o);
}

absl::StatusOr<std::string> SweepSvg(const SweepReport& r) {
  auto plots = SweepPlots(r, SvgOptions{false});
  if (!plots.ok()) return plots.status();
  return SvgColumn(*plots);
}

absl::StatusOr<std::string> BaselineSvg(const Baseline& b) {
  return BaselineBars(b, SvgOptions{true});
}

}  // namespace ccreplay
