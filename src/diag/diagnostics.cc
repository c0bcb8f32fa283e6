#include "diag/diagnostics.h"

#include <cctype>

namespace mi {
namespace {

struct CodeInfo {
  std::string_view enum_name;
  Severity severity;
  std::string_view description;
};

constexpr CodeInfo kCodeInfo[] = {
#define MI_DIAG_INFO(name, severity, description) \
  {#name, Severity::severity, description},
    MI_DIAGNOSTIC_CODES(MI_DIAG_INFO)
#undef MI_DIAG_INFO
};

// "kUnescapedString" -> "unescaped_string", computed once.
std::vector<std::string> BuildSnakeNames() {
  std::vector<std::string> names;
  for (const CodeInfo& info : kCodeInfo) {
    std::string out;
    std::string_view n = info.enum_name.substr(1);
    for (size_t i = 0; i < n.size(); ++i) {
      char c = n[i];
      if (std::isupper(static_cast<unsigned char>(c))) {
        if (i > 0) out.push_back('_');
        out.push_back(static_cast<char>(std::tolower(c)));
      } else {
        out.push_back(c);
      }
    }
    names.push_back(std::move(out));
  }
  return names;
}

}  // namespace

std::string_view DiagnosticName(DiagnosticCode code) {
  static const std::vector<std::string> names = BuildSnakeNames();
  return names[static_cast<size_t>(code)];
}

Severity DiagnosticSeverity(DiagnosticCode code) {
  return kCodeInfo[static_cast<size_t>(code)].severity;
}

std::string_view DiagnosticDescription(DiagnosticCode code) {
  return kCodeInfo[static_cast<size_t>(code)].description;
}

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kDataLoss:
      return "data_loss";
    case Severity::kError:
      return "error";
  }
  return "error";
}

void DiagnosticSink::Report(DiagnosticCode code, SourceLocation location,
                            std::string message, std::string snippet) {
  size_t index = static_cast<size_t>(code);
  if (counts_[index]++ < kMaxLoggedPerCode) {
    if (snippet.size() > 120) snippet.resize(120);
    log_.push_back(
        {code, std::move(location), std::move(message), std::move(snippet)});
  }
}

void DiagnosticSink::Count(DiagnosticCode code, uint64_t n) {
  counts_[static_cast<size_t>(code)] += n;
}

uint64_t DiagnosticSink::CountWithSeverity(Severity severity) const {
  uint64_t total = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (kCodeInfo[i].severity == severity) total += counts_[i];
  }
  return total;
}

}  // namespace mi
