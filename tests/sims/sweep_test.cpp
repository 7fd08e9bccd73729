// `podsim sweep`'s plain logic: a sweep file's points (the cross product of its axes), its errors
// with their file positions, rows led by the point's values, CSV both ways, and the SVG plot.
#include "sims/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config_tree.h"
#include "sims/svg_plot.h"

namespace podsim::sims {
namespace {

using ::testing::HasSubstr;

TEST(Sweep, PointsAreEveryCombinationTheLastAxisFastest) {
  const auto spec = parse_sweep(
      "command: collective --timing-only\n"
      "axes:\n"
      "  system: [hls2, hls1]\n"
      "  sizes: 1MiB\n"
      "  set:\n"
      "    chip.nic.ports: [20, 24, 28]\n",
      "s.yaml");
  const auto points = sweep_points(spec);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[1].describe(), "system=hls2 sizes=1MiB chip.nic.ports=24");
  EXPECT_EQ(points[5].args,
            (std::vector<std::string>{"collective", "--timing-only", "--system", "hls1", "--sizes",
                                      "1MiB", "--set", "chip.nic.ports=28"}));
  EXPECT_EQ(points[5].index, 5);
}

std::string error_of(const std::string& text) {
  try {
    parse_sweep(text, "s.yaml");
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Sweep, BadFilesNameWhereAndWhat) {
  EXPECT_THAT(error_of("command: collective\n"), HasSubstr("needs 'command' and 'axes'"));
  EXPECT_THAT(error_of("command: collective\naxes: {}\n"), HasSubstr("at least one axis"));
  EXPECT_THAT(error_of("command: --sizes 1\naxes: {sizes: [1]}\n"), HasSubstr("s.yaml:1"));
  EXPECT_THAT(error_of("command: sweep x.yaml\naxes: {sizes: [1]}\n"),
              HasSubstr("cannot be swept"));
  EXPECT_THAT(error_of("command: collective\naxes:\n  sizes: []\n"), HasSubstr("s.yaml:3"));
  EXPECT_THAT(error_of("command: collective\naxes: {sizes: [1]}\nplot: yes\n"),
              HasSubstr("s.yaml:3:1: error: key 'plot': unknown key"));
  EXPECT_THAT(error_of("command: collective\naxes:\n  --sizes: [1]\n"),
              HasSubstr("long name without dashes"));
}

TEST(Sweep, RowsLeadWithThePointAndTakeTheResultsScalars) {
  SweepPoint point;
  point.index = 3;
  point.values = {{"algo", "ring"}};
  const auto result = nlohmann::ordered_json::parse(
      R"({"system": "hls2", "ranks": 8, "cpu_seconds": 0.5, "rows": [{"size_bytes": 1024, "algo": "ring"},
          {"size_bytes": 2048, "algo": "ring"}], "event_queue": {"callbacks": 5}})");
  const auto rows = point_rows(point, result);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].dump(),
            R"({"point":3,"algo":"ring","size_bytes":2048,"system":"hls2","ranks":8})");
  // A command without rows gives one row of its scalars.
  EXPECT_EQ(point_rows(point, nlohmann::ordered_json::parse(R"({"goodput": 1.5})")).size(), 1u);
}

TEST(Sweep, CsvRoundTripsWithEveryColumnAndQuotes) {
  std::vector<nlohmann::ordered_json> rows = {
      nlohmann::ordered_json::parse(R"({"point": 0, "name": "a,b", "x": 1.5})"),
      nlohmann::ordered_json::parse(R"({"point": 1, "y": "say \"hi\""})")};
  const std::string csv = rows_to_csv(rows);
  EXPECT_EQ(csv, "point,name,x,y\n0,\"a,b\",1.5,\n1,,,\"say \"\"hi\"\"\"\n");
  const auto back = rows_from_csv(csv, "r.csv");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0]["name"], "a,b");
  EXPECT_EQ(back[0]["x"], 1.5);
  EXPECT_TRUE(back[1]["x"].is_null());
  EXPECT_EQ(back[1]["y"], "say \"hi\"");
  EXPECT_THROW(rows_from_csv("a,b\n1\n", "r.csv"), std::runtime_error);
}

TEST(SvgPlot, DrawsAxesTicksLegendAndOneLinePerSeries) {
  PlotSpec spec;
  spec.title = "busbw <all_reduce>";
  spec.x_label = "size (bytes)";
  spec.y_label = "bus bandwidth (GB/s)";
  spec.log_x = spec.x_in_bytes = true;
  const std::string svg =
      svg_plot(spec, {{"ring", {{1024, 1}, {1 << 20, 10}}}, {"mesh", {{1024, 2}, {1 << 20, 80}}}});
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("busbw &lt;all_reduce&gt;"));
  EXPECT_THAT(svg, HasSubstr(">1K</text>"));
  EXPECT_THAT(svg, HasSubstr(">1M</text>"));
  EXPECT_THAT(svg, HasSubstr(">bus bandwidth (GB/s)</text>"));
  EXPECT_THAT(svg, HasSubstr(">ring</text>"));
  EXPECT_THAT(svg, HasSubstr(">mesh</text>"));
  EXPECT_EQ(std::count(svg.begin(), svg.end(), 'M') >= 2, true);
  EXPECT_THROW(svg_plot(spec, {}), std::invalid_argument);
  EXPECT_THROW(svg_plot(spec, {{"bad", {{0, 1}}}}), std::invalid_argument);  // log of zero
}

// Plots one above the other: each its own viewport, a plot's height apart.
TEST(SvgPlot, StacksPlotsInOneSvg) {
  PlotSpec a;
  a.title = "throughput";
  PlotSpec b;
  b.title = "efficiency";
  const std::string svg =
      svg_plots({{a, {{"x", {{1, 1}, {2, 2}}}}}, {b, {{"y", {{1, 1}, {2, 1}}}}}});
  EXPECT_THAT(svg, HasSubstr("height=\"880\""));
  EXPECT_THAT(svg, HasSubstr("<svg y=\"0\""));
  EXPECT_THAT(svg, HasSubstr("<svg y=\"440\""));
  EXPECT_THAT(svg, HasSubstr(">efficiency</text>"));
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_THROW(svg_plots({{a, {}}}), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::sims
