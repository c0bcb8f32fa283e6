// Benchmark: dependency graph + critical path and clock calibration on a
// generated multi-stream trace (default 1,000,000 tasks), against a
// straightforward reference implementation written here (per-task scans
// for predecessors and anchors, then repeated relaxation until nothing
// changes), which is run on a smaller trace because it is quadratic. The
// reference's answers are compared with ours on that trace.
//
// Usage: mi_bench_critical_path [TASKS [REFERENCE_TASKS]]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "analysis/timing/calibration.h"
#include "analysis/timing/critical_path.h"
#include "analysis/timing/dependency_graph.h"
#include "base/string_pool.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis {
namespace {

constexpr int kStreamsPerDevice = 2;
constexpr int kDevices = 2;
constexpr int64_t kSkewNs[kDevices] = {-8'000, -12'000};

struct Generated {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  Links links;
};

// A host thread launching kernels round-robin onto 4 streams of 2 devices
// whose clocks lag the host; every 50th kernel records an event that the
// next kernel on the sibling stream waits on; a device synchronize every
// 10,000 launches. Half the tasks are launches, half kernels.
void Generate(size_t tasks, Generated* g) {
  Trace& t = g->trace;
  t.Reserve(tasks);
  TrackInfo host;
  host.kind = TrackKind::kHostThread;
  host.pid = 1;
  host.tid = 1;
  TrackId host_track = t.AddTrack(host);
  std::vector<TrackId> streams;
  for (int d = 0; d < kDevices; ++d) {
    for (int s = 0; s < kStreamsPerDevice; ++s) {
      TrackInfo info;
      info.kind = TrackKind::kDeviceStream;
      info.device = d;
      info.pid = 100 + d;
      info.stream = s;
      streams.push_back(t.AddTrack(info));
    }
  }
  t.AddRun({g->pool.Intern("whole trace"), 0, 0});
  StringId launch_name = g->pool.Intern("cudaLaunchKernel");
  StringId sync_name = g->pool.Intern("cudaDeviceSynchronize");
  StringId kernel_name = g->pool.Intern("gemm_kernel");
  std::mt19937 rng(7);
  std::vector<int64_t> stream_free(streams.size(), 0);
  std::vector<int64_t> pending_event_end(streams.size(), -1);
  int64_t host_time = 0;
  int32_t next_event = 0;
  std::vector<int32_t> pending_event(streams.size(), -1);
  for (size_t i = 0; t.task_count() + 2 <= tasks; ++i) {
    if (i > 0 && i % 10'000 == 0) {
      int64_t all_done =
          *std::max_element(stream_free.begin(), stream_free.end());
      TaskRow sync;
      sync.kind = TaskKind::kRuntime;
      sync.name = sync_name;
      sync.track = host_track;
      sync.start_ns = host_time;
      sync.duration_ns = std::max<int64_t>(1'000, all_done - host_time + 500);
      t.AddTask(sync);
      host_time += sync.duration_ns + 200;
    }
    size_t s = i % streams.size();
    TaskRow launch;
    launch.kind = TaskKind::kRuntime;
    launch.name = launch_name;
    launch.track = host_track;
    launch.start_ns = host_time;
    launch.duration_ns = 3'000;
    launch.correlation = static_cast<int64_t>(i);
    t.AddTask(launch);
    host_time += 3'000 + static_cast<int64_t>(rng() % 4'000);
    TaskRow kernel;
    kernel.kind = TaskKind::kCompute;
    kernel.name = kernel_name;
    kernel.track = streams[s];
    kernel.correlation = static_cast<int64_t>(i);
    int64_t start = std::max(stream_free[s], launch.start_ns + 5'000);
    if (pending_event[s] >= 0) {
      kernel.event_before = pending_event[s];
      start = std::max(start, pending_event_end[s]);
      pending_event[s] = -1;
    }
    kernel.duration_ns = 2'000 + static_cast<int64_t>(rng() % 48'000);
    if (i % 50 == 49) {
      kernel.event_after = next_event;
      size_t sibling = s ^ 1;  // the other stream of the same device
      pending_event[sibling] = next_event++;
      pending_event_end[sibling] = start + kernel.duration_ns;
    }
    stream_free[s] = start + kernel.duration_ns;
    int device = static_cast<int>(s) / kStreamsPerDevice;
    kernel.start_ns = start + kSkewNs[device];  // the device clock lags
    t.AddTask(kernel);
  }
  g->model.BuildIndexes();
}

// ---- reference implementation (quadratic; for the ratio) ----

struct ReferenceResult {
  TaskId path_end;
  size_t path_tasks = 0;
  int64_t length_ns = 0;
  std::vector<int64_t> device_offset;
};

ReferenceResult Reference(const Trace& t) {
  const size_t n = t.task_count();
  auto device_of = [&](TaskId x) { return t.track(t.task_track(x)).device; };
  // Calibration: find each kernel's launch by scanning every task, then
  // relax offset >= launch start - kernel start over all anchors until
  // nothing changes.
  std::vector<std::pair<TaskId, TaskId>> anchors;
  for (uint32_t i = 0; i < n; ++i) {
    TaskId k(i);
    if (t.task_kind(k) != TaskKind::kCompute) continue;
    for (uint32_t j = 0; j < n; ++j) {
      TaskId l(j);
      if (t.task_kind(l) == TaskKind::kRuntime &&
          t.task_correlation(l) == t.task_correlation(k)) {
        anchors.emplace_back(l, k);
        break;
      }
    }
  }
  ReferenceResult r;
  r.device_offset.assign(kDevices, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [l, k] : anchors) {
      int64_t need = t.task_start_ns(l) - t.task_start_ns(k);
      int d = device_of(k);
      if (r.device_offset[d] < need) {
        r.device_offset[d] = need;
        changed = true;
      }
    }
  }
  auto start = [&](TaskId x) {
    int d = device_of(x);
    return t.task_start_ns(x) + (d >= 0 ? r.device_offset[d] : 0);
  };
  auto end = [&](TaskId x) { return start(x) + t.task_duration_ns(x); };
  // Predecessors by scanning all tasks: the track predecessor (latest end
  // at or before the start, among tasks starting earlier), the launch, the
  // event record, and for a synchronize the last kernel ending in it.
  std::vector<std::vector<uint32_t>> preds(n);
  for (uint32_t i = 0; i < n; ++i) {
    TaskId x(i);
    int64_t s = start(x);
    int64_t best_end = INT64_MIN;
    uint32_t best = UINT32_MAX;
    uint32_t sync_pred = UINT32_MAX;
    int64_t sync_end = INT64_MIN;
    bool is_sync = t.str(t.task_name(x)) == "cudaDeviceSynchronize";
    for (uint32_t j = 0; j < n; ++j) {
      if (j == i) continue;
      TaskId y(j);
      if (t.task_track(y) == t.task_track(x) && end(y) <= s &&
          (start(y) < s || (start(y) == s && j < i)) && end(y) > best_end) {
        best_end = end(y);
        best = j;
      }
      if (t.task_kind(x) == TaskKind::kCompute &&
          t.task_kind(y) == TaskKind::kRuntime &&
          t.task_correlation(y) == t.task_correlation(x)) {
        preds[i].push_back(j);
      }
      if (t.task_event_before(x) >= 0 &&
          t.task_event_after(y) == t.task_event_before(x)) {
        preds[i].push_back(j);
      }
      if (is_sync && t.task_kind(y) == TaskKind::kCompute && end(y) <= end(x) &&
          end(y) > start(x) && end(y) > sync_end) {
        sync_end = end(y);
        sync_pred = j;
      }
    }
    if (best != UINT32_MAX) preds[i].push_back(best);
    if (sync_pred != UINT32_MAX) preds[i].push_back(sync_pred);
  }
  // Longest path by repeated relaxation: root[x] = the earliest start a
  // chain of predecessors reaches; sweep until nothing changes.
  std::vector<int64_t> root(n);
  for (uint32_t i = 0; i < n; ++i) root[i] = start(TaskId(i));
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t p : preds[i]) {
        if (root[p] < root[i]) {
          root[i] = root[p];
          changed = true;
        }
      }
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    int64_t len = end(TaskId(i)) - root[i];
    if (len > r.length_ns ||
        (len == r.length_ns && end(TaskId(i)) > end(r.path_end))) {
      r.length_ns = len;
      r.path_end = TaskId(i);
    }
  }
  return r;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

