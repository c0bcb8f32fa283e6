#pragma once

// The request router of `model-inspector open`, free of sockets: it takes a
// parsed request (method, percent-decoded path, query parameters, headers)
// and returns the whole response, security headers included. The HTTP glue
// (server.cc) only converts to and from cpp-httplib, so everything a
// request can reach is tested without a network (api_test.cc).
//
// What a request can reach: the embedded UI assets (an in-memory table) and
// the runs given on the command line. No part of a request ever names a
// file.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model_inspector/diff.h"
#include "model_inspector/history.h"
#include "model_inspector/session.h"
#include "server/assets.h"

namespace mi::server {

class SessionFileApi;  // session_file_api.h
class ProbeRerunner;   // probe_rerun.h

struct HttpRequest {
  std::string method = "GET";
  // Percent-decoded once by the HTTP layer (a remaining '%' means the
  // client encoded twice).
  std::string path;
  // Decoded query parameters in order; a key may repeat.
  std::vector<std::pair<std::string, std::string>> params;
  // Header names as sent; looked up case-insensitively.
  std::vector<std::pair<std::string, std::string>> headers;
  // The request body (POST), at most kMaxBodyBytes.
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;
  // The body: `body`, or, for embedded assets, `static_body` (no copy).
  std::string body;
  std::string_view static_body;
  std::vector<std::pair<std::string, std::string>> headers;

