#include "encoders/json_encoder.h"

namespace mi::encoders {

std::string EncodeJson(const AnalysisResult& result, JsonStyle style) {
  std::string out;
  JsonResultWriter w(&out, style == JsonStyle::kPretty);
  result.Write(w);
  out.push_back('\n');
  return out;
}

}  // namespace mi::encoders
