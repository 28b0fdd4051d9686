#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ccreplay {
namespace {

// Tableau 10: distinct on screen and in grey print.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                    "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                    "#9c755f", "#bab0ac"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

const char* Color(int i) {
  return kPalette[((i % kPaletteSize) + kPaletteSize) % kPaletteSize];
}

// The drawing area inside the SVG.
struct Frame {
  double width = 760;
  double height = 440;
  double left = 78;
  double right = 560;  // the legend is to the right
  double top = 44;
  double bottom = 376;
};

std::string Num(double v) { return absl::StrFormat("%.2f", v); }

std::string Open(const SvgOptions& o, const Frame& f, const char* cls,
                 const std::string& title) {
  std::string out;
  if (o.standalone) out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(
      &out, "<svg", o.standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : "",
      " class=\"", cls, "\" width=\"", Num(f.width), "\" height=\"",
      Num(f.height), "\" viewBox=\"0 0 ", Num(f.width), " ", Num(f.height),
      "\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n");
  absl::StrAppend(&out,
                  "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                  "<text class=\"title\" x=\"", Num((f.left + f.right) / 2),
                  "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
                  "font-weight=\"bold\">",
                  XmlEscape(title), "</text>\n");
  return out;
}

void AxisLabels(const Frame& f, const std::string& x, const std::string& y,
                std::string* out) {
  absl::StrAppend(out, "<text class=\"axis-label\" x=\"",
                  Num((f.left + f.right) / 2), "\" y=\"", Num(f.bottom + 44),
                  "\" text-anchor=\"middle\">", XmlEscape(x), "</text>\n");
  const double cy = (f.top + f.bottom) / 2;
  absl::StrAppend(out, "<text class=\"axis-label\" x=\"18\" y=\"", Num(cy),
                  "\" text-anchor=\"middle\" transform=\"rotate(-90 18 ",
                  Num(cy), ")\">", XmlEscape(y), "</text>\n");
}

// 1, 2, ..., 512, 1K, ..., 512K, 1M, ... for a power of two.
std::string BinaryLabel(int log2) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P"};
  const int unit = std::clamp(log2 / 10, 0, 5);
  return absl::StrCat(uint64_t{1} << (log2 - 10 * unit), kUnits[unit]);
}

std::string DecimalLabel(int log10) {
  if (log10 >= 0) return absl::StrFormat("%.0f", std::pow(10.0, log10));
  return absl::StrFormat("%.*f", -log10, std::pow(10.0, log10));
}

// A log axis over whole powers of `base` covering [lo, hi].
struct LogAxis {
  double base = 10;
  int first = 0;  // exponent at the start
  int last = 1;   // exponent at the end, > first

  static LogAxis Cover(double lo, double hi, double base) {
    LogAxis a;
    a.base = base;
    a.first =
        static_cast<int>(std::floor(std::log(lo) / std::log(base) + 1e-9));
    a.last = static_cast<int>(std::ceil(std::log(hi) / std::log(base) - 1e-9));
    if (a.last <= a.first) a.last = a.first + 1;
    return a;
  }
  // Position of v in [0, 1] along the axis.
  double At(double v) const {
    return (std::log(v) / std::log(base) - first) / (last - first);
  }
};

void XAxis(const Frame& f, const LogAxis& a, bool binary, std::string* out) {
  absl::StrAppend(out, "<g class=\"axis x\">\n<line x1=\"", Num(f.left),
                  "\" y1=\"", Num(f.bottom), "\" x2=\"", Num(f.right),
                  "\" y2=\"", Num(f.bottom), "\" stroke=\"black\"/>\n");
  const int step = std::max(1, (a.last - a.first + 9) / 10);
  for (int e = a.first; e <= a.last; e += step) {
    const double x = f.left + (f.right - f.left) * (e - a.first) /
                                  static_cast<double>(a.last - a.first);
    absl::StrAppend(out, "<line x1=\"", Num(x), "\" y1=\"", Num(f.top),
                    "\" x2=\"", Num(x), "\" y2=\"", Num(f.bottom),
                    "\" stroke=\"#e0e0e0\"/>\n<text class=\"tick\" x=\"",
                    Num(x), "\" y=\"", Num(f.bottom + 18),
                    "\" text-anchor=\"middle\">",
                    binary ? BinaryLabel(e) : DecimalLabel(e), "</text>\n");
  }
  absl::StrAppend(out, "</g>\n");
}