  std::string_view content() const {
    return static_body.data() != nullptr ? static_body : std::string_view(body);
  }
  // The first header of that name (case-insensitive), or "".
  std::string_view header(std::string_view name) const;
};

// One run served: a name for people and its open session, or, for a run
// that could not be opened (`open --keep-going`), no session and the error
// that says which file, where and what was expected.
struct ServedRun {
  std::string name;
  std::vector<std::string> paths;
  std::unique_ptr<Session> session;
  // Set when session is null: the status code's name ("malformed input")
  // and its message ("trace.json:1:18: truncated: ...").
  std::string error_code;
  std::string error;
  // Paths under `real_root` are listed as under `shown_root` instead (the
  // bundled demo is unpacked into a temporary folder; its paths say
  // "bundled demo", not where it was unpacked).
  std::string real_root;
  std::string shown_root;
  // Model files next to a trace-only run's trace, which could give it a
  // graph (`open --run MODEL TRACE`); listed so the UI can offer them.
  std::vector<std::string> pair_candidates;
};

// Opens the files of one run as `open --run PATH...` does: a session, or a
// run that carries the error (file, place, what was expected). Given by the
// CLI, so the server needs none of its code.
using OpenRunFn =
    std::function<ServedRun(const std::vector<std::string>& paths)>;

// The cluster `open DIR` serves when DIR holds the ranks of a distributed
// job (two or more): the report, computed once when the server starts
// (OpenCluster, model_inspector/cluster.h), and each rank's files, so that
// the ranks a user asks for open as an ordinary run (full events only for
// those). The server keeps the report as its JSON: it never changes.
struct ServedCluster {
  // ClusterReport::Write() through the JSON encoder (cluster.json).
  std::string report_json;
  // The same report with every collective's per-rank rows left out (they
  // are most of it: collectives x ranks), for a first screen of many
  // ranks; and, per listed collective, a report holding that collective
  // alone with its rows, asked for when one is picked.
  std::string report_without_collective_ranks_json;
  std::vector<std::string> collective_json;
  struct Rank {
    int32_t rank = -1;
    // The files and folders of the rank, opened together as one run.
    std::vector<std::string> files;
  };
  std::vector<Rank> ranks;  // by rank
};

struct ApiOptions {
  // Required on every request when not empty (header X-MI-Token, query
  // parameter `token` or cookie `mi_token`).
  std::string token;
  // Without a token, the Host header must be one of these (DNS-rebinding
  // defence for a loopback server), e.g. "127.0.0.1:8080". Empty = any.
  std::vector<std::string> allowed_hosts;
  // The embedded UI; nullptr = the table linked into the binary.
  const std::vector<EmbeddedAsset>* assets = nullptr;
  // Layout views kept (least recently used ones are dropped).
  size_t max_layout_views = 32;
  // Opens a trace-only run's model file with its traces as a new run
  // (POST /api/runs/{run}/pair); unset = pairing answers 501.
  OpenRunFn open_run;
  // The cluster served by GET /api/cluster and POST /api/cluster/ranks;
  // null = none (both answer 404).
  std::shared_ptr<const ServedCluster> cluster;
  // The run history GET /api/history/runs and /api/history/trend read
  // (`open --history PATH`); null = none (both answer 404 saying how to
  // give one). Read only: the server never records runs.
  std::shared_ptr<HistoryStore> history;
  // The saved session GET / POST /api/session restore and write
  // (`open session.mis`, `open --session PATH`); null = GET answers no
  // session and POST the document to download.
  std::shared_ptr<SessionFileApi> session_file;
  // Re-runs with other probes (GET / POST /api/runs/{run}/probes/run);
  // null = 501.
  std::shared_ptr<ProbeRerunner> rerun;
};

// Limits, shared with the HTTP layer and the docs.
// Request bodies: the only one the API reads is pairing's `{"candidate": N}`.
// The server holds a waiting request whole before a worker takes it, so this
// times kMaxConnections (server.h) bounds the memory of waiting requests.
inline constexpr size_t kMaxBodyBytes = 64 << 10;  // 413 above
inline constexpr size_t kMaxUrlBytes = 8192;       // 414 above (httplib)
// Workers for cheap requests (assets, layout, timeline windows, node
// details, search, cached results): they only ever run requests that have
// fully arrived, so no client can hold one by sending slowly.
inline constexpr size_t kMaxConcurrentRequests = 8;
// Workers for heavy requests (an uncached summary, analysis, critical path,
// memory, export; pairing): seconds of CPU each on a large trace, so few at
// once and never on the cheap workers, which stay free for the UI.
inline constexpr size_t kMaxHeavyRequests = 2;
// Heavy results kept (least recently used dropped): whole-trace results
// do not change while the server runs. A result larger than a quarter of
// the byte budget is shared with the requests waiting for it but not kept.
inline constexpr size_t kMaxCachedResults = 256;
inline constexpr size_t kMaxCachedResultBytes = 256 << 20;
inline constexpr size_t kMaxSearchResults = 1000;
inline constexpr size_t kMaxLayoutItems = 1000000;
inline constexpr size_t kMaxMappingRows = 10000;  // per /mapping page
// Initializer values per /values request: by default, and at most.
inline constexpr size_t kDefaultValueCount = 64;
inline constexpr size_t kMaxValueCount = 10000;
// Ranks opened together as one run (POST /api/cluster/ranks): each brings
// its full events, so a run of every rank of a large job would hold them
// all, which the cluster report exists to avoid.
inline constexpr size_t kMaxClusterRunRanks = 64;
// Past runs per GET /api/history/runs: by default, and at most.
inline constexpr size_t kDefaultHistoryRuns = 100;
inline constexpr size_t kMaxHistoryRuns = 10000;

// GET /api/runs/{run}/probes[/node]: the run's tensor probes
// (probe_api.cc; docs/reference/http-api.md "Probes"). `seg`: the path's
// segments, seg[3] == "probes".
HttpResponse ProbesEndpoint(const Session& session,
                            const std::vector<std::string_view>& seg,
                            const HttpRequest& request);

// GET /api/runs/{run}/training/...: a training snapshot's views
// (training_api.cc; docs/reference/http-api.md "Training"). `seg`: the
// path's segments, seg[3] == "training".
HttpResponse TrainingEndpoint(const Session& session,
                              const std::vector<std::string_view>& seg,
                              const HttpRequest& request);

class Api {
 public:
  Api(std::vector<ServedRun> runs, ApiOptions options);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Thread-safe: the HTTP layer calls it from its worker threads.
  HttpResponse Handle(const HttpRequest& request);

