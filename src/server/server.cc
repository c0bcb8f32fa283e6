#include "server/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "base/strings.h"

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

using Clock = std::chrono::steady_clock;

const char* ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// A whole response for the receiving thread to send itself (refusals: a few
// hundred bytes, so one non-blocking send takes it), closing the connection.
std::string SerializeRefusal(const HttpResponse& r, bool head_only) {
  std::string out =
      fmt::format("HTTP/1.1 {} {}\r\n", r.status, ReasonPhrase(r.status));
  for (const auto& [k, v] : r.headers) out += fmt::format("{}: {}\r\n", k, v);
  std::string_view body = r.content();
  out += fmt::format(
      "Content-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
      r.content_type, body.size());
  if (!head_only) out.append(body);
  return out;
}

// `%XX` decoded (and '+' as a space in a query), as httplib decodes them;
// a malformed escape stays as it is.
std::string DecodeUrl(std::string_view s, bool plus_as_space) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 &&
        hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else if (plus_as_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

// The request line and headers of a head that ends with an empty line, as
// the API sees them once httplib has parsed them (for the early checks);
// false if it is not an HTTP request head.
bool ParseHead(std::string_view head, HttpRequest* out, size_t* content_length,
               bool* chunked) {
  *content_length = 0;
  *chunked = false;
  size_t eol = head.find("\r\n");
  if (eol == std::string_view::npos) return false;
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return false;
  out->method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (!line.substr(sp2 + 1).starts_with("HTTP/")) return false;
  size_t q = target.find('?');
  out->path = DecodeUrl(target.substr(0, q), false);
  if (q != std::string_view::npos) {
    for (std::string_view item : Split(target.substr(q + 1), '&')) {
      if (item.empty()) continue;
      size_t eq = item.find('=');
      out->params.emplace_back(DecodeUrl(item.substr(0, eq), true),
                               eq == std::string_view::npos
                                   ? std::string()
                                   : DecodeUrl(item.substr(eq + 1), true));
    }
  }
  std::string_view rest = head.substr(eol + 2);
  while (!rest.empty()) {
    size_t end = rest.find("\r\n");
    std::string_view h = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view()
                                         : rest.substr(end + 2);
    if (h.empty()) break;
    size_t colon = h.find(':');
    if (colon == std::string_view::npos) continue;  // httplib skips it too
    std::string_view name = h.substr(0, colon);
    std::string_view value = TrimLeft(h.substr(colon + 1), " \t");
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
      value.remove_suffix(1);
    }
    if (EqualsIgnoringCase(name, "Content-Length")) {
      std::optional<uint64_t> n = ParseInteger<uint64_t>(value);
      if (!n) return false;
      *content_length = *n;
    } else if (EqualsIgnoringCase(name, "Transfer-Encoding")) {
      *chunked = true;
    }
    out->headers.emplace_back(std::string(name), std::string(value));
  }
  return true;
}

// A connection while the server holds it.
struct Connection {
  int fd = -1;
  std::string peer;          // the client's address, for the per-client cap
  std::string buffer;        // received, not yet answered
  size_t request_bytes = 0;  // head and body of the request at the front
  size_t scanned = 0;        // the head's end is not before this offset
  Clock::time_point deadline;
  bool started = false;    // a byte of the next request has arrived
  bool lingering = false;  // refused: reading what is left, then closed
  size_t served = 0;       // requests answered on this connection
};

// httplib's view of a connection whose request the receiving thread has
// read whole: reads come from that buffer; writes go to the socket within
// the write deadline.
class BufferedStream : public httplib::Stream {
 public:
  BufferedStream(Connection& c, Clock::time_point write_deadline)
      : c_(c), write_deadline_(write_deadline) {}

  size_t consumed() const { return pos_; }

