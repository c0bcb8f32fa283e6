#include "session/timeline_queries.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "session/session_impl.h"

namespace mi {
namespace {

// A hand-built run: tracks and tasks added directly, no importer.
struct HandBuiltRun {
  Session::Impl impl;
  TrackId stream;
  TrackId thread;

  HandBuiltRun() {
    TrackInfo s;
    s.kind = TrackKind::kDeviceStream;
    s.device = 0;
    s.stream = 7;
    stream = impl.trace.AddTrack(s);
    TrackInfo h;
    h.kind = TrackKind::kHostThread;
    h.pid = 100;
    h.tid = 11;
    thread = impl.trace.AddTrack(h);
  }
  TaskId Add(TrackId track, int64_t start, int64_t duration,
             std::string_view name, TaskKind kind = TaskKind::kCompute,
             std::string_view op = "") {
    TaskRow row;
    row.track = track;
    row.start_ns = start;
    row.duration_ns = duration;
    row.name = impl.strings.Intern(name);
    row.op_type = impl.strings.Intern(op);
    row.kind = kind;
    return impl.trace.AddTask(row);
  }
};

nlohmann::json Json(const StatusOr<std::string>& s) {
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return nlohmann::json::parse(s.value());
}

nlohmann::json Window(const Session::Impl& run, TimelineWindowRequest r) {
  r.json = true;
  return Json(TimelineWindowOf(run, r));
}

TEST(TimelineIndexTest, RowsFollowNesting) {
  HandBuiltRun run;
  TaskId parent = run.Add(run.thread, 0, 100, "parent", TaskKind::kHostOp);
  TaskId a = run.Add(run.thread, 10, 30, "a", TaskKind::kHostOp);
  TaskId b = run.Add(run.thread, 50, 40, "b", TaskKind::kHostOp);
  TaskId c = run.Add(run.thread, 60, 10, "c", TaskKind::kHostOp);
  // Starts inside b and the parent, ends after both: not nested in
  // anything, so it takes the first free row (b's row is busy until 90,
  // c's row is free from 70).
  TaskId d = run.Add(run.thread, 80, 40, "d", TaskKind::kHostOp);
  TaskId later = run.Add(run.thread, 200, 10, "later", TaskKind::kHostOp);
  const TimelineIndex& x = GetTimelineIndex(run.impl);
  EXPECT_EQ(x.task_row[parent.value()], 0);
  EXPECT_EQ(x.task_row[a.value()], 1);
  EXPECT_EQ(x.task_row[b.value()], 1);
  EXPECT_EQ(x.task_row[c.value()], 2);
  EXPECT_EQ(x.task_row[d.value()], 2);
  EXPECT_EQ(x.task_row[later.value()], 0);
  // Display order: the device stream first, then the host thread.
  ASSERT_EQ(x.tracks.size(), 2u);
  EXPECT_EQ(x.tracks[0].id, run.stream.value());
  EXPECT_EQ(x.tracks[1].id, run.thread.value());
  EXPECT_EQ(x.tracks[1].rows, 3u);
  EXPECT_EQ(x.tracks[1].busy_ns, 120 + 10);
  EXPECT_EQ(x.tracks[0].rows, 1u);  // an empty track still has a row
  EXPECT_EQ(x.tracks[0].group, "GPU 0");
  EXPECT_EQ(x.tracks[0].name, "stream 7");
  EXPECT_EQ(x.tracks[1].group, "host pid 100");
}

TEST(TimelineIndexTest, NoTwoTasksOfARowOverlap) {
  HandBuiltRun run;
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    run.Add(i % 2 ? run.stream : run.thread, rng() % 100000, rng() % 500, "t");
  }
  const TimelineIndex& x = GetTimelineIndex(run.impl);
  for (const TimelineLane& lane : x.lanes) {
    for (size_t i = 1; i < lane.task.size(); ++i) {
      EXPECT_LE(lane.end_ns[i - 1], lane.start_ns[i]);
    }
  }
}

TEST(TimelineWindowTest, WideTasksAloneNarrowOnesMergedPerPixel) {
  HandBuiltRun run;
  TaskId wide = run.Add(run.stream, 0, 500, "gemm", TaskKind::kCompute, "Gemm");
  // 1000 tasks of 1 ns, 1 ns apart, in [1000, 3000).
  for (int i = 0; i < 1000; ++i) {
    run.Add(run.stream, 1000 + 2 * i, 1, i % 4 ? "relu" : "add",
            TaskKind::kCompute, i % 4 ? "Relu" : "Add");
  }
  TimelineWindowRequest r;
  r.start_ns = 0;
  r.end_ns = 4000;
  r.pixels = 40;  // 100 ns per pixel
  nlohmann::json w = Window(run.impl, r);
  EXPECT_EQ(w["total_tasks_in_window"], 1001);
  const auto& items = w["items"];
  ASSERT_EQ(items.size(), 1u + 20u);  // the wide task + one per column
  EXPECT_EQ(items[0]["task"], wide.value());
  EXPECT_EQ(items[0]["count"], 1);
  EXPECT_EQ(items[0]["label"], "Gemm");
  EXPECT_EQ(items[0]["flags"], 0);
  int64_t merged = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    EXPECT_TRUE(items[i]["task"].is_null());
    EXPECT_EQ(items[i]["flags"].get<int>() & 1, 1);
    EXPECT_EQ(items[i]["count"], 50);
    // Relu has three times Add's time in every column.
    EXPECT_EQ(items[i]["label"], "Relu");
    EXPECT_NEAR(items[i]["busy"].get<double>(), 50.0 / 99.0, 1e-6);
    merged += items[i]["count"].get<int64_t>();
  }
  EXPECT_EQ(merged, 1000);
  // Zoomed in to 1 ns per pixel, every task is sent alone.
  r.start_ns = 1000;
  r.end_ns = 1100;
  r.pixels = 100;
  w = Window(run.impl, r);
  EXPECT_EQ(w["total_tasks_in_window"], 50);
  ASSERT_EQ(w["items"].size(), 50u);
  for (const auto& item : w["items"]) EXPECT_FALSE(item["task"].is_null());
}

