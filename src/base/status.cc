#include "model_inspector/status.h"

namespace mi {

int ExitCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
      return 2;
    case StatusCode::kNotFound:
      return 3;
    case StatusCode::kMalformedInput:
      return 4;
    case StatusCode::kUnsupported:
      return 5;
    case StatusCode::kIo:
      return 6;
    case StatusCode::kMemoryLimit:
      return 7;
    case StatusCode::kInternal:
      return 70;
  }
  return 70;
}

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kMalformedInput:
      return "malformed input";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kIo:
      return "i/o error";
    case StatusCode::kMemoryLimit:
      return "memory limit";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "internal error";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace mi