void YAxis(const Frame& f, const LogAxis& a, std::string* out) {
  absl::StrAppend(out, "<g class=\"axis y\">\n<line x1=\"", Num(f.left),
                  "\" y1=\"", Num(f.top), "\" x2=\"", Num(f.left), "\" y2=\"",
                  Num(f.bottom), "\" stroke=\"black\"/>\n");
  for (int e = a.first; e <= a.last; ++e) {
    const double y = f.bottom - (f.bottom - f.top) * (e - a.first) /
                                    static_cast<double>(a.last - a.first);
    absl::StrAppend(out, "<line x1=\"", Num(f.left), "\" y1=\"", Num(y),
                    "\" x2=\"", Num(f.right), "\" y2=\"", Num(y),
                    "\" stroke=\"#e0e0e0\"/>\n<text class=\"tick\" x=\"",
                    Num(f.left - 6), "\" y=\"", Num(y + 4),
                    "\" text-anchor=\"end\">", DecimalLabel(e), "</text>\n");
  }
  absl::StrAppend(out, "</g>\n");
}

std::string Stroke(const PlotSeries& s) {
  return absl::StrCat("stroke=\"", Color(s.color), "\" stroke-width=\"2\"",
                      s.dashed ? " stroke-dasharray=\"6 4\"" : "");
}

void Series(const Frame& f, const LogAxis& x, const LogAxis& y,
            const PlotSeries& s, std::string* out) {
  absl::StrAppend(out, "<g class=\"series\" data-name=\"", XmlEscape(s.name),
                  "\">\n<polyline fill=\"none\" ", Stroke(s), " points=\"");
  std::string circles;
  bool first = true;
  for (const PlotPoint& p : s.points) {
    if (!(p.x > 0 && p.y > 0 && std::isfinite(p.x) && std::isfinite(p.y))) {
      continue;
    }
    const double px = f.left + (f.right - f.left) * x.At(p.x);
    const double py = f.bottom - (f.bottom - f.top) * y.At(p.y);
    absl::StrAppend(out, first ? "" : " ", Num(px), ",", Num(py));
    first = false;
    absl::StrAppend(&circles, "<circle class=\"point\" cx=\"", Num(px),
                    "\" cy=\"", Num(py), "\" r=\"2.5\" fill=\"",
                    s.dashed ? "white" : Color(s.color), "\" stroke=\"",
                    Color(s.color), "\"/>\n");
  }
  absl::StrAppend(out, "\"/>\n", circles, "</g>\n");
}

// One legend row per entry: a line (or box) sample and the name.
void Legend(const Frame& f, const std::vector<std::string>& names,
            const std::vector<std::string>& samples, std::string* out) {
  absl::StrAppend(out, "<g class=\"legend\">\n");
  for (size_t i = 0; i < names.size(); ++i) {
    const double y = f.top + 8 + 18.0 * static_cast<double>(i);
    absl::StrAppend(out, "<g class=\"legend-item\" transform=\"translate(",
                    Num(f.right + 16), " ", Num(y), ")\">", samples[i],
                    "<text x=\"30\" y=\"4\">", XmlEscape(names[i]),
                    "</text></g>\n");
  }
  absl::StrAppend(out, "</g>\n");
}

// The bar chart's value axis: from 0 to the next 1, 2 or 5 x 10^k at or
// above the tallest bar; errors for a chart that cannot be drawn.
absl::StatusOr<double> BarAxisTop(const BarChart& chart) {
  if (chart.bars.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("chart '", chart.title, "': no bar"));
  }
  double top_value = 0;
  for (const BarChart::Bar& b : chart.bars) {
    if (b.values.size() != chart.parts.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "chart '", chart.title, "', bar '", b.name, "': ", b.values.size(),
          " values for ", chart.parts.size(), " parts"));
    }
    double sum = 0;
    for (double v : b.values) {
      if (!(v >= 0) || !std::isfinite(v)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "chart '", chart.title, "', bar '", b.name, "': bad value ", v));
      }
      sum += v;
    }
    top_value = std::max(top_value, sum);
  }
  const double mag =
      std::pow(10.0, std::floor(std::log10(top_value > 0 ? top_value : 1)));
  double axis_top = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    axis_top = m * mag;
    if (axis_top >= top_value) break;
  }
  return axis_top;
}