TEST(TimelineWindowTest, ItemsStayBoundedAndCountsMatchABruteForceScan) {
  HandBuiltRun run;
  std::mt19937 rng(11);
  for (int i = 0; i < 20000; ++i) {
    run.Add(i % 3 ? run.stream : run.thread, rng() % 1000000, rng() % 2000,
            "k" + std::to_string(rng() % 5), TaskKind::kCompute);
  }
  const Trace& trace = run.impl.trace;
  for (auto [start, end, px] :
       {std::tuple<int64_t, int64_t, uint32_t>{0, 1000000, 200},
        {400000, 401000, 50},
        {-5000, 2000000, 1},
        {123456, 654321, 20000}}) {
    TimelineWindowRequest r;
    r.start_ns = start;
    r.end_ns = end;
    r.pixels = px;
    nlohmann::json w = Window(run.impl, r);
    uint64_t expected = 0;
    for (uint32_t i = 0; i < trace.task_count(); ++i) {
      int64_t s = trace.task_start_ns(TaskId(i));
      int64_t e = trace.task_end_ns(TaskId(i));
      if (s == e ? (s >= start && s < end) : (s < end && e > start)) {
        ++expected;
      }
    }
    EXPECT_EQ(w["total_tasks_in_window"].get<uint64_t>(), expected);
    uint64_t counted = 0;
    std::map<std::pair<int, int>, size_t> per_row;
    for (const auto& item : w["items"]) {
      counted += item["count"].get<uint64_t>();
      ++per_row[{item["track"].get<int>(), item["row"].get<int>()}];
      EXPECT_LT(item["start_ns"].get<int64_t>(), end);
      EXPECT_GE(item["end_ns"].get<int64_t>(), start);
    }
    EXPECT_EQ(counted, expected);
    for (auto& [lane, n] : per_row) EXPECT_LE(n, 2 * size_t(px) + 2);
  }
}

