#pragma once

// Escaping of names taken from input files (node names, op types, kernel
// names, labels) for each report format. A name may hold anything: markup,
// quotes, control characters, bytes that are not UTF-8.

#include <string>
#include <string_view>

namespace mi::report {

// Text for HTML and XML, in element content and in quoted attribute values
// alike: & < > " ' as entities; characters XML 1.0 does not allow (C0
// controls other than TAB, LF and CR; U+FFFE, U+FFFF) and bytes that are
// not valid UTF-8 as U+FFFD, so the document stays well-formed.
// CR is written &#13; (a parser would turn a raw CR LF into LF).
std::string XmlEscape(std::string_view text);
// The same for an XML attribute value, where a parser turns a raw TAB or
// LF into a space: those are written &#9; and &#10; so a name
// round-trips.
std::string XmlAttributeEscape(std::string_view text);

// Text inside a Markdown paragraph or table cell (GitHub / GitLab
// flavoured): terminal controls made visible first (a newline would end
// the row), then the characters Markdown acts on backslash-escaped and
// & < > as entities, so a name can neither break the table nor inject
// HTML or links.
std::string MarkdownEscape(std::string_view text);

}  // namespace mi::report
