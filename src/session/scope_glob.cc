// Segment-wise glob matching over scope paths (scope_glob.h).

#include "session/scope_glob.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"

namespace mi {

namespace {

struct Token {
  // 'c' literal, '?' one character, '*' a run in a segment, 'S' ('**') a
  // run across segments, 'D' ('**/') no segment or whole segments.
  char kind;
  char c;
};

std::vector<Token> Tokenize(std::string_view pattern) {
  std::vector<Token> tokens;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '*') {
      if (i + 1 < pattern.size() && pattern[i + 1] == '*') {
        while (i + 1 < pattern.size() && pattern[i + 1] == '*') ++i;
        if (i + 1 < pattern.size() && pattern[i + 1] == '/') {
          ++i;
          tokens.push_back({'D', 0});
        } else {
          tokens.push_back({'S', 0});
        }
      } else {
        tokens.push_back({'*', 0});
      }
    } else if (c == '?') {
      tokens.push_back({'?', 0});
    } else {
      tokens.push_back({'c', AsciiLower(c)});
    }
  }
  return tokens;
}

}  // namespace

bool ScopeGlobMatch(std::string_view pattern, std::string_view path,
                    std::vector<uint8_t>* scratch) {
  const bool anchored = !pattern.empty() && pattern.front() == '/';
  if (anchored) pattern.remove_prefix(1);
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  const size_t n = path.size();
  // Rows over path positions j: row[j] says whether the pattern's tokens
  // from t on match path[j:]. Built from the last token to the first; the
  // final row answers for every start at once.
  std::vector<uint8_t>& buf = *scratch;
  buf.assign(2 * (n + 1), 0);
  uint8_t* cur = buf.data();
  uint8_t* next = buf.data() + n + 1;
  next[n] = 1;  // no tokens left: only the end of the path matches
  const std::vector<Token> tokens = Tokenize(pattern);
  for (size_t t = tokens.size(); t-- > 0;) {
    const Token& tok = tokens[t];
    switch (tok.kind) {
      case 'c':
        for (size_t j = 0; j <= n; ++j) {
          cur[j] = j < n && AsciiLower(path[j]) == tok.c && next[j + 1];
        }
        break;
      case '?':
        for (size_t j = 0; j <= n; ++j) {
          cur[j] = j < n && path[j] != '/' && next[j + 1];
        }
        break;
      case '*':
        cur[n] = next[n];
        for (size_t j = n; j-- > 0;) {
          cur[j] = next[j] || (path[j] != '/' && cur[j + 1]);
        }
        break;
      case 'D': {            // empty, or anything up to and including a '/'
        bool later = false;  // some k >= j with path[k] == '/', next[k + 1]
        cur[n] = next[n];
        for (size_t j = n; j-- > 0;) {
          later = later || (path[j] == '/' && next[j + 1]);
          cur[j] = next[j] || later;
        }
        break;
      }
      default:  // 'S'
        cur[n] = next[n];
        for (size_t j = n; j-- > 0;) cur[j] = next[j] || cur[j + 1];
        break;
    }
    std::swap(cur, next);
  }
  if (anchored) return next[0] != 0;
  // A trailing run of whole segments starts at 0 or just after a '/'.
  for (size_t j = 0; j <= n; ++j) {
    if (next[j] && (j == 0 || path[j - 1] == '/')) return true;
  }
  return false;
}

}  // namespace mi