  bool is_readable() const override { return pos_ < c_.buffer.size(); }
  bool is_writable() const override { return WaitWritable(); }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, c_.buffer.size() - pos_);
    if (n == 0) return -1;  // past the request: nothing more was received
    std::memcpy(ptr, c_.buffer.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    size_t sent = 0;
    while (sent < size) {
      ssize_t n =
          ::send(c_.fd, ptr + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!WaitWritable()) return -1;
      } else {
        return -1;
      }
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(/*peer=*/true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    Address(/*peer=*/false, ip, port);
  }
  socket_t socket() const override { return c_.fd; }

 private:
  bool WaitWritable() const {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      write_deadline_ - Clock::now())
                      .count();
      if (left <= 0) return false;
      pollfd p{c_.fd, POLLOUT, 0};
      int r = ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      return r > 0 && (p.revents & POLLOUT) != 0 &&
             (p.revents & (POLLERR | POLLHUP)) == 0;
    }
  }
  void Address(bool peer, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    int r =
        peer ? ::getpeername(c_.fd, sa, &len) : ::getsockname(c_.fd, sa, &len);
    ip.clear();
    port = 0;
    if (r != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
      port = ntohs(in->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      auto* in = reinterpret_cast<sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof(text));
      port = ntohs(in->sin6_port);
    }
    ip = text;
  }

  Connection& c_;
  Clock::time_point write_deadline_;
  size_t pos_ = 0;
};

// httplib runs each accepted socket through its task queue: this one runs
// the task at once on the accepting thread, where it only hands the socket
// to the receiving thread (GatedHttpServer::process_and_close_socket).
class InlineQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

class Reception;

// cpp-httplib's server with its connection handling replaced: accepting,
// receiving and keep-alive are Reception's; httplib parses, routes and
// writes one request at a time on a worker.
class GatedHttpServer : public httplib::Server {
 public:
  void set_reception(Reception* reception) { reception_ = reception; }
  // One request of `stream`, answered.
  bool ProcessOne(httplib::Stream& stream, bool close_connection,
                  bool& connection_closed) {
    return process_request(stream, close_connection, connection_closed,
                           nullptr);
  }
  bool shutting_down() const { return svr_sock_ == INVALID_SOCKET; }
  // httplib listens with a backlog of 5: a burst of connections (a page's
  // first requests, a client reconnecting) would wait a second for SYN
  // retransmits. Listening again only raises the backlog.
  void RaiseBacklog() { ::listen(svr_sock_, SOMAXCONN); }

 private:
  bool process_and_close_socket(socket_t sock) override;
  Reception* reception_ = nullptr;
};

// Receives requests without workers: one thread polls every held
// connection until its request is whole (or its deadline passes), asks the
// API for an early refusal (token, Host), then queues the connection for a
// cheap or a heavy worker. Workers give kept-alive connections back.
class Reception {
 public:
  Reception(GatedHttpServer& http, Api& api, ServerLimits limits)
      : http_(http), api_(api), limits_(limits) {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  }
  ~Reception() {
    Stop();
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

  void Start() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (started_) return;
    started_ = true;
    receiver_ = std::thread([this] { ReceiveLoop(); });
    for (size_t i = 0; i < std::max<size_t>(1, limits_.workers); ++i) {
      workers_.emplace_back([this] { WorkLoop(cheap_); });
    }
    for (size_t i = 0; i < std::max<size_t>(1, limits_.heavy_workers); ++i) {
      workers_.emplace_back([this] { WorkLoop(heavy_); });
    }
  }

