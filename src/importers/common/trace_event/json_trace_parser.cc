#include "importers/common/trace_event/json_trace_parser.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <simdjson.h>

#include "base/strings.h"

namespace mi::importers::trace_event {
namespace {

namespace od = simdjson::ondemand;

std::string_view TrimSpaces(std::string_view s) {
  return Trim(s, kJsonWhitespace);
}

std::string_view ErrorName(simdjson::error_code code) {
  switch (code) {
    case simdjson::UNESCAPED_CHARS:
      return "raw control character inside a string";
    case simdjson::STRING_ERROR:
      return "invalid string (bad escape)";
    case simdjson::UTF8_ERROR:
      return "invalid UTF-8";
    case simdjson::DEPTH_ERROR:
      return "nesting too deep";
    case simdjson::NUMBER_ERROR:
    case simdjson::NUMBER_OUT_OF_RANGE:
      return "invalid number";
    case simdjson::TAPE_ERROR:
    case simdjson::INCORRECT_TYPE:
      return "invalid JSON structure";
    default:
      return simdjson::error_message(code);
  }
}

// Reads an integer that may be written as a number or as a string (ORT
// writes most args as strings). Leaves `*out` untouched when it is neither.
void ReadLooseInt(od::value& value, int64_t* out) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return;
  if (type == od::json_type::number) {
    int64_t n;
    if (value.get_int64().get(n) == simdjson::SUCCESS) {
      *out = n;
      return;
    }
    std::optional<int64_t> parsed =
        ParseInt64(TrimSpaces(value.raw_json_token()));
    if (parsed) *out = *parsed;
  } else if (type == od::json_type::string) {
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS) return;
    std::optional<int64_t> parsed = ParseInt64(s);
    if (parsed) *out = *parsed;
  }
}

// The raw JSON text of an array/object value, or a string's contents.
simdjson::error_code ReadRawOrString(od::value& value, std::string_view* out) {
  od::json_type type;
  if (auto error = value.type().get(type)) return error;
  if (type == od::json_type::array) {
    od::array array;
    if (auto error = value.get_array().get(array)) return error;
    return array.raw_json().get(*out);
  }
  if (type == od::json_type::object) {
    od::object object;
    if (auto error = value.get_object().get(object)) return error;
    return object.raw_json().get(*out);
  }
  if (type == od::json_type::string) return value.get_string().get(*out);
  return simdjson::SUCCESS;  // numbers, null: ignored
}

}  // namespace

std::optional<int64_t> ParseInt64(std::string_view text) {
  return ParseInteger<int64_t>(TrimSpaces(text));
}

std::optional<int64_t> ParseMicrosecondsToNanoseconds(std::string_view text) {
  std::string_view s = TrimSpaces(text);
  size_t i = 0;
  const size_t n = s.size();
  bool negative = false;
  if (i < n && (s[i] == '-' || s[i] == '+')) {
    negative = s[i] == '-';
    ++i;
  }
  const size_t int_begin = i;
  while (i < n && IsAsciiDigit(s[i])) ++i;
  const size_t int_len = i - int_begin;
  size_t frac_begin = i;
  size_t frac_len = 0;
  if (i < n && s[i] == '.') {
    ++i;
    frac_begin = i;
    while (i < n && IsAsciiDigit(s[i])) ++i;
    frac_len = i - frac_begin;
  }
  if (int_len + frac_len == 0) return std::nullopt;
  int64_t exponent = 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
      exponent_negative = s[i] == '-';
      ++i;
    }
    if (i == n || !IsAsciiDigit(s[i])) return std::nullopt;
    while (i < n && IsAsciiDigit(s[i])) {
      // Saturate: anything this large overflows or rounds to zero anyway.
      if (exponent < 1000000) exponent = exponent * 10 + (s[i] - '0');
      ++i;
    }
    if (exponent_negative) exponent = -exponent;
  }
  if (i != n) return std::nullopt;

  // The digits D (integer then fraction) times 10^(exponent - frac_len) µs
  // is D × 10^(exponent - frac_len + 3) ns: the decimal point of the
  // nanosecond value sits after `point` digits of D.
  const int64_t total = static_cast<int64_t>(int_len + frac_len);
  const int64_t point = static_cast<int64_t>(int_len) + exponent + 3;
  auto digit_at = [&](int64_t k) -> uint64_t {
    size_t index = static_cast<size_t>(k);
    char c = index < int_len ? s[int_begin + index]
                             : s[frac_begin + (index - int_len)];
    return static_cast<uint64_t>(c - '0');
  };
  uint64_t value = 0;
  const int64_t kept = std::min(point, total);
  for (int64_t k = 0; k < kept; ++k) {
    if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
        __builtin_add_overflow(value, digit_at(k), &value)) {
      return std::nullopt;
    }
  }
  if (value != 0) {
    for (int64_t k = total; k < point; ++k) {
      if (__builtin_mul_overflow(value, uint64_t{10}, &value)) {
        return std::nullopt;
      }
    }
  }
  if (point >= 0 && point < total && digit_at(point) >= 5) ++value;
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  int64_t signed_value = static_cast<int64_t>(value);
  return negative ? -signed_value : signed_value;
}