TEST(TimelineWindowTest, FiltersAndCalibratedClock) {
  HandBuiltRun run;
  run.Add(run.stream, 0, 100, "conv_kernel", TaskKind::kCompute, "Conv");
  run.Add(run.stream, 200, 100, "Memcpy HtoD", TaskKind::kDataMovement);
  run.Add(run.thread, 0, 300, "aten::conv2d", TaskKind::kHostOp);
  // The stream runs 5000 ns behind (set before the first query, as
  // Session::Open does): calibrated, its tasks move right.
  run.impl.trace.mutable_track(run.stream).clock_offset_ns = 5000;
  TimelineWindowRequest r;
  r.start_ns = 0;
  r.end_ns = 1000;
  r.pixels = 1000;
  r.labels = {"Conv"};
  EXPECT_EQ(Window(run.impl, r)["total_tasks_in_window"], 1);
  r.labels.clear();
  r.kinds = {"data_movement", "host_op"};
  EXPECT_EQ(Window(run.impl, r)["total_tasks_in_window"], 2);
  r.kinds.clear();
  r.name_contains = "CONV";
  EXPECT_EQ(Window(run.impl, r)["total_tasks_in_window"], 2);
  r.name_contains.clear();
  r.tracks = {run.thread.value()};
  nlohmann::json w = Window(run.impl, r);
  ASSERT_EQ(w["items"].size(), 1u);
  EXPECT_EQ(w["items"][0]["label"], "aten::conv2d");
  r.tracks = {9};
  EXPECT_EQ(TimelineWindowOf(run.impl, r).status().code(),
            StatusCode::kInvalidArgument);
  r.tracks.clear();
  r.kinds = {"kernel"};
  EXPECT_EQ(TimelineWindowOf(run.impl, r).status().code(),
            StatusCode::kInvalidArgument);
  r.kinds.clear();
  r.pixels = kMaxTimelinePixels + 1;
  EXPECT_EQ(TimelineWindowOf(run.impl, r).status().code(),
            StatusCode::kInvalidArgument);
  r.pixels = 1000;
  r.end_ns = r.start_ns;
  EXPECT_EQ(TimelineWindowOf(run.impl, r).status().code(),
            StatusCode::kInvalidArgument);

  r.start_ns = 5000;
  r.end_ns = 6000;
  r.clock = TraceClock::kRaw;
  EXPECT_EQ(Window(run.impl, r)["total_tasks_in_window"], 0);
  r.clock = TraceClock::kCalibrated;
  w = Window(run.impl, r);
  EXPECT_EQ(w["total_tasks_in_window"], 2);
  EXPECT_EQ(w["items"][0]["start_ns"], 5000);
  EXPECT_EQ(w["items"][0]["end_ns"], 5100);
  nlohmann::json t = Json(TimelineJsonOf(run.impl, {TraceClock::kCalibrated}));
  EXPECT_TRUE(t["has_calibration"].get<bool>());
  EXPECT_EQ(t["start_ns"], 0);
  EXPECT_EQ(t["end_ns"], 5300);
  EXPECT_EQ(t["tracks"][0]["clock_offset_ns"], 5000);
}

template <typename T>
std::vector<T> Section(const std::string& b, size_t* offset, size_t n) {
  *offset = (*offset + 7) / 8 * 8;
  std::vector<T> v(n);
  EXPECT_LE(*offset + n * sizeof(T), b.size());
  if (n > 0) std::memcpy(v.data(), b.data() + *offset, n * sizeof(T));
  *offset += n * sizeof(T);
  return v;
}

TEST(TimelineWindowTest, BinaryMatchesJson) {
  HandBuiltRun run;
  run.Add(run.stream, 0, 1000, "wide", TaskKind::kCompute, "Conv");
  for (int i = 0; i < 100; ++i) {
    run.Add(run.thread, 3 * i, 1, "tiny", TaskKind::kRuntime);
  }
  TimelineWindowRequest r;
  r.start_ns = 0;
  r.end_ns = 1000;
  r.pixels = 10;
  nlohmann::json j = Window(run.impl, r);
  auto binary = TimelineWindowOf(run.impl, r);
  ASSERT_TRUE(binary.ok());
  const std::string& b = binary.value();
  ASSERT_GE(b.size(), 40u);
  EXPECT_EQ(b.substr(0, 4), "MITW");
  uint32_t header[3];
  std::memcpy(header, b.data() + 4, 12);
  EXPECT_EQ(header[0], 1u);  // version
  uint32_t n = header[1];
  uint32_t strings = header[2];
  double ws, we;
  std::memcpy(&ws, b.data() + 16, 8);
  std::memcpy(&we, b.data() + 24, 8);
  EXPECT_EQ(ws, 0);
  EXPECT_EQ(we, 1000);
  uint32_t total;
  std::memcpy(&total, b.data() + 32, 4);
  EXPECT_EQ(total, j["total_tasks_in_window"].get<uint32_t>());
  ASSERT_EQ(n, j["items"].size());
  size_t off = 40;
  auto start = Section<double>(b, &off, n);
  auto end = Section<double>(b, &off, n);
  auto task = Section<uint32_t>(b, &off, n);
  auto count = Section<uint32_t>(b, &off, n);
  auto track = Section<uint32_t>(b, &off, n);
  auto label = Section<uint32_t>(b, &off, n);
  auto busy = Section<float>(b, &off, n);
  auto kind = Section<uint8_t>(b, &off, n);
  auto row = Section<uint8_t>(b, &off, n);
  auto flags = Section<uint8_t>(b, &off, n);
  auto lengths = Section<uint32_t>(b, &off, strings);
  std::vector<std::string> table;
  for (uint32_t len : lengths) {
    table.push_back(b.substr(off, len));
    off += len;
  }
  EXPECT_EQ(off, b.size());
  const char* kKinds[] = {"compute", "data_movement", "sync",     "host_op",
                          "runtime", "annotation",    "overhead", "other"};
  for (uint32_t i = 0; i < n; ++i) {
    const auto& item = j["items"][i];
    EXPECT_EQ(start[i], item["start_ns"].get<double>());
    EXPECT_EQ(end[i], item["end_ns"].get<double>());
    EXPECT_EQ(task[i], item["task"].is_null() ? 0xFFFFFFFFu
                                              : item["task"].get<uint32_t>());
    EXPECT_EQ(count[i], item["count"].get<uint32_t>());
    EXPECT_EQ(track[i], item["track"].get<uint32_t>());
    ASSERT_LT(label[i], table.size());
    EXPECT_EQ(table[label[i]], item["label"].get<std::string>());
    EXPECT_FLOAT_EQ(busy[i], item["busy"].get<float>());
    EXPECT_EQ(kKinds[kind[i]], item["kind"].get<std::string>());
    EXPECT_EQ(row[i], item["row"].get<int>());
    EXPECT_EQ(flags[i], item["flags"].get<int>());
  }
}

