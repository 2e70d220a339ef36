#include "report/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "model/text.hpp"
#include "report/html_page.hpp"

namespace pcieval::svg {

using html::escape;

namespace {

// Okabe-Ito: told apart by readers with any common colour-vision deficiency.
constexpr std::array<const char*, 6> kPalette = {"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00"};

constexpr double kWidth = 560;
constexpr double kHeight = 260;
constexpr double kLeft = 58;
constexpr double kRight = 16;
constexpr double kTop = 30;
constexpr double kBottom = 46;

std::string num(double value, int decimals = 2) { return fixed_text(value, decimals); }

// A tick step of 1, 2 or 5 times a power of ten giving about `count` ticks.
double nice_step(double span, int count) {
  if (!(span > 0)) return 1;
  const double raw = span / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (raw <= factor * magnitude) return factor * magnitude;
  }
  return 10 * magnitude;
}

std::string axis_text(double value, AxisFormat format) {
  switch (format) {
    case AxisFormat::kBytes:
      return binary_size_text(value);
    case AxisFormat::kSeconds:
      return num(value, value < 10 ? 2 : 1) + " s";
    case AxisFormat::kNumber:
      break;
  }
  const double magnitude = std::fabs(value);
  return num(value, magnitude >= 100 || value == std::floor(value) ? 0 : magnitude >= 10 ? 1 : 2);
}

struct Range {
  double min = 0;
  double max = 1;
};

bool drawable(const Point& point, bool x_log2) {
  return std::isfinite(point.x) && std::isfinite(point.y) && (!x_log2 || point.x > 0);
}

}  // namespace

