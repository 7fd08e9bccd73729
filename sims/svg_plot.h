// Line plots as SVG, for `podsim plot` and `podsim sweep --plot`: one line per series against a
// numeric x, with axes, ticks, labels with units and a legend. Sizes and chip counts span
// decades, so either axis may be logarithmic (base 2 ticks labelled 1K, 1M, ... for bytes).
// Plain text; no plotting library in Debian's C++ packages writes SVG without a display stack.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace podsim::sims {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // x, y; drawn in x order
};

struct PlotSpec {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  bool x_in_bytes = false;  // tick labels 1K, 4M, 1G
};

// Throws std::invalid_argument when there is nothing to draw or a log axis meets a value <= 0.
std::string svg_plot(const PlotSpec& spec, const std::vector<PlotSeries>& series);

// Several plots, one above the other, as one SVG. Throws as svg_plot does.
std::string svg_plots(const std::vector<std::pair<PlotSpec, std::vector<PlotSeries>>>& plots);

}  // namespace podsim::sims
