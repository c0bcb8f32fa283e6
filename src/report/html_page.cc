#include "report/html_page.h"

#include <fmt/format.h>

#include "report/escape.h"

namespace mi::report {

std::string HtmlPageStart(const std::string& title,
                          const std::string& extra_css) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="model-inspector">
<title>{}</title>
<style>
body {{ font-family: sans-serif; font-size: 14px; margin: 24px; color: #1f2328; background: #fff; }}
h1 {{ font-size: 22px; margin: 0 0 8px; }}
h2 {{ font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }}
h3 {{ font-size: 15px; margin: 18px 0 6px; }}
table {{ border-collapse: collapse; margin: 6px 0 4px; }}
th, td {{ border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f6f8fa; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
caption {{ text-align: left; font-weight: bold; padding: 4px 0; }}
.verdict {{ padding: 10px 14px; border-radius: 6px; font-size: 17px; font-weight: bold; margin: 8px 0 12px; }}
.verdict.failed {{ background: #ffebe9; color: #82071e; border: 1px solid #ff8182; }}
.verdict.passed {{ background: #dafbe1; color: #116329; border: 1px solid #4ac26b; }}
.verdict.info {{ background: #ddf4ff; color: #0a3069; border: 1px solid #54aeff; }}
.note {{ color: #57606a; }}
.legend span {{ display: inline-block; margin-right: 14px; }}
.legend i {{ display: inline-block; width: 12px; height: 12px; border: 2px solid; margin-right: 4px; vertical-align: -2px; }}
.drawing {{ overflow: auto; max-width: 100%; border: 1px solid #d0d7de; margin: 6px 0; }}
tr.crossed td {{ background: #fff5f5; }}
@media print {{ .drawing {{ overflow: visible; border: none; }} h2 {{ break-after: avoid; }} }}
{}</style>
</head>
<body>
)",
                     XmlEscape(title), extra_css);
}

std::string HtmlPageEnd() { return "</body>\n</html>\n"; }

std::string HtmlHeading(int level, const std::string& text) {
  return fmt::format("<h{0}>{1}</h{0}>\n", level, XmlEscape(text));
}

std::string HtmlParagraph(const std::string& text,
                          const std::string& css_class) {
  if (css_class.empty()) return "<p>" + XmlEscape(text) + "</p>\n";
  return fmt::format("<p class=\"{}\">{}</p>\n", XmlEscape(css_class),
                     XmlEscape(text));
}

std::string HtmlTable(const Section& s) {
  const encoders::Table& t = s.table;
  std::string out =
      "<table>\n<caption>" + XmlEscape(t.title) + "</caption>\n<thead><tr>";
  for (const std::string& h : t.header) out += "<th>" + XmlEscape(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    // The rules table marks crossed rules (its second column).
    bool crossed = t.header.size() > 1 && t.header[1] == "result" &&
                   row.size() > 1 && row[1] == "crossed";
    out += crossed ? "<tr class=\"crossed\">" : "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      bool numeric = c < t.numeric.size() && t.numeric[c];
      out += numeric ? "<td class=\"num\">" : "<td>";
      out += XmlEscape(row[c]) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (s.left_out > 0) {
    out += HtmlParagraph(
        fmt::format("{} more rows not shown (the JSON report lists them all).",
                    s.left_out),
        "note");
  }
  return out;
}

}  // namespace mi::report
