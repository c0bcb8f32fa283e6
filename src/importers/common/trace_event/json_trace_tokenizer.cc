#include "importers/common/trace_event/json_trace_tokenizer.h"

#include <array>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mi::importers::trace_event {
namespace {

// Small top-level values worth keeping; everything else is skipped.
constexpr std::string_view kCapturedKeys[] = {
    "baseTimeNanoseconds", "schemaVersion", "distributedInfo",
    "displayTimeUnit"};
constexpr size_t kMaxCapturedValueBytes = size_t{1} << 20;

// Characters that change the event scanner's state outside / inside strings.
constexpr std::array<bool, 256> MakeTable(std::string_view chars) {
  std::array<bool, 256> table{};
  for (char c : chars) table[static_cast<unsigned char>(c)] = true;
  return table;
}
constexpr std::array<bool, 256> kEventStructural = MakeTable("\"{}[]");
constexpr std::array<bool, 256> kStringSpecial = MakeTable("\"\\");

// The first byte at or after p that ends a string's plain run ('"' or
// '\\'), or end. Sixteen bytes at a time where SSE2 is (every x86-64);
// the byte loop finishes the tail. ctz compiles to one BSF: no libgcc call
// in the generic x86-64 build.
inline const char* SkipStringBody(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (end - p >= 16) {
    __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
        _mm_cmpeq_epi8(block, quote), _mm_cmpeq_epi8(block, backslash))));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < end && !kStringSpecial[static_cast<unsigned char>(*p)]) ++p;
  return p;
}

// The first structural byte of an event ('"', '{', '}', '[', ']') at or
// after p, or end. '{' and '[' (0x7b, 0x5b) differ only in bit 0x20, as do
// '}' and ']' (0x7d, 0x5d): two compares after setting that bit find all
// four.
inline const char* SkipToStructural(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i case_bit = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  while (end - p >= 16) {
    __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i folded = _mm_or_si128(block, case_bit);
    __m128i hits = _mm_or_si128(_mm_cmpeq_epi8(block, quote),
                                _mm_or_si128(_mm_cmpeq_epi8(folded, open),
                                             _mm_cmpeq_epi8(folded, close)));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hits));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < end && !kEventStructural[static_cast<unsigned char>(*p)]) ++p;
  return p;
}

