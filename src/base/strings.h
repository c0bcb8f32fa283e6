#pragma once

// Small ASCII string helpers shared across modules: trimming, splitting and
// joining, case-insensitive matching of names a tool writes in varying case,
// strict whole-text number parsing, file names of paths, the natural
// order of file names, UTF-8 decoding and text made safe for a terminal.
// Everything here is locale-independent.

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace mi {

// 'A'..'Z' -> 'a'..'z'; every other byte unchanged.
constexpr char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// What std::isspace counts as blank in the "C" locale.
inline constexpr std::string_view kAsciiWhitespace = " \t\n\r\f\v";
// JSON's whitespace (RFC 8259): no form feed or vertical tab.
inline constexpr std::string_view kJsonWhitespace = " \t\n\r";

// `s` without the leading / trailing / both runs of bytes from `chars`.
std::string_view TrimLeft(std::string_view s,
                          std::string_view chars = kAsciiWhitespace);
std::string_view TrimRight(std::string_view s,
                           std::string_view chars = kAsciiWhitespace);
std::string_view Trim(std::string_view s,
                      std::string_view chars = kAsciiWhitespace);

inline bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}
bool EqualsIgnoringCase(std::string_view a, std::string_view b);
bool StartsWithIgnoringCase(std::string_view s, std::string_view prefix);
// An empty needle is contained in every string.
bool ContainsIgnoringCase(std::string_view haystack, std::string_view needle);

// The pieces of `s` between the separators, empty ones included: "a,,b" ->
// {"a", "", "b"}, "" -> {""}. The pieces point into `s`.
std::vector<std::string_view> Split(std::string_view s, char separator);
// As Split, without the empty pieces: "a,,b," -> {"a", "b"}, "" -> {}.
std::vector<std::string_view> SplitNonEmpty(std::string_view s, char separator);

// The items (anything std::string's += takes) with `separator` between
// them: {"a", "b"}, ", " -> "a, b".
template <typename Range>
std::string Join(const Range& items, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    first = false;
    out += item;
  }
  return out;
}

// The last component of a path ("a/b/c.json" -> "c.json"), split at '/' or
// '\' (paths written on Windows); the whole path when it has neither.
std::string_view FileNameOf(std::string_view path);

// The whole of `text` as a decimal integer of type T: digits with a leading
// '-' for signed types only; no '+', blanks, hex or exponent, and within
// T's range. nullopt otherwise.
template <typename T>
std::optional<T> ParseInteger(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}
// The whole of `text` as a decimal floating-point number ("0.25", "-1e3",
// "inf"; no '+' or blanks). nullopt otherwise, or when out of range.
std::optional<double> ParseDouble(std::string_view text);

// "Natural" order of names: runs of digits compare as numbers, so
// msprof_slice_2 comes before msprof_slice_10 (leading zeros ignored; on a
// tie the rest decides). Everything else compares bytewise.
bool NaturalLess(std::string_view a, std::string_view b);

// The code point of the UTF-8 sequence starting at s[i] and its length in
// bytes; length 0 when s[i] starts no valid sequence (a stray continuation
// byte, a truncated sequence, an overlong form, a surrogate, a value past
// U+10FFFF).
struct Utf8Char {
  char32_t code_point = 0;
  size_t length = 0;
};
Utf8Char DecodeUtf8(std::string_view s, size_t i);

// Code points a terminal acts on instead of showing: the C0 controls (ESC
// starts escape sequences, CR and LF move the cursor), DEL, the C1 controls
// (U+0080..U+009F: CSI and OSC in their 8-bit form) and the bidirectional
// marks, embeddings, overrides and isolates, which reorder what follows on
// the line ("Trojan Source").
constexpr bool IsTerminalControl(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E ||
         c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

// `text` for a terminal: every terminal control made visible, so that a
// name taken from an input file can neither retitle the window, clear the
// screen, move the cursor nor start a new line (a fake table row). LF, CR
// and TAB become \n, \r and \t; the other C0 controls, DEL and bytes that
// are not valid UTF-8 become \xHH (ESC is \x1b); C1 controls and the
// bidirectional controls become \uHHHH. Everything else, valid UTF-8 and
// backslashes included, is unchanged.
std::string EscapeForTerminal(std::string_view text);

}  // namespace mi