TEST(TaskDetailsTest, LaunchAndEventFlows) {
  HandBuiltRun run;
  Trace& trace = run.impl.trace;
  // Kineto style: cudaLaunchKernel and the kernel share a correlation id.
  TaskRow launch;
  launch.track = run.thread;
  launch.kind = TaskKind::kRuntime;
  launch.name = run.impl.strings.Intern("cudaLaunchKernel");
  launch.start_ns = 10;
  launch.duration_ns = 5;
  launch.correlation = 42;
  TaskId launch_id = trace.AddTask(launch);
  TaskRow kernel = launch;
  kernel.track = run.stream;
  kernel.kind = TaskKind::kCompute;
  kernel.name = run.impl.strings.Intern("gemm_kernel");
  kernel.start_ns = 100;
  kernel.duration_ns = 50;
  kernel.event_after = 3;  // records event 3 when done
  TaskId kernel_id = trace.AddTask(kernel);
  // A copy on the host thread's side waits for event 3.
  TaskRow wait;
  wait.track = run.thread;
  wait.kind = TaskKind::kSync;
  wait.name = run.impl.strings.Intern("cudaStreamWaitEvent");
  wait.start_ns = 160;
  wait.duration_ns = 2;
  wait.event_before = 3;
  TaskId wait_id = trace.AddTask(wait);
  // An ORT-style task with an explicit launch (CANN Node@launch).
  TaskId host = run.Add(run.thread, 300, 10, "Node@launch", TaskKind::kRuntime);
  TaskId device = run.Add(run.stream, 320, 30, "MatMul", TaskKind::kCompute);
  trace.SetTaskLaunch(device, host);

  nlohmann::json k = Json(TaskDetailsJsonOf(run.impl, kernel_id.value(), {}));
  EXPECT_EQ(k["launch"]["id"], launch_id.value());
  EXPECT_EQ(k["launch"]["name"], "cudaLaunchKernel");
  EXPECT_TRUE(k["node"].is_null());
  ASSERT_EQ(k["flows"].size(), 2u);
  EXPECT_EQ(k["flows"][0]["kind"], "launch");
  EXPECT_EQ(k["flows"][0]["from_task"], launch_id.value());
  EXPECT_EQ(k["flows"][0]["to_task"], kernel_id.value());
  EXPECT_EQ(k["flows"][0]["from_ns"], 10);
  EXPECT_EQ(k["flows"][0]["to_ns"], 100);
  EXPECT_EQ(k["flows"][1]["kind"], "event");
  EXPECT_EQ(k["flows"][1]["to_task"], wait_id.value());
  EXPECT_EQ(k["flows"][1]["from_ns"], 150);  // recorded when the kernel ends
  EXPECT_EQ(k["flows"][1]["to_ns"], 160);
  // The launch call sees the same flow from its side.
  nlohmann::json l = Json(TaskDetailsJsonOf(run.impl, launch_id.value(), {}));
  ASSERT_EQ(l["flows"].size(), 1u);
  EXPECT_EQ(l["flows"][0]["to_task"], kernel_id.value());
  nlohmann::json d = Json(TaskDetailsJsonOf(run.impl, device.value(), {}));
  EXPECT_EQ(d["launch"]["id"], host.value());
  EXPECT_EQ(d["correlation"], nullptr);
  EXPECT_EQ(TaskDetailsJsonOf(run.impl, 99, {}).status().code(),
            StatusCode::kNotFound);
}

