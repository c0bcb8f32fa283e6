#include "base/json_writer.h"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "base/strings.h"

namespace mi {
namespace {

// Length of a valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t len;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    if (c < 0xC2) return 0;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    if (c > 0xF4) return 0;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

void JsonWriter::AppendEscaped(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x7F) {
      // Copy a run of plain characters at once.
      size_t j = i + 1;
      while (j < s.size()) {
        auto d = static_cast<unsigned char>(s[j]);
        if (d < 0x20 || d == '"' || d == '\\' || d >= 0x7F) break;
        ++j;
      }
      out->append(s.data() + i, j - i);
      i = j;
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        ++i;
        continue;
      case '\\':
        out->append("\\\\");
        ++i;
        continue;
      case '\n':
        out->append("\\n");
        ++i;
        continue;
      case '\r':
        out->append("\\r");
        ++i;
        continue;
      case '\t':
        out->append("\\t");
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7F) {  // DEL is a terminal control too
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out->append(buf);
      ++i;
      continue;
    }
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out->append("\xEF\xBF\xBD");  // U+FFFD replacement character
      ++i;
    } else {
      // C1 and bidirectional controls are valid JSON as they are, but a
      // terminal showing the JSON would act on them: written as \uHHHH,
      // the same string to a JSON reader.
      Utf8Char ch = DecodeUtf8(s, i);
      if (ch.length == len && IsTerminalControl(ch.code_point)) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x",
                      static_cast<unsigned>(ch.code_point));
        out->append(buf);
      } else {
        out->append(s.data() + i, len);
      }
      i += len;
    }
  }
  out->push_back('"');
}

void JsonWriter::Newline() {
  if (!pretty_) return;
  out_->push_back('\n');
  out_->append(stack_.size() * 2, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!stack_.empty()) {
    if (stack_.back().has_items) out_->push_back(',');
    stack_.back().has_items = true;
    Newline();
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_->push_back('{');
  stack_.push_back({true, false});
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  bool had = stack_.back().has_items;
  stack_.pop_back();
  if (had) Newline();
  out_->push_back('}');
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_->push_back('[');
  stack_.push_back({false, false});
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  bool had = stack_.back().has_items;
  stack_.pop_back();
  if (had) Newline();
  out_->push_back(']');
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  if (stack_.back().has_items) out_->push_back(',');
  stack_.back().has_items = true;
  Newline();
  AppendEscaped(out_, key);
  out_->append(pretty_ ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendEscaped(out_, s);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  fmt::format_to(std::back_inserter(*out_), "{}", v);
  return *this;
}

JsonWriter& JsonWriter::UInt(uint64_t v) {
  BeforeValue();
  fmt::format_to(std::back_inserter(*out_), "{}", v);
  return *this;
}

JsonWriter& JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_->append("null");
  } else if (v == std::floor(v) && std::fabs(v) < 1e15) {
    fmt::format_to(std::back_inserter(*out_), "{}", static_cast<int64_t>(v));
  } else {
    // Shortest representation that round-trips.
    fmt::format_to(std::back_inserter(*out_), "{}", v);
  }
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  BeforeValue();
  out_->append(v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_->append(json);
  return *this;
}

}  // namespace mi
