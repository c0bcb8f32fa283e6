#pragma once

// Hand-built traces for the timing tests: host threads, device streams,
// tasks with launches and events, and a small graph whose nodes the tasks
// execute. Times in nanoseconds unless a name says otherwise.

#include <string_view>
#include <vector>

#include "base/string_pool.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis::testing {

struct TaskSpec {
  TaskKind kind = TaskKind::kCompute;
  std::string_view name = "k";
  std::string_view op_type;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  TaskId launch;              // launching host call
  int64_t correlation = -1;   // runtime call <-> device task, per source
  std::string_view category;  // "cuda_sync" for Kineto's sync records
  int32_t event_before = -1;  // waits on
  int32_t event_after = -1;   // records
  NodeId node;
  uint32_t run = 0;
};

struct TimingFixture {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  Links links;
  GraphId graph;

  TimingFixture();
  // A source (one profiled process): a rank and a time base.
  SourceId Source(std::string_view key, int32_t rank,
                  TimeBase time_base = TimeBase::kEpoch);
  // Tracks of `source`, or of no source (the unnamed one) when invalid.
  TrackId HostThread(int64_t tid, SourceId source = SourceId());
  TrackId Stream(int32_t device, int64_t stream, SourceId source = SourceId());
  TaskId Add(TrackId track, const TaskSpec& spec);
  // A host runtime call (cudaLaunchKernel) at [start, start + duration).
  TaskId Launch(TrackId thread, int64_t start_ns, int64_t duration_ns,
                int64_t correlation = -1, std::string_view name = "");
  // A node `name` of `op_type` consuming the outputs of `inputs`.
  NodeId Node(std::string_view name, std::string_view op_type,
              const std::vector<NodeId>& inputs);
  // Builds the model's indexes and the node -> tasks links from the tasks'
  // nodes; call after adding everything.
  void Finish();
};

}  // namespace mi::analysis::testing