namespace {

bool IsHex(char c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Length of the valid UTF-8 sequence at `p` (0 if invalid).
size_t Utf8SequenceLength(const unsigned char* p, const unsigned char* end) {
  unsigned char c = p[0];
  size_t len;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (end - p < static_cast<ptrdiff_t>(len)) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (p[k] < 0x80 || p[k] > 0xBF) return 0;
  }
  return len;
}

}  // namespace

bool RepairUnescapedStrings(std::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size() + 16);
  bool changed = false;
  bool in_string = false;
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const auto* end = p + in.size();
  while (p < end) {
    unsigned char c = *p;
    if (!in_string) {
      if (c == '"') in_string = true;
      out->push_back(static_cast<char>(c));
      ++p;
      continue;
    }
    if (c == '"') {
      in_string = false;
      out->push_back('"');
      ++p;
    } else if (c == '\\') {
      unsigned char next = p + 1 < end ? p[1] : 0;
      bool valid = next == '"' || next == '\\' || next == '/' || next == 'b' ||
                   next == 'f' || next == 'n' || next == 'r' || next == 't';
      if (next == 'u' && end - p >= 6 && IsHex(p[2]) && IsHex(p[3]) &&
          IsHex(p[4]) && IsHex(p[5])) {
        out->append(reinterpret_cast<const char*>(p), 6);
        p += 6;
      } else if (valid) {
        out->push_back('\\');
        out->push_back(static_cast<char>(next));
        p += 2;
      } else {
        // A lone backslash (a Windows path written unescaped).
        out->append("\\\\");
        ++p;
        changed = true;
      }
    } else if (c < 0x20) {
      switch (c) {
        case '\n':
          out->append("\\n");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '\r':
          out->append("\\r");
          break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        }
      }
      ++p;
      changed = true;
    } else if (c >= 0x80) {
      size_t len = Utf8SequenceLength(p, end);
      if (len == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD
        ++p;
        changed = true;
      } else {
        out->append(reinterpret_cast<const char*>(p), len);
        p += len;
      }
    } else {
      out->push_back(static_cast<char>(c));
      ++p;
    }
  }
  return changed;
}

struct JsonTraceParser::Impl {
  od::parser parser;
  std::string buffer;    // the event, copied with SIMDJSON_PADDING after it
  std::string repaired;  // the event after RepairUnescapedStrings

  simdjson::error_code TryParse(std::string_view json, ParsedEvent* event,
                                std::string* what);
  simdjson::error_code ReadArgs(od::value& value, ParsedEvent* event);
  size_t ErrorOffset(od::document& doc) {
    const char* location = nullptr;
    if (doc.current_location().get(location) != simdjson::SUCCESS) return 0;
    return static_cast<size_t>(location - buffer.data());
  }
  size_t last_error_offset = 0;
};