std::string render_chart(const Chart& chart) {
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  const auto tx = [&](double x) { return chart.x_log2 ? std::log2(x) : x; };

  Range xr{0, 0};
  Range yr{0, 0};
  bool any = false;
  std::vector<double> x_values;
  for (const Series& series : chart.series) {
    for (const Point& p : series.points) {
      if (!drawable(p, chart.x_log2)) continue;
      const double x = tx(p.x);
      const double top = std::max(p.y, p.y_high.value_or(p.y));
      if (!any) xr = {x, x};
      xr = {std::min(xr.min, x), std::max(xr.max, x)};
      yr.max = std::max(yr.max, top);
      yr.min = std::min(yr.min, std::min(p.y, p.y_low.value_or(p.y)));
      x_values.push_back(p.x);
      any = true;
    }
  }
  if (chart.reference_y && std::isfinite(*chart.reference_y)) yr.max = std::max(yr.max, *chart.reference_y);
  // Time runs from the start of sampling: the axis starts there too.
  if (!chart.x_log2 && chart.x_format == AxisFormat::kSeconds && xr.min > 0) xr.min = 0;
  if (xr.max == xr.min) xr = {xr.min - 1, xr.max + 1};
  const double y_step = nice_step(yr.max - yr.min, 5);
  yr.max = y_step * std::ceil(yr.max * 1.05 / y_step);
  yr.min = y_step * std::floor(yr.min / y_step);
  if (yr.max <= yr.min) yr.max = yr.min + y_step;

  const auto px = [&](double x) { return kLeft + (tx(x) - xr.min) / (xr.max - xr.min) * plot_w; };
  const auto py = [&](double y) { return kTop + plot_h - (y - yr.min) / (yr.max - yr.min) * plot_h; };

  std::string out = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + num(kWidth, 0) + " " +
                    num(kHeight, 0) + "\" role=\"img\" aria-label=\"" + escape(chart.title) + "\">\n";
  out += "<title>" + escape(chart.title) + "</title>\n";
  out += "<text class=\"chart-title\" x=\"" + num(kLeft, 0) + "\" y=\"18\">" + escape(chart.title) + "</text>\n";
  out += "<rect class=\"plot\" x=\"" + num(kLeft, 0) + "\" y=\"" + num(kTop, 0) + "\" width=\"" + num(plot_w, 0) +
         "\" height=\"" + num(plot_h, 0) + "\"/>\n";

  // Y grid and labels.
  for (double y = yr.min; y <= yr.max + y_step / 2; y += y_step) {
    out += "<line class=\"grid\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + plot_w) + "\" y1=\"" + num(py(y)) +
           "\" y2=\"" + num(py(y)) + "\"/><text class=\"tick\" x=\"" + num(kLeft - 6) + "\" y=\"" + num(py(y) + 4) +
           "\" text-anchor=\"end\">" + escape(axis_text(y, AxisFormat::kNumber)) + "</text>\n";
  }
  // X ticks: on a log axis the data's own x values when few (the sweep's
  // sizes), else even steps.
  std::sort(x_values.begin(), x_values.end());
  x_values.erase(std::unique(x_values.begin(), x_values.end()), x_values.end());
  std::vector<double> x_ticks;
  if (chart.x_log2 && !x_values.empty() && x_values.size() <= 10) {
    x_ticks = x_values;
  } else if (any && !chart.x_log2) {
    const double step = nice_step(xr.max - xr.min, 6);
    for (double x = std::ceil(xr.min / step) * step; x <= xr.max + step / 1000; x += step) x_ticks.push_back(x);
  } else if (any) {
    for (double e = std::ceil(xr.min); e <= xr.max; e += 2) x_ticks.push_back(std::exp2(e));
  }
  for (const double x : x_ticks) {
    out += "<line class=\"grid\" x1=\"" + num(px(x)) + "\" x2=\"" + num(px(x)) + "\" y1=\"" + num(kTop) + "\" y2=\"" +
           num(kTop + plot_h) + "\"/><text class=\"tick\" x=\"" + num(px(x)) + "\" y=\"" + num(kTop + plot_h + 16) +
           "\" text-anchor=\"middle\">" + escape(axis_text(x, chart.x_format)) + "</text>\n";
  }
  out += "<text class=\"axis\" x=\"" + num(kLeft + plot_w / 2) + "\" y=\"" + num(kHeight - 8) +
         "\" text-anchor=\"middle\">" + escape(chart.x_label) + "</text>\n";
  out += "<text class=\"axis\" transform=\"translate(14 " + num(kTop + plot_h / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + escape(chart.y_label) + "</text>\n";

  if (chart.reference_y && std::isfinite(*chart.reference_y)) {
    const double y = py(*chart.reference_y);
    out += "<line class=\"reference\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + plot_w) + "\" y1=\"" + num(y) +
           "\" y2=\"" + num(y) + "\"/><text class=\"reference-label\" x=\"" + num(kLeft + plot_w - 4) + "\" y=\"" +
           num(y - 5) + "\" text-anchor=\"end\">" + escape(chart.reference_label) + "</text>\n";
  }

  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    const Series& series = chart.series[s];
    const char* colour = kPalette[s % kPalette.size()];
    std::vector<const Point*> points;
    for (const Point& p : series.points) {
      if (drawable(p, chart.x_log2)) points.push_back(&p);
    }
    if (points.empty()) continue;
    std::string path;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Point& p = *points[i];
      if (i == 0) {
        path += "M" + num(px(p.x)) + " " + num(py(p.y));
      } else if (series.step) {
        path += " H" + num(px(p.x)) + " V" + num(py(p.y));
      } else {
        path += " L" + num(px(p.x)) + " " + num(py(p.y));
      }
    }
    out += "<g class=\"series\" data-series=\"" + escape(series.name) + "\">\n";
    out += "<path class=\"line\" d=\"" + path + "\" stroke=\"" + colour + "\"/>\n";
    // Markers only while they stay readable; a long sampling run is a line.
    const bool markers = points.size() <= 200;
    for (const Point* p : points) {
      if (p->y_low && p->y_high && std::isfinite(*p->y_low) && std::isfinite(*p->y_high)) {
        out += "<line class=\"whisker\" x1=\"" + num(px(p->x)) + "\" x2=\"" + num(px(p->x)) + "\" y1=\"" +
               num(py(*p->y_low)) + "\" y2=\"" + num(py(*p->y_high)) + "\" stroke=\"" + colour + "\"/>\n";
      }
      if (!markers) continue;
      out += "<circle cx=\"" + num(px(p->x)) + "\" cy=\"" + num(py(p->y)) + "\" r=\"3.5\" stroke=\"" + colour +
             "\" fill=\"" + (p->filled ? colour : "#ffffff") + "\">";
      if (!p->tooltip.empty()) out += "<title>" + escape(p->tooltip) + "</title>";
      out += "</circle>\n";
    }
    out += "</g>\n";
  }
  if (chart.series.size() > 1) {
    // Right-aligned in the top margin, beside the title, clear of the data.
    double x = kWidth - kRight;
    for (std::size_t s = chart.series.size(); s-- > 0;) {
      x -= 20 + 6 * static_cast<double>(chart.series[s].name.size());
      out += "<rect x=\"" + num(x) + "\" y=\"9\" width=\"10\" height=\"10\" fill=\"" + kPalette[s % kPalette.size()] +
             "\"/><text class=\"legend\" x=\"" + num(x + 14) + "\" y=\"18\">" + escape(chart.series[s].name) +
             "</text>\n";
    }
  }
  if (!any) {
    out += "<text class=\"axis\" x=\"" + num(kLeft + plot_w / 2) + "\" y=\"" + num(kTop + plot_h / 2) +
           "\" text-anchor=\"middle\">no data</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace pcieval::svg