  // Closes every held connection once the running requests are answered.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!started_ || stopping_) return;
      stopping_ = true;
    }
    Wake();
    for (Queue* q : {&cheap_, &heavy_}) {
      std::lock_guard<std::mutex> lock(q->mutex);  // no wakeup is lost
      q->cv.notify_all();
    }
    if (receiver_.joinable()) receiver_.join();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    // Requests not started yet are dropped with their connections.
    for (Queue* q : {&cheap_, &heavy_}) {
      for (auto& c : q->items) Close(std::move(c));
      q->items.clear();
    }
    std::vector<std::unique_ptr<Connection>> left;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      left.swap(incoming_);
    }
    for (auto& c : left) Close(std::move(c));
  }

  // On the accepting thread: take the socket, or refuse it.
  void Accept(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
    // httplib writes a response's head and body separately: without this,
    // the body of a kept-alive connection's next response waits for the
    // client's delayed ACK (40 ms).
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->peer = PeerAddress(fd);
    // The first request's time runs from the connection.
    c->started = true;
    c->deadline =
        Clock::now() + std::chrono::milliseconds(limits_.request_deadline_ms);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_ || held_ >= limits_.max_connections) {
        ++stats_.refused_busy;
        ::close(fd);
        return;
      }
      size_t& mine = per_client_[c->peer];
      if (mine >= limits_.max_connections_per_client) {
        ++stats_.refused_busy;
        // Sent at once and closed: a client at its cap holds nothing more.
        HttpResponse busy = Api::Error(
            503, fmt::format("too many connections from {}; at most {} at "
                             "once",
                             c->peer, limits_.max_connections_per_client));
        busy.headers.emplace_back("Retry-After", "1");
        std::string bytes = SerializeRefusal(busy, false);
        [[maybe_unused]] ssize_t n =
            ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::close(fd);
        if (mine == 0) per_client_.erase(c->peer);
        return;
      }
      ++mine;
      ++held_;
      ++stats_.accepted;
      incoming_.push_back(std::move(c));
    }
    Wake();
  }

  ServerStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  struct Queue {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::unique_ptr<Connection>> items;
  };

  static std::string PeerAddress(int fd) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return "?";
    }
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text,
                sizeof(text));
    } else if (addr.ss_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr,
                text, sizeof(text));
    }
    return text;
  }

  void Wake() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  }

  void Close(std::unique_ptr<Connection> c) {
    ::shutdown(c->fd, SHUT_RDWR);
    ::close(c->fd);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = per_client_.find(c->peer);
    if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
    --held_;
  }

  // Sends a refusal and keeps reading (discarding) for a moment, so the
  // client reads the answer rather than a reset.
  void Refuse(Connection& c, const HttpResponse& r, bool head_only) {
    std::string bytes = SerializeRefusal(r, head_only);
    [[maybe_unused]] ssize_t n =
        ::send(c.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(c.fd, SHUT_WR);
    c.lingering = true;
    c.buffer.clear();
    c.deadline = Clock::now() + std::chrono::milliseconds(limits_.linger_ms);
  }

  enum class Next { kWait, kDispatched, kClose };

  // Looks at what the connection has received: wait for more, refuse, or
  // queue the whole request for a worker.
  Next Examine(std::unique_ptr<Connection>& c) {
    if (c->lingering || c->buffer.empty()) return Next::kWait;
    // Only the new bytes are searched (with the 3 before them), so a head
    // sent one byte per packet costs linear time, not quadratic.
    size_t head_end = c->buffer.find("\r\n\r\n", c->scanned);
    const size_t head_size =
        head_end == std::string::npos ? c->buffer.size() : head_end + 4;
    if (head_size > limits_.max_head_bytes) {
      Refuse(*c,
             Api::Error(431, fmt::format("request head over {} bytes",
                                         limits_.max_head_bytes)),
             false);
      return Next::kWait;
    }
    if (head_end == std::string::npos) {
      c->scanned = c->buffer.size() < 3 ? 0 : c->buffer.size() - 3;
      return Next::kWait;
    }
    head_end += 4;
    HttpRequest request;
    size_t content_length = 0;
    bool chunked = false;
    if (!ParseHead(std::string_view(c->buffer).substr(0, head_end), &request,
                   &content_length, &chunked)) {
      Refuse(*c,
             Api::Error(400,
                        "malformed request head; expected a request line "
                        "'METHOD /path HTTP/1.1' and 'Name: value' headers"),
             false);
      return Next::kWait;
    }
    bool head_only = request.method == "HEAD";
    // The token and Host first: a stranger's request is answered here,
    // before its body and before any worker.
    if (std::optional<HttpResponse> refusal = api_.Refusal(request)) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.refused_early;
      }
      Refuse(*c, *refusal, head_only);
      return Next::kWait;
    }
    if (chunked) {
      Refuse(*c, Api::Error(411, "send the request body with a Content-Length"),
             head_only);
      return Next::kWait;
    }
    if (content_length > kMaxBodyBytes) {
      Refuse(*c, Api::Error(413, MessageForStatus(413)), head_only);
      return Next::kWait;
    }
    if (c->buffer.size() < head_end + content_length) return Next::kWait;
    c->request_bytes = head_end + content_length;
    bool heavy = api_.IsHeavy(request);
    Queue& q = heavy ? heavy_ : cheap_;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++(heavy ? stats_.dispatched_heavy : stats_.dispatched);
    }
    {
      std::lock_guard<std::mutex> lock(q.mutex);
      q.items.push_back(std::move(c));
    }
    q.cv.notify_one();
    return Next::kDispatched;
  }

  void ReceiveLoop() {
    std::vector<std::unique_ptr<Connection>> held;
    std::vector<pollfd> fds;
    char chunk[16384];
    for (;;) {
      std::vector<std::unique_ptr<Connection>> arrived;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) break;
        arrived.swap(incoming_);
      }
      for (auto& c : arrived) {
        // A kept-alive connection may already hold its next request.
        if (Examine(c) != Next::kDispatched) held.push_back(std::move(c));
      }
      Clock::time_point now = Clock::now();
      Clock::time_point wake = now + std::chrono::seconds(60);
      fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
      for (auto& c : held) {
        fds.push_back(pollfd{c->fd, POLLIN, 0});
        wake = std::min(wake, c->deadline);
      }
      auto wait_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(wake - now)
              .count();
      int r = ::poll(fds.data(), fds.size(),
                     static_cast<int>(std::max<int64_t>(0, wait_ms + 1)));
      if (r < 0 && errno != EINTR) break;
      if (fds[0].revents != 0) {
        uint64_t v = 0;
        [[maybe_unused]] ssize_t n = ::read(wake_fd_, &v, sizeof(v));
      }
      now = Clock::now();
      std::vector<std::unique_ptr<Connection>> keep;
      for (size_t i = 0; i < held.size(); ++i) {
        std::unique_ptr<Connection>& c = held[i];
        bool closed = false;
        if (fds[i + 1].revents != 0) {
          // Read what is there (bounded: a head over the limit is refused
          // by Examine before more is read).
          for (;;) {
            ssize_t n = ::recv(c->fd, chunk, sizeof(chunk), MSG_DONTWAIT);
            if (n > 0) {
              if (!c->lingering) {
                if (!c->started) {
                  c->started = true;
                  c->deadline = now + std::chrono::milliseconds(
                                          limits_.request_deadline_ms);
                }
                c->buffer.append(chunk, static_cast<size_t>(n));
                if (c->buffer.size() > limits_.max_head_bytes + kMaxBodyBytes) {
                  break;
                }
              }
              continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
              closed = true;
            }
            break;
          }
        }
        if (closed) {
          Close(std::move(c));
          continue;
        }
        if (Examine(c) == Next::kDispatched) continue;
        if (now >= c->deadline) {
          if (c->lingering || c->buffer.empty()) {
            // Done lingering, or an idle kept-alive connection.
            Close(std::move(c));
            continue;
          }
          {
            std::lock_guard<std::mutex> lock(mutex_);
            ++stats_.timed_out;
          }
          Refuse(*c,
                 Api::Error(408, fmt::format("the request did not arrive "
                                             "whole within {} ms",
                                             limits_.request_deadline_ms)),
                 false);
        }
        keep.push_back(std::move(c));
      }
      held.swap(keep);
    }
    for (auto& c : held) Close(std::move(c));
  }

  void WorkLoop(Queue& q) {
    for (;;) {
      std::unique_ptr<Connection> c;
      {
        std::unique_lock<std::mutex> lock(q.mutex);
        q.cv.wait(lock, [&] { return !q.items.empty() || stopping_.load(); });
        if (stopping_.load()) return;
        c = std::move(q.items.front());
        q.items.pop_front();
      }
      Serve(std::move(c));
    }
  }

  // One whole request answered by httplib (and the API); the connection
  // goes back to the receiving thread when it stays open.
  void Serve(std::unique_ptr<Connection> c) {
    bool close_connection =
        c->served + 1 >= limits_.keep_alive_max_requests || stopping_.load();
    bool connection_closed = false;
    BufferedStream stream(*c, Clock::now() + std::chrono::milliseconds(
                                                 limits_.write_deadline_ms));
    bool ok = http_.ProcessOne(stream, close_connection, connection_closed);
    ++c->served;
    // httplib read exactly the request the receiving thread found, or the
    // two disagree about where it ends: then no next request is trusted.
    if (!ok || connection_closed || close_connection ||
        stream.consumed() != c->request_bytes || http_.shutting_down()) {
      Close(std::move(c));
      return;
    }
    c->buffer.erase(0, c->request_bytes);
    c->request_bytes = 0;
    c->scanned = 0;
    c->started = !c->buffer.empty();
    c->deadline = Clock::now() + std::chrono::milliseconds(
                                     c->started ? limits_.request_deadline_ms
                                                : limits_.keep_alive_idle_ms);
    {
      // After Stop() the list is closed once the workers have ended.
      std::lock_guard<std::mutex> lock(mutex_);
      incoming_.push_back(std::move(c));
    }
    Wake();
  }

  GatedHttpServer& http_;
  Api& api_;
  const ServerLimits limits_;
  int wake_fd_ = -1;

  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;  // guards everything below
  bool started_ = false;
  std::vector<std::unique_ptr<Connection>> incoming_;
  std::map<std::string, size_t> per_client_;
  size_t held_ = 0;
  ServerStats stats_;

  std::thread receiver_;
  std::vector<std::thread> workers_;
  Queue cheap_;
  Queue heavy_;
};

