#pragma once

// A format-agnostic writer of results. Every result type describes its
// fields once, in its Write(ResultWriter&) (analysis_result.h), and each
// front end implements this interface for its format: JSON text for dumps
// and HTTP, tables for the CLI (src/encoders/), later Python objects.
//
// The vocabulary is JSON's: objects of keyed values, arrays, strings,
// integers, doubles, booleans and null. Units are part of a key's name
// (`_ns`, `_us`, `_bytes`, `share` for 0..1 fractions), so encoders that
// format numbers for people (tables) can do so without knowing the result.

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace mi {

class ResultWriter {
 public:
  virtual ~ResultWriter() = default;

  ResultWriter& BeginObject() {
    DoBeginObject();
    return *this;
  }
  ResultWriter& EndObject() {
    DoEndObject();
    return *this;
  }
  ResultWriter& BeginArray() {
    DoBeginArray();
    return *this;
  }
  ResultWriter& EndArray() {
    DoEndArray();
    return *this;
  }
  // The key of the next value, inside an object.
  ResultWriter& Key(std::string_view key) {
    DoKey(key);
    return *this;
  }
  ResultWriter& String(std::string_view s) {
    DoString(s);
    return *this;
  }
  ResultWriter& Int(int64_t v) {
    DoInt(v);
    return *this;
  }
  ResultWriter& UInt(uint64_t v) {
    DoUInt(v);
    return *this;
  }
  // Non-finite values are written as null.
  ResultWriter& Double(double v) {
    DoDouble(v);
    return *this;
  }
  ResultWriter& Bool(bool v) {
    DoBool(v);
    return *this;
  }
  ResultWriter& Null() {
    DoNull();
    return *this;
  }

  // Shorthands for "key": value.
  ResultWriter& Field(std::string_view k, std::string_view v) {
    return Key(k).String(v);
  }
  ResultWriter& Field(std::string_view k, const char* v) {
    return Key(k).String(v);
  }
  ResultWriter& FieldInt(std::string_view k, int64_t v) {
    return Key(k).Int(v);
  }
  ResultWriter& FieldUInt(std::string_view k, uint64_t v) {
    return Key(k).UInt(v);
  }
  ResultWriter& FieldDouble(std::string_view k, double v) {
    return Key(k).Double(v);
  }
  ResultWriter& FieldBool(std::string_view k, bool v) { return Key(k).Bool(v); }
  // An optional integer: null when absent.
  template <typename T>
  ResultWriter& FieldOptional(std::string_view k, const std::optional<T>& v) {
    Key(k);
    if (!v) return Null();
    if constexpr (std::is_signed_v<T>) return Int(static_cast<int64_t>(*v));
    return UInt(static_cast<uint64_t>(*v));
  }

 protected:
  virtual void DoBeginObject() = 0;
  virtual void DoEndObject() = 0;
  virtual void DoBeginArray() = 0;
  virtual void DoEndArray() = 0;
  virtual void DoKey(std::string_view key) = 0;
  virtual void DoString(std::string_view s) = 0;
  virtual void DoInt(int64_t v) = 0;
  virtual void DoUInt(uint64_t v) = 0;
  virtual void DoDouble(double v) = 0;
  virtual void DoBool(bool v) = 0;
  virtual void DoNull() = 0;
};

}  // namespace mi