// A framework graph (conv, relu) fused into one compiled node, and a copy
// without a node.
struct LinkedRun : HandBuiltRun {
  NodeId conv, relu, fused, other;
  TaskId k1, k2, copy;
  LinkedRun() {
    Model& m = impl.model;
    GraphId fw = m.AddGraph(LayerLevel::kFramework, "fw", "fw.onnx");
    conv = m.AddNode(fw, "Conv", "", "conv");
    relu = m.AddNode(fw, "Relu", "", "relu");
    GraphId cg = m.AddGraph(LayerLevel::kCompiled, "cg", "cg.onnx");
    fused = m.AddNode(cg, "FusedConv", "", "conv_relu");
    other = m.AddNode(cg, "Transpose", "", "never_ran");
    impl.framework = fw;
    impl.compiled = cg;
    k1 = Add(stream, 100, 40, "fused_kernel");
    k2 = Add(stream, 500, 60, "fused_kernel");
    copy = Add(stream, 200, 10, "Memcpy DtoH", TaskKind::kDataMovement);
    impl.trace.SetTaskNode(k1, fused);
    impl.trace.SetTaskNode(k2, fused);
    impl.links.mapped_tasks.Build(m.node_count(), {{fused, k1}, {fused, k2}});
    impl.links.fused_from.Build(m.node_count(), {{fused, conv}, {fused, relu}});
    impl.links.fused_into.Build(m.node_count(), {{conv, fused}, {relu, fused}});
    impl.links.status = {NodeStatus::kFused, NodeStatus::kFused,
                         NodeStatus::kExecuted, NodeStatus::kNotExecuted};
  }
};

TEST(NodeTasksTest, FusedFrameworkNodesShowTheirCompiledNodesTasks) {
  LinkedRun run;
  nlohmann::json f = Json(NodeTasksJsonOf(run.impl, run.fused.value(), {}));
  EXPECT_EQ(f["tasks"], nlohmann::json({run.k1.value(), run.k2.value()}));
  EXPECT_EQ(f["start_ns"], 100);
  EXPECT_EQ(f["end_ns"], 560);
  nlohmann::json c = Json(NodeTasksJsonOf(run.impl, run.conv.value(), {}));
  EXPECT_EQ(c["tasks"], f["tasks"]);
  EXPECT_EQ(c["via_nodes"], nlohmann::json({run.fused.value()}));
  nlohmann::json o = Json(NodeTasksJsonOf(run.impl, run.other.value(), {}));
  EXPECT_TRUE(o["tasks"].empty());
  EXPECT_TRUE(o["start_ns"].is_null());
  EXPECT_EQ(NodeTasksJsonOf(run.impl, 77, {}).status().code(),
            StatusCode::kNotFound);
  // The kernel's details name its node and the framework ops it stands for.
  nlohmann::json k = Json(TaskDetailsJsonOf(run.impl, run.k1.value(), {}));
  EXPECT_EQ(k["node"]["name"], "conv_relu");
  EXPECT_EQ(k["node"]["level"], "compiled");
  ASSERT_EQ(k["fused_from"].size(), 2u);
  EXPECT_EQ(k["fused_from"][1]["name"], "relu");
  EXPECT_EQ(k["label"], "FusedConv");  // the node's op type
}

