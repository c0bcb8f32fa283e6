#pragma once

// A streaming JSON writer. Dumps of a million tasks are written record by
// record without building a document tree (nlohmann::json would need one);
// strings are always escaped (control characters, quotes, invalid UTF-8 is
// replaced by U+FFFD) so that names copied from hostile inputs stay valid.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mi {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out, bool pretty = false)
      : out_(out), pretty_(pretty) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& UInt(uint64_t v);
  JsonWriter& Double(double v);  // non-finite values are written as null
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // Writes pre-encoded JSON as a value (caller guarantees validity).
  JsonWriter& Raw(std::string_view json);

  // Shorthands for "key": value.
  JsonWriter& Field(std::string_view k, std::string_view v) {
    return Key(k).String(v);
  }
  JsonWriter& Field(std::string_view k, const char* v) {
    return Key(k).String(v);
  }
  JsonWriter& FieldInt(std::string_view k, int64_t v) { return Key(k).Int(v); }
  JsonWriter& FieldDouble(std::string_view k, double v) {
    return Key(k).Double(v);
  }
  JsonWriter& FieldBool(std::string_view k, bool v) { return Key(k).Bool(v); }
  // A figure the source may lack (stored as -1, or any negative) as null.
  JsonWriter& FieldIntOrNull(std::string_view k, int64_t v) {
    Key(k);
    return v >= 0 ? Int(v) : Null();
  }
  JsonWriter& FieldDoubleOrNull(std::string_view k, double v) {
    Key(k);
    return v >= 0 ? Double(v) : Null();
  }

  static void AppendEscaped(std::string* out, std::string_view s);

 private:
  void BeforeValue();
  void Newline();

  std::string* out_;
  bool pretty_;
  struct Level {
    bool is_object;
    bool has_items;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace mi
