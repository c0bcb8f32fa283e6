#include "report/escape.h"

#include "base/strings.h"

namespace mi::report {
namespace {

void AppendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

std::string XmlEscapeImpl(std::string_view text, bool attribute);

}  // namespace

std::string XmlEscape(std::string_view text) {
  return XmlEscapeImpl(text, false);
}

std::string XmlAttributeEscape(std::string_view text) {
  return XmlEscapeImpl(text, true);
}

namespace {
std::string XmlEscapeImpl(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  while (i < text.size()) {
    Utf8Char u = DecodeUtf8(text, i);
    if (u.length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    i += u.length;
    char32_t c = u.code_point;
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&#39;";
        continue;
      case '\r':
        out += "&#13;";
        continue;
      case '\n':
        if (!attribute) break;
        out += "&#10;";
        continue;
      case '\t':
        if (!attribute) break;
        out += "&#9;";
        continue;
      default:
        break;
    }
    bool allowed = c == '\t' || c == '\n' || c == '\r' || c >= 0x20;
    if (c == 0xFFFE || c == 0xFFFF) allowed = false;
    if (allowed) {
      AppendUtf8(out, c);
    } else {
      out += kReplacement;
    }
  }
  return out;
}
}  // namespace

std::string MarkdownEscape(std::string_view text) {
  std::string visible = EscapeForTerminal(text);
  std::string out;
  out.reserve(visible.size() + 16);
  for (char c : visible) {
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
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '#':
      case '~':
      case '!':
        out.push_back('\\');
        out.push_back(c);
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace mi::report
