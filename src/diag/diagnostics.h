#pragma once

// Counted diagnostics with a bounded per-occurrence log (file, location,
// message, snippet). The CLI prints a summary; --strict makes errors fatal.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic_codes.h"

namespace mi {

struct SourceLocation {
  std::string file;
  uint64_t line = 0;  // 1-based; 0 when not applicable
  uint64_t column = 0;
  uint64_t byte = 0;  // byte offset for binary inputs
  bool has_byte = false;
};

struct Diagnostic {
  DiagnosticCode code;
  SourceLocation location;
  std::string message;
  std::string snippet;
};

std::string_view DiagnosticName(DiagnosticCode code);  // "unescaped_string"
Severity DiagnosticSeverity(DiagnosticCode code);
std::string_view DiagnosticDescription(DiagnosticCode code);
std::string_view SeverityName(Severity severity);

class DiagnosticSink {
 public:
  static constexpr size_t kMaxLoggedPerCode = 20;

  void Report(DiagnosticCode code, SourceLocation location, std::string message,
              std::string snippet = {});
  // Counts occurrences without logging details (hot paths).
  void Count(DiagnosticCode code, uint64_t n = 1);

  uint64_t count(DiagnosticCode code) const {
    return counts_[static_cast<size_t>(code)];
  }
  uint64_t CountWithSeverity(Severity severity) const;
  const std::vector<Diagnostic>& log() const { return log_; }

 private:
  std::array<uint64_t, static_cast<size_t>(DiagnosticCode::kCount)> counts_{};
  std::vector<Diagnostic> log_;
};

}  // namespace mi