simdjson::error_code JsonTraceParser::Impl::ReadArgs(od::value& value,
                                                     ParsedEvent* event) {
  od::json_type type;
  if (auto error = value.type().get(type)) return error;
  if (type != od::json_type::object) return simdjson::SUCCESS;
  od::object args;
  if (auto error = value.get_object().get(args)) return error;
  for (auto field_result : args) {
    od::field field;
    if (auto error = std::move(field_result).get(field)) return error;
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return error;
    od::value& arg = field.value();
    switch (key.size()) {
      case 3:
        if (key == "Seq") ReadLooseInt(arg, &event->seq);
        break;
      case 4:
        if (key == "name") {
          if (arg.type().get(type) == simdjson::SUCCESS &&
              type == od::json_type::string) {
            if (auto error = arg.get_string().get(event->meta_name)) {
              return error;
            }
          }
        }
        break;
      case 5:
        if (key == "dtype") {
          if (auto error = ReadRawOrString(arg, &event->dtype)) return error;
        } else if (key == "bytes") {
          ReadLooseInt(arg, &event->bytes);
        } else if (key == "Bytes") {
          int64_t bytes = INT64_MIN;
          ReadLooseInt(arg, &bytes);
          if (bytes != INT64_MIN) {
            event->has_memory_bytes = true;
            event->memory_bytes = bytes;
          }
        }
        break;
      case 6:
        if (key == "device") {
          ReadLooseInt(arg, &event->device);
        } else if (key == "stream") {
          ReadLooseInt(arg, &event->stream);
        } else if (key == "labels") {
          if (auto error = ReadRawOrString(arg, &event->meta_labels)) {
            return error;
          }
        }
        break;
      case 7:
        if (key == "op_name") {
          if (auto error = ReadRawOrString(arg, &event->op_name)) return error;
        } else if (key == "Task Id" || key == "task id") {
          ReadLooseInt(arg, &event->task_id);
        } else if (key == "item_id") {
          if (auto error = ReadRawOrString(arg, &event->item_id)) return error;
        }
        break;
      case 8:
        if (key == "provider") {
          if (auto error = ReadRawOrString(arg, &event->provider)) {
            return error;
          }
        } else if (key == "Batch Id") {
          ReadLooseInt(arg, &event->batch_id);
        } else if (key == "Model Id" || key == "model id") {
          ReadLooseInt(arg, &event->model_id);
        }
        break;
      case 9:
        if (key == "Task Type" || key == "task type") {
          if (auto error = ReadRawOrString(arg, &event->task_type)) {
            return error;
          }
        } else if (key == "Stream Id" || key == "stream id") {
          ReadLooseInt(arg, &event->stream_id);
        } else if (key == "Device Id") {
          ReadLooseInt(arg, &event->device_id);
        }
        break;
      case 10:
        if (key == "Input Dims") {
          if (auto error = ReadRawOrString(arg, &event->shapes)) return error;
        } else if (key == "Subtask Id") {
          ReadLooseInt(arg, &event->subtask_id);
        } else if (key == "Group size") {
          ReadLooseInt(arg, &event->group_size);
        }
        break;
      case 11:
        if (key == "correlation" || key == "External id" ||
            key == "external id") {
          ReadLooseInt(arg, key == "correlation" ? &event->correlation
                                                 : &event->external_id);
        } else if (key == "output_size") {
          ReadLooseInt(arg, &event->output_size);
        } else if (key == "Device Type") {
          ReadLooseInt(arg, &event->device_type);
        }
        break;
      case 13:
        if (key == "connection_id") {
          ReadLooseInt(arg, &event->connection_id);
        } else if (key == "In msg nelems") {
          ReadLooseInt(arg, &event->in_msg_nelems);
        }
        break;
      case 14:
        if (key == "parameter_size") {
          ReadLooseInt(arg, &event->parameter_size);
        } else if (key == "Total Reserved") {
          ReadLooseInt(arg, &event->total_reserved);
        } else if (key == "wait_on_stream") {
          ReadLooseInt(arg, &event->wait_on_stream);
        } else if (key == "Out msg nelems") {
          ReadLooseInt(arg, &event->out_msg_nelems);
        }
        break;
      case 15:
        if (key == "activation_size") {
          ReadLooseInt(arg, &event->activation_size);
        } else if (key == "mem_in_use_peak") {
          ReadLooseInt(arg, &event->mem_in_use_peak);
        } else if (key == "Total Allocated") {
          ReadLooseInt(arg, &event->total_allocated);
        } else if (key == "Collective name") {
          if (auto error = ReadRawOrString(arg, &event->collective_name)) {
            return error;
          }
        }
        break;
      case 16:
        if (key == "Physic Stream Id") {
          ReadLooseInt(arg, &event->stream_id);
        } else if (key == "mem_bytes_in_use") {
          ReadLooseInt(arg, &event->mem_bytes_in_use);
        } else if (key == "input_type_shape") {
          if (auto error = ReadRawOrString(arg, &event->shapes)) return error;
        }
        break;
      case 17:
        if (key == "output_type_shape") {
          if (auto error = ReadRawOrString(arg, &event->output_shapes)) {
            return error;
          }
        }
        break;
      case 18:
        if (key == "Process Group Name") {
          if (auto error = ReadRawOrString(arg, &event->pg_name)) return error;
        }
        break;
      case 19:
        if (key == "Process Group Ranks") {
          if (auto error = ReadRawOrString(arg, &event->pg_ranks)) return error;
        }
        break;
      case 25:
        if (key == "Process Group Description") {
          if (auto error = ReadRawOrString(arg, &event->pg_description)) {
            return error;
          }
        }
        break;
      case 33:
        if (key == "wait_on_cuda_event_record_corr_id") {
          ReadLooseInt(arg, &event->wait_on_record_correlation);
        }
        break;
      default:
        break;
    }
  }
  return simdjson::SUCCESS;
}

