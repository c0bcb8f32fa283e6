#pragma once

// The embedded HTTP server of `model-inspector open`: binds, then serves
// the embedded UI and the API (api.h) for the given runs until Stop().
// cpp-httplib stays behind this header.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/status.h"
#include "server/api.h"

namespace mi::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: the OS picks a free port
  // Required on every request when not empty. Mandatory for a host that is
  // not a loopback address (Bind refuses otherwise).
  std::string token;
  // Opens a run from files (POST /api/runs/{run}/pair); see ApiOptions.
  OpenRunFn open_run;
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

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mi::server
