#pragma once

// The JSON encoder of results: a ResultWriter over base/json_writer, used by
// the CLI (`--json`, `--format json`), the server (every JSON response of
// a result) and the dump files. One encoder per format, shared by all
// front ends, so a result's JSON is the same wherever it appears.

#include <string>

#include "base/json_writer.h"
#include "model_inspector/analysis_result.h"
#include "model_inspector/result_writer.h"

namespace mi::encoders {

class JsonResultWriter : public ResultWriter {
 public:
  explicit JsonResultWriter(std::string* out, bool pretty = false)
      : json_(out, pretty) {}

 protected:
  void DoBeginObject() override { json_.BeginObject(); }
  void DoEndObject() override { json_.EndObject(); }
  void DoBeginArray() override { json_.BeginArray(); }
  void DoEndArray() override { json_.EndArray(); }
  void DoKey(std::string_view key) override { json_.Key(key); }
  void DoString(std::string_view s) override { json_.String(s); }
  void DoInt(int64_t v) override { json_.Int(v); }
  void DoUInt(uint64_t v) override { json_.UInt(v); }
  void DoDouble(double v) override { json_.Double(v); }
  void DoBool(bool v) override { json_.Bool(v); }
  void DoNull() override { json_.Null(); }

 private:
  JsonWriter json_;
};

enum class JsonStyle : uint8_t {
  kCompact,  // one line: API responses, `--json`
  kPretty,   // indented: the dump files (summary.json, analyses.json)
};

// The result as JSON text, ending in a newline.
std::string EncodeJson(const AnalysisResult& result,
                       JsonStyle style = JsonStyle::kCompact);

}  // namespace mi::encoders
