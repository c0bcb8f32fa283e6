// The HTTP layer on a real socket: a Server on an ephemeral loopback port,
// driven by raw connections (slow clients, caps, early refusals, keep-alive,
// heavy routes on their own workers). No assertion depends on time: slow
// clients are connections that simply have not sent everything yet, and
// every read has a generous timeout only as a guard against a hang.

#include "server/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "model_inspector/session.h"

namespace mi::server {
namespace {

constexpr char kToken[] = "test-token-123";
const std::string kRunDir =
    std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18/ort_all";

// A served Server on 127.0.0.1:0, stopped and joined at the end.
class Running {
 public:
  explicit Running(ServerLimits limits, bool with_run = false) {
    ServerOptions options;
    options.token = kToken;
    options.limits = limits;
    std::vector<ServedRun> runs;
    if (with_run) {
      OpenOptions open;
      open.paths = {kRunDir};
      auto session = Session::Open(open);
      EXPECT_TRUE(session.ok()) << session.status().ToString();
      runs.push_back({"ort_all", {kRunDir}, std::move(session).value()});
    }
    auto server = Server::Bind(options, std::move(runs));
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    thread_ = std::thread([this] { EXPECT_TRUE(server_->Serve().ok()); });
  }
  ~Running() {
    server_->Stop();
    thread_.join();
  }
  Server& server() { return *server_; }
  int port() const { return server_->port(); }

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

// A client socket connected to the server, with a 60 s guard on reads.
int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  timeval guard{60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

void Send(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

struct Reply {
  int status = 0;
  std::string head;
  std::string body;
};

// One response: the head, then Content-Length bytes of body; `pending`
// keeps what was read past it (a pipelined next response).
Reply ReadReply(int fd, std::string* pending) {
  std::string& buf = *pending;
  char chunk[4096];
  Reply r;
  size_t head_end = std::string::npos;
  size_t length = 0;
  for (;;) {
    if (head_end == std::string::npos) {
      head_end = buf.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        r.head = buf.substr(0, head_end);
        size_t at = r.head.find("Content-Length: ");
        if (at != std::string::npos) {
          length = std::stoul(r.head.substr(at + 16));
        }
        head_end += 4;
      }
    }
    if (head_end != std::string::npos && buf.size() >= head_end + length) {
      r.body = buf.substr(head_end, length);
      buf.erase(0, head_end + length);
      break;
    }
    ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) break;  // closed, or the guard expired: status stays 0
    buf.append(chunk, static_cast<size_t>(n));
  }
  if (r.head.starts_with("HTTP/1.1 ")) r.status = std::stoi(r.head.substr(9));
  return r;
}

Reply Request(int port, const std::string& target,
              const std::string& token = kToken) {
  int fd = Connect(port);
  Send(fd, "GET " + target + " HTTP/1.1\r\nHost: x\r\nX-MI-Token: " + token +
               "\r\nConnection: close\r\n\r\n");
  std::string pending;
  Reply r = ReadReply(fd, &pending);
  ::close(fd);
  return r;
}

// Whether the server has sent anything (or closed) on the connection yet.
bool Answered(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

TEST(ServerTest, SlowClientsDoNotHoldWorkers) {
  ServerLimits limits;
  limits.workers = 2;                      // fewer than the slow clients
  limits.request_deadline_ms = 3'600'000;  // none of them times out here
  Running s(limits);
  // Ten clients that sent half a request head and then nothing: each used
  // to hold one of the workers until its read timed out.
  std::vector<int> slow;
  for (int i = 0; i < 10; ++i) {
    slow.push_back(Connect(s.port()));
    Send(slow.back(), std::string("GET /api/runs HTTP/1.1\r\nHost: x\r\n") +
                          "X-MI-Token: " + kToken + "\r\n");
  }
  Reply r = Request(s.port(), "/api/runs");
  EXPECT_EQ(r.status, 200) << r.head;
  EXPECT_NE(r.body.find("\"runs\""), std::string::npos) << r.body;
  // The normal request was answered while every slow one is still open and
  // unanswered: none of them took a worker.
  for (int fd : slow) EXPECT_FALSE(Answered(fd));
  EXPECT_EQ(s.server().stats().dispatched, 1u);
  // A slow client that finishes its request is served as usual.
  Send(slow[0], "\r\n");
  std::string pending;
  EXPECT_EQ(ReadReply(slow[0], &pending).status, 200);
  for (int fd : slow) ::close(fd);
}

TEST(ServerTest, RequestMustArriveWholeWithinTheDeadline) {
  ServerLimits limits;
  limits.request_deadline_ms = 200;
  Running s(limits);
  int fd = Connect(s.port());
  Send(fd, "GET /api/runs HTTP/1.1\r\n");
  std::string pending;
  Reply r = ReadReply(fd, &pending);  // waits for the server's deadline
  EXPECT_EQ(r.status, 408) << r.head;
  EXPECT_NE(r.body.find("\"status\":408"), std::string::npos) << r.body;
  ::close(fd);
  EXPECT_EQ(s.server().stats().timed_out, 1u);
  EXPECT_EQ(s.server().stats().dispatched, 0u);
}

TEST(ServerTest, WrongTokenIsRefusedBeforeAWorker) {
  Running s(ServerLimits{});
  Reply bad = Request(s.port(), "/api/runs", "wrong-token");
  EXPECT_EQ(bad.status, 403) << bad.head;
  EXPECT_NE(bad.body.find("access token"), std::string::npos) << bad.body;
  EXPECT_NE(bad.head.find("Connection: close"), std::string::npos);
  Reply in_query = Request(s.port(), "/api/runs?token=nope", "");
  EXPECT_EQ(in_query.status, 403);
  ServerStats stats = s.server().stats();
  EXPECT_EQ(stats.refused_early, 2u);
  EXPECT_EQ(stats.dispatched + stats.dispatched_heavy, 0u);
  // The token in the query (percent-encoded or not) or a cookie passes.
  EXPECT_EQ(Request(s.port(), "/api/runs?token=test%2Dtoken-123", "").status,
            200);
  int fd = Connect(s.port());
  Send(fd, std::string("GET /api/runs HTTP/1.1\r\nHost: x\r\nCookie: a=1; ") +
               "mi_token=" + kToken + "\r\nConnection: close\r\n\r\n");
  std::string pending;
  EXPECT_EQ(ReadReply(fd, &pending).status, 200);
  ::close(fd);
  EXPECT_EQ(s.server().stats().dispatched, 2u);
}

TEST(ServerTest, ConnectionsPerClientAreCapped) {
  ServerLimits limits;
  limits.max_connections_per_client = 3;
  Running s(limits);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(Connect(s.port()));
  // Accepted in order: the fourth is over the cap.
  int over = Connect(s.port());
  std::string pending;
  Reply r = ReadReply(over, &pending);
  EXPECT_EQ(r.status, 503) << r.head;
  EXPECT_NE(r.head.find("Retry-After: 1"), std::string::npos);
  EXPECT_NE(r.body.find("too many connections"), std::string::npos);
  ::close(over);
  EXPECT_EQ(s.server().stats().refused_busy, 1u);
  // The held ones still work.
  Send(held[0], std::string("GET /api/runs HTTP/1.1\r\nHost: x\r\n") +
                    "X-MI-Token: " + kToken + "\r\n\r\n");
  EXPECT_EQ(ReadReply(held[0], &pending).status, 200);
  for (int fd : held) ::close(fd);
}

TEST(ServerTest, KeepAliveAndPipelinedRequests) {
  Running s(ServerLimits{});
  int fd = Connect(s.port());
  std::string get = std::string("GET /api/runs HTTP/1.1\r\nHost: x\r\n") +
                    "X-MI-Token: " + kToken + "\r\n\r\n";
  std::string pending;
  Send(fd, get);
  EXPECT_EQ(ReadReply(fd, &pending).status, 200);
  // Two requests in one write: both answered, in order.
  Send(fd, get + "GET /api/nothing HTTP/1.1\r\nHost: x\r\nX-MI-Token: " +
               kToken + "\r\n\r\n");
  EXPECT_EQ(ReadReply(fd, &pending).status, 200);
  EXPECT_EQ(ReadReply(fd, &pending).status, 404);
  ::close(fd);
  EXPECT_EQ(s.server().stats().accepted, 1u);
  EXPECT_EQ(s.server().stats().dispatched, 3u);
}

TEST(ServerTest, OversizedHeadAndBodyAreRefused) {
  ServerLimits limits;
  limits.max_head_bytes = 1024;
  Running s(limits);
  int fd = Connect(s.port());
  Send(fd, "GET /api/runs HTTP/1.1\r\nX-Pad: " + std::string(2000, 'a'));
  std::string pending;
  EXPECT_EQ(ReadReply(fd, &pending).status, 431);
  ::close(fd);
  fd = Connect(s.port());
  Send(fd, std::string("POST /api/runs/0/pair HTTP/1.1\r\nHost: x\r\n") +
               "X-MI-Token: " + kToken + "\r\nContent-Length: " +
               std::to_string(kMaxBodyBytes + 1) + "\r\n\r\n");
  pending.clear();
  EXPECT_EQ(ReadReply(fd, &pending).status, 413);
  ::close(fd);
  EXPECT_EQ(s.server().stats().dispatched, 0u);
}

TEST(ServerTest, HeavyRoutesRunOnHeavyWorkersUntilCached) {
  Running s(ServerLimits{}, /*with_run=*/true);
  Reply first = Request(s.port(), "/api/runs/0/summary?top=50");
  EXPECT_EQ(first.status, 200);
  EXPECT_NE(first.head.find("X-Cache: miss"), std::string::npos);
  EXPECT_EQ(s.server().stats().dispatched_heavy, 1u);
  // top=50 is the default: the same result, from the cache, on a cheap
  // worker.
  Reply second = Request(s.port(), "/api/runs/0/summary");
  EXPECT_EQ(second.status, 200);
  EXPECT_NE(second.head.find("X-Cache: hit"), std::string::npos);
  EXPECT_EQ(second.body, first.body);
  EXPECT_EQ(s.server().stats().dispatched_heavy, 1u);
  EXPECT_EQ(s.server().stats().dispatched, 1u);
  EXPECT_EQ(s.server().api().heavy_computations(), 1u);
  // Cheap routes are never heavy.
  EXPECT_EQ(Request(s.port(), "/api/runs/0/timeline").status, 200);
  EXPECT_EQ(s.server().stats().dispatched_heavy, 1u);
}

}  // namespace
}  // namespace mi::server
