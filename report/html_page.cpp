#include "report/html_page.hpp"

#include <cmath>

#include "model/text.hpp"
#include "report/detail/utf8.hpp"

namespace pcieval::html {

std::string escape(std::string_view raw) {
  const std::string text = utf8::sanitized(raw);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
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
        out += "&#39;";
        break;
      default:
        if ((byte < 0x20 && c != '\t' && c != '\n' && c != '\r') || byte == 0x7f) {
          utf8::append(out, utf8::kReplacement);
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string_view base_page_style() {
  static constexpr std::string_view kBase = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid #d5d9df;padding-bottom:4px}
h3{font-size:15px;margin:14px 0 6px}
code,.mono{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
#verdict{border-radius:8px;padding:16px 20px;border:2px solid;margin-top:8px}
#verdict.pass{background:#e7f5ea;border-color:#1e7b34}#verdict.fail{background:#fbe9e9;border-color:#b3261e}
#verdict.inconclusive{background:#fff4dc;border-color:#9a6700}
.result-word{font-size:30px;font-weight:700;letter-spacing:.04em}
.pass .result-word,.status.pass{color:#1e7b34}.fail .result-word,.status.fail{color:#b3261e}
.inconclusive .result-word,.status.inconclusive{color:#9a6700}
.summary{font-size:15px;margin:6px 0}.meta{color:#4a5561}
.status{font-weight:600;white-space:nowrap}
table{border-collapse:collapse;background:#fff;width:100%;margin:6px 0 10px;font-size:13px}
.scroll{overflow-x:auto}
th,td{border:1px solid #d5d9df;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef0f3;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.none{color:#4a5561;font-style:italic}
)";
  return kBase;
}

// The class is the verdict's own word: the CSS and the text say the same.
std::string_view overall_class(Overall overall) { return to_string(overall); }

std::string number_text(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  return fixed_text(value, decimals);
}

std::string section_open(std::string_view id, std::string_view title) {
  return "<section id=\"" + std::string(id) + "\">\n<h2>" + std::string(title) + "</h2>\n";
}

std::string none(std::string_view sentence) { return "<p class=\"none\">" + std::string(sentence) + "</p>\n"; }

std::string page_open(std::string_view title, std::string_view own_style, std::string_view heading, HeadOrder order) {
  constexpr std::string_view kPolicy =
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  constexpr std::string_view kViewport = "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += order == HeadOrder::kPolicyFirst ? kPolicy : kViewport;
  out += order == HeadOrder::kPolicyFirst ? kViewport : kPolicy;
  out += "<title>";
  out += title;
  out += "</title>\n<style>";
  out += base_page_style();
  out += own_style;
  out += "</style>\n</head>\n<body>\n<main>\n<h1>";
  out += heading;
  out += "</h1>\n";
  return out;
}

std::string_view page_close() { return "</main>\n</body>\n</html>\n"; }

}  // namespace pcieval::html
