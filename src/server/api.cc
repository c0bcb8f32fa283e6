#include "server/api.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/json_writer.h"
#include "base/strings.h"
#include "encoders/history_json.h"
#include "encoders/json_encoder.h"
#include "server/probe_rerun.h"
#include "server/session_file_api.h"

namespace mi::server {
namespace {

constexpr std::string_view kJson = "application/json; charset=utf-8";
constexpr std::string_view kBinary = "application/octet-stream";
// A local app: everything from this origin, no inline scripts, no framing,
// nothing sent elsewhere. Inline styles are allowed (the UI sets element
// styles from script, and canvas-drawn UIs commonly inject a <style>); blob:
// and data: images and workers for exports and layout workers.
constexpr std::string_view kCsp =
    "default-src 'self'; script-src 'self'; style-src 'self' "
    "'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
    "connect-src 'self'; worker-src 'self' blob:; object-src 'none'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
constexpr int kDefaultSummaryTop = 50;

std::string_view FindHeader(const HttpRequest& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (EqualsIgnoringCase(k, name)) return v;
  }
  return {};
}

bool HasHeader(const HttpRequest& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (EqualsIgnoringCase(k, name)) return true;
  }
  return false;
}

// The first value of a query parameter; `found` says whether it was given.
std::string_view Param(const HttpRequest& r, std::string_view key,
                       bool* found = nullptr) {
  for (const auto& [k, v] : r.params) {
    if (k == key) {
      if (found != nullptr) *found = true;
      return v;
    }
  }
  if (found != nullptr) *found = false;
  return {};
}

// A value of the cookie `name` in a Cookie header ("a=1; mi_token=x").
std::string_view CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view part = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view()
                                            : header.substr(semi + 1);
    part = TrimLeft(part, " ");
    size_t eq = part.find('=');
    if (eq != std::string_view::npos && part.substr(0, eq) == name) {
      return part.substr(eq + 1);
    }
  }
  return {};
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kUnsupported:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kMalformedInput:
      return 422;  // the request was fine; the file it names is not
    case StatusCode::kMemoryLimit:
      return 507;  // the server lacks the memory the set limit allows
    default:
      return 500;
  }
}

// A JSON body with the bundled demo's temporary folder written as people
// should see it (`shown_root`), as /api/runs lists its paths: the
// properties' "file" names the model the loader read from there.
std::string WithShownRoot(const ServedRun& run, std::string body) {
  if (run.real_root.empty()) return body;
  auto escaped = [](std::string_view text) {
    std::string quoted;
    JsonWriter(&quoted).String(text);
    return quoted.substr(1, quoted.size() - 2);  // without the quotes
  };
  // As a string's beginning only: '"' + root, so a path that merely
  // contains the root elsewhere stays as it is.
  const std::string from = "\"" + escaped(run.real_root);
  const std::string to = "\"" + escaped(run.shown_root);
  std::string out;
  size_t at = 0;
  for (size_t hit; (hit = body.find(from, at)) != std::string::npos;
       at = hit + from.size()) {
    out.append(body, at, hit - at).append(to);
  }
  if (at == 0) return body;
  out.append(body, at, std::string::npos);
  return out;
}

HttpResponse FromStatus(const Status& status) {
  return Api::Error(HttpStatusFor(status.code()), status.message());
}

HttpResponse Json(std::string body) {
  HttpResponse r;
  r.content_type = std::string(kJson);
  r.body = std::move(body);
  Api::AddSecurityHeaders(&r, /*cacheable=*/false);
  return r;
}

// Paths no route or asset can have; refused before any lookup.
bool SuspiciousPath(std::string_view path) {
  if (path.empty() || path.front() != '/') return true;
  for (char c : path) {
    // '%' left after one decoding: a double-encoded request.
    if (c == '\\' || c == '%' || static_cast<unsigned char>(c) < 0x20 ||
        c == 0x7f) {
      return true;
    }
  }
  if (path.find("//") != std::string_view::npos) return true;
  for (std::string_view seg : Split(path.substr(1), '/')) {
    if (seg == "." || seg == "..") return true;
  }
  return false;
}

// Group ids from "3,17" parameters (repeatable).
Status ParseGroupList(const HttpRequest& r, std::string_view key,
                      size_t group_count, std::vector<uint32_t>* out) {
  for (const auto& [k, v] : r.params) {
    if (k != key || v.empty()) continue;
    for (std::string_view item : Split(v, ',')) {
      if (item.empty()) continue;
      uint64_t id = 0;
      if (!ParseUint(item, UINT32_MAX, &id)) {
        return InvalidArgumentError(fmt::format(
            "{}: expected group ids separated by commas, found '{}'", key,
            item));
      }
      if (id >= group_count) {
        return NotFoundError(fmt::format(
            "{}: no group {}; this view has {} groups", key, id, group_count));
      }
      out->push_back(static_cast<uint32_t>(id));
    }
  }
  return Status::Ok();
}

// `clock=raw|calibrated` (default raw).
Status ParseClock(const HttpRequest& r, TraceClock* clock) {
  bool found = false;
  std::string_view text = Param(r, "clock", &found);
  if (!found || text == "raw") {
    *clock = TraceClock::kRaw;
  } else if (text == "calibrated") {
    *clock = TraceClock::kCalibrated;
  } else {
    return InvalidArgumentError(
        fmt::format("clock: expected raw or calibrated, found '{}'", text));
  }
  return Status::Ok();
}

// A time in integer nanoseconds; `found` says whether it was given.
Status ParseNs(const HttpRequest& r, std::string_view key, int64_t* out,
               bool* found) {
  std::string_view text = Param(r, key, found);
  if (*found && !ParseInt(text, out)) {
    return InvalidArgumentError(
        fmt::format("{}: expected integer nanoseconds, found '{}'", key, text));
  }
  return Status::Ok();
}

// The comma-separated values of a (repeatable) parameter, empty ones
// dropped.
std::vector<std::string> ParamList(const HttpRequest& r, std::string_view key) {
  std::vector<std::string> out;
  for (const auto& [k, v] : r.params) {
    if (k != key) continue;
    for (std::string_view item : Split(v, ',')) {
      if (!item.empty()) out.emplace_back(item);
    }
  }
  return out;
}

// Timing analyses (src/session/timing_queries.cc): `clock` as above,
// `iteration` (a run index of the trace; default the whole trace) and, for
// idle/overlap, `gap_threshold_ns`.
Status ParseTimingRequest(const HttpRequest& r, TimingRequest* out) {
  MI_RETURN_IF_ERROR(ParseClock(r, &out->clock));
  bool found = false;
  std::string_view iteration = Param(r, "iteration", &found);
  uint64_t v = 0;
  if (found) {
    if (!ParseUint(iteration, INT32_MAX, &v)) {
      return InvalidArgumentError(fmt::format(
          "iteration: expected a run index of the trace, found '{}'",
          iteration));
    }
    out->run = static_cast<int>(v);
  }
  std::string_view threshold = Param(r, "gap_threshold_ns", &found);
  if (found) {
    if (!ParseUint(threshold, INT64_MAX, &v)) {
      return InvalidArgumentError(fmt::format(
          "gap_threshold_ns: expected integer nanoseconds >= 0, found '{}'",
          threshold));
    }
    out->gap_threshold_ns = static_cast<int64_t>(v);
  }
  return Status::Ok();
}

HttpResponse TimingAnalysis(const Session& session, const HttpRequest& r,
                            std::string_view what) {
  TimingRequest request;
  Status parsed = ParseTimingRequest(r, &request);
  if (!parsed.ok()) return FromStatus(parsed);
  if (what == "critical-path") {
    auto path = session.CriticalPath(request);
    if (!path.ok()) return FromStatus(path.status());
    return Json(encoders::EncodeJson(*path));
  }
  auto idle = session.IdleOverlap(request);
  if (!idle.ok()) return FromStatus(idle.status());
  return Json(encoders::EncodeJson(*idle));
}

// GET /api/runs/{run}/analyses/{id}?NAME=VALUE: any registered analysis;
// every query parameter but the access token is one of its parameters.
HttpResponse RegisteredAnalysis(const Session& session, std::string_view id,
                                const HttpRequest& r) {
  AnalysisParams params;
  for (const auto& [k, v] : r.params) {
    if (k == "token") continue;
    if (!params.emplace(k, v).second) {
      return FromStatus(InvalidArgumentError(
          fmt::format("parameter '{}' is given twice", k)));
    }
  }
  auto result = session.RunAnalysis(id, params);
  if (!result.ok()) return FromStatus(result.status());
  return Json(encoders::EncodeJson(**result));
}

HttpResponse NodePaths(const Session& session, std::string_view level,
                       std::string_view node) {
  uint64_t id = 0;
  if (!ParseUint(node, UINT32_MAX, &id)) {
    return FromStatus(InvalidArgumentError(
        fmt::format("node: expected a node id, found '{}'", node)));
  }
  auto paths = session.NodePaths(level, static_cast<uint32_t>(id));
  if (!paths.ok()) return FromStatus(paths.status());
  return Json(encoders::EncodeJson(*paths));
}

}  // namespace

