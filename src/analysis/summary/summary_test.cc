#include "analysis/summary/summary.h"

#include <map>

#include <gtest/gtest.h>

namespace mi::analysis {
namespace {

struct Fixture {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  Links links;
  TrackId stream;
  TrackId thread;

  Fixture() {
    TrackInfo s;
    s.kind = TrackKind::kDeviceStream;
    s.stream = 7;
    stream = trace.AddTrack(s);
    TrackInfo h;
    h.kind = TrackKind::kHostThread;
    h.tid = 11;
    thread = trace.AddTrack(h);
    trace.AddRun({pool.Intern("whole trace"), 0, 1000000});
  }
  TaskId Add(TaskKind kind, std::string_view name, std::string_view op,
             int64_t start_us, int64_t dur_us, TrackId track) {
    TaskRow row;
    row.kind = kind;
    row.name = pool.Intern(name);
    row.op_type = pool.Intern(op);
    row.track = track;
    row.start_ns = start_us * 1000;
    row.duration_ns = dur_us * 1000;
    return trace.AddTask(row);
  }
};

TEST(SummaryTest, OpTypeTableWithDataMovementRow) {
  Fixture f;
  f.Add(TaskKind::kCompute, "conv_kernel", "Conv", 0, 30, f.stream);
  f.Add(TaskKind::kCompute, "conv_kernel", "Conv", 40, 30, f.stream);
  f.Add(TaskKind::kCompute, "relu_kernel", "Relu", 80, 10, f.stream);
  f.Add(TaskKind::kDataMovement, "Memcpy HtoD", "", 90, 30, f.stream);
  f.Add(TaskKind::kHostOp, "aten::conv2d", "", 0, 500, f.thread);  // ignored
  SummaryReport r = Summarize(f.model, f.trace, f.links, {});
  EXPECT_EQ(r.basis, "execution tasks");
  EXPECT_DOUBLE_EQ(r.total_us, 100);
  ASSERT_EQ(r.op_types.size(), 3u);
  EXPECT_EQ(r.op_types[0].op_type, "Conv");
  EXPECT_EQ(r.op_types[0].calls, 2u);
  EXPECT_EQ(r.op_types[0].nodes, 1u);  // one kernel name, no graph
  EXPECT_DOUBLE_EQ(r.op_types[0].average_us, 30);
  EXPECT_DOUBLE_EQ(r.op_types[0].share, 0.6);
  EXPECT_EQ(r.op_types[1].op_type, "[data movement]");
  EXPECT_EQ(r.op_types[1].kind, "data_movement");
  ASSERT_EQ(r.streams.size(), 1u);
  EXPECT_DOUBLE_EQ(r.streams[0].busy_us, 100);
  EXPECT_DOUBLE_EQ(r.streams[0].span_us, 120);
}

// Tasks whose importer gave them a class (trace/trace.h task_class) show it
// as the row kind and keep their op types apart; the source's op-type
// classes apply to an op type that came from the linked graph node. Any
// other format's data movement is one row.
TEST(SummaryTest, TaskClassesAreTheRowKinds) {
  Fixture f;
  auto classed = [&](std::string_view name, std::string_view op,
                     std::string_view cls, TaskKind kind, int64_t start) {
    TaskId t = f.Add(kind, name, op, start, 10, f.stream);
    f.trace.SetTaskClass(t, f.pool.Intern(cls));
    return t;
  };
  classed("Conv1", "Conv2D", "ai_core", TaskKind::kCompute, 0);
  classed("MEMCPY_ASYNC", "MEMCPY_ASYNC", "data_movement",
          TaskKind::kDataMovement, 20);
  classed("SDMA", "SDMA", "data_movement", TaskKind::kDataMovement, 40);
  // Linked to a FormatTransfer node: the op type is the node's.
  TaskId fmt = classed("fmt_1", "", "ai_core", TaskKind::kCompute, 60);
  GraphId g = f.model.AddGraph(LayerLevel::kCompiled, "g", "g.txt");
  NodeId node = f.model.AddNode(g, "FormatTransfer", "", "fmt_1");
  f.trace.SetTaskNode(fmt, node);
  f.trace.mutable_source(f.trace.track_source(f.stream))
      .op_type_classes.emplace_back(f.pool.Intern("FormatTransfer"),
                                    f.pool.Intern("layout_conversion"));
  f.Add(TaskKind::kDataMovement, "Memcpy HtoD", "", 80, 10, f.stream);
  SummaryReport r = Summarize(f.model, f.trace, f.links, {});
  std::map<std::string, std::string> kinds;
  for (const OpTypeRow& row : r.op_types) kinds[row.op_type] = row.kind;
  EXPECT_EQ(kinds, (std::map<std::string, std::string>{
                       {"Conv2D", "ai_core"},
                       {"MEMCPY_ASYNC", "data_movement"},
                       {"SDMA", "data_movement"},
                       {"FormatTransfer", "layout_conversion"},
                       {"[data movement]", "data_movement"}}));
}

// A sync task that the linker reached from aten::mm (its op type) is not
// aten::mm's work: kernels 0..30 and 40..70 (aten::mm), a wait 70..100 with
// op type aten::mm, a CANN-style classed wait 100..110 (EVENT_WAIT) and a
// copy 110..120. Work: 30 + 30 + 10 = 70; waits 30 in [sync] and 10 in
// EVENT_WAIT, share 0; stream busy 70, span 0..120.
TEST(SummaryTest, SyncTasksAreRowsOfTheirOwnAndNotWork) {
  Fixture f;
  f.Add(TaskKind::kCompute, "sgemm", "aten::mm", 0, 30, f.stream);
  f.Add(TaskKind::kCompute, "sgemm", "aten::mm", 40, 30, f.stream);
  f.Add(TaskKind::kSync, "Event Sync", "aten::mm", 70, 30, f.stream);
  TaskId wait =
      f.Add(TaskKind::kSync, "EVENT_WAIT", "EVENT_WAIT", 100, 10, f.stream);
  f.trace.SetTaskClass(wait, f.pool.Intern("sync"));
  f.Add(TaskKind::kDataMovement, "Memcpy HtoD", "", 110, 10, f.stream);
  SummaryReport r = Summarize(f.model, f.trace, f.links, {});
  EXPECT_EQ(r.tasks, 5u);
  EXPECT_DOUBLE_EQ(r.total_us, 70);
  std::map<std::string, const OpTypeRow*> rows;
  for (const OpTypeRow& row : r.op_types) rows[row.op_type] = &row;
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows["aten::mm"]->calls, 2u);
  EXPECT_DOUBLE_EQ(rows["aten::mm"]->total_us, 60);
  EXPECT_DOUBLE_EQ(rows["aten::mm"]->share, 60.0 / 70);
  EXPECT_EQ(rows["[sync]"]->kind, "sync");
  EXPECT_DOUBLE_EQ(rows["[sync]"]->total_us, 30);
  EXPECT_DOUBLE_EQ(rows["[sync]"]->share, 0);
  EXPECT_EQ(rows["EVENT_WAIT"]->kind, "sync");
  EXPECT_DOUBLE_EQ(rows["EVENT_WAIT"]->total_us, 10);
  EXPECT_DOUBLE_EQ(rows["[data movement]"]->share, 10.0 / 70);
  ASSERT_EQ(r.top_nodes.size(), 2u);  // sgemm, Memcpy HtoD: no waits
  ASSERT_EQ(r.streams.size(), 1u);
  EXPECT_DOUBLE_EQ(r.streams[0].busy_us, 70);
  EXPECT_DOUBLE_EQ(r.streams[0].total_us, 70);
  EXPECT_DOUBLE_EQ(r.streams[0].span_us, 120);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_DOUBLE_EQ(r.runs[0].task_time_us, 70);
}

TEST(SummaryTest, OverlappingTasksOnOneStreamAreKeptAndCountedOnceInBusy) {
  Fixture f;
  f.Add(TaskKind::kCompute, "k1", "MatMul", 0, 100, f.stream);
  f.Add(TaskKind::kCompute, "k2", "MatMul", 50, 100, f.stream);  // PDL overlap
  SummaryReport r = Summarize(f.model, f.trace, f.links, {});
  EXPECT_EQ(r.tasks, 2u);
  EXPECT_DOUBLE_EQ(r.op_types[0].total_us, 200);
  EXPECT_DOUBLE_EQ(r.streams[0].busy_us, 150);
}

TEST(SummaryTest, HostOnlyTracesUseSelfTime) {
  Fixture f;
  f.Add(TaskKind::kHostOp, "aten::conv2d", "", 0, 100, f.thread);
  f.Add(TaskKind::kHostOp, "aten::convolution", "", 10, 80, f.thread);
  f.Add(TaskKind::kHostOp, "aten::relu", "", 100, 20, f.thread);
  SummaryReport r = Summarize(f.model, f.trace, f.links, {});
  EXPECT_EQ(r.basis, "host ops (self time)");
  EXPECT_DOUBLE_EQ(r.total_us, 120);  // nesting never double counts
  std::map<std::string, double> totals;
  for (const auto& row : r.op_types) totals[row.op_type] = row.total_us;
  EXPECT_DOUBLE_EQ(totals["aten::conv2d"], 20);
  EXPECT_DOUBLE_EQ(totals["aten::convolution"], 80);
  EXPECT_DOUBLE_EQ(totals["aten::relu"], 20);
}

SummaryOptions Window(int64_t from_us, int64_t to_us,
                      TraceClock clock = TraceClock::kRaw) {
  SummaryOptions o;
  o.from_ns = from_us * 1000;
  o.to_ns = to_us * 1000;
  o.clock = clock;
  return o;
}

TEST(SummaryTest, TimeRangeClipsEachTaskToItsOverlap) {
  Fixture f;
  f.Add(TaskKind::kCompute, "conv_kernel", "Conv", 0, 30, f.stream);    // 20
  f.Add(TaskKind::kCompute, "conv_kernel", "Conv", 40, 30, f.stream);   // 30
  f.Add(TaskKind::kCompute, "relu_kernel", "Relu", 80, 10, f.stream);   // 5
  f.Add(TaskKind::kCompute, "relu_kernel", "Relu", 200, 10, f.stream);  // out
  // Ends exactly where the range starts: [from, to) does not reach it.
  f.Add(TaskKind::kCompute, "gemm_kernel", "Gemm", 0, 10, f.stream);
  SummaryReport r = Summarize(f.model, f.trace, f.links, Window(10, 85));
  EXPECT_EQ(r.tasks, 3u);  // tasks overlapping the range
  EXPECT_DOUBLE_EQ(r.total_us, 55);
  ASSERT_EQ(r.op_types.size(), 2u);
  EXPECT_EQ(r.op_types[0].op_type, "Conv");
  EXPECT_EQ(r.op_types[0].calls, 2u);
  EXPECT_DOUBLE_EQ(r.op_types[0].total_us, 50);
  EXPECT_DOUBLE_EQ(r.op_types[0].average_us, 25);
  EXPECT_EQ(r.op_types[1].calls, 1u);
  EXPECT_DOUBLE_EQ(r.op_types[1].total_us, 5);
  ASSERT_EQ(r.streams.size(), 1u);
  EXPECT_DOUBLE_EQ(r.streams[0].busy_us, 55);
  EXPECT_DOUBLE_EQ(r.streams[0].span_us, 75);  // clipped: 10 .. 85
  EXPECT_EQ(r.streams[0].tasks, 3u);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_DOUBLE_EQ(r.runs[0].task_time_us, 55);
  // A range with nothing in it.
  r = Summarize(f.model, f.trace, f.links, Window(100, 150));
  EXPECT_EQ(r.tasks, 0u);
  EXPECT_TRUE(r.streams.empty());
  EXPECT_TRUE(r.runs.empty());
}

TEST(SummaryTest, TimeRangeInCalibratedTime) {
  Fixture f;
  f.Add(TaskKind::kCompute, "conv_kernel", "Conv", 0, 30, f.stream);
  f.trace.mutable_track(f.stream).clock_offset_ns = 100 * 1000;  // +100 us
  SummaryReport raw = Summarize(f.model, f.trace, f.links, Window(110, 200));
  EXPECT_EQ(raw.tasks, 0u);
  SummaryReport cal = Summarize(f.model, f.trace, f.links,
                                Window(110, 200, TraceClock::kCalibrated));
  EXPECT_EQ(cal.tasks, 1u);
  EXPECT_DOUBLE_EQ(cal.total_us, 20);  // 110 .. 130
}

TEST(SummaryTest, TimeRangeKeepsSelfTimeExclusive) {
  Fixture f;
  f.Add(TaskKind::kHostOp, "aten::conv2d", "", 0, 100, f.thread);
  f.Add(TaskKind::kHostOp, "aten::convolution", "", 10, 80, f.thread);
  f.Add(TaskKind::kHostOp, "aten::relu", "", 100, 20, f.thread);
  // [50, 110): conv2d is all convolution there (50..90) but 90..100 of its
  // own; relu 100..110.
  SummaryReport r = Summarize(f.model, f.trace, f.links, Window(50, 110));
  EXPECT_DOUBLE_EQ(r.total_us, 60);
  std::map<std::string, double> totals;
  for (const auto& row : r.op_types) totals[row.op_type] = row.total_us;
  EXPECT_DOUBLE_EQ(totals["aten::conv2d"], 10);
  EXPECT_DOUBLE_EQ(totals["aten::convolution"], 40);
  EXPECT_DOUBLE_EQ(totals["aten::relu"], 10);
  // Parent and child clipped to the same range keep their roles, whatever
  // order the trace lists them in.
  Fixture g;
  g.Add(TaskKind::kHostOp, "aten::convolution", "", 10, 80, g.thread);
  g.Add(TaskKind::kHostOp, "aten::conv2d", "", 0, 100, g.thread);
  r = Summarize(g.model, g.trace, g.links, Window(20, 30));
  totals.clear();
  for (const auto& row : r.op_types) totals[row.op_type] = row.total_us;
  EXPECT_DOUBLE_EQ(totals["aten::convolution"], 10);
  EXPECT_DOUBLE_EQ(totals["aten::conv2d"], 0);
}

}  // namespace
}  // namespace mi::analysis
