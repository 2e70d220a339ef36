// Used by report/ and fleet/ only: what the node page (report/html.cpp) and
// the fleet page (fleet/fleet_html.cpp) share: markup escaping, the page
// skeleton and its base style, number text and sections. The charts are
// report/svg.hpp.
#pragma once

#include <string>
#include <string_view>

#include "model/verdict.hpp"

namespace pcieval::html {

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
// A sentence saying a section has nothing to show; `sentence` is markup.
[[nodiscard]] std::string none(std::string_view sentence);

// The order of the head's viewport and Content-Security-Policy meta
// elements: the two pages were written apart and each keeps its bytes.
enum class HeadOrder { kPolicyFirst, kViewportFirst };

// From <!DOCTYPE html> to the page's <h1>: UTF-8, a Content-Security-Policy
// that lets nothing be fetched (no script, image, font or stylesheet by URL:
// a report opened from a ticket must not call out, and had an escape been
// missed, no script could run either), the viewport, `title` (markup),
// base_page_style() then `own_style`, and `heading` (markup) as the <h1>.
[[nodiscard]] std::string page_open(std::string_view title, std::string_view own_style, std::string_view heading,
                                    HeadOrder order);
// What closes page_open's <main>, <body> and <html>.
[[nodiscard]] std::string_view page_close();

}  // namespace pcieval::html
