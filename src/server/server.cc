#include "server/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>

namespace mi::server {
namespace {

// Bodies above this size are streamed from one buffer instead of copied
// into httplib's response.
constexpr size_t kStreamThreshold = 256 * 1024;
constexpr size_t kStreamChunk = 64 * 1024;

std::string MessageForStatus(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "not found";
    case 413:
      return fmt::format("request body too large; the limit is {} bytes",
                         kMaxBodyBytes);
    case 414:
      return fmt::format("URL too long; the limit is {} bytes", kMaxUrlBytes);
    case 416:
      return "range not satisfiable";
    case 503:
      return "server busy; try again";
    default:
      return fmt::format("HTTP {}", status);
  }
}

void ApplyResponse(const HttpResponse& from, httplib::Response& to) {
  to.status = from.status;
  for (const auto& [k, v] : from.headers) to.set_header(k, v);
  if (from.static_body.data() != nullptr &&
      from.static_body.size() >= kStreamThreshold) {
    std::string_view data = from.static_body;  // static storage
    to.set_content_provider(
        data.size(), from.content_type,
        [data](size_t offset, size_t length, httplib::DataSink& sink) {
          size_t n = std::min({length, kStreamChunk, data.size() - offset});
          return sink.write(data.data() + offset, n);
        });
    return;
  }
  if (from.static_body.data() == nullptr &&
      from.body.size() >= kStreamThreshold) {
    auto owned = std::make_shared<std::string>(from.body);
    to.set_content_provider(
        owned->size(), from.content_type,
        [owned](size_t offset, size_t length, httplib::DataSink& sink) {
          size_t n = std::min({length, kStreamChunk, owned->size() - offset});
          return sink.write(owned->data() + offset, n);
        });
    return;
  }
  std::string_view body = from.content();
  to.set_content(body.data(), body.size(), from.content_type);
}

std::string UrlHost(std::string_view host) {
  // Any-address binds are reachable locally at the loopback address.
  if (host == "0.0.0.0" || host.empty()) return "127.0.0.1";
  if (host == "::") return "[::1]";
  if (host.find(':') != std::string_view::npos) {
    return "[" + std::string(host) + "]";
  }
  return std::string(host);
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  std::string h(host);
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

StatusOr<std::string> GenerateToken() {
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("/dev/urandom: cannot open");
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = ::read(fd, bytes + got, sizeof(bytes) - got);
    if (n <= 0) {
      ::close(fd);
      return IoError("/dev/urandom: cannot read");
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  std::string token;
  for (unsigned char b : bytes) token += fmt::format("{:02x}", b);
  return token;
}

Status ValidateToken(std::string_view token) {
  if (token.empty()) return InvalidArgumentError("--token: empty token");
  if (token.size() > 256) {
    return InvalidArgumentError("--token: longer than 256 characters");
  }
  for (char c : token) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
              c == '~';
    if (!ok) {
      return InvalidArgumentError(
          "--token: use letters, digits and '-._~' only (it travels in the "
          "URL), or 'auto' for a random one");
    }
  }
  return Status::Ok();
}

Status CheckAccessOptions(const ServerOptions& options) {
  if (!options.token.empty()) MI_RETURN_IF_ERROR(ValidateToken(options.token));
  if (!IsLoopbackHost(options.host) && options.token.empty()) {
    return InvalidArgumentError(
        "--host " + options.host +
        " is not a loopback address: anyone who can reach it could read the "
        "runs; add --token TOKEN (or --token auto) so that only holders of "
        "the printed URL get in");
  }
  if (options.port < 0 || options.port > 65535) {
    return InvalidArgumentError(
        fmt::format("--port: expected 0..65535, found {}", options.port));
  }
  return Status::Ok();
}

struct Server::Impl {
  ServerOptions options;
  int port = 0;
  httplib::Server http;
  std::unique_ptr<Api> api;
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

StatusOr<std::unique_ptr<Server>> Server::Bind(const ServerOptions& options,
                                               std::vector<ServedRun> runs) {
  MI_RETURN_IF_ERROR(CheckAccessOptions(options));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  httplib::Server& http = impl->http;
  http.new_task_queue = [] {
    return new httplib::ThreadPool(kMaxConcurrentRequests);
  };
  http.set_payload_max_length(kMaxBodyBytes);
  http.set_keep_alive_max_count(100);
  http.set_keep_alive_timeout(2);
  http.set_read_timeout(5);
  http.set_write_timeout(30);
  // httplib's default sets SO_REUSEPORT, which lets a second process bind
  // the same port and take part of the connections: only SO_REUSEADDR.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  if (options.host.find(':') != std::string::npos) {
    http.set_address_family(AF_INET6);
  }
  int port = 0;
  if (options.port == 0) {
    port = http.bind_to_any_port(options.host);
  } else {
    port = http.bind_to_port(options.host, options.port) ? options.port : -1;
  }
  if (port <= 0) {
    return IoError(fmt::format(
        "cannot listen on {} port {} (in use, or not an address of this "
        "machine)",
        options.host, options.port));
  }
  impl->port = port;

  ApiOptions api_options;
  api_options.token = options.token;
  api_options.open_run = options.open_run;
  if (options.token.empty()) {
    for (const char* h : {"127.0.0.1", "localhost", "[::1]"}) {
      api_options.allowed_hosts.push_back(fmt::format("{}:{}", h, port));
    }
    api_options.allowed_hosts.push_back(
        fmt::format("{}:{}", UrlHost(options.host), port));
  }
  impl->api = std::make_unique<Api>(std::move(runs), std::move(api_options));

  Api* api = impl->api.get();
  auto handler = [api](const httplib::Request& req, httplib::Response& res) {
    HttpRequest request;
    request.method = req.method;
    request.path = req.path;
    for (const auto& [k, v] : req.params) request.params.emplace_back(k, v);
    for (const auto& [k, v] : req.headers) request.headers.emplace_back(k, v);
    request.body = req.body;
    ApplyResponse(api->Handle(request), res);
  };
  for (const char* any : {".*"}) {
    http.Get(any, handler);
    http.Post(any, handler);
    http.Put(any, handler);
    http.Patch(any, handler);
    http.Delete(any, handler);
    http.Options(any, handler);
  }
  // httplib's own errors (413, 414, 400, unknown methods) become JSON too.
  // Our own error responses already carry a JSON body.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        ApplyResponse(Api::Error(res.status, MessageForStatus(res.status)),
                      res);
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        ApplyResponse(Api::Error(500, "internal error"), res);
      });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

int Server::port() const { return impl_->port; }

std::string Server::Url() const {
  std::string url =
      fmt::format("http://{}:{}/", UrlHost(impl_->options.host), impl_->port);
  if (!impl_->options.token.empty()) url += "?token=" + impl_->options.token;
  return url;
}

Status Server::Serve() {
  if (!impl_->http.listen_after_bind()) {
    return IoError("the HTTP server stopped with an error");
  }
  return Status::Ok();
}

void Server::Stop() { impl_->http.stop(); }

}  // namespace mi::server