std::string_view HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoringCase(k, name)) return v;
  }
  return {};
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // The length is not secret (tokens have a fixed format); the contents are.
  size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  // Keep the compiler from turning the loop into an early exit.
  volatile unsigned char result = diff;
  return result == 0;
}

bool ParseUint(std::string_view text, uint64_t max, uint64_t* out) {
  std::optional<uint64_t> v = ParseInteger<uint64_t>(text);
  if (!v || *v > max) return false;
  *out = *v;
  return true;
}

bool ParseInt(std::string_view text, int64_t* out) {
  std::optional<int64_t> v = ParseInteger<int64_t>(text);
  if (!v) return false;
  *out = *v;
  return true;
}

bool DecodeExpandedGroups(std::string_view b, std::vector<uint8_t>* expanded) {
  auto u32 = [&](size_t off, uint32_t* v) {
    if (off + 4 > b.size()) return false;
    std::memcpy(v, b.data() + off, 4);  // little-endian hosts only (x86, arm)
    return true;
  };
  uint32_t sections = 0;
  uint32_t groups = 0;
  if (b.size() < 64 || b.substr(0, 4) != "MILY" || !u32(44, &groups) ||
      !u32(56, &sections)) {
    return false;
  }
  constexpr uint32_t kGroupFlagsSection = 18;
  for (uint32_t k = 0; k < sections; ++k) {
    uint32_t id = 0, type = 0, offset = 0, count = 0;
    size_t e = 64 + 16 * static_cast<size_t>(k);
    if (!u32(e, &id) || !u32(e + 4, &type) || !u32(e + 8, &offset) ||
        !u32(e + 12, &count)) {
      return false;
    }
    if (id != kGroupFlagsSection) continue;
    if (type != 1 || count != groups ||
        static_cast<size_t>(offset) + count > b.size()) {
      return false;
    }
    expanded->resize(count);
    for (uint32_t g = 0; g < count; ++g) {
      (*expanded)[g] = static_cast<uint8_t>(b[offset + g]) & 1;
    }
    return true;
  }
  return false;
}

// One live layout view and the expanded state it is in.
// One heavy result: computed once (the first request computes, identical
// requests meanwhile wait for it), then served until dropped.
struct Api::CacheEntry {
  std::mutex mutex;
  std::condition_variable done_cv;
  std::atomic<bool> done{false};
  HttpResponse response;
  size_t bytes = 0;
  uint64_t last_used = 0;
};

struct Api::LayoutEntry {
  std::mutex mutex;
  bool opened = false;
  Status open_status;
  std::unique_ptr<LayoutView> view;
  std::vector<uint8_t> default_expanded;  // the view as first opened
  std::vector<uint8_t> current_expanded;  // after the last request
  uint64_t last_used = 0;
};

struct Api::RunState {
  ServedRun run;
  std::vector<std::string> levels;
  // Held while one heavy result of this run is computed: a run's heavy
  // requests take turns, so they cannot take every core from the others.
  std::mutex heavy_mutex;
  // Pair candidate index -> the run opened from it (under pair_mutex_).
  std::map<uint64_t, size_t> paired;
  // The run's digest for GET /api/diff, made on first use (under
  // heavy_mutex): each run is digested once, whatever it is diffed with.
  std::shared_ptr<const RunDigest> digest;
};

Api::Api(std::vector<ServedRun> runs, ApiOptions options)
    : options_(std::move(options)),
      assets_(options_.assets != nullptr ? *options_.assets
                                         : EmbeddedAssets()) {
  // Without a session file the session routes answer the same, with the
  // document for the browser to download.
  if (!options_.session_file) {
    options_.session_file = std::make_shared<SessionFileApi>("", std::nullopt);
  }
  for (ServedRun& r : runs) {
    auto state = std::make_unique<RunState>();
    if (r.session != nullptr) state->levels = r.session->Levels();
    state->run = std::move(r);
    runs_.push_back(std::move(state));
  }
}

Api::~Api() = default;

void Api::AddSecurityHeaders(HttpResponse* r, bool cacheable) {
  r->headers.emplace_back("Content-Security-Policy", std::string(kCsp));
  r->headers.emplace_back("X-Content-Type-Options", "nosniff");
  r->headers.emplace_back("Referrer-Policy", "no-referrer");
  r->headers.emplace_back("X-Frame-Options", "DENY");
  r->headers.emplace_back("Cross-Origin-Opener-Policy", "same-origin");
  r->headers.emplace_back("Cross-Origin-Resource-Policy", "same-origin");
  r->headers.emplace_back("Cache-Control", cacheable ? "no-cache" : "no-store");
}

HttpResponse Api::JsonBody(std::string body) {
  HttpResponse r;
  r.content_type = std::string(kJson);
  r.body = std::move(body);
  AddSecurityHeaders(&r, /*cacheable=*/false);
  return r;
}

HttpResponse Api::StatusError(const Status& status) {
  int code = 500;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kUnsupported:
      code = 400;
      break;
    case StatusCode::kNotFound:
      code = 404;
      break;
    case StatusCode::kMalformedInput:
      code = 422;
      break;
    default:
      break;
  }
  return Error(code, status.message());
}

HttpResponse Api::Error(int status, std::string_view message) {
  std::string body;
  JsonWriter w(&body);
  w.BeginObject().Key("error").BeginObject();
  w.FieldInt("status", status).Field("message", message);
  w.EndObject().EndObject();
  HttpResponse r;
  r.status = status;
  r.content_type = std::string(kJson);
  r.body = std::move(body);
  AddSecurityHeaders(&r, /*cacheable=*/false);
  return r;
}

bool Api::Authorised(const HttpRequest& r, bool* token_in_query) const {
  *token_in_query = false;
  if (options_.token.empty()) return true;
  bool found = false;
  std::string_view query = Param(r, "token", &found);
  if (found && ConstantTimeEquals(query, options_.token)) {
    *token_in_query = true;
    return true;
  }
  if (HasHeader(r, "X-MI-Token") &&
      ConstantTimeEquals(FindHeader(r, "X-MI-Token"), options_.token)) {
    return true;
  }
  for (const auto& [k, v] : r.headers) {
    if (!EqualsIgnoringCase(k, "Cookie")) continue;
    std::string_view c = CookieValue(v, "mi_token");
    if (!c.empty() && ConstantTimeEquals(c, options_.token)) return true;
  }
  return false;
}

bool Api::HostAllowed(const HttpRequest& r) const {
  if (!options_.token.empty() || options_.allowed_hosts.empty()) return true;
  if (!HasHeader(r, "Host")) return true;  // HTTP/1.0 clients; not browsers
  std::string_view host = FindHeader(r, "Host");
  for (const std::string& h : options_.allowed_hosts) {
    if (EqualsIgnoringCase(host, h)) return true;
  }
  return false;
}

HttpResponse Api::Handle(const HttpRequest& request) {
  bool token_in_query = false;
  HttpResponse r = Route(request, &token_in_query);
  if (token_in_query && r.status < 400) {
    // The first page load carries ?token=; a cookie lets the page's own
    // asset and API requests through (as Jupyter does).
    r.headers.emplace_back("Set-Cookie", "mi_token=" + options_.token +
                                             "; Path=/; HttpOnly; "
                                             "SameSite=Strict");
  }
  return r;
}

std::optional<HttpResponse> Api::Refusal(const HttpRequest& request) const {
  if (!HostAllowed(request)) {
    return Error(403, fmt::format("Host '{}' is not this server; open the URL "
                                  "model-inspector printed",
                                  FindHeader(request, "Host")));
  }
  bool token_in_query = false;
  if (!Authorised(request, &token_in_query)) {
    return Error(403,
                 "missing or wrong access token; open the URL with ?token= "
                 "that model-inspector printed, or send the X-MI-Token "
                 "header");
  }
  return std::nullopt;
}

