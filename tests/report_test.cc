// The SVG pictures (report/svg.h) parsed back as XML, and the pictures
// `sweep --svg` and `baseline --svg` write.
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/svg.h"
#include "tests/run_cli.h"
#include "tests/scratch_dir.h"
#include "tinyxml2.h"

namespace ccreplay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;

using ccreplay_test::Slurp;

bool HasClass(const XMLElement* e, const std::string& cls) {
  const char* c = e->Attribute("class");
  if (c == nullptr) return false;
  for (absl::string_view w : absl::StrSplit(c, ' ')) {
    if (w == cls) return true;
  }
  return false;
}

// Every element under `root` (depth first) with tag `tag` and class `cls`
// (any class when empty).
void Collect(const XMLElement* root, const std::string& tag,
             const std::string& cls, std::vector<const XMLElement*>* out) {
  for (const XMLElement* e = root->FirstChildElement(); e != nullptr;
       e = e->NextSiblingElement()) {
    if (tag == e->Name() && (cls.empty() || HasClass(e, cls))) {
      out->push_back(e);
    }
    Collect(e, tag, cls, out);
  }
}
std::vector<const XMLElement*> All(const XMLElement* root,
                                   const std::string& tag,
                                   const std::string& cls = "") {
  std::vector<const XMLElement*> out;
  Collect(root, tag, cls, &out);
  return out;
}

LogLogPlot TwoSeries() {
  LogLogPlot p;
  p.title = "allreduce <N=8> & more";
  p.x_label = "size (bytes)";
  p.y_label = "busbw (GB/s)";
  p.series.push_back(
      {"ring", {{1024, 1.5}, {65536, 40}, {1 << 20, 150}}, 0, false});
  p.series.push_back({"ring (Math)",
                      {{1024, 2}, {65536, 50}, {1 << 20, 0}, {1 << 22, 200}},
                      0,
                      true});
  return p;
}

TEST(SvgTest, PlotHasSeriesPointsAxesAndLegend) {
  auto svg = RenderLogLogPlot(TwoSeries());
  ASSERT_TRUE(svg.ok()) << svg.status();
  XMLDocument doc;
  ASSERT_EQ(doc.Parse(svg->c_str()), tinyxml2::XML_SUCCESS) << *svg;
  const XMLElement* root = doc.RootElement();
  EXPECT_STREQ(root->Name(), "svg");
  EXPECT_STREQ(root->Attribute("xmlns"), "http://www.w3.org/2000/svg");
  const auto series = All(root, "g", "series");
  ASSERT_EQ(series.size(), 2u);
  EXPECT_STREQ(series[1]->Attribute("data-name"), "ring (Math)");
  EXPECT_EQ(All(series[0], "circle", "point").size(), 3u);
  // The Math point with y = 0 cannot sit on a log axis: dropped.
  EXPECT_EQ(All(series[1], "circle", "point").size(), 3u);
  const auto line = All(series[1], "polyline");
  ASSERT_EQ(line.size(), 1u);
  EXPECT_EQ(std::vector<std::string>(
                absl::StrSplit(line[0]->Attribute("points"), ' '))
                .size(),
            3u);
  EXPECT_NE(line[0]->Attribute("stroke-dasharray"), nullptr);
  const auto labels = All(root, "text", "axis-label");
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_STREQ(labels[0]->GetText(), "size (bytes)");
  EXPECT_STREQ(labels[1]->GetText(), "busbw (GB/s)");
  EXPECT_STREQ(All(root, "text", "title")[0]->GetText(),
               "allreduce <N=8> & more");
  EXPECT_EQ(All(root, "g", "legend-item").size(), 2u);
  // x from 1K to 4M: ticks at powers of two with binary labels.
  std::vector<std::string> ticks;
  for (const XMLElement* t : All(All(root, "g", "x")[0], "text", "tick")) {
    ticks.push_back(t->GetText());
  }
  EXPECT_THAT(ticks, ::testing::Contains("1K"));
  EXPECT_THAT(ticks, ::testing::Contains("4M"));
  // y from 1.5 to 200: decades 1 .. 1000.
  std::vector<std::string> yticks;
  for (const XMLElement* t : All(All(root, "g", "y")[0], "text", "tick")) {
    yticks.push_back(t->GetText());
  }
  EXPECT_EQ(yticks, (std::vector<std::string>{"1", "10", "100", "1000"}));
  EXPECT_EQ(*RenderLogLogPlot(TwoSeries()), *svg);  // deterministic bytes
}

