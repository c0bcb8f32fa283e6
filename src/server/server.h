#pragma once

// The embedded HTTP server of `model-inspector open`: binds, then serves
// the embedded UI and the API (api.h) for the given runs until Stop().
// cpp-httplib stays behind this header.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/status.h"
#include "server/api.h"

namespace mi::server {

// How the server receives requests (docs/reference/http-api.md, "Limits").
// A connection is held by one receiving thread until its request has
// arrived whole; only then does a worker (api.h: kMaxConcurrentRequests
// cheap, kMaxHeavyRequests heavy) take it, and after the response the
// connection goes back to the receiving thread. So a client that sends
// slowly, or not at all, holds a socket and a few KiB, never a worker.
//
// A whole request (head and body) must arrive within this time of the
// connection (or of the request's first byte on a kept-alive connection):
// a total, not an idle timeout, so dripping a byte now and then does not
// extend it. 408 after.
inline constexpr int kRequestDeadlineMs = 10000;
// A kept-alive connection with no request started is closed after this.
// Idle connections cost no worker, so it can be longer than the time a
// browser takes between a page's requests.
inline constexpr int kKeepAliveIdleMs = 5000;
// Requests on one connection before the server closes it.
inline constexpr size_t kKeepAliveMaxRequests = 100;
// Connections held at once, all clients together: a connection past it is
// closed at once. Bounds sockets, threads' work and buffered requests.
inline constexpr size_t kMaxConnections = 256;
// Connections held at once per client address: past it, 503 and closed.
// A browser opens at most 6 per server; the rest is room for tabs and
// scripts, not for one client to take every connection.
inline constexpr size_t kMaxConnectionsPerClient = 32;
// A request's head (request line and headers): 431 above.
inline constexpr size_t kMaxHeadBytes = 32 << 10;
// The time a response may take to be sent whole (a client that does not
// read holds a worker at most this long).
inline constexpr int kWriteDeadlineMs = 60000;
// After a refusal (408, 413, 431, 403...) the server stops sending and
// reads what the client still sends for at most this long before closing,
// so the client reads the refusal instead of a reset.
inline constexpr int kLingerMs = 2000;

struct ServerLimits {
  int request_deadline_ms = kRequestDeadlineMs;
  int keep_alive_idle_ms = kKeepAliveIdleMs;
  size_t keep_alive_max_requests = kKeepAliveMaxRequests;
  size_t max_connections = kMaxConnections;
  size_t max_connections_per_client = kMaxConnectionsPerClient;
  size_t max_head_bytes = kMaxHeadBytes;
  int write_deadline_ms = kWriteDeadlineMs;
  int linger_ms = kLingerMs;
  size_t workers = kMaxConcurrentRequests;
  size_t heavy_workers = kMaxHeavyRequests;
};

// What the receiving side did so far (for tests and the load benchmark).
struct ServerStats {
  uint64_t accepted = 0;          // connections taken
  uint64_t refused_busy = 0;      // 503: over a connection cap
  uint64_t refused_early = 0;     // answered before a worker (403, 4xx)
  uint64_t timed_out = 0;         // 408: request not whole in time
  uint64_t dispatched = 0;        // requests run by a cheap worker
  uint64_t dispatched_heavy = 0;  // requests run by a heavy worker
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: the OS picks a free port
  // Required on every request when not empty. Mandatory for a host that is
  // not a loopback address (Bind refuses otherwise).
  std::string token;
  // Opens a run from files (POST /api/runs/{run}/pair); see ApiOptions.
  OpenRunFn open_run;
  // The cluster served at /api/cluster; null = none. See ApiOptions.
  std::shared_ptr<const ServedCluster> cluster;
  // The run history served at /api/history/...; null = none. See
  // ApiOptions.
  std::shared_ptr<HistoryStore> history;
  // The saved session and the probe re-runs; see ApiOptions.
  std::shared_ptr<SessionFileApi> session_file;
  std::shared_ptr<ProbeRerunner> rerun;
  ServerLimits limits;
};

// 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(std::string_view host);
// A random token: 32 hex digits from /dev/urandom.
StatusOr<std::string> GenerateToken();
// Refuses a non-loopback host without a token, a bad token or port.
Status CheckAccessOptions(const ServerOptions& options);
// Tokens travel in URLs unencoded: letters, digits and "-._~" only.
Status ValidateToken(std::string_view token);

class Server {
 public:
  // Binds the socket (so the port is known and taken) without serving yet.
  static StatusOr<std::unique_ptr<Server>> Bind(const ServerOptions& options,
                                                std::vector<ServedRun> runs);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  // The URL to open, with ?token= when one is needed.
  std::string Url() const;
  // Serves until Stop(); returns an error if the server could not run.
  Status Serve();
  // Thread-safe; Serve() returns once in-flight requests are done.
  void Stop();
  // Thread-safe.
  ServerStats stats() const;
  // The API behind the server (its cache counters, for tests).
  Api& api();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mi::server