TEST(MappingTest, RowsSortFilterAndPage) {
  LinkedRun run;
  MappingRequest r;
  nlohmann::json all = Json(MappingJsonOf(run.impl, r));
  EXPECT_EQ(all["level"], "compiled");
  EXPECT_EQ(all["total"], 3);          // two compiled nodes + one unlinked name
  const auto& first = all["rows"][0];  // by total_ns, descending
  EXPECT_EQ(first["name"], "conv_relu");
  EXPECT_EQ(first["status"], "executed");
  EXPECT_EQ(first["task_count"], 2);
  EXPECT_EQ(first["total_ns"], 100);
  EXPECT_EQ(first["first_task"], run.k1.value());
  EXPECT_EQ(first["kernels"], nlohmann::json({"fused_kernel"}));
  EXPECT_EQ(first["streams"], nlohmann::json({run.stream.value()}));
  ASSERT_EQ(first["fused_from"].size(), 2u);
  EXPECT_EQ(first["fused_from"][0]["name"], "conv");
  EXPECT_EQ(all["rows"][1]["kind"], "unlinked");
  EXPECT_EQ(all["rows"][1]["name"], "Memcpy DtoH");
  EXPECT_TRUE(all["rows"][1]["node"].is_null());
  EXPECT_EQ(all["rows"][2]["name"], "never_ran");
  EXPECT_TRUE(all["rows"][2]["first_task"].is_null());

  r.sort = "name";
  r.descending = false;
  r.offset = 1;
  r.limit = 1;
  nlohmann::json page = Json(MappingJsonOf(run.impl, r));
  EXPECT_EQ(page["total"], 3);
  ASSERT_EQ(page["rows"].size(), 1u);
  EXPECT_EQ(page["rows"][0]["name"], "conv_relu");  // Memcpy < conv < never

  r = MappingRequest();
  r.statuses = {"not_executed", "unlinked"};
  EXPECT_EQ(Json(MappingJsonOf(run.impl, r))["total"], 2);
  r.statuses.clear();
  r.query = "RELU";  // a fused_from name matches
  nlohmann::json q = Json(MappingJsonOf(run.impl, r));
  ASSERT_EQ(q["total"], 1);
  EXPECT_EQ(q["rows"][0]["name"], "conv_relu");
  r.query.clear();
  r.sort = "speed";
  EXPECT_EQ(MappingJsonOf(run.impl, r).status().code(),
            StatusCode::kInvalidArgument);
  r.sort = "total_ns";
  r.statuses = {"done"};
  EXPECT_EQ(MappingJsonOf(run.impl, r).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(MappingTest, FindsTheRowOfANodeOrTask) {
  LinkedRun run;
  MappingRequest r;  // by total_ns: conv_relu, Memcpy DtoH, never_ran
  auto found = [&](const MappingRequest& req) {
    nlohmann::json j = Json(MappingJsonOf(run.impl, req));
    return j.contains("found_index") ? j["found_index"].get<int64_t>() : -2;
  };
  EXPECT_EQ(found(r), -2);  // not asked: no field
  r.find_node = run.other.value();
  EXPECT_EQ(found(r), 2);
  r.limit = 1;  // the index is in the whole order, not the page
  EXPECT_EQ(found(r), 2);
  r.find_node = run.relu.value();  // a framework node: its compiled row
  EXPECT_EQ(found(r), 0);
  r.find_node = 77;  // no such node
  EXPECT_EQ(found(r), -1);
  r.find_node = -1;
  r.find_task = run.k2.value();  // its node's row
  EXPECT_EQ(found(r), 0);
  r.find_task = run.copy.value();  // the unlinked-name row
  EXPECT_EQ(found(r), 1);
  r.sort = "name";
  r.descending = false;  // Memcpy DtoH, conv_relu, never_ran
  EXPECT_EQ(found(r), 0);
  r.find_task = 99;
  EXPECT_EQ(found(r), -1);
  r.find_task = run.k1.value();
  r.query = "never";  // filtered out
  EXPECT_EQ(found(r), -1);
  r.query.clear();
  r.find_node = run.conv.value();  // both
  EXPECT_EQ(MappingJsonOf(run.impl, r).status().code(),
            StatusCode::kInvalidArgument);
}

// Two ranks, each with GPU 0 stream 7 and a host thread: the tracks of a
// kind stay together, ordered by source, and every group name carries its
// rank so the two "GPU 0" groups never look alike.
TEST(TimelineIndexTest, SeveralSourcesAreGroupedByRank) {
  Session::Impl impl;
  std::vector<TrackId> tracks;
  for (int rank = 0; rank < 2; ++rank) {
    SourceId source = impl.trace.FindOrAddSource(
        impl.strings.Intern("rank" + std::to_string(rank) + ".json"));
    impl.trace.mutable_source(source).rank = rank;
    impl.trace.mutable_source(source).dialect = impl.strings.Intern("pytorch");
    TrackInfo h;
    h.kind = TrackKind::kHostThread;
    h.source = source;
    h.pid = 100;
    h.tid = 11;
    tracks.push_back(impl.trace.AddTrack(h));
    TrackInfo s;
    s.kind = TrackKind::kDeviceStream;
    s.source = source;
    s.device = 0;
    s.stream = 7;
    tracks.push_back(impl.trace.AddTrack(s));
  }
  for (TrackId t : tracks) {
    TaskRow row;
    row.track = t;
    row.duration_ns = 10;
    impl.trace.AddTask(row);
  }
  nlohmann::json j = Json(TimelineJsonOf(impl, {TraceClock::kRaw}));
  std::vector<std::tuple<std::string, std::string, int>> got;
  for (const auto& t : j["tracks"]) {
    got.emplace_back(t["group"], t["name"], t["source"]);
  }
  EXPECT_EQ(got, (std::vector<std::tuple<std::string, std::string, int>>{
                     {"rank 0 · GPU 0", "stream 7", 0},
                     {"rank 1 · GPU 0", "stream 7", 1},
                     {"rank 0 · host pid 100", "thread 11", 0},
                     {"rank 1 · host pid 100", "thread 11", 1}}));
}

}  // namespace
}  // namespace mi