  // The refusal (403) of a request with a wrong Host or without the access
  // token, or nothing: what Handle would answer before any routing. The
  // HTTP layer asks as soon as a request's head has arrived, so such a
  // request never takes a worker.
  std::optional<HttpResponse> Refusal(const HttpRequest& request) const;
  // Whether the request would compute a heavy result that is not cached
  // yet (the HTTP layer runs those on the heavy workers). Cheap to ask.
  bool IsHeavy(const HttpRequest& request) const;
  // Heavy results computed so far (cache misses), for tests and benches.
  uint64_t heavy_computations() const { return heavy_computations_.load(); }

  // A JSON error {"error": {"status", "message"}} with the security headers,
  // also used by the HTTP layer for its own errors (413, 414, 400).
  static HttpResponse Error(int status, std::string_view message);
  // A JSON body (not cacheable) with the security headers.
  static HttpResponse JsonBody(std::string body);
  // The error of a failed query: 400 for a bad argument or an unsupported
  // request, 404 for what does not exist, 422 for malformed stored data,
  // 500 otherwise.
  static HttpResponse StatusError(const Status& status);
  // Adds Content-Security-Policy, X-Content-Type-Options, Referrer-Policy
  // and the cache policy.
  static void AddSecurityHeaders(HttpResponse* response, bool cacheable);

  size_t run_count() const {
    std::shared_lock<std::shared_mutex> lock(runs_mutex_);
    return runs_.size();
  }

 private:
  struct LayoutEntry;
  struct RunState;
  struct CacheEntry;
  // A checked GET /api/diff: the two runs and the rules to apply.
  struct DiffRequest {
    size_t base = 0;
    size_t next = 0;
    std::vector<DiffRule> rules;
    // The rules as the cache key holds them (each rule's text, in order).
    std::string rules_key;
  };

  // The cache key of a heavy route (run, route, and every parameter that
  // changes the result, normalised), or nothing for a cheap route or
  // parameters the route refuses (the refusal is cheap).
  std::optional<std::string> HeavyKey(size_t run_id, const RunState& run,
                                      const std::vector<std::string_view>& seg,
                                      const HttpRequest& request) const;
  // The routes of one opened run (seg[3] on).
  HttpResponse RouteRun(size_t run_id, RunState& run,
                        const std::vector<std::string_view>& seg,
                        const HttpRequest& request);
  // The cached response under `key`, or `compute`'s: one computation per
  // key at a time (identical requests wait for it), one heavy computation
  // per run at a time (`turn`: the run's heavy mutex, held while computing;
  // null for a diff, which takes each run's turn only while digesting it).
  // Adds `X-Cache: hit` or `miss`.
  HttpResponse Cached(std::mutex* turn, const std::string& key,
                      const std::function<HttpResponse()>& compute);
  // GET /api/diff?base=R&new=R[&fail_on=RULES]: the parameters checked
  // (the refusal, or nothing), the cache key, the diff itself.
  std::optional<HttpResponse> ParseDiff(const HttpRequest& request,
                                        DiffRequest* out) const;
  static std::string DiffKey(const DiffRequest& diff);
  HttpResponse Diff(const DiffRequest& diff);
  // The run's digest (DigestRun), made once, under the run's heavy turn.
  StatusOr<std::shared_ptr<const RunDigest>> DigestOf(RunState& run);
  // GET /api/history/runs and /api/history/trend.
  HttpResponse History(const std::vector<std::string_view>& seg,
                       const HttpRequest& request);

