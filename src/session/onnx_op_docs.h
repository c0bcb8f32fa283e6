#pragma once

// ONNX operator documentation from libonnx's schema registry, for the node
// details (docs/reference/http-api.md, "doc"). The only place outside the
// ONNX importer that talks to libonnx; no ONNX type leaves this file.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mi {

struct OnnxOpDoc {
  std::string domain;  // "" for the default domain (ai.onnx)
  int64_t since_version = 0;
  std::string summary;  // first paragraph, plain text, <= ~1,500 bytes
};

// The schema of `op_type` in `domain` ("" or "ai.onnx" = the default
// domain) at `opset` (the latest version <= opset; 0 = the latest known).
// nullopt when the registry does not know the op (contrib ops such as
// com.microsoft, vendor ops such as ge:).
std::optional<OnnxOpDoc> FindOnnxOpDoc(std::string_view op_type,
                                       std::string_view domain, int64_t opset);

// The first paragraph of a Markdown doc string as plain text: code ticks,
// emphasis markers and link targets removed, whitespace collapsed, cut at
// about `max_bytes` (on a UTF-8 boundary, ending in "..."). Exposed for
// tests.
std::string PlainSummary(std::string_view markdown, size_t max_bytes = 1500);

}  // namespace mi
