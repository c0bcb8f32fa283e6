#include "base/strings.h"

#include <fmt/format.h>

namespace mi {

std::string_view TrimLeft(std::string_view s, std::string_view chars) {
  size_t begin = s.find_first_not_of(chars);
  return begin == std::string_view::npos ? std::string_view() : s.substr(begin);
}

std::string_view TrimRight(std::string_view s, std::string_view chars) {
  size_t last = s.find_last_not_of(chars);
  return last == std::string_view::npos ? std::string_view()
                                        : s.substr(0, last + 1);
}

std::string_view Trim(std::string_view s, std::string_view chars) {
  return TrimRight(TrimLeft(s, chars), chars);
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

bool StartsWithIgnoringCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() &&
         EqualsIgnoringCase(s.substr(0, prefix.size()), prefix);
}

bool ContainsIgnoringCase(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() &&
           AsciiLower(haystack[i + k]) == AsciiLower(needle[k])) {
      ++k;
    }
    if (k == needle.size()) return true;
  }
  return false;
}

std::vector<std::string_view> Split(std::string_view s, char separator) {
  std::vector<std::string_view> out;
  while (true) {
    size_t pos = s.find(separator);
    out.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) break;
    s.remove_prefix(pos + 1);
  }
  return out;
}

std::vector<std::string_view> SplitNonEmpty(std::string_view s,
                                            char separator) {
  std::vector<std::string_view> out;
  for (std::string_view piece : Split(s, separator)) {
    if (!piece.empty()) out.push_back(piece);
  }
  return out;
}

std::string_view FileNameOf(std::string_view path) {
  size_t slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<double> ParseDouble(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsAsciiDigit(a[i]) && IsAsciiDigit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && IsAsciiDigit(a[ie])) ++ie;
      while (je < b.size() && IsAsciiDigit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

Utf8Char DecodeUtf8(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = byte(0);
  if (c < 0x80) return {c, 1};
  size_t length;
  char32_t cp;
  char32_t min;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return {};
  }
  if (i + length > s.size()) return {};
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, length};
}

std::string EscapeForTerminal(std::string_view text) {
  // Most text is printable ASCII: returned as it is.
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7F) break;
    ++i;
  }
  std::string out(text.substr(0, i));
  while (i < text.size()) {
    Utf8Char ch = DecodeUtf8(text, i);
    if (ch.length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (!IsTerminalControl(ch.code_point)) {
      out.append(text.substr(i, ch.length));
    } else if (ch.code_point == '\n') {
      out += "\\n";
    } else if (ch.code_point == '\r') {
      out += "\\r";
    } else if (ch.code_point == '\t') {
      out += "\\t";
    } else if (ch.code_point < 0x80) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(ch.code_point));
    } else {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(ch.code_point));
    }
    i += ch.length;
  }
  return out;
}

}  // namespace mi