namespace {

simdjson::error_code ReadThreadId(od::value& value, EventThreadId* id) {
  od::json_type type;
  if (auto error = value.type().get(type)) return error;
  id->present = true;
  if (type == od::json_type::number) {
    if (value.get_int64().get(id->number) == simdjson::SUCCESS) {
      return simdjson::SUCCESS;
    }
    id->label = TrimSpaces(value.raw_json_token());
    return simdjson::SUCCESS;
  }
  if (type == od::json_type::string) {
    std::string_view s;
    if (auto error = value.get_string().get(s)) return error;
    std::optional<int64_t> number = ParseInt64(s);
    if (number) {
      id->number = *number;
    } else {
      id->label = s;
    }
    return simdjson::SUCCESS;
  }
  id->present = false;  // null / objects: treated as absent
  return simdjson::SUCCESS;
}

// ts / dur: a number or a string of digits, in µs.
simdjson::error_code ReadMicros(od::value& value, int64_t* ns,
                                std::string* what, std::string_view field) {
  od::json_type type;
  if (auto error = value.type().get(type)) return error;
  std::string_view text;
  if (type == od::json_type::number) {
    text = TrimSpaces(value.raw_json_token());
  } else if (type == od::json_type::string) {
    if (auto error = value.get_string().get(text)) return error;
  } else {
    *what = "\"" + std::string(field) + "\" is not a number";
    return simdjson::INCORRECT_TYPE;
  }
  std::optional<int64_t> parsed = ParseMicrosecondsToNanoseconds(text);
  if (!parsed) {
    *what = "\"" + std::string(field) + "\" value '" +
            std::string(text.substr(0, 40)) +
            "' is not a number of microseconds that fits in 64-bit "
            "nanoseconds";
    return simdjson::NUMBER_OUT_OF_RANGE;
  }
  *ns = *parsed;
  return simdjson::SUCCESS;
}

}  // namespace