TEST(SvgTest, BarsStackInProportion) {
  BarChart c;
  c.title = "path";
  c.y_label = "us";
  c.parts = {"a", "b", "c"};
  c.bars = {{"row1", {1, 2, 0}}, {"row2", {0.5, 0.5, 3}}};
  auto svg = RenderBarChart(c);
  ASSERT_TRUE(svg.ok()) << svg.status();
  XMLDocument doc;
  ASSERT_EQ(doc.Parse(svg->c_str()), tinyxml2::XML_SUCCESS) << *svg;
  const auto bars = All(doc.RootElement(), "g", "bar");
  ASSERT_EQ(bars.size(), 2u);
  const auto segs1 = All(bars[0], "rect", "segment");
  ASSERT_EQ(segs1.size(), 2u);  // the zero part draws nothing
  EXPECT_NEAR(segs1[1]->DoubleAttribute("height"),
              2 * segs1[0]->DoubleAttribute("height"), 0.02);
  const auto segs2 = All(bars[1], "rect", "segment");
  ASSERT_EQ(segs2.size(), 3u);
  EXPECT_STREQ(segs2[2]->Attribute("data-name"), "c");
  // Stacked: each segment starts where the one below it ends.
  EXPECT_NEAR(
      segs2[1]->DoubleAttribute("y") + segs2[1]->DoubleAttribute("height"),
      segs2[0]->DoubleAttribute("y"), 0.02);
  EXPECT_EQ(All(doc.RootElement(), "g", "legend-item").size(), 3u);
  c.bars[0].values.pop_back();
  EXPECT_FALSE(RenderBarChart(c).ok());
  c.bars.clear();
  EXPECT_FALSE(RenderBarChart(c).ok());
  EXPECT_FALSE(RenderLogLogPlot(LogLogPlot{}).ok());
}

class SvgCliTest : public ccreplay_test::ScratchDirTest {
 protected:
  SvgCliTest() : ScratchDirTest("report_test") {}
};

