#include "analysis/timing/timing_test_util.h"

#include <string>

namespace mi::analysis::testing {

TimingFixture::TimingFixture() {
  graph = model.AddGraph(LayerLevel::kFramework, "g", "test.onnx");
  trace.AddRun({pool.Intern("whole trace"), 0, 0});
}

SourceId TimingFixture::Source(std::string_view key, int32_t rank,
                               TimeBase time_base) {
  SourceId s = trace.FindOrAddSource(pool.Intern(key));
  trace.mutable_source(s).rank = rank;
  trace.mutable_source(s).time_base = time_base;
  return s;
}

TrackId TimingFixture::HostThread(int64_t tid, SourceId source) {
  TrackInfo info;
  info.kind = TrackKind::kHostThread;
  info.source = source;
  info.pid = 1;
  info.tid = tid;
  return trace.AddTrack(info);
}

TrackId TimingFixture::Stream(int32_t device, int64_t stream, SourceId source) {
  TrackInfo info;
  info.kind = TrackKind::kDeviceStream;
  info.source = source;
  info.pid = 100 + device;
  info.tid = stream;
  info.device = device;
  info.stream = stream;
  return trace.AddTrack(info);
}

TaskId TimingFixture::Add(TrackId track, const TaskSpec& spec) {
  TaskRow row;
  row.kind = spec.kind;
  row.name = pool.Intern(spec.name);
  row.op_type = pool.Intern(spec.op_type);
  row.track = track;
  row.start_ns = spec.start_ns;
  row.duration_ns = spec.duration_ns;
  row.event_before = spec.event_before;
  row.event_after = spec.event_after;
  row.correlation = spec.correlation;
  row.category = pool.Intern(spec.category);
  row.run = spec.run;
  TaskId t = trace.AddTask(row);
  if (spec.launch.valid()) trace.SetTaskLaunch(t, spec.launch);
  if (spec.node.valid()) trace.SetTaskNode(t, spec.node);
  return t;
}

TaskId TimingFixture::Launch(TrackId thread, int64_t start_ns,
                             int64_t duration_ns, int64_t correlation,
                             std::string_view name) {
  TaskSpec spec;
  spec.kind = TaskKind::kRuntime;
  spec.name = name.empty() ? "cudaLaunchKernel" : name;
  spec.correlation = correlation;
  spec.start_ns = start_ns;
  spec.duration_ns = duration_ns;
  return Add(thread, spec);
}

NodeId TimingFixture::Node(std::string_view name, std::string_view op_type,
                           const std::vector<NodeId>& inputs) {
  NodeId n = model.AddNode(graph, op_type, "", name);
  for (NodeId in : inputs) {
    model.AddNodeInput(
        n, model.GetOrAddValue(
               graph, std::string(model.str(model.node_name(in))) + ":out"));
  }
  model.AddNodeOutput(n,
                      model.GetOrAddValue(graph, std::string(name) + ":out"));
  return n;
}

void TimingFixture::Finish() {
  model.BuildIndexes();
  std::vector<std::pair<NodeId, TaskId>> items;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    if (trace.task_node(TaskId(i)).valid()) {
      items.emplace_back(trace.task_node(TaskId(i)), TaskId(i));
    }
  }
  links.mapped_tasks.Build(model.node_count(), items);
  links.fused_into.Build(model.node_count(), {});
}

}  // namespace mi::analysis::testing
