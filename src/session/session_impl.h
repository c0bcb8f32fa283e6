#pragma once

// What a Session holds: one run's strings, graphs, trace, links and
// diagnostics. Internal; front ends see include/model_inspector/session.h.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/json_writer.h"
#include "base/memory_budget.h"

#include "analysis/analysis_descriptor.h"
#include "analysis/blocks/block_time.h"
#include "analysis/timing/calibration.h"
#include "analysis/timing/dependency_graph.h"
#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/session.h"
#include "trace/trace.h"
#include "training/record.h"

namespace mi {

struct TimelineIndex;

struct Session::Impl {
  // OpenOptions::memory_limit's own budget (null: the process's), and the
  // charge of the model and trace below, released when the session goes.
  std::unique_ptr<MemoryBudget> own_budget;
  std::unique_ptr<MemoryCharge> held;
  StringPool strings;
  Model model{&strings};
  Trace trace{&strings};
  Links links;
  DiagnosticSink diagnostics;
  std::vector<InputFile> inputs;
  GraphId framework;
  GraphId compiled;
  // Clock calibration applied at Open (computed = false when disabled).
  analysis::CalibrationReport calibration;
  // The timing analyses' dependency graphs, built on first use and shared
  // (critical path, idle/overlap and the timing rules of one summary all
  // follow the whole-trace graph).
  mutable analysis::DependencyGraphCache dependency_graphs;
  // Built on the first timeline query (timeline_queries.cc), then shared
  // read-only by the server's threads.
  mutable std::once_flag timeline_once;
  mutable std::shared_ptr<const TimelineIndex> timeline;
  // The run directory whose probe store (probes/probes.db) was opened with
  // the run; empty when none. Read at each query (probe_queries.cc), so
  // runs added while a server holds the session are seen.
  std::string probe_run_dir;
  // The record of a training snapshot opened as this run (its path empty
  // when none): kept for the analyses (AnalysisContext::training) and the
  // training views (training_queries.cc).
  training::TrainingRecord training;
};

// The `probes` section of a node's details: the latest probe run's
// statistics of the probes on the node (probe_queries.cc). Leaves `out`
// as it is when the run has no probe store.
void AddNodeProbes(const Session::Impl& run, std::string_view level,
                   NodeDetailsResult* out);

// What the run offers the registered analyses (analysis_queries.cc): its
// model, trace, links, level roots, calibration, and the repeated-block
// families of a level (BlockFamiliesOf, from the layout's groups).
analysis::AnalysisContext ContextOf(const Session::Impl& run);
std::vector<analysis::BlockFamily> BlockFamiliesOf(const Session::Impl& run,
                                                   GraphId root);

// Adds the whole-trace analyses (critical path, idle/overlap, memory,
// findings) to a summary (summary_analyses.cc).
void AddWholeTraceAnalyses(const Session& session, const Session::Impl& run,
                           const SummaryOptions& options,
                           SummaryReport* report);

// Dump encoders (dump_writer.cc).
// Writes a tensor's `layout`, `origin_layout`, `origin_shape` fields (only
// those the format gave) into the open JSON object; graph.json and node
// details share it.
void WriteValueLayoutFields(JsonWriter& w, const Model& m, ValueId v);
// Writes a tensor's shape as a JSON array (a number per known dimension,
// the symbolic name or null for the others), or null when it has none;
// graph.json and the model-properties route share it.
void WriteValueShape(JsonWriter& w, const Model& m, ValueId v);
std::string EncodeGraphJson(const Session::Impl& run);
std::string EncodeTraceJson(const Session::Impl& run);

}  // namespace mi