  HttpResponse Route(const HttpRequest& request, bool* token_in_query);
  HttpResponse ServeAsset(std::string_view path) const;
  HttpResponse Runs() const;
  HttpResponse Summary(RunState& run, const HttpRequest& request);
  HttpResponse Layout(size_t run, std::string_view level,
                      const HttpRequest& request);
  // Layout in one direction ("tb" or "lr"), parameters already checked.
  HttpResponse LayoutIn(size_t run, std::string_view level,
                        const std::string& grouping,
                        const std::string& direction, uint64_t max_items,
                        bool overview, const HttpRequest& request);
  HttpResponse Node(RunState& run, std::string_view level,
                    std::string_view node);
  HttpResponse Search(RunState& run, std::string_view level,
                      const HttpRequest& request);
  HttpResponse Export(RunState& run, std::string_view level,
                      std::string_view what);
  HttpResponse Timeline(RunState& run, const HttpRequest& request);
  HttpResponse TimelineWindow(RunState& run, const HttpRequest& request);
  HttpResponse TimelineCounters(RunState& run, const HttpRequest& request);
  HttpResponse Task(RunState& run, std::string_view task,
                    const HttpRequest& request);
  HttpResponse NodeTasks(RunState& run, const HttpRequest& request);
  HttpResponse Mapping(RunState& run, const HttpRequest& request);
  HttpResponse Links(RunState& run);
  // POST /api/runs/{run}/pair: the run's pair candidate as a new run.
  HttpResponse Pair(size_t run_id, RunState& run, const HttpRequest& request);
  // GET /api/cluster and POST /api/cluster/ranks (the ranks as a run).
  HttpResponse Cluster(const std::vector<std::string_view>& seg,
                       const HttpRequest& request);
  HttpResponse ClusterRanks(const HttpRequest& request);
  // GET / POST /api/session and /api/runs/{run}/probes/run.
  HttpResponse SessionFile(const HttpRequest& request);
  HttpResponse ProbeRerun(size_t run_id, RunState& run,
                          const HttpRequest& request);
  // Appends an opened run and answers its id.
  size_t AddRun(ServedRun run);
  // The run, or nullptr past the end (the list only grows; a RunState
  // never moves).
  RunState* FindRun(size_t run_id, size_t* count) const;
  HttpResponse Values(RunState& run, std::string_view level,
                      const HttpRequest& request);
  bool Authorised(const HttpRequest& request, bool* token_in_query) const;
  bool HostAllowed(const HttpRequest& request) const;

  // Appended to by Pair while other requests read it.
  mutable std::shared_mutex runs_mutex_;
  std::vector<std::unique_ptr<RunState>> runs_;
  // One pairing at a time (opening a model can take seconds; the run list
  // stays readable meanwhile).
  std::mutex pair_mutex_;
  // The runs POST /api/cluster/ranks opened, by their sorted ranks (under
  // pair_mutex_).
  std::map<std::vector<int32_t>, size_t> cluster_runs_;
  ApiOptions options_;
  // One history query at a time (the store is one SQLite connection).
  std::mutex history_mutex_;
  const std::vector<EmbeddedAsset>& assets_;
  // Layout views by (run, level, grouping, direction, max_items), with a
  // use counter for least-recently-used eviction.
  std::mutex views_mutex_;
  std::map<std::string, std::shared_ptr<LayoutEntry>> views_;
  uint64_t view_clock_ = 0;
  // Heavy results by HeavyKey, least recently used dropped first.
  mutable std::mutex cache_mutex_;
  std::map<std::string, std::shared_ptr<CacheEntry>> cache_;
  size_t cache_bytes_ = 0;
  uint64_t cache_clock_ = 0;
  std::atomic<uint64_t> heavy_computations_{0};
};

// Helpers exposed for tests.
// The refusal of a POST that is not the served page's own (Content-Type,
// Origin, Sec-Fetch-Site), naming `what` it asked for; or nothing.
std::optional<HttpResponse> RefuseForeignPost(const HttpRequest& request,
                                              std::string_view what);
// Constant-time comparison (the time does not depend on where they differ).
bool ConstantTimeEquals(std::string_view a, std::string_view b);
// Decimal digits only, no sign, no spaces, at most `max`.
bool ParseUint(std::string_view text, uint64_t max, uint64_t* out);
// An optional '-' then decimal digits, within int64.
bool ParseInt(std::string_view text, int64_t* out);
// The group-expanded bits (bit 0 of group_flags) of a layout binary
// (docs/reference/layout-binary.md); false if the buffer is not one.
bool DecodeExpandedGroups(std::string_view binary,
                          std::vector<uint8_t>* expanded);

}  // namespace mi::server