bool GatedHttpServer::process_and_close_socket(socket_t sock) {
  reception_->Accept(sock);
  return true;
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
  GatedHttpServer http;
  std::unique_ptr<Api> api;
  // Declared last: stopped and destroyed before the API and httplib.
  std::unique_ptr<Reception> reception;
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

StatusOr<std::unique_ptr<Server>> Server::Bind(const ServerOptions& options,
                                               std::vector<ServedRun> runs) {
  MI_RETURN_IF_ERROR(CheckAccessOptions(options));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  GatedHttpServer& http = impl->http;
  // Accepted sockets go straight to Reception (no httplib thread pool);
  // its receiving thread and workers replace httplib's per-connection
  // reads, timeouts and keep-alive.
  http.new_task_queue = [] { return new InlineQueue(); };
  http.set_payload_max_length(kMaxBodyBytes);
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
  http.RaiseBacklog();

  ApiOptions api_options;
  api_options.token = options.token;
  api_options.open_run = options.open_run;
  api_options.cluster = options.cluster;
  api_options.history = options.history;
  api_options.session_file = options.session_file;
  api_options.rerun = options.rerun;
  if (options.token.empty()) {
    for (const char* h : {"127.0.0.1", "localhost", "[::1]"}) {
      api_options.allowed_hosts.push_back(fmt::format("{}:{}", h, port));
    }
    api_options.allowed_hosts.push_back(
        fmt::format("{}:{}", UrlHost(options.host), port));
  }
  impl->api = std::make_unique<Api>(std::move(runs), std::move(api_options));
  impl->reception =
      std::make_unique<Reception>(http, *impl->api, options.limits);
  http.set_reception(impl->reception.get());

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
  impl_->reception->Start();
  bool ok = impl_->http.listen_after_bind();
  impl_->reception->Stop();
  if (!ok) return IoError("the HTTP server stopped with an error");
  return Status::Ok();
}

void Server::Stop() { impl_->http.stop(); }

ServerStats Server::stats() const { return impl_->reception->stats(); }

Api& Server::api() { return *impl_->api; }

}  // namespace mi::server
