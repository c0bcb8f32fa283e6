#pragma once

// Small ASCII string helpers shared across modules (file-name ordering,
// case-insensitive matching of names a tool writes in varying case).

#include <string_view>

namespace mi {

// 'A'..'Z' -> 'a'..'z'; every other byte unchanged.
constexpr char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b);
bool ContainsIgnoringCase(std::string_view haystack, std::string_view needle);

// "Natural" order of names: runs of digits compare as numbers, so
// msprof_slice_2 comes before msprof_slice_10 (leading zeros ignored; on a
// tie the rest decides). Everything else compares bytewise.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace mi
