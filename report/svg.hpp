// Used by report/ and fleet/ only: markup escaping, the parts the node page
// and the fleet page share (look, number text, sections), and small inline
// SVG line charts for the HTML report. The
// charts are drawn here, in C++, so the report needs no script and no library
// fetched from the network to show a curve.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/verdict.hpp"

namespace pcieval::svg {

// `raw` made safe as HTML or SVG text and as a double-quoted attribute value:
// ill-formed UTF-8 becomes U+FFFD, & < > " ' become character references, and
// control characters other than tab, newline and carriage return (which HTML
// forbids in text) become U+FFFD as well. Every string that came from a
// results document goes through here: hostnames and model names are data,
// never markup.
[[nodiscard]] std::string escape(std::string_view raw);

// The CSS both pages start from (type, verdict box, tables); each page adds
// its own rules after it. Colours say the same as the words beside them.
[[nodiscard]] std::string_view base_page_style();
// "pass", "fail" or "inconclusive": the colour class of an overall verdict.
[[nodiscard]] std::string_view overall_class(Overall overall);
// `value` with `decimals` digits after the point; "-" when not finite.
[[nodiscard]] std::string number_text(double value, int decimals = 2);
// `<section id="id">` and its heading; `title` is markup, not document data.
[[nodiscard]] std::string section_open(std::string_view id, std::string_view title);

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
  kBytes,    // binary sizes: "4 KiB", "1 GiB"
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

// "256 MiB", "4 KiB", "1.5 GiB", "512 B".
[[nodiscard]] std::string binary_size_text(double bytes);

}  // namespace pcieval::svg