simdjson::error_code JsonTraceParser::Impl::TryParse(std::string_view json,
                                                     ParsedEvent* event,
                                                     std::string* what) {
  *event = ParsedEvent();
  last_error_offset = 0;
  const size_t needed = json.size() + simdjson::SIMDJSON_PADDING;
  if (buffer.size() < needed)
    buffer.resize(std::max(needed, buffer.size() * 2));
  std::memcpy(buffer.data(), json.data(), json.size());
  std::memset(buffer.data() + json.size(), ' ', simdjson::SIMDJSON_PADDING);

  od::document doc;
  if (auto error =
          parser.iterate(buffer.data(), json.size(), buffer.size()).get(doc)) {
    return error;
  }
  od::object object;
  if (auto error = doc.get_object().get(object)) {
    last_error_offset = ErrorOffset(doc);
    return error;
  }
  auto fail = [&](simdjson::error_code error) {
    last_error_offset = ErrorOffset(doc);
    return error;
  };
  for (auto field_result : object) {
    od::field field;
    if (auto error = std::move(field_result).get(field)) return fail(error);
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return fail(error);
    od::value& value = field.value();
    simdjson::error_code error = simdjson::SUCCESS;
    switch (key.size()) {
      case 1:
        if (key == "s") {
          od::json_type type;
          if ((error = value.type().get(type)) == simdjson::SUCCESS &&
              type == od::json_type::string) {
            error = value.get_string().get(event->scope);
          }
        }
        break;
      case 2:
        if (key == "ph") {
          error = value.get_string().get(event->ph);
          if (error == simdjson::INCORRECT_TYPE) {
            *what = "\"ph\" is not a string";
          }
        } else if (key == "ts") {
          error = ReadMicros(value, &event->ts_ns, what, key);
          event->has_ts = error == simdjson::SUCCESS;
        } else if (key == "id") {
          event->has_id = true;
          od::json_type type;
          if ((error = value.type().get(type)) == simdjson::SUCCESS) {
            if (type == od::json_type::string) {
              error = value.get_string().get(event->id);
            } else if (type == od::json_type::number) {
              event->id = TrimSpaces(value.raw_json_token());
            }
          }
        }
        break;
      case 3:
        if (key == "cat") {
          od::json_type type;
          if ((error = value.type().get(type)) == simdjson::SUCCESS &&
              type == od::json_type::string) {
            error = value.get_string().get(event->cat);
          }
        } else if (key == "pid") {
          error = ReadThreadId(value, &event->pid);
        } else if (key == "tid") {
          error = ReadThreadId(value, &event->tid);
        } else if (key == "dur") {
          error = ReadMicros(value, &event->dur_ns, what, key);
          event->has_dur = error == simdjson::SUCCESS;
        }
        break;
      case 4:
        if (key == "name") {
          od::json_type type;
          if ((error = value.type().get(type)) == simdjson::SUCCESS) {
            if (type == od::json_type::string) {
              error = value.get_string().get(event->name);
              event->has_name = error == simdjson::SUCCESS;
            } else if (type == od::json_type::number) {
              event->name = TrimSpaces(value.raw_json_token());
              event->has_name = true;
            }
          }
        } else if (key == "args") {
          error = ReadArgs(value, event);
        }
        break;
      case 7:
        if (key == "bind_id") event->has_bind_id = true;
        break;
      default:
        break;
    }
    if (error != simdjson::SUCCESS) return fail(error);
  }
  return simdjson::SUCCESS;
}

JsonTraceParser::JsonTraceParser() : impl_(std::make_unique<Impl>()) {}
JsonTraceParser::~JsonTraceParser() = default;

JsonTraceParser::Outcome JsonTraceParser::Parse(std::string_view event_json,
                                                ParsedEvent* event,
                                                EventParseError* error) {
  std::string what;
  simdjson::error_code code = impl_->TryParse(event_json, event, &what);
  if (code == simdjson::SUCCESS) return Outcome::kParsed;
  // A value problem (a timestamp out of range) is not fixed by repairing
  // strings; anything else may come from ONNX Runtime's unescaped names.
  const size_t first_offset = impl_->last_error_offset;
  if (what.empty() && RepairUnescapedStrings(event_json, &impl_->repaired)) {
    std::string repaired_what;
    std::string_view repaired = impl_->repaired;
    simdjson::error_code retry =
        impl_->TryParse(repaired, event, &repaired_what);
    if (retry == simdjson::SUCCESS) return Outcome::kRepaired;
    if (!repaired_what.empty()) {
      what = std::move(repaired_what);
      code = retry;
    }
  }
  error->offset = std::min(first_offset, event_json.size());
  error->what = what.empty() ? "invalid JSON in a trace event (" +
                                   std::string(ErrorName(code)) + ")"
                             : std::move(what);
  return Outcome::kFailed;
}

}  // namespace mi::importers::trace_event
