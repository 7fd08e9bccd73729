#include "sims/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace podsim::sims {

namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 80, kRight = 200, kTop = 40, kBottom = 60;
// Colours a reader tells apart, also in print.
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string bytes_label(double v) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return fmt::format("{:g}{}", v, units[u]);
}

// One axis: the data's range mapped onto pixels, and where its ticks go.
struct Axis {
  double lo, hi;
  bool log;
  double base;  // of the log ticks

  double unit(double v) const {  // 0..1 along the axis
    if (log) return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
    return (v - lo) / (hi - lo);
  }

  std::vector<double> ticks() const {
    std::vector<double> out;
    if (log) {
      double step = 1;
      const double decades = std::log(hi / lo) / std::log(base);
      while (decades / step > 8) step *= 2;
      for (double e = std::floor(std::log(lo) / std::log(base) + 1e-9);
           e <= std::log(hi) / std::log(base) + 1e-9; e += step) {
        const double v = std::pow(base, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
      }
      return out;
    }
    const double raw = (hi - lo) / 6;
    const double magnitude = std::pow(10, std::floor(std::log10(raw)));
    double step = magnitude;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
      if (raw <= m * magnitude) {
        step = m * magnitude;
        break;
      }
    }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
      out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
    return out;
  }
};

Axis make_axis(std::vector<double> values, bool log, double base, bool from_zero) {
  const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  double lo = *lo_it, hi = *hi_it;
  if (log) {
    if (lo <= 0) throw std::invalid_argument("a logarithmic axis needs values above zero");
    if (hi == lo) lo /= base, hi *= base;
    return {lo, hi, true, base};
  }
  if (from_zero) lo = std::min(lo, 0.0);
  if (hi == lo) hi = lo + 1;
  hi += (hi - lo) * 0.05;
  return {lo, hi, false, 10};
}

}  // namespace

std::string svg_plot(const PlotSpec& spec, const std::vector<PlotSeries>& series) {
  std::vector<double> xs, ys;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xs.push_back(x);
      ys.push_back(y);
    }
  }
  if (xs.empty()) throw std::invalid_argument("nothing to plot: no point has both values");
  const Axis ax = make_axis(xs, spec.log_x, spec.x_in_bytes ? 2 : 10, false);
  const Axis ay = make_axis(ys, spec.log_y, 10, true);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const auto px = [&](double x) { return kLeft + ax.unit(x) * plot_w; };
  const auto py = [&](double y) { return kTop + (1 - ay.unit(y)) * plot_h; };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      kWidth, kHeight, kLeft + plot_w / 2, escape(spec.title));
  for (double t : ax.ticks()) {
    const std::string label = spec.x_in_bytes ? bytes_label(t) : fmt::format("{:g}", t);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(t), kTop, kTop + plot_h, kTop + plot_h + 16, escape(label));
  }
  for (double t : ay.ticks()) {
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
        kLeft, py(t), kLeft + plot_w, kLeft - 6, py(t) + 4, t);
  }
  svg += fmt::format(
      "<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" fill=\"none\" stroke=\"black\"/>\n"
      "<text x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">{6}</text>\n"
      "<text transform=\"translate(20,{7}) rotate(-90)\" text-anchor=\"middle\">{8}</text>\n",
      kLeft, kTop, plot_w, plot_h, kLeft + plot_w / 2, kHeight - 18, escape(spec.x_label),
      kTop + plot_h / 2, escape(spec.y_label));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % std::size(kColours)];
    auto points = series[i].points;
    std::sort(points.begin(), points.end());
    std::string path;
    for (const auto& [x, y] : points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", px(x), py(y));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px(x),
                         py(y), colour);
    }
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path,
                       colour);
    const double ly = kTop + 14 + 18 * static_cast<double>(i);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"2\"/>\n<text x=\"{4}\" y=\"{5:.1f}\">{6}</text>\n",
        kWidth - kRight + 12, ly, kWidth - kRight + 36, colour, kWidth - kRight + 42, ly + 4,
        escape(series[i].name));
  }
  return svg + "</svg>\n";
}

std::string svg_plots(const std::vector<std::pair<PlotSpec, std::vector<PlotSeries>>>& plots) {
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\">\n",
      kWidth, kHeight * static_cast<double>(plots.size()));
  for (std::size_t i = 0; i < plots.size(); ++i) {
    std::string one = svg_plot(plots[i].first, plots[i].second);
    // Nested, each plot its own viewport a plot's height further down.
    one.replace(0, 4, fmt::format("<svg y=\"{}\"", kHeight * static_cast<double>(i)));
    svg += one;
  }
  return svg + "</svg>\n";
}

}  // namespace podsim::sims
