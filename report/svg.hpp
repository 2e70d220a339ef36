// Small inline SVG line charts for the HTML report (report/html.cpp). The
// charts are drawn here, in C++, so the report needs no script and no library
// fetched from the network to show a curve.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pcieval::svg {

struct Point {
  double x = 0;
  double y = 0;
  // The spread behind y (a measurement's min and max trial), drawn as a
  // whisker when both are present.
  std::optional<double> y_low;
  std::optional<double> y_high;
  bool filled = true;   // hollow markers mark a point of another kind (an idle reading)
  std::string tooltip;  // shown on hover (SVG <title>); plain text, escaped here
};

struct Series {
  std::string name;  // in the legend when the chart has more than one series
  std::vector<Point> points;
  // A reading holds until the next one (link state over time), so it is
  // drawn as steps rather than straight segments.
  bool step = false;
};

enum class AxisFormat {
  kBytes,    // binary sizes: "4 KiB", "1 GiB" (model/text.hpp binary_size_text)
  kSeconds,  // "1.5 s"
  kNumber,   // "27.6"
};

struct Chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  AxisFormat x_format = AxisFormat::kNumber;
  bool x_log2 = false;  // sizes grow by powers of 4: a log axis spaces them evenly
  std::vector<Series> series;
  // A horizontal reference (a link budget), drawn dashed with its label.
  std::optional<double> reference_y;
  std::string reference_label;
};

// The chart as one <svg> element (role="img", aria-label from the title),
// with axes, ticks and a legend, sized by its viewBox so the page can scale
// it. Points with a non-finite coordinate, or x <= 0 on a log axis, are left
// out. A chart with no drawable point still renders its frame and says
// "no data".
[[nodiscard]] std::string render_chart(const Chart& chart);

}  // namespace pcieval::svg