bool IsJsonSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Renders up to a few bytes of input for "found '...'" messages.
std::string Printable(const char* p, const char* end) {
  std::string out;
  for (int i = 0; i < 12 && p < end; ++i, ++p) {
    unsigned char c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out.push_back(static_cast<char>(c));
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace

uint64_t CountNewlines(std::string_view text) {
  const char* p = text.data();
  const char* end = p + text.size();
  uint64_t count = 0;
#if defined(__SSE2__)
  // Per byte lane, matches counted down from 0 (cmpeq gives -1), summed
  // into the total with a SAD every 255 blocks before a lane could wrap.
  // No popcount: the generic x86-64 build has no POPCNT instruction and
  // __builtin_popcount became a libgcc call per 16 bytes.
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (end - p >= 16) {
    __m128i lanes = _mm_setzero_si128();
    int blocks = 0;
    for (; blocks < 255 && end - p >= 16; ++blocks, p += 16) {
      __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(block, newline));
    }
    __m128i sums = _mm_sad_epu8(lanes, zero);
    count += static_cast<uint64_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<uint64_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; p < end; ++p) count += (*p == '\n');
  return count;
}

TextPosition AdvancePosition(TextPosition start, std::string_view text) {
  uint64_t lines = CountNewlines(text);
  if (lines == 0) {
    start.column += text.size();
    return start;
  }
  size_t last_newline = text.rfind('\n');
  return {start.line + lines, text.size() - last_newline};
}

JsonTraceTokenizer::JsonTraceTokenizer(std::string path, Delegate* delegate)
    : path_(std::move(path)), delegate_(delegate) {}

std::string JsonTraceTokenizer::Where(TextPosition position) const {
  return path_ + ":" + std::to_string(position.line) + ":" +
         std::to_string(position.column) + ": ";
}

TextPosition JsonTraceTokenizer::PositionInChunk(const char* p) const {
  return AdvancePosition(chunk_start_position_,
                         std::string_view(chunk_begin_, p - chunk_begin_));
}

TextPosition JsonTraceTokenizer::PositionInCurrentEvent(size_t offset) const {
  if (current_event_text_ == partial_.data()) {
    return AdvancePosition(partial_start_position_,
                           std::string_view(partial_).substr(0, offset));
  }
  return PositionInChunk(current_event_text_ + offset);
}

Status JsonTraceTokenizer::Unexpected(const char* p, std::string_view what,
                                      std::string_view expected) const {
  return MalformedInputError(Where(PositionInChunk(p)) + std::string(what) +
                             "; expected " + std::string(expected) +
                             ", found '" + Printable(p, chunk_end_) + "'");
}

Status JsonTraceTokenizer::StartEvent(const char* p) {
  state_ = State::kInEvent;
  event_depth_ = 0;
  event_bracket_depth_ = 0;
  event_in_string_ = false;
  event_escape_ = false;
  event_start_in_chunk_ = p;
  event_byte_offset_ = chunk_byte_offset_ + (p - chunk_begin_);
  return Status::Ok();
}

// The hot loop: string- and escape-aware brace matching. On completion hands
// the event out and leaves `p` after its closing brace.
Status JsonTraceTokenizer::ScanEvent(const char*& p, const char* end) {
  uint32_t depth = event_depth_;
  bool in_string = event_in_string_;
  if (event_escape_) {
    event_escape_ = false;
    if (p < end) ++p;
  }
  while (p < end) {
    if (in_string) {
      p = SkipStringBody(p, end);
      if (p == end) break;
      if (*p == '\\') {
        if (p + 1 < end) {
          p += 2;
        } else {
          event_escape_ = true;
          p = end;
        }
        continue;
      }
      in_string = false;
      ++p;
      continue;
    }
    p = SkipToStructural(p, end);
    if (p == end) break;
    char c = *p++;
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c == '[') {
      if (++event_bracket_depth_ + depth > kMaxNestingDepth) {
        return NestingTooDeep();
      }
      continue;
    }
    if (c == ']') {
      if (event_bracket_depth_ > 0) --event_bracket_depth_;
      continue;
    }
    if (c == '{') {
      if (++depth + event_bracket_depth_ > kMaxNestingDepth) {
        return NestingTooDeep();
      }
    } else if (--depth == 0) {
      // Complete event.
      std::string_view event;
      if (event_start_in_chunk_ != nullptr) {
        event =
            std::string_view(event_start_in_chunk_, p - event_start_in_chunk_);
      } else {
        partial_.append(chunk_begin_, p - chunk_begin_);
        event = partial_;
      }
      if (event.size() > kMaxEventBytes) {
        TextPosition start = event_start_in_chunk_ != nullptr
                                 ? PositionInChunk(event_start_in_chunk_)
                                 : partial_start_position_;
        return MalformedInputError(Where(start) + "trace event too large (" +
                                   std::to_string(event.size()) +
                                   " bytes; the limit is " +
                                   std::to_string(kMaxEventBytes) + ")");
      }
      current_event_text_ = event.data();
      ++event_count_;
      state_ = State::kEventsExpectEvent;
      Status status = delegate_->OnTraceEvent(event);
      current_event_text_ = nullptr;
      event_start_in_chunk_ = nullptr;
      partial_.clear();
      return status;
    }
  }
  event_depth_ = depth;
  event_in_string_ = in_string;
  // The event continues in the next chunk: keep only its bytes so far.
  if (event_start_in_chunk_ != nullptr) {
    partial_start_position_ = PositionInChunk(event_start_in_chunk_);
    partial_.assign(event_start_in_chunk_, end - event_start_in_chunk_);
    event_start_in_chunk_ = nullptr;
  } else {
    partial_.append(chunk_begin_, end - chunk_begin_);
  }
  if (partial_.size() > kMaxEventBytes) {
    return MalformedInputError(
        Where(partial_start_position_) + "trace event too large (over " +
        std::to_string(kMaxEventBytes) + " bytes without its closing '}')");
  }
  return Status::Ok();
}

Status JsonTraceTokenizer::NestingTooDeep() const {
  TextPosition start = event_start_in_chunk_ != nullptr
                           ? PositionInChunk(event_start_in_chunk_)
                           : partial_start_position_;
  return MalformedInputError(
      Where(start) + "trace event nested deeper than " +
      std::to_string(kMaxNestingDepth) +
      " levels; expected a flat event object with small args");
}

Status JsonTraceTokenizer::OnKeyComplete() {
  state_ = State::kObjectExpectColon;
  return Status::Ok();
}

