#pragma once

// The frame shared by the HTML reports: one self-contained page (inline
// style, no script; a Content-Security-Policy that forbids every fetch, so
// opening it makes no request), tables from report sections.

#include <string>

#include "report/diff_tables.h"

namespace mi::report {

// `extra_css`: rules of one report added to the shared style sheet.
std::string HtmlPageStart(const std::string& title,
                          const std::string& extra_css = "");
std::string HtmlPageEnd();
std::string HtmlTable(const Section& section);
// "<h2 id=...>" with escaped text.
std::string HtmlHeading(int level, const std::string& text);
std::string HtmlParagraph(const std::string& text,
                          const std::string& css_class = "");

}  // namespace mi::report