TEST_F(SvgCliTest, SweepPlotsOnePanelPerOpNAndQuantity) {
  const std::string args =
      "sweep --op allreduce,broadcast -b 4K -e 64K -f 4 --algo ring,hd "
      "--topology ring,fullmesh --n 4 -q --svg ";
  auto r = ccreplay_test::RunCcreplay(args + Path("a.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = ccreplay_test::RunCcreplay(args + Path("b.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string svg = Slurp(Path("a.svg"));
  EXPECT_EQ(Slurp(Path("b.svg")), svg);
  XMLDocument doc;
  ASSERT_EQ(doc.Parse(svg.c_str()), tinyxml2::XML_SUCCESS);
  // (allreduce, 4) and (broadcast, 4), each busbw and time.
  const auto plots = All(doc.RootElement(), "svg", "plot");
  ASSERT_EQ(plots.size(), 4u);
  // AllReduce: 2 algorithms x 2 topologies, each replay + Math, 3 sizes.
  const auto ar = All(plots[0], "g", "series");
  ASSERT_EQ(ar.size(), 8u);
  for (const XMLElement* s : ar) {
    EXPECT_EQ(All(s, "circle", "point").size(), 3u);
  }
  EXPECT_STREQ(ar[0]->Attribute("data-name"), "ring on ring");
  EXPECT_STREQ(ar[1]->Attribute("data-name"), "ring on ring (Math)");
  // Broadcast (ring only, no Math formula): one series per topology.
  EXPECT_EQ(All(plots[2], "g", "series").size(), 2u);
  EXPECT_STREQ(All(plots[1], "text", "axis-label")[1]->GetText(), "time (us)");
}

TEST_F(SvgCliTest, BaselineBarsOnePerRow) {
  const auto r = ccreplay_test::RunCcreplay("baseline --svg " + Path("b.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  XMLDocument doc;
  ASSERT_EQ(doc.Parse(Slurp(Path("b.svg")).c_str()), tinyxml2::XML_SUCCESS);
  const auto bars = All(doc.RootElement(), "g", "bar");
  ASSERT_EQ(bars.size(), 8u);
  EXPECT_STREQ(bars[0]->Attribute("data-name"), "Dense_MLP allreduce");
  EXPECT_GE(All(bars[0], "rect", "segment").size(), 4u);
  EXPECT_EQ(All(doc.RootElement(), "g", "legend-item").size(), 8u);
}

// Makes a small sweep and models JSON and the report of them; returns the
// report's path, or "" after a failed expectation.
class ReportCliTest : public ccreplay_test::ScratchDirTest {
 protected:
  ReportCliTest() : ScratchDirTest("report_html") {}
  std::string MakeReport(const std::string& name) {
    auto r = ccreplay_test::RunCcreplay(
        "sweep --op allreduce -b 4K -e 1M -f 4 --algo ring,hd --topology "
        "ring,fullmesh --n 8 -q --json " +
        Path("s.json"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    r = ccreplay_test::RunCcreplay(
        "models --sweep --ops allreduce:ring --sizes 64K --n 4 --topology "
        "ring --no-calibration --json " +
        Path("m.json"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    r = ccreplay_test::RunCcreplay("report --sweep " + Path("s.json") +
                                   " --models " + Path("m.json") + " -o " +
                                   Path(name));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.exit_code == 0 ? Path(name) : "";
  }
};

TEST_F(ReportCliTest, SelfContainedPageWithEverySection) {
  const std::string path = MakeReport("r.html");
  ASSERT_FALSE(path.empty());
  const std::string html = Slurp(path);
  // Self-contained: nothing to fetch, nothing to run.
  EXPECT_THAT(html, Not(HasSubstr("http")));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, HasSubstr("<style>"));
  for (const char* title : {"Baseline: Math vs instruction-level replay",
                            "Where each replay&apos;s time goes",
                            "Sweep: bus bandwidth and time against size",
                            "Analytic models against the replay"}) {
    EXPECT_THAT(html, HasSubstr(std::string("<h2>") + title + "</h2>"));
  }
  // The breakdown bars (8 rows) and the sweep's busbw and time plots.
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos;
       p = html.find("<svg", p + 1)) {
    ++svgs;
  }
  EXPECT_EQ(svgs, 3u);
  EXPECT_THAT(html, HasSubstr("<td>Dense_MLP</td>"));
  EXPECT_THAT(html, HasSubstr("<td>alpha-beta</td>"));
  // The same inputs give the same bytes.
  const auto again = ccreplay_test::RunCcreplay(
      "report --sweep " + Path("s.json") + " --models " + Path("m.json") +
      " -o " + Path("again.html"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(Slurp(Path("again.html")), html);
}

TEST_F(ReportCliTest, BadInputsAreNamed) {
  std::ofstream(Path("bad.json")) << "{\"results\": 3}";
  auto r = ccreplay_test::RunCcreplay("report --sweep " + Path("bad.json") +
                                      " -o " + Path("r.html"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("--sweep " + Path("bad.json")));
  EXPECT_FALSE(std::filesystem::exists(Path("r.html")));
}

// The command line of headless Chromium, or "" when it is not installed.
std::string Chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const auto r = ccreplay_test::RunShell(std::string("command -v ") + name);
    if (r.exit_code == 0) return name;
  }
  return "";
}

// Loads `html` in headless Chromium with a fresh profile, screenshots it to
// `png`; returns what Chromium logged.
std::string RenderHeadless(const std::string& chromium, const std::string& html,
                           const std::string& png, const std::string& profile) {
  return ccreplay_test::RunShell(
             "timeout 180 " + chromium +
             " --headless --no-sandbox --disable-gpu --user-data-dir=" +
             profile + " --screenshot=" + png +
             " --window-size=1200,2400 --hide-scrollbars "
             "--enable-logging=stderr --v=0 file://" +
             html)
      .out;
}

bool IsPng(const std::string& path) {
  const std::string bytes = Slurp(path);
  return bytes.size() > 1000 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

TEST_F(ReportCliTest, RendersInHeadlessChromiumWithoutConsoleErrors) {
  const std::string chromium = Chromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium is not installed (scripts/deps.sh installs "
                    "Debian's chromium); the HTML report was not rendered";
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    // V8 reserves tens of GiB of address space up front and traps when it
    // cannot (the suite is run once under `ulimit -v`, issue 10).
    GTEST_SKIP() << "the address space is limited to " << as.rlim_cur
                 << " bytes (ulimit -v); Chromium cannot start under such a "
                    "limit, so the HTML report was not rendered";
  }
  const std::string path = MakeReport("r.html");
  ASSERT_FALSE(path.empty());
  const std::string log =
      RenderHeadless(chromium, path, Path("r.png"), Path("profile1"));
  EXPECT_TRUE(IsPng(Path("r.png"))) << log;
  EXPECT_THAT(log, Not(HasSubstr("CONSOLE"))) << log;
  // The check sees a console error when there is one.
  std::ofstream(Path("broken.html"))
      << "<!DOCTYPE html><html><body><script>console.error('boom')</script>"
         "</body></html>";
  const std::string broken = RenderHeadless(chromium, Path("broken.html"),
                                            Path("b.png"), Path("profile2"));
  EXPECT_THAT(broken, HasSubstr("CONSOLE")) << broken;
}

}  // namespace
}  // namespace ccreplay