Status JsonTraceTokenizer::FinishSkippedValue() {
  state_ = State::kObjectAfterValue;
  if (!capture_value_) return Status::Ok();
  capture_value_ = false;
  Status status = delegate_->OnTopLevelValue(key_, captured_value_);
  captured_value_.clear();
  return status;
}

// Skips one top-level value of the root object, across chunks.
Status JsonTraceTokenizer::SkipValue(const char*& p, const char* end) {
  const char* start = p;
  auto capture = [&](const char* upto) {
    if (capture_value_) {
      captured_value_.append(start, upto - start);
      if (captured_value_.size() > kMaxCapturedValueBytes) {
        capture_value_ = false;
        captured_value_.clear();
      }
    }
  };
  while (p < end) {
    char c = *p;
    if (skip_scalar_) {
      if (c == ',' || c == '}' || c == ']' || IsJsonSpace(c)) {
        capture(p);
        skip_scalar_ = false;
        return FinishSkippedValue();
      }
      ++p;
      continue;
    }
    ++p;
    if (skip_in_string_) {
      if (skip_escape_) {
        skip_escape_ = false;
      } else if (c == '\\') {
        skip_escape_ = true;
      } else if (c == '"') {
        skip_in_string_ = false;
        if (skip_depth_ == 0) {
          capture(p);
          return FinishSkippedValue();
        }
      }
      continue;
    }
    if (c == '"') {
      skip_in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++skip_depth_;
    } else if (c == '}' || c == ']') {
      if (--skip_depth_ == 0) {
        capture(p);
        return FinishSkippedValue();
      }
    }
  }
  capture(p);
  return Status::Ok();
}

Status JsonTraceTokenizer::Feed(std::string_view chunk) {
  if (chunk.empty()) return Status::Ok();
  chunk_begin_ = chunk.data();
  chunk_end_ = chunk.data() + chunk.size();
  const char* p = chunk_begin_;
  const char* end = chunk_end_;
  while (p < end) {
    switch (state_) {
      case State::kInEvent:
        MI_RETURN_IF_ERROR(ScanEvent(p, end));
        break;
      case State::kEventsExpectEvent: {
        char c = *p;
        if (c == '{') {
          MI_RETURN_IF_ERROR(StartEvent(p));
        } else if (c == ']') {
          ++p;
          state_ =
              events_array_in_object_ ? State::kObjectAfterValue : State::kDone;
        } else if (IsJsonSpace(c) || c == ',') {
          ++p;
        } else {
          return Unexpected(p, "unexpected character in the trace event list",
                            "'{' (a trace event) or ']'");
        }
        break;
      }
      case State::kStart: {
        unsigned char c = static_cast<unsigned char>(*p);
        uint64_t offset = chunk_byte_offset_ + (p - chunk_begin_);
        // A UTF-8 byte order mark at the very start counts as whitespace.
        static constexpr unsigned char kBom[] = {0xEF, 0xBB, 0xBF};
        if (offset < 3 && c == kBom[offset]) {
          ++p;
        } else if (IsJsonSpace(static_cast<char>(c))) {
          ++p;
        } else if (c == '[') {
          ++p;
          container_ = TraceContainer::kArray;
          state_ = State::kEventsExpectEvent;
        } else if (c == '{') {
          ++p;
          container_ = TraceContainer::kObject;
          state_ = State::kObjectExpectKey;
        } else {
          return Unexpected(p, "not a Chrome trace JSON file",
                            "'[' or '{' at the start");
        }
        break;
      }
      case State::kObjectExpectKey: {
        char c = *p;
        if (c == '"') {
          ++p;
          key_.clear();
          key_escape_ = false;
          state_ = State::kObjectInKey;
        } else if (c == '}') {
          ++p;
          state_ = State::kDone;
        } else if (IsJsonSpace(c) || c == ',') {
          ++p;
        } else {
          return Unexpected(p, "unexpected character in the trace object",
                            "'\"' (a key) or '}'");
        }
        break;
      }
      case State::kObjectInKey: {
        char c = *p++;
        if (key_escape_) {
          key_escape_ = false;
          key_.push_back(c);
        } else if (c == '\\') {
          key_escape_ = true;
          key_.push_back(c);
        } else if (c == '"') {
          MI_RETURN_IF_ERROR(OnKeyComplete());
        } else {
          if (key_.size() > 4096) {
            return Unexpected(p - 1, "top-level key too long", "a short key");
          }
          key_.push_back(c);
        }
        break;
      }
      case State::kObjectExpectColon: {
        char c = *p;
        if (IsJsonSpace(c)) {
          ++p;
        } else if (c == ':') {
          ++p;
          state_ = State::kObjectExpectValue;
        } else {
          return Unexpected(p, "missing ':' after key \"" + key_ + "\"", "':'");
        }
        break;
      }
      case State::kObjectExpectValue: {
        char c = *p;
        if (IsJsonSpace(c)) {
          ++p;
          break;
        }
        if (key_ == "traceEvents") {
          if (c != '[') {
            return Unexpected(p, "\"traceEvents\" is not an array",
                              "'[' (the list of trace events)");
          }
          ++p;
          saw_trace_events_ = true;
          events_array_in_object_ = true;
          state_ = State::kEventsExpectEvent;
          break;
        }
        if (key_ == "deviceProperties") saw_device_properties_ = true;
        capture_value_ = false;
        for (std::string_view captured : kCapturedKeys) {
          if (key_ == captured) capture_value_ = true;
        }
        captured_value_.clear();
        skip_depth_ = 0;
        skip_in_string_ = false;
        skip_escape_ = false;
        skip_scalar_ = false;
        value_start_position_ = PositionInChunk(p);
        if (c == '"') {
          if (capture_value_) captured_value_.push_back('"');
          ++p;
          skip_in_string_ = true;
        } else if (c == '{' || c == '[') {
          if (capture_value_) captured_value_.push_back(c);
          ++p;
          skip_depth_ = 1;
        } else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' ||
                   c == 'n') {
          skip_scalar_ = true;
        } else {
          return Unexpected(p, "bad value for key \"" + key_ + "\"",
                            "a JSON value");
        }
        state_ = State::kObjectSkipValue;
        break;
      }
      case State::kObjectSkipValue:
        MI_RETURN_IF_ERROR(SkipValue(p, end));
        break;
      case State::kObjectAfterValue: {
        char c = *p;
        if (IsJsonSpace(c)) {
          ++p;
        } else if (c == ',') {
          ++p;
          state_ = State::kObjectExpectKey;
        } else if (c == '}') {
          ++p;
          state_ = State::kDone;
        } else {
          return Unexpected(p, "unexpected character after a top-level value",
                            "',' or '}'");
        }
        break;
      }
      case State::kDone: {
        // Whitespace is fine; anything else is counted once as garbage.
        while (p < end && IsJsonSpace(*p)) ++p;
        if (p < end) {
          if (trailing_garbage_bytes_ == 0) {
            trailing_garbage_position_ = PositionInChunk(p);
          }
          trailing_garbage_bytes_ += end - p;
          p = end;
        }
        break;
      }
    }
  }
  chunk_start_position_ = AdvancePosition(chunk_start_position_, chunk);
  chunk_byte_offset_ += chunk.size();
  chunk_begin_ = chunk_end_ = nullptr;
  return Status::Ok();
}