// Bar `b`: its non-zero parts stacked bottom to top, and its name below.
void Bar(const Frame& f, const BarChart& chart, size_t b, double axis_top,
         std::string* out) {
  const BarChart::Bar& bar = chart.bars[b];
  const double slot =
      (f.right - f.left) / static_cast<double>(chart.bars.size());
  const double x = f.left + slot * (static_cast<double>(b) + 0.15);
  absl::StrAppend(out, "<g class=\"bar\" data-name=\"", XmlEscape(bar.name),
                  "\">\n");
  double base = 0;
  for (size_t p = 0; p < chart.parts.size(); ++p) {
    if (bar.values[p] <= 0) continue;
    const double y1 =
        f.bottom - (f.bottom - f.top) * (base + bar.values[p]) / axis_top;
    const double y0 = f.bottom - (f.bottom - f.top) * base / axis_top;
    absl::StrAppend(
        out, "<rect class=\"segment\" data-name=\"", XmlEscape(chart.parts[p]),
        "\" x=\"", Num(x), "\" y=\"", Num(y1), "\" width=\"", Num(slot * 0.7),
        "\" height=\"", Num(y0 - y1), "\" fill=\"", Color(static_cast<int>(p)),
        "\"><title>", XmlEscape(bar.name), ": ", XmlEscape(chart.parts[p]), " ",
        absl::StrFormat("%.4f", bar.values[p]), "</title></rect>\n");
    base += bar.values[p];
  }
  const double lx = x + slot * 0.35;
  absl::StrAppend(
      out, "<text class=\"tick\" x=\"", Num(lx), "\" y=\"", Num(f.bottom + 14),
      "\" text-anchor=\"end\" transform=\"rotate(-30 ", Num(lx), " ",
      Num(f.bottom + 14), ")\">", XmlEscape(bar.name), "</text>\n</g>\n");
}

}  // namespace

std::string SvgColumn(const std::vector<std::string>& pictures) {
  const Frame f;
  std::string out = absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://"
      "www.w3.org/2000/svg\" width=\"",
      Num(f.width), "\" height=\"",
      Num(f.height * static_cast<double>(pictures.size())), "\">\n");
  for (size_t i = 0; i < pictures.size(); ++i) {
    absl::StrAppend(&out, "<g class=\"panel\" transform=\"translate(0 ",
                    Num(f.height * static_cast<double>(i)), ")\">\n",
                    pictures[i], "</g>\n");
  }
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

absl::StatusOr<std::string> RenderLogLogPlot(const LogLogPlot& plot,
                                             const SvgOptions& options) {
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
  for (const PlotSeries& s : plot.series) {
    for (const PlotPoint& p : s.points) {
      if (!(p.x > 0 && p.y > 0 && std::isfinite(p.x) && std::isfinite(p.y))) {
        continue;
      }
      x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x);
      y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
    }
  }
  if (x_hi == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("plot '", plot.title, "': no point to draw"));
  }
  const Frame f;
  const LogAxis x = LogAxis::Cover(x_lo, x_hi, plot.x_binary ? 2 : 10);
  const LogAxis y = LogAxis::Cover(y_lo, y_hi, 10);
  std::string out = Open(options, f, "plot", plot.title);
  XAxis(f, x, plot.x_binary, &out);
  YAxis(f, y, &out);
  AxisLabels(f, plot.x_label, plot.y_label, &out);
  std::vector<std::string> names, samples;
  for (const PlotSeries& s : plot.series) {
    Series(f, x, y, s, &out);
    names.push_back(s.name);
    samples.push_back(absl::StrCat(
        "<line x1=\"0\" y1=\"0\" x2=\"24\" y2=\"0\" ", Stroke(s), "/>"));
  }
  Legend(f, names, samples, &out);
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

absl::StatusOr<std::string> RenderBarChart(const BarChart& chart,
                                           const SvgOptions& options) {
  auto axis_top = BarAxisTop(chart);
  if (!axis_top.ok()) return axis_top.status();
  Frame f;
  f.bottom = 340;  // room for slanted bar names below
  f.left = 150;    // and to the left of the first one
  std::string out = Open(options, f, "bars", chart.title);
  absl::StrAppend(&out, "<g class=\"axis y\">\n");
  for (int i = 0; i <= 5; ++i) {
    const double y = f.bottom - (f.bottom - f.top) * i / 5.0;
    absl::StrAppend(&out, "<line x1=\"", Num(f.left), "\" y1=\"", Num(y),
                    "\" x2=\"", Num(f.right), "\" y2=\"", Num(y),
                    "\" stroke=\"", i == 0 ? "black" : "#e0e0e0",
                    "\"/>\n<text class=\"tick\" x=\"", Num(f.left - 6),
                    "\" y=\"", Num(y + 4), "\" text-anchor=\"end\">",
                    absl::StrFormat("%g", *axis_top * i / 5.0), "</text>\n");
  }
  absl::StrAppend(&out, "</g>\n");
  AxisLabels(f, "", chart.y_label, &out);
  for (size_t b = 0; b < chart.bars.size(); ++b) {
    Bar(f, chart, b, *axis_top, &out);
  }
  std::vector<std::string> samples;
  for (size_t p = 0; p < chart.parts.size(); ++p) {
    samples.push_back(
        absl::StrCat("<rect x=\"0\" y=\"-6\" width=\"24\" "
                     "height=\"12\" fill=\"",
                     Color(static_cast<int>(p)), "\"/>"));
  }
  Legend(f, chart.parts, samples, &out);
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

}  // namespace ccreplay
