#pragma once

// Splits a Chrome trace JSON stream, fed in arbitrary chunks, into complete
// trace-event objects without ever buffering the whole file. Accepts both
// containers: a JSON array root `[ {...}, ... ]` (which may be unterminated)
// and an object root `{ ..., "traceEvents": [ ... ], ... }`. Top-level values
// other than traceEvents are skipped structurally; a few small ones that
// matter (baseTimeNanoseconds, schemaVersion, distributedInfo,
// displayTimeUnit) are captured and handed to the delegate.
//
// Only the bytes of an event that straddles a chunk boundary are copied;
// every other event is handed out as a view into the caller's chunk. Line
// and column numbers are computed lazily (only when a message needs them):
// the tokenizer counts newlines once per chunk with a vectorised loop.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "model_inspector/status.h"

namespace mi::importers::trace_event {

// 1-based line and column of a byte in the decompressed input.
struct TextPosition {
  uint64_t line = 1;
  uint64_t column = 1;
};

enum class TraceContainer : uint8_t { kUnknown, kArray, kObject };

class JsonTraceTokenizer {
 public:
  // Receives the tokenizer's output. Pointers and views are valid only for
  // the duration of the call.
  class Delegate {
   public:
    virtual ~Delegate() = default;
    // One complete `{...}` trace event (exact bytes, braces included).
    virtual Status OnTraceEvent(std::string_view event_json) = 0;
    // A captured top-level value of the object container (see kCapturedKeys
    // in the .cc): `key` unescaped, `value_json` its raw JSON text.
    virtual Status OnTopLevelValue(std::string_view key,
                                   std::string_view value_json) = 0;
  };

  // An event larger than this is refused rather than buffered without bound.
  static constexpr size_t kMaxEventBytes = size_t{64} << 20;
  // simdjson's default depth limit; deeper events are refused up front.
  static constexpr uint32_t kMaxNestingDepth = 1024;

  // `path` is used in error messages only.
  JsonTraceTokenizer(std::string path, Delegate* delegate);

  Status Feed(std::string_view chunk);
  Status Finish();

  TraceContainer container() const { return container_; }
  // True when an array container ended without its closing ']'.
  bool unterminated_array() const { return unterminated_array_; }
  // Bytes after the end of the root value (non-whitespace) and where.
  uint64_t trailing_garbage_bytes() const { return trailing_garbage_bytes_; }
  TextPosition trailing_garbage_position() const {
    return trailing_garbage_position_;
  }
  bool saw_device_properties() const { return saw_device_properties_; }
  bool saw_trace_events() const { return saw_trace_events_; }
  uint64_t event_count() const { return event_count_; }
  // Bytes buffered: an event or a top-level value begun in an earlier chunk.
  size_t MemoryUsage() const {
    return partial_.capacity() + key_.capacity() + captured_value_.capacity();
  }

  // Position of byte `offset` of the event currently handed to
  // Delegate::OnTraceEvent. Only valid during that call.
  TextPosition PositionInCurrentEvent(size_t offset) const;
  // Byte offset (decompressed) of the current event's first byte.
  uint64_t current_event_byte_offset() const { return event_byte_offset_; }
  // During OnTraceEvent: whether the event is a view into the chunk being
  // fed (else a copy of an event begun in an earlier chunk), and that
  // chunk's bytes and the position and offset of its first byte; the
  // position of a copied event's first byte. For a reader that locates
  // events later, on another thread, from its own copy of the bytes.
  bool current_event_in_chunk() const {
    return current_event_text_ != partial_.data();
  }
  std::string_view current_chunk() const {
    return std::string_view(chunk_begin_, chunk_end_ - chunk_begin_);
  }
  TextPosition current_chunk_start_position() const {
    return chunk_start_position_;
  }
  uint64_t current_chunk_byte_offset() const { return chunk_byte_offset_; }
  TextPosition partial_event_start_position() const {
    return partial_start_position_;
  }

  // "<path>:<line>:<col>: " for a position.
  std::string Where(TextPosition position) const;

 private:
  enum class State : uint8_t {
    kStart,              // before the root value
    kEventsExpectEvent,  // inside the events array, between events
    kInEvent,            // inside an event object
    kObjectExpectKey,    // root object: before a key or '}'
    kObjectInKey,        // root object: inside a key string
    kObjectExpectColon,  // root object: after a key
    kObjectExpectValue,  // root object: after ':'
    kObjectSkipValue,    // root object: skipping a non-events value
    kObjectAfterValue,   // root object: expecting ',' or '}'
    kDone,               // root closed; only whitespace may follow
  };

  Status ScanEvent(const char*& p, const char* end);
  Status StartEvent(const char* p);
  Status NestingTooDeep() const;
  Status SkipValue(const char*& p, const char* end);
  Status OnKeyComplete();
  Status FinishSkippedValue();
  Status Unexpected(const char* p, std::string_view what,
                    std::string_view expected) const;
  TextPosition PositionInChunk(const char* p) const;

  std::string path_;
  Delegate* delegate_;
  State state_ = State::kStart;
  TraceContainer container_ = TraceContainer::kUnknown;

  // Current chunk and the position of its first byte.
  const char* chunk_begin_ = nullptr;
  const char* chunk_end_ = nullptr;
  uint64_t chunk_byte_offset_ = 0;
  TextPosition chunk_start_position_;

  // Event scanning state (survives chunk boundaries).
  uint32_t event_depth_ = 0;          // '{' nesting
  uint32_t event_bracket_depth_ = 0;  // '[' nesting (for the depth limit)
  bool event_in_string_ = false;
  bool event_escape_ = false;
  const char* event_start_in_chunk_ = nullptr;  // null when in partial_
  std::string partial_;  // bytes of an event begun in an earlier chunk
  TextPosition partial_start_position_;
  uint64_t event_byte_offset_ = 0;
  // During OnTraceEvent: where the event's bytes start, for positions.
  const char* current_event_text_ = nullptr;
  TextPosition current_event_position_;

  // Root-object state.
  std::string key_;
  bool key_escape_ = false;
  bool events_array_in_object_ = false;  // kEventsExpectEvent belongs to obj
  bool capture_value_ = false;
  std::string captured_value_;
  uint64_t skip_depth_ = 0;
  bool skip_in_string_ = false;
  bool skip_escape_ = false;
  bool skip_scalar_ = false;  // skipping a number / literal
  TextPosition value_start_position_;

  bool unterminated_array_ = false;
  bool saw_device_properties_ = false;
  bool saw_trace_events_ = false;
  uint64_t trailing_garbage_bytes_ = 0;
  TextPosition trailing_garbage_position_;
  uint64_t event_count_ = 0;
};

// Counts '\n' in `text` (vectorised where the target allows).
uint64_t CountNewlines(std::string_view text);
// The position reached after `text` when starting at `start`.
TextPosition AdvancePosition(TextPosition start, std::string_view text);

}  // namespace mi::importers::trace_event
