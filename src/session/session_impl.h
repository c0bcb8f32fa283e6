#pragma once

// What a Session holds: one run's strings, graphs, trace, links and
// diagnostics. Internal; front ends see include/model_inspector/session.h.

#include <memory>
#include <string>
#include <vector>

#include "base/json_writer.h"

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/session.h"
#include "trace/trace.h"

namespace mi {

struct Session::Impl {
  StringPool strings;
  Model model{&strings};
  Trace trace{&strings};
  Links links;
  DiagnosticSink diagnostics;
  std::vector<InputFile> inputs;
  GraphId framework;
  GraphId compiled;
};

// Dump encoders (dump_writer.cc).
// Writes a tensor's `layout`, `origin_layout`, `origin_shape` fields (only
// those the format gave) into the open JSON object; graph.json and node
// details share it.
void WriteValueLayoutFields(JsonWriter& w, const Model& m, ValueId v);
std::string EncodeGraphJson(const Session::Impl& run);
std::string EncodeTraceJson(const Session::Impl& run);
std::string EncodeSummaryJson(const SummaryReport& report);

}  // namespace mi
