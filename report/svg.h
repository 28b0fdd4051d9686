// SVG pictures of ccreplay's results, written as plain text (no plotting
// library): log-log line plots (busbw or time against size, one series per
// algorithm/topology, Math dashed beside each replay curve) and stacked bar
// charts (the critical path of each baseline row by mechanism). Generic: it
// knows series, points and bars, nothing of collectives. The output is a
// standalone SVG 1.1 document (or an <svg> element to inline in HTML) whose
// bytes depend only on the input: numbers are printed with fixed precision.
//
// Structure, which tests/report_test.cc checks:
//   <svg class="plot">  <text class="title">, <g class="axis x|y"> with
//   <text class="tick"> and <text class="axis-label">, <g class="series"
//   data-name="..."> with one <polyline> and a <circle> per point, and
//   <g class="legend"> with one <g class="legend-item"> per series.
//   <svg class="bars">  <g class="bar" data-name="row"> with one <rect
//   class="segment" data-name="mechanism"> per non-zero part, and a legend.
#ifndef CCREPLAY_REPORT_SVG_H_
#define CCREPLAY_REPORT_SVG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccreplay {

struct PlotPoint {
  double x = 0;
  double y = 0;
};

struct PlotSeries {
  std::string name;
  std::vector<PlotPoint> points;  // x and y > 0 (log axes); others dropped
  int color = 0;                  // index into the palette; Math shares its
                                  // replay curve's colour
  bool dashed = false;            // Math curves
};

struct LogLogPlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool x_binary = true;  // x ticks at powers of 2 labelled 1K, 1M, ...
  std::vector<PlotSeries> series;
};

struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> parts;  // segment names, bottom to top
  struct Bar {
    std::string name;
    std::vector<double> values;  // one per part, >= 0
  };
  std::vector<Bar> bars;
};

// Options of both renderers.
struct SvgOptions {
  bool standalone = true;  // an XML declaration and xmlns (a .svg file)
};

// InvalidArgument when there is nothing to draw (no series with a positive
// point; no bar).
absl::StatusOr<std::string> RenderLogLogPlot(const LogLogPlot& plot,
                                             const SvgOptions& options = {});
// InvalidArgument when there is no bar, a bar has not one value per part,
// or a value is negative or not finite.
absl::StatusOr<std::string> RenderBarChart(const BarChart& chart,
                                           const SvgOptions& options = {});

// Several pictures rendered with standalone = false, one under the other in
// one standalone SVG document (each in a <g class="panel">).
std::string SvgColumn(const std::vector<std::string>& pictures);

// `text` with &, <, >, " and ' escaped for XML.
std::string XmlEscape(const std::string& text);

}  // namespace ccreplay

#endif  // CCREPLAY_REPORT_SVG_H_