Status JsonTraceTokenizer::Finish() {
  std::string end_where = Where(chunk_start_position_);
  switch (state_) {
    case State::kStart:
      return MalformedInputError(
          end_where +
          "empty input; expected a Chrome trace ('[' or '{'), found end of "
          "file");
    case State::kInEvent:
      return MalformedInputError(
          Where(partial_start_position_) +
          "truncated: the file ends inside a trace event that started at "
          "line " +
          std::to_string(partial_start_position_.line) +
          " (or an unescaped '\"' inside a string opened a string that never "
          "closes)");
    case State::kEventsExpectEvent:
      // Allowed by the format for arrays; for the object form we are equally
      // lenient: every complete event has been delivered.
      unterminated_array_ = true;
      return Status::Ok();
    case State::kObjectExpectKey:
    case State::kObjectAfterValue:
      if (saw_trace_events_) {
        unterminated_array_ = true;
        return Status::Ok();
      }
      return MalformedInputError(
          end_where +
          "truncated: the file ends inside the top-level object before any "
          "\"traceEvents\" array; expected '}'");
    case State::kObjectInKey:
    case State::kObjectExpectColon:
    case State::kObjectExpectValue:
    case State::kObjectSkipValue:
      return MalformedInputError(
          end_where + "truncated: the file ends inside the top-level value " +
          "of key \"" + key_ + "\"");
    case State::kDone:
      if (container_ == TraceContainer::kObject && !saw_trace_events_) {
        return MalformedInputError(
            path_ +
            ":1:1: the JSON object has no \"traceEvents\" array; expected a "
            "Chrome trace ({\"traceEvents\": [...]})");
      }
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace mi::importers::trace_event
