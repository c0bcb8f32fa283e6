// mi_bench_analyses: the work Holistic Trace Analysis does on a PyTorch
// trace, done by model-inspector in one process, each phase timed on its
// own (for bench/analysis/bench_hta.sh, which runs HTA the same way):
//   open          Session::Open: import + link (HTA: TraceAnalysis(...))
//   breakdown     time per op type and kind, per stream (Summary over the
//                 whole trace as a time range, which leaves out the
//                 whole-trace analyses; HTA: get_gpu_kernel_breakdown)
//   idle          per-stream idle time by reason (IdleOverlap; HTA:
//                 get_idle_time_breakdown)
//   critical_path the critical path of one run (CriticalPath; HTA:
//                 critical_path_analysis of one ProfilerStep)
// Each phase runs REPEAT times; the best wall time is printed. Raw trace
// clock throughout (HTA does not calibrate clocks).
//
//   mi_bench_analyses TRACE [--run N] [--repeat R]
//
// Prints one JSON line: times in ms, and the answers the benchmark compares
// with HTA's (device time per kind, idle per stream, critical path length).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "encoders/json_encoder.h"
#include "model_inspector/session.h"

namespace {

using Clock = std::chrono::steady_clock;

// Best wall time of `repeat` calls of fn, in ms.
double BestMs(int repeat, const std::function<void()>& fn) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < repeat; ++i) {
    auto t0 = Clock::now();
    fn();
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "mi_bench_analyses: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE [--run N] [--repeat R]\n", argv[0]);
    return 2;
  }
  std::string path = argv[1];
  int run = 1;
  int repeat = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--run") == 0) run = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::atoi(argv[i + 1]);
  }

  mi::OpenOptions options;
  options.paths = {path};
  std::unique_ptr<mi::Session> session;
  std::string error;
  double open_ms = BestMs(repeat, [&]() {
    session.reset();
    auto s = mi::Session::Open(options);
    if (s.ok()) {
      session = std::move(s).value();
    } else {
      error = s.status().ToString();
    }
  });
  if (!session) return Fail(error);

  // The whole trace as a time range: the per-op-type and per-stream
  // breakdown only (Session::Summary adds the whole-trace analyses when no
  // range is given, and those are timed below on their own).
  mi::SummaryOptions breakdown;
  breakdown.from_ns = std::numeric_limits<int64_t>::min() + 1;
  mi::SummaryReport report;
  double breakdown_ms =
      BestMs(repeat, [&]() { report = session->Summary(breakdown); });

  mi::TimingRequest whole;
  whole.clock = mi::TraceClock::kRaw;
  // Timed with their JSON encoding, as the server answers them.
  std::string idle_json;
  double idle_ms = BestMs(repeat, [&]() {
    auto r = session->IdleOverlap(whole);
    idle_json = r.ok() ? mi::encoders::EncodeJson(*r) : r.status().ToString();
  });
  nlohmann::json idle = nlohmann::json::parse(idle_json, nullptr, false);
  if (idle.is_discarded()) return Fail("idle/overlap: " + idle_json);

  mi::TimingRequest one_run = whole;
  one_run.run = run;
  std::string path_json;
  double path_ms = BestMs(repeat, [&]() {
    auto r = session->CriticalPath(one_run);
    path_json = r.ok() ? mi::encoders::EncodeJson(*r) : "";
    if (!r.ok()) error = r.status().ToString();
  });

  nlohmann::json out;
  out["trace"] = path;
  out["repeat"] = repeat;
  out["open_ms"] = open_ms;
  out["breakdown_ms"] = breakdown_ms;
  out["idle_ms"] = idle_ms;
  out["critical_path_ms"] = path_ms;
  out["tasks"] = report.tasks;
  std::map<std::string, double> by_kind;
  for (const mi::OpTypeRow& row : report.op_types) {
    by_kind[row.kind] += row.total_us;
  }
  out["device_us_by_kind"] = by_kind;
  out["basis"] = report.basis;
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& s : idle["streams"]) {
    streams.push_back({{"name", s["name"]},
                       {"tasks", s["tasks"]},
                       {"gaps", s.value("gaps", 0)},
                       {"idle_us", s["idle_ns"].get<double>() / 1e3},
                       {"busy_us", s["busy_ns"].get<double>() / 1e3}});
  }
  out["streams"] = streams;
  if (path_json.empty()) {
    out["critical_path"] = {{"error", error}};
  } else {
    nlohmann::json cp = nlohmann::json::parse(path_json, nullptr, false);
    if (cp.is_discarded()) return Fail("critical path: " + path_json);
    out["critical_path"] = {{"run", run},
                            {"length_us", cp["length_ns"].get<double>() / 1e3},
                            {"wall_us", cp["wall_ns"].get<double>() / 1e3},
                            {"tasks", cp["tasks"].size()}};
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