namespace mi {
namespace {

// Counter tracks of a torch_npu run against memory_record.csv and
// npu_module_mem.csv read here on their own: per component, every row is a
// point of the "allocated" series (Total Allocated, MB -> bytes) when the
// cell is given and of the "reserved" series (Total Reserved) likewise, at
// its Timestamp(us) -> ns, in row order (the files are in time order). And the
// default window skips the setup before ProfilerStep#50.
TEST(TimelineCountersTest, AscendMemoryRecordRowsAreTheCounterPoints) {
  const std::string dir = std::string(MI_SOURCE_DIR) +
                          "/test/fixtures/samples/ascend/"
                          "msinsight_pt_text_level1_rank0";
  struct Series {
    std::vector<int64_t> t, v;
  };
  // (per module, component, figure) -> points, from the CSV's own rows.
  std::map<std::tuple<bool, std::string, std::string>, Series> expected;
  // Reads one CSV: `allocated` / `reserved` are the columns of the two
  // figures (-1: none). Returns the rows read.
  auto read = [&](const std::string& name, bool per_module, int allocated,
                  int reserved, std::string_view header) -> size_t {
    std::ifstream csv(dir + "/ASCEND_PROFILER_OUTPUT/" + name);
    EXPECT_TRUE(csv.good()) << "missing fixture " << name;
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line.rfind(header, 0), 0u) << name;
    size_t rows = 0;
    while (std::getline(csv, line)) {
      std::vector<std::string> c;
      std::stringstream in(line);
      std::string cell;
      while (std::getline(in, cell, ',')) c.push_back(cell);
      c.resize(8);
      // "1736408883573957.920\t" -> ns.
      std::string ts = c[1].substr(0, c[1].find('\t'));
      size_t dot = ts.find('.');
      int64_t ns = std::stoll(ts.substr(0, dot)) * 1000;
      std::string frac = dot == std::string::npos ? "" : ts.substr(dot + 1);
      frac.resize(3, '0');
      ns += std::stoll(frac);
      auto add = [&](const std::string& figure, int col) {
        if (col < 0 || c[col].empty()) return;
        Series& s = expected[{per_module, c[0], figure}];
        s.t.push_back(ns);
        s.v.push_back(std::llround(std::stod(c[col]) * 1048576.0));
      };
      add("allocated", allocated);
      add("reserved", reserved);
      ++rows;
    }
    return rows;
  };
  // wc -l: 1005 and 1079 lines with the header.
  EXPECT_EQ(read("memory_record.csv", false, 2, 3,
                 "Component,Timestamp(us),Total Allocated(MB),"
                 "Total Reserved(MB)"),
            1004u);
  EXPECT_EQ(read("npu_module_mem.csv", true, -1, 2,
                 "Component,Timestamp(us),Total Reserved(MB),Device"),
            1078u);

