// Times the timeline window queries of the UI server (Session::
// TimelineWindow, level of detail per pixel column) on a large trace. For
// bench/timeline/bench_timeline.sh. Our figures alone: no peer tool here
// answers the same window queries.
//
//   mi_bench_timeline <trace.json> [px]
//
// In this process without HTTP: the figures are the server's work per
// request and the bytes it would send.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model_inspector/session.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since)
      .count();
}

// Median wall time of `runs` calls, in ms.
double MedianMs(int runs, const std::function<void()>& fn) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    fn();
    times.push_back(Ms(t0));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Query {
  std::string name;
  int64_t start;
  int64_t end;
  std::vector<std::string> ops;
  std::vector<std::string> kinds;
  std::string name_filter;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s <trace.json> [px]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const uint32_t px =
      argc == 3 ? static_cast<uint32_t>(std::stoul(argv[2])) : 2000;
  auto t0 = Clock::now();
  mi::OpenOptions options;
  options.paths = {path};
  auto session_or = mi::Session::Open(options);
  if (!session_or.ok()) {
    std::fprintf(stderr, "%s\n", session_or.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<mi::Session> session = std::move(session_or).value();
  const double open_ms = Ms(t0);
  t0 = Clock::now();
  auto overview_or = session->TimelineJson({});
  const double index_ms = Ms(t0);
  if (!overview_or.ok()) {
    std::fprintf(stderr, "%s\n", overview_or.status().ToString().c_str());
    return 1;
  }
  nlohmann::json overview = nlohmann::json::parse(overview_or.value());
  const int64_t start = overview["start_ns"];
  const int64_t end = overview["end_ns"];
  const int64_t span = end - start;
  std::printf("trace: %s\n", path.c_str());
  std::printf("tasks: %lld on %zu tracks\n",
              static_cast<long long>(overview["task_count"].get<int64_t>()),
              overview["tracks"].size());
  std::printf("open (import + link): %.0f ms\n", open_ms);
  std::printf("timeline index (first /timeline): %.0f ms\n", index_ms);
  std::printf("window px: %u\n\n", px);

  const int64_t mid = start + span / 2;
  std::vector<Query> queries = {
      {"whole trace", start, end, {}, {}, ""},
      {"1/10 zoom", mid - span / 20, mid + span / 20, {}, {}, ""},
      {"1/1000 zoom", mid - span / 2000, mid + span / 2000, {}, {}, ""},
      {"whole, op=aten::addmm", start, end, {"aten::addmm"}, {}, ""},
      {"whole, kind=data_movement,sync",
       start,
       end,
       {},
       {"data_movement", "sync"},
       ""},
      {"whole, name~gemm", start, end, {}, {}, "gemm"},
  };
  // Pans: 10 steps of a tenth of the window each, as when dragging; each
  // step is a new request (the UI asks again after every move).
  for (auto [label, window] :
       {std::pair<const char*, int64_t>{"1/10", span / 10},
        {"1/1000", span / 1000}}) {
    for (int step = 0; step < 10; ++step) {
      int64_t s = start + span / 3 + step * (window / 10);
      queries.push_back(
          {std::string("pan ") + label + " #" + std::to_string(step),
           s,
           s + window,
           {},
           {},
           ""});
    }
  }

  std::printf("%-34s %9s %9s %10s %9s\n", "query", "tasks", "items", "bytes",
              "ms");
  double worst_ms = 0;
  for (const Query& q : queries) {
    mi::TimelineWindowRequest request;
    request.start_ns = q.start;
    request.end_ns = q.end;
    request.pixels = px;
    request.labels = q.ops;
    request.kinds = q.kinds;
    request.name_contains = q.name_filter;
    std::string body;
    double ms = MedianMs(11, [&]() {
      auto r = session->TimelineWindow(request);
      body = r.ok() ? std::move(r).value() : std::string();
    });
    worst_ms = std::max(worst_ms, ms);
    if (body.size() < 40) {
      std::fprintf(stderr, "%s: window query failed\n", q.name.c_str());
      return 1;
    }
    uint32_t items = 0, total = 0;
    std::memcpy(&items, body.data() + 8, 4);
    std::memcpy(&total, body.data() + 32, 4);
    std::printf("%-34s %9u %9u %10zu %9.2f\n", q.name.c_str(), total, items,
                body.size(), ms);
  }
  std::printf("\nslowest window query: %.2f ms\n", worst_ms);
  return 0;
}
