#include "base/strings.h"

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

}  // namespace mi