  OpenOptions options;
  options.paths = {dir};
  auto session = Session::Open(options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto text = (*session)->TimelineJson({TraceClock::kRaw});
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  nlohmann::json j = nlohmann::json::parse(*text);
  size_t matched = 0;
  for (const auto& c : j["counters"]) {
    auto key = std::make_tuple(c["per_module"].get<bool>(),
                               c["component"].get<std::string>(),
                               c["figure"].get<std::string>());
    auto it = expected.find(key);
    ASSERT_NE(it, expected.end()) << c["name"];
    ++matched;
    EXPECT_EQ(c["device"], 0);
    EXPECT_EQ(c["unit"], "bytes");
    EXPECT_EQ(c["t"].get<std::vector<int64_t>>(), it->second.t) << c["name"];
    EXPECT_EQ(c["v"].get<std::vector<int64_t>>(), it->second.v) << c["name"];
    EXPECT_EQ(c["group"], c["per_module"].get<bool>()
                              ? "module memory · device 0"
                              : "memory · device 0");
  }
  // memory_record: APP gives reserved only; PTA, GE, PTA+GE both figures
  // (7 series); npu_module_mem: one reserved series per module.
  size_t modules = 0;
  for (const auto& [key, series] : expected) modules += std::get<0>(key);
  EXPECT_EQ(expected.size() - modules, 7u);
  EXPECT_GT(modules, 0u);
  EXPECT_EQ(matched, expected.size());
  EXPECT_EQ(j["counters"].size(), expected.size());

  // One ProfilerStep (#50) with host work before it: the window opens on
  // the step, not on the whole trace.
  const auto& w = j["default_window"];
  EXPECT_GT(w["start_ns"].get<int64_t>(), j["start_ns"].get<int64_t>());
  EXPECT_LE(w["end_ns"].get<int64_t>(), j["end_ns"].get<int64_t>());
  EXPECT_EQ(w["steady_steps"], 1);
  EXPECT_GT(w["setup_ns"].get<int64_t>(), 0);
  bool step_start = false;
  for (const auto& r : j["runs"]) {
    if (r["name"] == "ProfilerStep#50") {
      step_start = r["start_ns"] == w["start_ns"];
    }
  }
  EXPECT_TRUE(step_start);
}

}  // namespace
// The counters of a window (what the UI asks for when it zooms), against
// the whole series of the metadata (points equal to the CSV's rows, test
// above) scanned by brute force: the window's points with the one before
// and the one after; above 4 points per pixel, downsampled so that every
// kept point is a real point in time order, the window's first and last
// point and its lowest and highest value are kept, and at most 4 per
// bucket remain.
TEST(TimelineCountersTest, WindowIsTheSeriesPointsDownsampledKeepingExtremes) {
  OpenOptions options;
  options.paths = {std::string(MI_SOURCE_DIR) +
                   "/test/fixtures/samples/ascend/"
                   "msinsight_pt_text_level1_rank0"};
  auto session = Session::Open(options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto meta_text = (*session)->TimelineJson({TraceClock::kRaw});
  ASSERT_TRUE(meta_text.ok());
  nlohmann::json meta = nlohmann::json::parse(*meta_text);
  ASSERT_GT(meta["counters"].size(), 0u);
  const int64_t start = meta["start_ns"].get<int64_t>();
  const int64_t end = meta["end_ns"].get<int64_t>();
  const int64_t from = start + (end - start) / 4;
  const int64_t to = start + (end - start) / 2;
  for (uint32_t px : {2u, 10u, 20000u}) {
    TimelineCountersRequest request;
    request.start_ns = from;
    request.end_ns = to;
    request.pixels = px;
    auto text = (*session)->TimelineCounters(request);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    nlohmann::json got = nlohmann::json::parse(*text);
    ASSERT_EQ(got["counters"].size(), meta["counters"].size());
    size_t downsampled = 0;
    for (size_t k = 0; k < meta["counters"].size(); ++k) {
      const auto& whole = meta["counters"][k];
      const auto& c = got["counters"][k];
      ASSERT_EQ(c["name"], whole["name"]);
      EXPECT_FALSE(whole["downsampled"].get<bool>());
      auto t = whole["t"].get<std::vector<int64_t>>();
      auto v = whole["v"].get<std::vector<int64_t>>();
      // Brute force: the window's points, the one before, the one after.
      size_t first = 0;
      while (first < t.size() && t[first] < from) ++first;
      if (first > 0) --first;
      size_t last = first;
      while (last < t.size() && t[last] < to) ++last;
      if (last < t.size()) ++last;
      std::vector<std::pair<int64_t, int64_t>> in;
      for (size_t i = first; i < last; ++i) in.emplace_back(t[i], v[i]);
      EXPECT_EQ(c["points"].get<size_t>(), in.size()) << c["name"];
      auto gt = c["t"].get<std::vector<int64_t>>();
      auto gv = c["v"].get<std::vector<int64_t>>();
      ASSERT_EQ(gt.size(), gv.size());
      if (in.size() <= 4 * size_t{px}) {
        EXPECT_FALSE(c["downsampled"].get<bool>());
        std::vector<std::pair<int64_t, int64_t>> out;
        for (size_t i = 0; i < gt.size(); ++i) out.emplace_back(gt[i], gv[i]);
        EXPECT_EQ(out, in) << c["name"];
        continue;
      }
      ++downsampled;
      EXPECT_TRUE(c["downsampled"].get<bool>());
      EXPECT_LE(gt.size(), 4 * size_t{px}) << c["name"];
      // Every kept point is a point of the window, in time order.
      size_t at = 0;
      for (size_t i = 0; i < gt.size(); ++i) {
        while (at < in.size() && in[at] != std::make_pair(gt[i], gv[i])) ++at;
        ASSERT_LT(at, in.size()) << c["name"] << " point " << i;
        ++at;
      }
      EXPECT_EQ(std::make_pair(gt.front(), gv.front()), in.front());
      EXPECT_EQ(std::make_pair(gt.back(), gv.back()), in.back());
      int64_t lo = in[0].second, hi = in[0].second;
      for (const auto& p : in) {
        lo = std::min(lo, p.second);
        hi = std::max(hi, p.second);
      }
      EXPECT_EQ(*std::min_element(gv.begin(), gv.end()), lo) << c["name"];
      EXPECT_EQ(*std::max_element(gv.begin(), gv.end()), hi) << c["name"];
    }
    if (px == 2) {
      EXPECT_GT(downsampled, 0u);
    }
    if (px == 20000) {
      EXPECT_EQ(downsampled, 0u);
    }
  }
  TimelineCountersRequest empty;
  empty.start_ns = from;
  empty.end_ns = from;
  EXPECT_FALSE((*session)->TimelineCounters(empty).ok());
}

}  // namespace mi
