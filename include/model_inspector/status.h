#pragma once

// Status / StatusOr: the one error channel of model-inspector. The core never
// throws for bad input; every fallible function returns one of these.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace mi {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,  // the caller (user) asked for something impossible
  kNotFound,         // a file, node, run or key does not exist
  kMalformedInput,   // an input file is broken
  kUnsupported,      // valid input we do not handle (yet)
  kIo,               // the operating system refused a read or a write
  kMemoryLimit,      // an input would need more memory than the set limit
  kInternal,         // a bug in model-inspector
};

// Process exit code for each status code; documented in
// docs/reference/cli.md (Exit codes). 0 is success, 1 is reserved for "ran fine
// but found problems" (e.g. a regression gate), 2 for command-line usage
// errors.
int ExitCodeFor(StatusCode code);
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prepends context while an error propagates outwards, e.g.
  // "model.onnx: in node 'conv1' (Conv): <inner message>".
  Status WithContext(std::string_view context) const& {
    if (ok()) return *this;
    return Status(code_, std::string(context) + ": " + message_);
  }
  Status WithContext(std::string_view context) && {
    if (ok()) return std::move(*this);
    message_.insert(0, std::string(context) + ": ");
    return std::move(*this);
  }

  // "malformed input: <message>"
  std::string ToString() const;

  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgumentError(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFoundError(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status MalformedInputError(std::string m) {
  return Status(StatusCode::kMalformedInput, std::move(m));
}
inline Status UnsupportedError(std::string m) {
  return Status(StatusCode::kUnsupported, std::move(m));
}
inline Status IoError(std::string m) {
  return Status(StatusCode::kIo, std::move(m));
}
inline Status MemoryLimitError(std::string m) {
  return Status(StatusCode::kMemoryLimit, std::move(m));
}
inline Status InternalError(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

// A value or an error. Kept deliberately small: std::expected is C++23.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = InternalError("StatusOr built from OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace mi

#define MI_INTERNAL_CONCAT_INNER(a, b) a##b
#define MI_INTERNAL_CONCAT(a, b) MI_INTERNAL_CONCAT_INNER(a, b)

#define MI_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::mi::Status mi_status_ = (expr);        \
    if (!mi_status_.ok()) return mi_status_; \
  } while (false)

#define MI_INTERNAL_ASSIGN_OR_RETURN(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

#define MI_ASSIGN_OR_RETURN(lhs, expr)                                     \
  MI_INTERNAL_ASSIGN_OR_RETURN(MI_INTERNAL_CONCAT(mi_statusor_, __LINE__), \
                               lhs, expr)