struct OursResult {
  double calibrate_s = 0;
  double graph_s = 0;
  double path_s = 0;
  CalibrationReport calibration;
  CriticalPathReport path;
};

OursResult Ours(Generated* g) {
  OursResult r;
  auto t0 = std::chrono::steady_clock::now();
  r.calibration = Calibrate(g->model, g->trace, g->links, {});
  ApplyCalibration(r.calibration, &g->trace);
  r.calibrate_s = Seconds(t0);
  TimingScope scope;
  t0 = std::chrono::steady_clock::now();
  DependencyGraph graph =
      BuildDependencyGraph(g->model, g->trace, g->links, scope);
  r.graph_s = Seconds(t0);
  t0 = std::chrono::steady_clock::now();
  r.path = CriticalPathOfGraph(g->model, g->trace, graph, scope);
  r.path_s = Seconds(t0);
  return r;
}

int Main(int argc, char** argv) {
  size_t tasks = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  size_t reference_tasks =
      argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20'000;

  // The small trace: both implementations, answers compared.
  Generated small;
  Generate(reference_tasks, &small);
  auto t0 = std::chrono::steady_clock::now();
  ReferenceResult ref = Reference(small.trace);
  double ref_s = Seconds(t0);
  OursResult ours_small = Ours(&small);
  double ours_small_s =
      ours_small.calibrate_s + ours_small.graph_s + ours_small.path_s;
  bool same = ours_small.path.tasks.back() == ref.path_end &&
              ours_small.path.length_ns == ref.length_ns;
  for (int d = 0; d < kDevices; ++d) {
    same = same && ours_small.calibration.domains[1 + d].offset_ns ==
                       ref.device_offset[d];
  }
  std::printf(
      "%zu tasks: reference (scans + repeated relaxation) %.3f s, ours %.4f "
      "s, ratio %.0fx; answers %s (offsets %lld / %lld ns, path %zu tasks, "
      "%.3f ms)\n",
      small.trace.task_count(), ref_s, ours_small_s, ref_s / ours_small_s,
      same ? "identical" : "DIFFER",
      static_cast<long long>(ref.device_offset[0]),
      static_cast<long long>(ref.device_offset[1]),
      ours_small.path.tasks.size(), ours_small.path.length_ns / 1e6);

  Generated big;
  t0 = std::chrono::steady_clock::now();
  Generate(tasks, &big);
  double gen_s = Seconds(t0);
  OursResult ours = Ours(&big);
  std::printf(
      "%zu tasks (generated in %.2f s): calibration %.3f s (%llu anchors, "
      "offsets %lld / %lld ns, %llu residual), dependency graph %.3f s "
      "(%llu edges), critical path %.3f s (%zu tasks, %.1f ms of %.1f ms "
      "wall); total %.3f s\n",
      big.trace.task_count(), gen_s, ours.calibrate_s,
      static_cast<unsigned long long>(ours.calibration.anchors),
      static_cast<long long>(ours.calibration.domains[1].offset_ns),
      static_cast<long long>(ours.calibration.domains[2].offset_ns),
      static_cast<unsigned long long>(ours.calibration.residual_violations),
      ours.graph_s, static_cast<unsigned long long>(ours.path.graph_edges),
      ours.path_s, ours.path.tasks.size(), ours.path.length_ns / 1e6,
      ours.path.wall_ns / 1e6, ours.calibrate_s + ours.graph_s + ours.path_s);
  // Quadratic extrapolation of the reference to the big trace.
  double scale = static_cast<double>(big.trace.task_count()) /
                 static_cast<double>(small.trace.task_count());
  std::printf(
      "reference extrapolated to %zu tasks (quadratic): ~%.0f s, ratio "
      "~%.0fx\n",
      big.trace.task_count(), ref_s * scale * scale,
      ref_s * scale * scale / (ours.calibrate_s + ours.graph_s + ours.path_s));
  return same ? 0 : 1;
}

}  // namespace
}  // namespace mi::analysis

int main(int argc, char** argv) { return mi::analysis::Main(argc, argv); }