HttpResponse Api::Route(const HttpRequest& request, bool* token_in_query) {
  if (std::optional<HttpResponse> refusal = Refusal(request)) {
    return std::move(*refusal);
  }
  Authorised(request, token_in_query);
  const std::string& path = request.path;
  // The one request that changes anything: pairing a trace-only run with a
  // model file beside its trace (it adds a run; no file is written).
  // Or opening some ranks of the cluster as a run.
  bool pair_route = path.starts_with("/api/runs/") && path.ends_with("/pair") &&
                    std::count(path.begin(), path.end(), '/') == 4;
  // Saving the UI's session to the file `open` was given, and re-running a
  // run's model with other probes.
  bool rerun_route = path.starts_with("/api/runs/") &&
                     path.ends_with("/probes/run") &&
                     std::count(path.begin(), path.end(), '/') == 5;
  bool post_route = pair_route || path == "/api/cluster/ranks" ||
                    path == "/api/session" || rerun_route;
  bool post = request.method == "POST";
  if ((request.method != "GET" && request.method != "HEAD" && !post) ||
      (post && !post_route)) {
    HttpResponse r = Error(405, "method " + request.method +
                                    " not allowed; this server only reads "
                                    "(GET, HEAD), except POST "
                                    "/api/runs/{run}/pair, "
                                    "/api/cluster/ranks, /api/session and "
                                    "/api/runs/{run}/probes/run");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (SuspiciousPath(path)) return Error(404, "not found");
  if (path != "/api" && !path.starts_with("/api/")) return ServeAsset(path);

  std::vector<std::string_view> seg =
      Split(std::string_view(path).substr(1), '/');
  // seg[0] == "api"
  if (seg.size() == 2 && seg[1] == "runs") return Runs();
  if (seg.size() >= 2 && seg[1] == "cluster") return Cluster(seg, request);
  if (seg.size() >= 2 && seg[1] == "history") return History(seg, request);
  if (seg.size() == 2 && seg[1] == "session") return SessionFile(request);
  if (seg.size() == 2 && seg[1] == "diff") {
    DiffRequest diff;
    if (std::optional<HttpResponse> refused = ParseDiff(request, &diff)) {
      return std::move(*refused);
    }
    return Cached(nullptr, DiffKey(diff), [&] { return Diff(diff); });
  }
  if (seg.size() < 3 || seg[1] != "runs") {
    return Error(
        404, "no API endpoint " + path + "; see docs/reference/http-api.md");
  }
  uint64_t run_id = 0;
  if (!ParseUint(seg[2], UINT32_MAX, &run_id)) {
    return Error(400,
                 fmt::format("run: expected a run index, found '{}'", seg[2]));
  }
  size_t run_count = 0;
  RunState* found = FindRun(run_id, &run_count);
  if (found == nullptr) {
    if (run_count == 0) {
      // A cluster's server starts with none: runs come as ranks are opened.
      return Error(
          404, fmt::format("no run {}; the server has no runs yet", run_id));
    }
    return Error(
        404, fmt::format("no run {}; runs are 0..{}", run_id, run_count - 1));
  }
  RunState& run = *found;
  if (seg.size() == 4 && seg[3] == "pair") {
    if (!post) {
      HttpResponse r =
          Error(405, "method " + request.method +
                         " not allowed; POST {\"candidate\": INDEX} pairs "
                         "the run with one of its pair_candidates");
      r.headers.emplace_back("Allow", "POST");
      return r;
    }
    return Pair(run_id, run, request);
  }
  if (seg.size() == 5 && seg[3] == "probes" && seg[4] == "run") {
    return ProbeRerun(run_id, run, request);
  }
  if (seg.size() == 5 && seg[3] == "probes" && seg[4] == "compare") {
    return ProbeCompareEndpoint(run.run, request);
  }
  if (run.run.session == nullptr) {
    // A run `open --keep-going` could not open: every query names its error
    // (/api/runs lists it too, so the UI asks nothing of it).
    return Error(404, fmt::format("run {} could not be opened: {}", run_id,
                                  run.run.error));
  }
  if (std::optional<std::string> key = HeavyKey(run_id, run, seg, request)) {
    return Cached(&run.heavy_mutex, *key,
                  [&] { return RouteRun(run_id, run, seg, request); });
  }
  return RouteRun(run_id, run, seg, request);
}

HttpResponse Api::RouteRun(size_t run_id, RunState& run,
                           const std::vector<std::string_view>& seg,
                           const HttpRequest& request) {
  const std::string& path = request.path;
  if (seg.size() == 4 && seg[3] == "summary") return Summary(run, request);
  if (seg.size() == 4 && seg[3] == "links") return Links(run);
  if (seg.size() == 4 && seg[3] == "timeline") return Timeline(run, request);
  if (seg.size() == 5 && seg[3] == "timeline" && seg[4] == "window") {
    return TimelineWindow(run, request);
  }
  if (seg.size() == 5 && seg[3] == "timeline" && seg[4] == "counters") {
    return TimelineCounters(run, request);
  }
  if (seg.size() == 4 && seg[3] == "tasks") return NodeTasks(run, request);
  if (seg.size() == 5 && seg[3] == "tasks") return Task(run, seg[4], request);
  if (seg.size() == 4 && seg[3] == "mapping") return Mapping(run, request);
  if (seg.size() >= 4 && seg[3] == "probes") {
    return ProbesEndpoint(*run.run.session, seg, request);
  }
  if (seg.size() >= 5 && seg[3] == "training") {
    return TrainingEndpoint(*run.run.session, seg, request);
  }
  if (seg.size() == 4 &&
      (seg[3] == "critical-path" || seg[3] == "idle-overlap")) {
    return TimingAnalysis(*run.run.session, request, seg[3]);
  }
  if (seg.size() == 4 && seg[3] == "analyses") {
    // The whole-trace analyses (critical path, idle/overlap, findings,
    // ...): seconds on a million tasks; cached (HeavyKey).
    return Json(encoders::EncodeJson(run.run.session->ExportedAnalyses(),
                                     encoders::JsonStyle::kPretty));
  }
  if (seg.size() == 4 && seg[3] == "analysis-list") {
    AnalysisListResult list;
    list.analyses = run.run.session->Analyses();
    return Json(encoders::EncodeJson(list));
  }
  if (seg.size() == 5 && seg[3] == "analyses") {
    return RegisteredAnalysis(*run.run.session, seg[4], request);
  }
  if (seg.size() >= 6 && seg[3] == "levels") {
    std::string_view level = seg[4];
    if (std::find(run.levels.begin(), run.levels.end(), level) ==
        run.levels.end()) {
      std::string have = Join(run.levels, ", ");
      return Error(404,
                   fmt::format("run {} has no level '{}'; levels: {}", run_id,
                               level, have.empty() ? "none" : have));
    }
    if (seg.size() == 6 && seg[5] == "layout") {
      return Layout(run_id, level, request);
    }
    if (seg.size() == 7 && seg[5] == "nodes") {
      return Node(run, level, seg[6]);
    }
    if (seg.size() == 8 && seg[5] == "nodes" && seg[7] == "paths") {
      return NodePaths(*run.run.session, level, seg[6]);
    }
    if (seg.size() == 6 && seg[5] == "search") {
      return Search(run, level, request);
    }
    if (seg.size() == 7 && seg[5] == "export") {
      return Export(run, level, seg[6]);
    }
    if (seg.size() == 6 && seg[5] == "properties") {
      auto json = run.run.session->ModelPropertiesJson(level);
      if (!json.ok()) return FromStatus(json.status());
      return Json(WithShownRoot(run.run, std::move(json).value()));
    }
    if (seg.size() == 6 && seg[5] == "values") {
      return Values(run, level, request);
    }
    if (seg.size() == 6 && seg[5] == "memory") {
      auto memory = run.run.session->Memory(level);
      if (!memory.ok()) return FromStatus(memory.status());
      return Json(encoders::EncodeJson(*memory));
    }
  }
  return Error(404,
               "no API endpoint " + path + "; see docs/reference/http-api.md");
}

Api::RunState* Api::FindRun(size_t run_id, size_t* count) const {
  std::shared_lock<std::shared_mutex> lock(runs_mutex_);
  *count = runs_.size();
  return run_id < runs_.size() ? runs_[run_id].get() : nullptr;
}

namespace {

// The body of a pairing request: exactly {"candidate": INDEX}.
bool ParsePairBody(std::string_view body, uint64_t* index) {
  auto skip = [&body] {
    while (!body.empty() && (body.front() == ' ' || body.front() == '\t' ||
                             body.front() == '\n' || body.front() == '\r')) {
      body.remove_prefix(1);
    }
  };
  auto take = [&](std::string_view token) {
    skip();
    if (!body.starts_with(token)) return false;
    body.remove_prefix(token.size());
    return true;
  };
  if (!take("{") || !take("\"candidate\"") || !take(":")) return false;
  skip();
  size_t digits = 0;
  while (digits < body.size() && body[digits] >= '0' && body[digits] <= '9') {
    ++digits;
  }
  if (!ParseUint(body.substr(0, digits), UINT32_MAX, index)) return false;
  body.remove_prefix(digits);
  if (!take("}")) return false;
  skip();
  return body.empty();
}

// The refusal of a POST that is not the page's own, or nothing: a JSON body
// (another site's form or no-CORS fetch cannot send one without a
// preflight, which this server never answers), and, where the browser
// names the origin, this server's. `what` says what the POST does
// ("pair runs").
std::optional<HttpResponse> ForeignPost(const HttpRequest& request,
                                        std::string_view what) {
  std::string_view type = FindHeader(request, "Content-Type");
  if (!type.starts_with("application/json")) {
    return Api::Error(415,
                      fmt::format("Content-Type: expected application/json, "
                                  "found '{}'",
                                  type));
  }
  if (HasHeader(request, "Origin")) {
    std::string_view origin = FindHeader(request, "Origin");
    std::string_view host = FindHeader(request, "Host");
    if (host.empty() || (origin != fmt::format("http://{}", host) &&
                         origin != fmt::format("https://{}", host))) {
      return Api::Error(403, fmt::format("Origin '{}' is not this server; {} "
                                         "from the page model-inspector "
                                         "serves",
                                         origin, what));
    }
  }
  if (HasHeader(request, "Sec-Fetch-Site") &&
      FindHeader(request, "Sec-Fetch-Site") != "same-origin") {
    return Api::Error(403,
                      fmt::format("Sec-Fetch-Site '{}': {} only from "
                                  "the page model-inspector serves",
                                  FindHeader(request, "Sec-Fetch-Site"), what));
  }
  return std::nullopt;
}

// The body of a request for cluster ranks: exactly {"ranks": [R, ...]}
// (rank ids, at least one).
bool ParseRanksBody(std::string_view body, std::vector<int32_t>* ranks) {
  auto skip = [&body] {
    while (!body.empty() && (body.front() == ' ' || body.front() == '\t' ||
                             body.front() == '\n' || body.front() == '\r')) {
      body.remove_prefix(1);
    }
  };
  auto take = [&](std::string_view token) {
    skip();
    if (!body.starts_with(token)) return false;
    body.remove_prefix(token.size());
    return true;
  };
  if (!take("{") || !take("\"ranks\"") || !take(":") || !take("[")) {
    return false;
  }
  for (;;) {
    skip();
    size_t digits = 0;
    while (digits < body.size() && body[digits] >= '0' && body[digits] <= '9') {
      ++digits;
    }
    uint64_t rank = 0;
    if (!ParseUint(body.substr(0, digits), INT32_MAX, &rank)) return false;
    ranks->push_back(static_cast<int32_t>(rank));
    body.remove_prefix(digits);
    if (take(",")) continue;
    if (take("]")) break;
    return false;
  }
  if (!take("}")) return false;
  skip();
  return body.empty();
}

}  // namespace

HttpResponse Api::Pair(size_t run_id, RunState& run,
                       const HttpRequest& request) {
  // Only the page itself may ask.
  if (std::optional<HttpResponse> refused = ForeignPost(request, "pair runs")) {
    return std::move(*refused);
  }
  uint64_t index = 0;
  if (!ParsePairBody(request.body, &index)) {
    return Error(400,
                 "body: expected {\"candidate\": INDEX}, an index into "
                 "the run's pair_candidates");
  }
  const std::vector<std::string>& candidates = run.run.pair_candidates;
  if (candidates.empty()) {
    return Error(409, fmt::format("run {} has no pair_candidates (it has a "
                                  "graph, or no model file lies beside its "
                                  "trace)",
                                  run_id));
  }
  if (index >= candidates.size()) {
    return Error(400, fmt::format("candidate: expected 0..{}, found {}",
                                  candidates.size() - 1, index));
  }
  if (!options_.open_run) {
    return Error(501, "this server cannot open runs");
  }
  std::lock_guard<std::mutex> pairing(pair_mutex_);
  auto reply = [](size_t id, bool created) {
    std::string out;
    JsonWriter w(&out);
    w.BeginObject().FieldInt("run", static_cast<int64_t>(id));
    w.FieldBool("created", created).EndObject();
    HttpResponse r = Json(std::move(out));
    if (created) r.status = 201;
    return r;
  };
  auto existing = run.paired.find(index);
  if (existing != run.paired.end()) return reply(existing->second, false);
  // The model first, then what the run was opened from: the run
  // `open --run MODEL PATH...` makes.
  std::vector<std::string> paths = {candidates[index]};
  paths.insert(paths.end(), run.run.paths.begin(), run.run.paths.end());
  ServedRun opened = options_.open_run(paths);
  if (opened.session == nullptr) {
    // Not added: the page shows the error on the run it came from, and a
    // fixed file can be paired again.
    return Error(
        422, fmt::format(
                 "{} with {}: {}", candidates[index], Join(run.run.paths, ", "),
                 opened.error.empty() ? "could not be opened" : opened.error));
  }
  size_t id = AddRun(std::move(opened));
  run.paired[index] = id;
  return reply(id, true);
}

std::optional<HttpResponse> RefuseForeignPost(const HttpRequest& request,
                                              std::string_view what) {
  return ForeignPost(request, what);
}

HttpResponse Api::SessionFile(const HttpRequest& request) {
  bool post = request.method == "POST";
  if (post) {
    if (auto refused = ForeignPost(request, "save the session")) {
      return std::move(*refused);
    }
  }
  // The runs served now and the model inputs their re-runs offer.
  std::vector<SavedRun> runs;
  std::vector<std::string> inputs;
  {
    std::shared_lock<std::shared_mutex> lock(runs_mutex_);
    for (const auto& r : runs_) {
      runs.push_back({r->run.name, r->run.paths});
      if (!options_.rerun) continue;
      for (std::string& in : options_.rerun->InputsFor(RerunTargetOf(r->run))) {
        if (std::find(inputs.begin(), inputs.end(), in) == inputs.end()) {
          inputs.push_back(std::move(in));
        }
      }
    }
  }
  return options_.session_file->Handle(request, runs, inputs);
}

HttpResponse Api::ProbeRerun(size_t run_id, RunState& run,
                             const HttpRequest& request) {
  if (request.method == "POST") {
    if (auto refused = ForeignPost(request, "re-run the model")) {
      return std::move(*refused);
    }
  }
  if (!options_.rerun) return Error(501, "this server cannot re-run models");
  return options_.rerun->Handle(run_id, RerunTargetOf(run.run), request);
}

size_t Api::AddRun(ServedRun opened) {
  auto state = std::make_unique<RunState>();
  if (opened.session != nullptr) state->levels = opened.session->Levels();
  state->run = std::move(opened);
  std::unique_lock<std::shared_mutex> lock(runs_mutex_);
  runs_.push_back(std::move(state));
  return runs_.size() - 1;
}

HttpResponse Api::Cluster(const std::vector<std::string_view>& seg,
                          const HttpRequest& request) {
  bool post = request.method == "POST";
  bool ranks_route = seg.size() == 3 && seg[2] == "ranks";
  bool collective_route = seg.size() == 4 && seg[2] == "collectives";
  if (seg.size() != 2 && !ranks_route && !collective_route) {
    return Error(404, "no API endpoint " + request.path +
                          "; see docs/reference/http-api.md");
  }
  if (ranks_route && !post) {
    HttpResponse r = Error(405, "method " + request.method +
                                    " not allowed; POST {\"ranks\": [RANK, "
                                    "...]} opens those ranks as a run");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  if (options_.cluster == nullptr) {
    return Error(404,
                 "this server holds no cluster (open a directory with the "
                 "profiles of two or more ranks: model-inspector open DIR)");
  }
  const ServedCluster& cluster = *options_.cluster;
  if (collective_route) {
    uint64_t index = 0;
    if (!ParseUint(seg[3], UINT32_MAX, &index)) {
      return Error(400, fmt::format("collective: expected an index into the "
                                    "report's collectives, found '{}'",
                                    seg[3]));
    }
    if (index >= cluster.collective_json.size()) {
      return Error(404, fmt::format("no collective {}; the report lists {}",
                                    index, cluster.collective_json.size()));
    }
    return Json(cluster.collective_json[index]);
  }
  if (ranks_route) return ClusterRanks(request);
  bool found = false;
  std::string_view rows = Param(request, "collective_ranks", &found);
  if (found && rows != "0" && rows != "1") {
    return Error(400, fmt::format("collective_ranks: expected 0 or 1, found "
                                  "'{}'",
                                  rows));
  }
  if (found && rows == "0") {
    return Json(cluster.report_without_collective_ranks_json);
  }
  return Json(cluster.report_json);
}

HttpResponse Api::ClusterRanks(const HttpRequest& request) {
  if (std::optional<HttpResponse> refused =
          ForeignPost(request, "open cluster ranks")) {
    return std::move(*refused);
  }
  std::vector<int32_t> ranks;
  if (!ParseRanksBody(request.body, &ranks)) {
    return Error(400,
                 "body: expected {\"ranks\": [RANK, ...]}, one or more rank "
                 "ids of the cluster");
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  if (ranks.size() > kMaxClusterRunRanks) {
    return Error(400, fmt::format("ranks: at most {} in one run (each brings "
                                  "its full events), found {}",
                                  kMaxClusterRunRanks, ranks.size()));
  }
  const ServedCluster& cluster = *options_.cluster;
  std::vector<std::string> files;
  for (int32_t rank : ranks) {
    auto it = std::find_if(
        cluster.ranks.begin(), cluster.ranks.end(),
        [rank](const ServedCluster::Rank& r) { return r.rank == rank; });
    if (it == cluster.ranks.end()) {
      std::vector<std::string> have;
      for (const ServedCluster::Rank& r : cluster.ranks) {
        if (have.size() == 16) {
          have.push_back("...");
          break;
        }
        have.push_back(std::to_string(r.rank));
      }
      return Error(400, fmt::format("ranks: the cluster has no rank {}; its "
                                    "ranks are {}",
                                    rank, Join(have, ", ")));
    }
    files.insert(files.end(), it->files.begin(), it->files.end());
  }
  if (!options_.open_run) return Error(501, "this server cannot open runs");
  auto reply = [&ranks](size_t id, bool created) {
    std::string out;
    JsonWriter w(&out);
    w.BeginObject().FieldInt("run", static_cast<int64_t>(id));
    w.FieldBool("created", created);
    w.Key("ranks").BeginArray();
    for (int32_t r : ranks) w.Int(r);
    w.EndArray().EndObject();
    HttpResponse r = Json(std::move(out));
    if (created) r.status = 201;
    return r;
  };
  std::lock_guard<std::mutex> opening(pair_mutex_);
  auto existing = cluster_runs_.find(ranks);
  if (existing != cluster_runs_.end()) return reply(existing->second, false);
  std::vector<std::string> names;
  for (int32_t r : ranks) names.push_back(std::to_string(r));
  ServedRun opened = options_.open_run(files);
  if (opened.session == nullptr) {
    // Not added: the page shows the error, and the ranks can be asked for
    // again once the files are fixed.
    return Error(422, fmt::format("ranks {}: {}", Join(names, ", "),
                                  opened.error.empty() ? "could not be opened"
                                                       : opened.error));
  }
  opened.name = fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks",
                            Join(names, ", "));
  size_t id = AddRun(std::move(opened));
  cluster_runs_[ranks] = id;
  return reply(id, true);
}

HttpResponse Api::ServeAsset(std::string_view path) const {
  if (path == "/") path = "/index.html";
  auto it = std::lower_bound(
      assets_.begin(), assets_.end(), path,
      [](const EmbeddedAsset& a, std::string_view p) { return a.path < p; });
  if (it == assets_.end() || it->path != path) return Error(404, "not found");
  HttpResponse r;
  r.content_type = std::string(it->mime);
  r.static_body = it->data;
  AddSecurityHeaders(&r, /*cacheable=*/true);
  return r;
}

namespace {

// A path as people should see it: under `shown_root` instead of
// `real_root` (the bundled demo's temporary folder).
std::string ShownPath(const ServedRun& run, const std::string& path) {
  if (run.real_root.empty() || !path.starts_with(run.real_root)) return path;
  return run.shown_root + path.substr(run.real_root.size());
}

}  // namespace

HttpResponse Api::Runs() const {
  std::shared_lock<std::shared_mutex> lock(runs_mutex_);
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("runs").BeginArray();
  for (size_t i = 0; i < runs_.size(); ++i) {
    const RunState& s = *runs_[i];
    w.BeginObject();
    w.FieldInt("id", static_cast<int64_t>(i));
    w.Field("name", s.run.name);
    w.Key("paths").BeginArray();
    for (const std::string& p : s.run.paths) w.String(ShownPath(s.run, p));
    w.EndArray();
    bool has_trace = false;
    w.Key("inputs").BeginArray();
    if (s.run.session != nullptr) {
      for (const InputFile& f : s.run.session->inputs()) {
        w.BeginObject();
        w.Field("path", ShownPath(s.run, f.path))
            .Field("format", f.format)
            .Field("role", f.role);
        w.EndObject();
        has_trace = has_trace || f.role == "trace";
      }
    }
    w.EndArray();
    w.Key("levels").BeginArray();
    for (const std::string& l : s.levels) w.String(l);
    w.EndArray();
    w.FieldBool("has_trace", has_trace);
    // A training snapshot (the UI shows its Training tab).
    w.FieldBool("training", s.run.session != nullptr &&
                                !s.run.session->TrainingSnapshotPath().empty());
    if (s.run.session == nullptr) {
      w.Key("error").BeginObject();
      w.Field("code", s.run.error_code).Field("message", s.run.error);
      w.EndObject();
    }
    if (!s.run.pair_candidates.empty()) {
      w.Key("pair_candidates").BeginArray();
      for (const std::string& p : s.run.pair_candidates) w.String(p);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  // Whether GET /api/cluster has a report (so the UI asks for it only then).
  w.FieldBool("cluster", options_.cluster != nullptr);
  // Whether GET /api/history/... has a run history to read.
  w.FieldBool("history", options_.history != nullptr);
  w.EndObject();
  return Json(std::move(out));
}

// Whether the run's tasks link to graph nodes, and why those that do not
// stay unlinked: the reasons the CLI's summary prints, with examples of
// node names the graphs lack. Cheap: a summary over a window that spans
// the whole trace leaves out the whole-trace analyses, and the linked /
// unlinked counts are the linker's for the whole trace either way.
HttpResponse Api::Links(RunState& run) {
  SummaryOptions options;
  options.top_nodes = 0;
  options.from_ns = std::numeric_limits<int64_t>::min() + 1;
  SummaryReport r = run.run.session->Summary(options);
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldBool("has_graph", r.has_graph).FieldBool("has_trace", r.has_trace);
  w.FieldInt("tasks", static_cast<int64_t>(r.linked_tasks + r.unlinked_tasks));
  w.FieldInt("linked_tasks", static_cast<int64_t>(r.linked_tasks));
  w.FieldInt("unlinked_tasks", static_cast<int64_t>(r.unlinked_tasks));
  w.FieldInt("aligned_host_ops", static_cast<int64_t>(r.aligned_host_ops));
  w.Key("reasons").BeginArray();
  for (const UnlinkedReason& reason : UnlinkedReasons(r)) {
    w.BeginObject();
    w.Field("code", reason.code)
        .FieldInt("count", static_cast<int64_t>(reason.count))
        .Field("text", reason.text);
    w.EndObject();
  }
  w.EndArray();
  // The linker's examples: "task 'X' names node 'Y', which the loaded graph
  // lacks" (at most a few, as the CLI prints them).
  w.Key("examples").BeginArray();
  for (const DiagnosticInfo& d : run.run.session->Diagnostics()) {
    if (d.code != "task_node_name_unknown" && d.code != "duplicate_node_name") {
      continue;
    }
    for (const std::string& e : d.examples) w.String(e);
  }
  w.EndArray();
  w.EndObject();
  return Json(std::move(out));
}

namespace {

// The summary's options from `top`, `iteration`, `from_ns`, `to_ns` and
// `clock`, or the 400 that refuses them.
std::optional<HttpResponse> ParseSummaryOptions(const HttpRequest& request,
                                                SummaryOptions& options) {
  options.top_nodes = kDefaultSummaryTop;
  bool has_top = false;
  bool has_iteration = false;
  std::string_view top = Param(request, "top", &has_top);
  std::string_view iteration = Param(request, "iteration", &has_iteration);
  uint64_t v = 0;
  if (has_top) {
    if (!ParseUint(top, 100000, &v)) {
      return Api::Error(
          400, fmt::format("top: expected 0..100000, found '{}'", top));
    }
    options.top_nodes = static_cast<int>(v);
  }
  if (has_iteration) {
    if (!ParseUint(iteration, INT32_MAX, &v)) {
      return Api::Error(400,
                        fmt::format("iteration: expected a run index of the "
                                    "trace, found '{}'",
                                    iteration));
    }
    options.run = static_cast<int>(v);
  }
  bool has_from = false;
  bool has_to = false;
  Status parsed = ParseNs(request, "from_ns", &options.from_ns, &has_from);
  if (parsed.ok()) parsed = ParseNs(request, "to_ns", &options.to_ns, &has_to);
  if (parsed.ok()) parsed = ParseClock(request, &options.clock);
  if (!parsed.ok()) return FromStatus(parsed);
  if (has_from && has_to && options.from_ns >= options.to_ns) {
    return Api::Error(400, fmt::format("from_ns ({}) must be before to_ns ({})",
                                       options.from_ns, options.to_ns));
  }
  return std::nullopt;
}

}  // namespace

HttpResponse Api::Summary(RunState& run, const HttpRequest& request) {
  SummaryOptions options;
  if (std::optional<HttpResponse> refused =
          ParseSummaryOptions(request, options)) {
    return std::move(*refused);
  }
  return Json(encoders::EncodeJson(run.run.session->Summary(options),
                                   encoders::JsonStyle::kPretty));
}

HttpResponse Api::Layout(size_t run_id, std::string_view level,
                         const HttpRequest& request) {
  bool found = false;
  std::string grouping(Param(request, "grouping", &found));
  if (!found) grouping = "scopes";
  if (grouping != "scopes" && grouping != "fusion" && grouping != "none") {
    return Error(400, fmt::format("grouping: expected scopes, fusion or none, "
                                  "found '{}'",
                                  grouping));
  }
  std::string direction(Param(request, "direction", &found));
  if (!found) direction = "tb";
  if (direction != "tb" && direction != "lr" && direction != "auto") {
    return Error(400,
                 fmt::format("direction: expected tb, lr or auto, found '{}'",
                             direction));
  }
  uint64_t max_items = 2000;
  std::string_view max_text = Param(request, "max_items", &found);
  if (found && !ParseUint(max_text, kMaxLayoutItems, &max_items)) {
    return Error(400, fmt::format("max_items: expected 0..{}, found '{}'",
                                  kMaxLayoutItems, max_text));
  }
  std::string fold(Param(request, "fold", &found));
  if (!found) fold = "budget";
  if (fold != "budget" && fold != "overview") {
    return Error(
        400,
        fmt::format("fold: expected budget or overview, found '{}'", fold));
  }
  if (direction != "auto") {
    return LayoutIn(run_id, level, grouping, direction, max_items,
                    fold == "overview", request);
  }
  // auto: the direction whose drawing fits the window at the larger scale
  // (the window's width / height is `aspect`; a tall narrow graph in a wide
  // window goes left to right). Top to bottom unless left to right is
  // clearly better, so a graph that fits either way keeps the usual flow.
  double aspect = 16.0 / 9.0;
  std::string_view aspect_text = Param(request, "aspect", &found);
  if (found) {
    std::string text(aspect_text);
    char* end = nullptr;
    aspect = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() ||
        !(aspect >= 0.05 && aspect <= 20)) {
      return Error(400,
                   fmt::format("aspect: expected the window's width / height "
                               "(0.05..20), found '{}'",
                               aspect_text));
    }
  }
  HttpResponse tb = LayoutIn(run_id, level, grouping, "tb", max_items,
                             fold == "overview", request);
  std::string_view b = tb.content();
  if (tb.status != 200 || b.size() < 64) return tb;
  float w = 0, h = 0;
  std::memcpy(&w, b.data() + 16, 4);  // little-endian hosts only (x86, arm)
  std::memcpy(&h, b.data() + 20, 4);
  if (!(w > 0 && h > 0)) return tb;
  // Fitted scales with the window 1 high and `aspect` wide; left to right
  // swaps the axes of the drawing (frames' headers aside).
  double tb_scale = std::min(aspect / w, 1.0 / h);
  double lr_scale = std::min(aspect / h, 1.0 / w);
  if (lr_scale <= 1.3 * tb_scale) return tb;
  return LayoutIn(run_id, level, grouping, "lr", max_items, fold == "overview",
                  request);
}

HttpResponse Api::LayoutIn(size_t run_id, std::string_view level,
                           const std::string& grouping,
                           const std::string& direction, uint64_t max_items,
                           bool overview, const HttpRequest& request) {
  std::string key = fmt::format("{}\n{}\n{}\n{}\n{}\n{}", run_id, level,
                                grouping, direction, max_items, overview);
  std::shared_ptr<LayoutEntry> entry;
  {
    std::lock_guard<std::mutex> lock(views_mutex_);
    auto& slot = views_[key];
    if (!slot) slot = std::make_shared<LayoutEntry>();
    entry = slot;
    entry->last_used = ++view_clock_;
    while (views_.size() > options_.max_layout_views) {
      auto oldest = views_.begin();
      for (auto it = views_.begin(); it != views_.end(); ++it) {
        if (it->second->last_used < oldest->second->last_used) oldest = it;
      }
      // In-flight requests keep their entry alive through the shared_ptr.
      views_.erase(oldest);
    }
  }
  std::lock_guard<std::mutex> lock(entry->mutex);
  if (!entry->opened) {
    entry->opened = true;
    LayoutViewOptions options;
    options.level = std::string(level);
    options.grouping = grouping;
    options.left_to_right = direction == "lr";
    options.max_visible_items = max_items;
    options.overview = overview;
    options.ui_summaries = true;
    size_t run_count = 0;
    auto view =
        FindRun(run_id, &run_count)->run.session->OpenLayoutView(options);
    if (!view.ok()) {
      entry->open_status = view.status();
    } else {
      entry->view = std::move(view).value();
      if (!DecodeExpandedGroups(entry->view->Binary(),
                                &entry->default_expanded)) {
        entry->view.reset();
        entry->open_status = InternalError("layout binary without groups");
      } else {
        entry->current_expanded = entry->default_expanded;
      }
    }
  }
  if (!entry->view) return FromStatus(entry->open_status);
  LayoutView& view = *entry->view;
  size_t groups = entry->default_expanded.size();
  std::vector<uint32_t> expand;
  std::vector<uint32_t> collapse;
  Status parsed = ParseGroupList(request, "expand", groups, &expand);
  if (parsed.ok())
    parsed = ParseGroupList(request, "collapse", groups, &collapse);
  if (!parsed.ok()) return FromStatus(parsed);
  if (std::find(collapse.begin(), collapse.end(), 0u) != collapse.end()) {
    return Error(400,
                 "collapse: group 0 is the whole graph and cannot be "
                 "collapsed");
  }
  // The request's state relative to the default view: toggle only the groups
  // that differ from what the view shows now.
  std::vector<uint8_t> want = entry->default_expanded;
  for (uint32_t g : expand) want[g] = 1;
  for (uint32_t g : collapse) want[g] = 0;
  want[0] = 1;
  bool has_reveal = false;
  std::string_view reveal_text = Param(request, "reveal", &has_reveal);
  uint64_t reveal = 0;
  if (has_reveal && !ParseUint(reveal_text, UINT32_MAX, &reveal)) {
    return Error(400, fmt::format("reveal: expected a node id, found '{}'",
                                  reveal_text));
  }
  for (uint32_t g = 1; g < groups; ++g) {
    if (want[g] == entry->current_expanded[g]) continue;
    Status s = view.SetExpanded(g, want[g] != 0);
    if (!s.ok()) return FromStatus(s);
  }
  if (has_reveal) {
    // After expand / collapse: the groups above the node open whatever the
    // request said about them; the client reads its new state back from
    // group_flags.
    Status s = view.Reveal(static_cast<uint32_t>(reveal));
    if (!s.ok()) {
      // The view is as the request's expand / collapse set it (Reveal
      // changes nothing when it fails): the next diff starts from there.
      entry->current_expanded = want;
      return FromStatus(s);
    }
  }
  std::string binary = view.Binary();
  // Read the state back from what was drawn, so the next diff starts from
  // the truth even if the view adjusted something.
  if (!DecodeExpandedGroups(binary, &entry->current_expanded) ||
      entry->current_expanded.size() != groups) {
    entry->current_expanded = want;
  }
  HttpResponse r;
  r.content_type = std::string(kBinary);
  r.body = std::move(binary);
  AddSecurityHeaders(&r, /*cacheable=*/false);
  return r;
}

HttpResponse Api::Node(RunState& run, std::string_view level,
                       std::string_view node) {
  uint64_t id = 0;
  if (!ParseUint(node, UINT32_MAX, &id)) {
    return Error(400,
                 fmt::format("node: expected a node id, found '{}'", node));
  }
  auto details = run.run.session->NodeDetails(level, static_cast<uint32_t>(id));
  if (!details.ok()) return FromStatus(details.status());
  return Json(encoders::EncodeJson(*details));
}

HttpResponse Api::Values(RunState& run, std::string_view level,
                         const HttpRequest& request) {
  bool found = false;
  std::string_view name = Param(request, "name", &found);
  if (!found || name.empty()) {
    return Error(400, "name: give the initializer's name");
  }
  uint64_t limit = kDefaultValueCount;
  std::string_view limit_text = Param(request, "limit", &found);
  if (found && !ParseUint(limit_text, kMaxValueCount, &limit)) {
    return Error(400, fmt::format("limit: expected 0..{}, found '{}'",
                                  kMaxValueCount, limit_text));
  }
  auto json = run.run.session->TensorValuesJson(level, name, limit);
  if (!json.ok()) return FromStatus(json.status());
  return Json(std::move(json).value());
}

HttpResponse Api::Export(RunState& run, std::string_view level,
                         std::string_view what) {
  StatusOr<std::string> json = NotFoundError("");
  if (what == "model-explorer-graph") {
    json = run.run.session->ModelExplorerGraphJson(level);
  } else if (what == "model-explorer-node-data") {
    json = run.run.session->ModelExplorerNodeDataJson(level);
  } else {
    return Error(404, fmt::format("no export '{}'; exports are "
                                  "model-explorer-graph and "
                                  "model-explorer-node-data",
                                  what));
  }
  if (!json.ok()) return FromStatus(json.status());
  HttpResponse r = Json(std::move(json).value());
  // A browser opening the URL saves the file; fetch() reads it as usual.
  r.headers.emplace_back(
      "Content-Disposition",
      fmt::format("attachment; filename=\"{}.{}.json\"", level, what));
  return r;
}

HttpResponse Api::Search(RunState& run, std::string_view level,
                         const HttpRequest& request) {
  bool found = false;
  std::string_view q = Param(request, "q", &found);
  if (!found || q.empty()) return Error(400, "q: give the text to search for");
  std::string_view mode = Param(request, "mode", &found);
  if (!found) mode = "text";
  uint64_t limit = kMaxSearchResults;
  std::string_view limit_text = Param(request, "limit", &found);
  if (found &&
      (!ParseUint(limit_text, kMaxSearchResults, &limit) || limit == 0)) {
    return Error(400, fmt::format("limit: expected 1..{}, found '{}'",
                                  kMaxSearchResults, limit_text));
  }
  auto json = run.run.session->SearchJson(level, q, mode, limit);
  if (!json.ok()) return FromStatus(json.status());
  return Json(std::move(json).value());
}

HttpResponse Api::Timeline(RunState& run, const HttpRequest& request) {
  TimelineRequest options;
  Status parsed = ParseClock(request, &options.clock);
  if (!parsed.ok()) return FromStatus(parsed);
  auto json = run.run.session->TimelineJson(options);
  if (!json.ok()) return FromStatus(json.status());
  return Json(std::move(json).value());
}

namespace {

// A window's start_ns and end_ns (both required, start before end) and its
// width in pixel columns, px (1..kMaxTimelinePixels; default as given).
std::optional<HttpResponse> ParseWindow(const HttpRequest& request,
                                        int64_t* start_ns, int64_t* end_ns,
                                        uint32_t* pixels) {
  bool has_start = false;
  bool has_end = false;
  Status parsed = ParseNs(request, "start_ns", start_ns, &has_start);
  if (parsed.ok()) parsed = ParseNs(request, "end_ns", end_ns, &has_end);
  if (!parsed.ok()) return FromStatus(parsed);
  if (!has_start || !has_end) {
    return Api::Error(400,
                      "start_ns and end_ns: give the window in nanoseconds");
  }
  if (*start_ns >= *end_ns) {
    return Api::Error(
        400, fmt::format("start_ns ({}) must be before end_ns ({})", *start_ns,
                         *end_ns));
  }
  bool found = false;
  std::string_view px = Param(request, "px", &found);
  uint64_t value = *pixels;
  if (found && (!ParseUint(px, kMaxTimelinePixels, &value) || value == 0)) {
    return Api::Error(400, fmt::format("px: expected 1..{}, found '{}'",
                                       kMaxTimelinePixels, px));
  }
  *pixels = static_cast<uint32_t>(value);
  return std::nullopt;
}

}  // namespace

HttpResponse Api::TimelineWindow(RunState& run, const HttpRequest& request) {
  TimelineWindowRequest options;
  if (auto error = ParseWindow(request, &options.start_ns, &options.end_ns,
                               &options.pixels)) {
    return std::move(*error);
  }
  Status parsed = ParseClock(request, &options.clock);
  if (!parsed.ok()) return FromStatus(parsed);
  for (const std::string& t : ParamList(request, "tracks")) {
    uint64_t id = 0;
    if (!ParseUint(t, UINT32_MAX, &id)) {
      return Error(400, fmt::format("tracks: expected track ids separated by "
                                    "commas, found '{}'",
                                    t));
    }
    options.tracks.push_back(static_cast<uint32_t>(id));
  }
  options.labels = ParamList(request, "op");
  options.kinds = ParamList(request, "kind");
  options.name_contains = std::string(Param(request, "name"));
  bool found = false;
  std::string_view format = Param(request, "format", &found);
  if (found && format != "binary" && format != "json") {
    return Error(400, fmt::format("format: expected binary or json, found "
                                  "'{}'",
                                  format));
  }
  options.json = format == "json";
  auto body = run.run.session->TimelineWindow(options);
  if (!body.ok()) return FromStatus(body.status());
  if (options.json) return Json(std::move(body).value());
  HttpResponse r;
  r.content_type = std::string(kBinary);
  r.body = std::move(body).value();
  AddSecurityHeaders(&r, /*cacheable=*/false);
  return r;
}

HttpResponse Api::TimelineCounters(RunState& run, const HttpRequest& request) {
  TimelineCountersRequest options;
  if (auto error = ParseWindow(request, &options.start_ns, &options.end_ns,
                               &options.pixels)) {
    return std::move(*error);
  }
  auto body = run.run.session->TimelineCounters(options);
  if (!body.ok()) return FromStatus(body.status());
  return Json(std::move(body).value());
}

HttpResponse Api::Task(RunState& run, std::string_view task,
                       const HttpRequest& request) {
  uint64_t id = 0;
  if (!ParseUint(task, UINT32_MAX, &id)) {
    return Error(400,
                 fmt::format("task: expected a task id, found '{}'", task));
  }
  TimelineRequest options;
  Status parsed = ParseClock(request, &options.clock);
  if (!parsed.ok()) return FromStatus(parsed);
  auto json =
      run.run.session->TaskDetailsJson(static_cast<uint32_t>(id), options);
  if (!json.ok()) return FromStatus(json.status());
  return Json(std::move(json).value());
}

HttpResponse Api::NodeTasks(RunState& run, const HttpRequest& request) {
  bool found = false;
  std::string_view node = Param(request, "node", &found);
  if (!found) return Error(400, "node: give the node whose tasks to list");
  uint64_t id = 0;
  if (!ParseUint(node, UINT32_MAX, &id)) {
    return Error(400,
                 fmt::format("node: expected a node id, found '{}'", node));
  }
  TimelineRequest options;
  Status parsed = ParseClock(request, &options.clock);
  if (!parsed.ok()) return FromStatus(parsed);
  auto json =
      run.run.session->NodeTasksJson(static_cast<uint32_t>(id), options);
  if (!json.ok()) return FromStatus(json.status());
  return Json(std::move(json).value());
}

HttpResponse Api::Mapping(RunState& run, const HttpRequest& request) {
  MappingRequest options;
  bool found = false;
  uint64_t v = 0;
  std::string_view offset = Param(request, "offset", &found);
  if (found) {
    if (!ParseUint(offset, UINT32_MAX, &v)) {
      return Error(
          400, fmt::format("offset: expected a row index, found '{}'", offset));
    }
    options.offset = v;
  }
  std::string_view limit = Param(request, "limit", &found);
  if (found) {
    if (!ParseUint(limit, kMaxMappingRows, &v)) {
      return Error(400, fmt::format("limit: expected 0..{}, found '{}'",
                                    kMaxMappingRows, limit));
    }
    options.limit = v;
  }
  std::string_view sort = Param(request, "sort", &found);
  if (found) options.sort = std::string(sort);
  std::string_view desc = Param(request, "desc", &found);
  if (found) {
    if (desc != "0" && desc != "1") {
      return Error(400, fmt::format("desc: expected 0 or 1, found '{}'", desc));
    }
    options.descending = desc == "1";
  } else {
    // Numbers largest first, text A to Z.
    options.descending = options.sort == "total_ns" ||
                         options.sort == "task_count" ||
                         options.sort == "streams";
  }
  options.query = std::string(Param(request, "q"));
  options.statuses = ParamList(request, "status");
  // The row to locate (found_index): a node's or a task's.
  struct FindParam {
    const char* name;
    const char* what;
    int64_t* target;
  };
  for (const FindParam& p :
       {FindParam{"find_node", "node", &options.find_node},
        FindParam{"find_task", "task", &options.find_task}}) {
    std::string_view id = Param(request, p.name, &found);
    if (!found) continue;
    if (!ParseUint(id, UINT32_MAX, &v)) {
      return Error(400, fmt::format("{}: expected a {} id, found '{}'", p.name,
                                    p.what, id));
    }
    *p.target = static_cast<int64_t>(v);
  }
  auto json = run.run.session->MappingJson(options);
  if (!json.ok()) return FromStatus(json.status());
  return Json(std::move(json).value());
}

std::optional<std::string> Api::HeavyKey(
    size_t run_id, const RunState& run,
    const std::vector<std::string_view>& seg,
    const HttpRequest& request) const {
  if (seg.size() < 4 || run.run.session == nullptr) return std::nullopt;
  // Every part of a key is length-prefixed, so no value can pass for two.
  std::string key = fmt::format("{}|", run_id);
  auto add = [&key](std::string_view part) {
    key += fmt::format("{}:{}|", part.size(), part);
  };
  std::string_view route = seg[3];
  if (seg.size() == 4 && route == "summary") {
    // Normalised: `top=50` is the default, so it shares the entry of no
    // parameter, and so on for every option.
    SummaryOptions options;
    if (ParseSummaryOptions(request, options)) return std::nullopt;
    add(fmt::format("summary top={} run={} from={} to={} clock={}",
                    options.top_nodes, options.run, options.from_ns,
                    options.to_ns, static_cast<int>(options.clock)));
    return key;
  }
  if (seg.size() == 4 && (route == "links" || route == "analyses")) {
    add(route);
    return key;
  }
  if (seg.size() == 4 &&
      (route == "critical-path" || route == "idle-overlap")) {
    TimingRequest timing;
    if (!ParseTimingRequest(request, &timing).ok()) return std::nullopt;
    add(fmt::format("{} run={} clock={} gap={} max_gaps={}", route, timing.run,
                    static_cast<int>(timing.clock), timing.gap_threshold_ns,
                    timing.max_gaps));
    return key;
  }
  if (seg.size() == 5 && route == "analyses") {
    // The parameters as given, in name order (the registry fills defaults
    // in; a parameter given twice is refused, and cheaply).
    AnalysisParams params;
    for (const auto& [k, v] : request.params) {
      if (k == "token") continue;
      if (!params.emplace(k, v).second) return std::nullopt;
    }
    add("analysis");
    add(seg[4]);
    for (const auto& [k, v] : params) {
      add(k);
      add(v);
    }
    return key;
  }
  if (seg.size() >= 6 && route == "levels" &&
      std::find(run.levels.begin(), run.levels.end(), seg[4]) !=
          run.levels.end()) {
    if (seg.size() == 6 && seg[5] == "memory") {
      add("memory");
      add(seg[4]);
      return key;
    }
    if (seg.size() == 7 && seg[5] == "export") {
      add("export");
      add(seg[4]);
      add(seg[6]);
      return key;
    }
  }
  return std::nullopt;
}

bool Api::IsHeavy(const HttpRequest& request) const {
  // Pairing opens a model: seconds, and serialised anyway.
  if (request.method == "POST") return true;
  if (request.path == "/api/diff") {
    // Digesting two runs and diffing them: heavy until cached.
    DiffRequest diff;
    if (ParseDiff(request, &diff)) return false;  // refused cheaply
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(DiffKey(diff));
    return it == cache_.end() || !it->second->done.load();
  }
  if (SuspiciousPath(request.path) || !request.path.starts_with("/api/runs/")) {
    return false;
  }
  std::vector<std::string_view> seg =
      Split(std::string_view(request.path).substr(1), '/');
  uint64_t run_id = 0;
  if (seg.size() < 4 || !ParseUint(seg[2], UINT32_MAX, &run_id)) return false;
  size_t run_count = 0;
  const RunState* run = FindRun(run_id, &run_count);
  if (run == nullptr) return false;
  std::optional<std::string> key = HeavyKey(run_id, *run, seg, request);
  if (!key) return false;
  std::lock_guard<std::mutex> lock(cache_mutex_);
  auto it = cache_.find(*key);
  return it == cache_.end() || !it->second->done.load();
}

HttpResponse Api::Cached(std::mutex* turn, const std::string& key,
                         const std::function<HttpResponse()>& compute) {
  std::shared_ptr<CacheEntry> entry;
  bool compute_here = false;
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    std::shared_ptr<CacheEntry>& slot = cache_[key];
    if (!slot) {
      slot = std::make_shared<CacheEntry>();
      compute_here = true;
    }
    entry = slot;
    entry->last_used = ++cache_clock_;
  }
  if (!compute_here) {
    std::unique_lock<std::mutex> lock(entry->mutex);
    entry->done_cv.wait(lock, [&] { return entry->done.load(); });
    HttpResponse r = entry->response;
    r.headers.emplace_back("X-Cache", "hit");
    return r;
  }
  HttpResponse response;
  try {
    std::unique_lock<std::mutex> held;
    if (turn != nullptr) held = std::unique_lock<std::mutex>(*turn);
    response = compute();
  } catch (...) {
    // Whoever waits gets an answer; nothing is kept.
    response = Error(500, "internal error");
  }
  heavy_computations_.fetch_add(1);
  size_t bytes = key.size() + response.content().size();
  {
    std::lock_guard<std::mutex> lock(entry->mutex);
    entry->response = response;
    entry->bytes = bytes;
    entry->done.store(true);
  }
  entry->done_cv.notify_all();
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto self = cache_.find(key);
    if (response.status != 200 || bytes > kMaxCachedResultBytes / 4) {
      // Errors (a bad analysis parameter) are cheap to answer again; a huge
      // result would push out many small ones. Waiters already have it.
      if (self != cache_.end() && self->second == entry) cache_.erase(self);
    } else {
      cache_bytes_ += bytes;
      while (cache_.size() > kMaxCachedResults ||
             cache_bytes_ > kMaxCachedResultBytes) {
        // The least recently used finished entry other than this one.
        auto oldest = cache_.end();
        for (auto it = cache_.begin(); it != cache_.end(); ++it) {
          if (it->second == entry || !it->second->done.load()) continue;
          if (oldest == cache_.end() ||
              it->second->last_used < oldest->second->last_used) {
            oldest = it;
          }
        }
        if (oldest == cache_.end()) break;
        cache_bytes_ -= oldest->second->bytes;
        cache_.erase(oldest);
      }
    }
  }
  response.headers.emplace_back("X-Cache", "miss");
  return response;
}

std::optional<HttpResponse> Api::ParseDiff(const HttpRequest& request,
                                           DiffRequest* out) const {
  for (std::string_view key : {"base", "new"}) {
    bool found = false;
    std::string_view text = Param(request, key, &found);
    if (!found) {
      return Error(400, fmt::format("{}: expected a run index (GET /api/runs "
                                    "lists them): /api/diff?base=R&new=R",
                                    key));
    }
    uint64_t id = 0;
    if (!ParseUint(text, UINT32_MAX, &id)) {
      return Error(
          400, fmt::format("{}: expected a run index, found '{}'", key, text));
    }
    size_t count = 0;
    const RunState* run = FindRun(id, &count);
    if (run == nullptr) {
      return Error(404, count == 0
                            ? fmt::format("{}: no run {}; the server has no "
                                          "runs yet",
                                          key, id)
                            : fmt::format("{}: no run {}; runs are 0..{}", key,
                                          id, count - 1));
    }
    if (run->run.session == nullptr) {
      return Error(404, fmt::format("{}: run {} could not be opened: {}", key,
                                    id, run->run.error));
    }
    (key == "base" ? out->base : out->next) = static_cast<size_t>(id);
  }
  // The rules: as given, else the CLI's default set (`diff` without
  // --fail-on), so the page shows what a CI gate would say.
  bool found = false;
  std::string_view spec = Param(request, "fail_on", &found);
  StatusOr<std::vector<DiffRule>> rules =
      ParseFailOn(found ? spec : DefaultFailOn());
  if (!rules.ok()) {
    return Error(400, "fail_on: " + rules.status().message());
  }
  out->rules = std::move(rules).value();
  for (const DiffRule& rule : out->rules) {
    out->rules_key += fmt::format("{}:{}|", rule.text.size(), rule.text);
  }
  return std::nullopt;
}

std::string Api::DiffKey(const DiffRequest& diff) {
  // Run keys start with the run's index; this one cannot pass for one.
  return fmt::format("diff|{}|{}|{}", diff.base, diff.next, diff.rules_key);
}

StatusOr<std::shared_ptr<const RunDigest>> Api::DigestOf(RunState& run) {
  std::lock_guard<std::mutex> turn(run.heavy_mutex);
  if (run.digest == nullptr) {
    DigestOptions options;
    options.meta.label = run.run.name;
    StatusOr<RunDigest> digest = DigestRun(*run.run.session, options);
    if (!digest.ok()) return digest.status();
    run.digest = std::make_shared<const RunDigest>(std::move(digest).value());
  }
  return run.digest;
}

HttpResponse Api::Diff(const DiffRequest& diff) {
  size_t count = 0;
  RunState* base_run = FindRun(diff.base, &count);
  RunState* next_run = FindRun(diff.next, &count);
  // Checked by ParseDiff; runs are never removed.
  if (base_run == nullptr || next_run == nullptr) {
    return Error(404, "no such run");
  }
  // One run at a time, each in its own heavy turn: two diffs of the same
  // runs in opposite orders never wait on each other.
  auto base = DigestOf(*base_run);
  if (!base.ok()) return FromStatus(base.status().WithContext("base run"));
  auto next = DigestOf(*next_run);
  if (!next.ok()) return FromStatus(next.status().WithContext("new run"));
  DiffOptions options;
  // One run against itself: what its compiler did (framework -> compiled).
  StatusOr<DiffReport> report = diff.base == diff.next
                                    ? DiffLevelsWithinRun(**base, options)
                                    : DiffRuns(**base, **next, options);
  if (!report.ok()) return FromStatus(report.status());
  ApplyDiffRules(diff.rules, *report);
  return Json(encoders::EncodeJson(*report));
}

HttpResponse Api::History(const std::vector<std::string_view>& seg,
                          const HttpRequest& request) {
  bool runs = seg.size() == 3 && seg[2] == "runs";
  bool trend = seg.size() == 3 && seg[2] == "trend";
  if (!runs && !trend) {
    return Error(404, "no API endpoint " + request.path +
                          "; see docs/reference/http-api.md");
  }
  if (options_.history == nullptr) {
    return Error(404,
                 "this server has no run history; start it with "
                 "model-inspector open --history PATH (a store `history "
                 "add` or `export --record` wrote)");
  }
  bool has_model = false;
  std::string model(Param(request, "model", &has_model));
  std::lock_guard<std::mutex> lock(history_mutex_);
  const std::string& path = options_.history->path();
  if (trend) {
    if (!has_model || model.empty()) {
      return Error(400,
                   "model: expected a model name (GET /api/history/runs "
                   "lists the runs with their models)");
    }
    auto points = options_.history->Trend(model);
    if (!points.ok()) return FromStatus(points.status());
    return Json(encoders::HistoryTrendJson(path, model, *points));
  }
  bool has_limit = false;
  std::string_view limit_text = Param(request, "limit", &has_limit);
  uint64_t limit = kDefaultHistoryRuns;
  if (has_limit &&
      (!ParseUint(limit_text, kMaxHistoryRuns, &limit) || limit == 0)) {
    return Error(400, fmt::format("limit: expected 1..{}, found '{}'",
                                  kMaxHistoryRuns, limit_text));
  }
  auto runs_listed = options_.history->List(model, limit);
  if (!runs_listed.ok()) return FromStatus(runs_listed.status());
  // The same document as `history list --format json`
  // (docs/reference/schemas/history.schema.json).
  return Json(encoders::HistoryRunsJson(path, *runs_listed));
}

}  // namespace mi::server
