// Benchmark: clock calibration, dependency graph and critical path on a
// generated multi-stream trace (default 1,000,000 tasks), built in memory.
// Our figures alone: no peer takes this trace in memory. The comparison
// with a peer on real traces is bench/analysis/bench_hta.sh (Holistic
// Trace Analysis' critical_path_analysis on the same files).
//
// Usage: mi_bench_critical_path [TASKS]

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
  Generated big;
  auto t0 = std::chrono::steady_clock::now();
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
  return ours.path.tasks.empty() ? 1 : 0;
}

}  // namespace
}  // namespace mi::analysis

int main(int argc, char** argv) { return mi::analysis::Main(argc, argv); }
