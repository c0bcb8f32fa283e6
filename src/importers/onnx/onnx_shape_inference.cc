#include "importers/onnx/onnx_shape_inference.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "importers/onnx/onnx_convert_util.h"
#include "importers/onnx/onnx_skeleton.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace mi::importers::onnx_import {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;

// No schema has this op type (':' is not allowed in one), so libonnx skips
// the node as it skips ops it does not know.
constexpr std::string_view kSkippedOpType = "model_inspector:skipped";

bool IsDefaultDomain(std::string_view domain) {
  return domain.empty() || domain == "ai.onnx";
}

// Ops whose inference divides by strides and multiplies by dilations and
// kernel_shape (libonnx's convPoolShapeInference and its variants).
bool IsConvOrPool(std::string_view op) {
  static constexpr std::string_view kOps[] = {
      "Conv",    "ConvTranspose", "ConvInteger", "QLinearConv",
      "MaxPool", "AveragePool",   "LpPool",      "MaxUnpool"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// The first value of an INTS attribute below `minimum`, as a reason.
std::string CheckInts(const AttributeProto& attr, int64_t minimum) {
  for (int i = 0; i < attr.ints_size(); ++i) {
    if (attr.ints(i) < minimum) {
      return fmt::format("attribute {}[{}] is {}; expected an integer >= {}",
                         ShortString(attr.name()), i, attr.ints(i), minimum);
    }
  }
  return {};
}

std::string ReasonUnfit(const NodeProto& node) {
  if (!IsDefaultDomain(node.domain())) return {};
  const std::string& op = node.op_type();
  for (const AttributeProto& attr : node.attribute()) {
    if (IsConvOrPool(op) &&
        (attr.name() == "strides" || attr.name() == "dilations" ||
         attr.name() == "kernel_shape")) {
      std::string reason = CheckInts(attr, 1);
      if (!reason.empty()) return reason;
    }
    if (op == "GatherND" && attr.name() == "batch_dims" && attr.i() < 0) {
      return fmt::format("attribute batch_dims is {}; expected an integer >= 0",
                         attr.i());
    }
  }
  return {};
}

template <typename Nodes>
void FindInNodes(const Nodes& nodes, int depth,
                 std::vector<NodeUnfitForInference>* out);

void FindInGraph(const GraphProto& graph, int depth,
                 std::vector<NodeUnfitForInference>* out) {
  if (depth > kMaxSubgraphDepth) return;
  FindInNodes(graph.node(), depth, out);
}

template <typename Nodes>
void FindInNodes(const Nodes& nodes, int depth,
                 std::vector<NodeUnfitForInference>* out) {
  for (const NodeProto& node : nodes) {
    std::string reason = ReasonUnfit(node);
    if (!reason.empty()) out->push_back({&node, std::move(reason)});
    for (const AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) FindInGraph(attr.g(), depth + 1, out);
      for (const GraphProto& body : attr.graphs()) {
        FindInGraph(body, depth + 1, out);
      }
    }
  }
}

// Model-local functions that call themselves, directly or through others:
// libonnx expands every call while inferring, without limit, until the
// stack overflows. A depth-first walk of the call graph finds the calls that
// close a cycle (back edges); leaving them out breaks every cycle.
using FunctionKey = std::pair<std::string_view, std::string_view>;

struct FunctionKeyHash {
  size_t operator()(const FunctionKey& key) const {
    return std::hash<std::string_view>()(key.first) * 31 +
           std::hash<std::string_view>()(key.second);
  }
};

void CollectCalls(
    const google::protobuf::RepeatedPtrField<NodeProto>& nodes, int depth,
    const std::unordered_map<FunctionKey, size_t, FunctionKeyHash>& index,
    std::vector<std::pair<const NodeProto*, size_t>>* calls) {
  if (depth > kMaxSubgraphDepth) return;
  for (const NodeProto& node : nodes) {
    auto it = index.find({node.domain(), node.op_type()});
    if (it != index.end()) calls->emplace_back(&node, it->second);
    for (const AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) CollectCalls(attr.g().node(), depth + 1, index, calls);
      for (const GraphProto& body : attr.graphs()) {
        CollectCalls(body.node(), depth + 1, index, calls);
      }
    }
  }
}

void FindRecursiveCalls(const ModelProto& model,
                        std::vector<NodeUnfitForInference>* out) {
  const int count = model.functions_size();
  if (count == 0) return;
  std::unordered_map<FunctionKey, size_t, FunctionKeyHash> index;
  for (int f = 0; f < count; ++f) {
    const ::onnx::FunctionProto& function = model.functions(f);
    index.emplace(FunctionKey{function.domain(), function.name()},
                  static_cast<size_t>(f));
  }
  std::vector<std::vector<std::pair<const NodeProto*, size_t>>> calls(
      static_cast<size_t>(count));
  for (int f = 0; f < count; ++f) {
    CollectCalls(model.functions(f).node(), 0, index,
                 &calls[static_cast<size_t>(f)]);
  }
  enum : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<uint8_t> state(static_cast<size_t>(count), kUnseen);
  std::vector<std::pair<size_t, size_t>> stack;  // (function, next call)
  for (size_t root = 0; root < state.size(); ++root) {
    if (state[root] != kUnseen) continue;
    state[root] = kOnPath;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [function, next] = stack.back();
      if (next == calls[function].size()) {
        state[function] = kDone;
        stack.pop_back();
        continue;
      }
      auto [node, callee] = calls[function][next++];
      if (state[callee] == kOnPath) {
        const ::onnx::FunctionProto& target =
            model.functions(static_cast<int>(callee));
        out->push_back(
            {node, fmt::format("calls function '{}:{}', which is already "
                               "being called (recursion); expected "
                               "functions that do not call themselves",
                               ShortString(target.domain()),
                               ShortString(target.name()))});
      } else if (state[callee] == kUnseen) {
        state[callee] = kOnPath;
        stack.emplace_back(callee, 0);
      }
    }
  }
}

// Every graph of the model in one fixed order (pre-order: a graph, then the
// bodies of its nodes' attributes), the same in the parent and the child.
void CollectGraphs(GraphProto* graph, int depth,
                   std::vector<GraphProto*>* out) {
  if (depth > kMaxSubgraphDepth) return;
  out->push_back(graph);
  for (NodeProto& node : *graph->mutable_node()) {
    for (AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) CollectGraphs(attr.mutable_g(), depth + 1, out);
      for (GraphProto& body : *attr.mutable_graphs()) {
        CollectGraphs(&body, depth + 1, out);
      }
    }
  }
}

// The answer on the pipe: one status byte, then for kAnswerInferred one
// frame per graph (8-byte little-endian length, a GraphProto holding only
// input, output and value_info), for kAnswerFailed libonnx's message.
constexpr char kAnswerInferred = 'I';
constexpr char kAnswerFailed = 'F';

void AppendFrame(const GraphProto& graph, std::string* out) {
  GraphProto carrier;
  *carrier.mutable_input() = graph.input();
  *carrier.mutable_output() = graph.output();
  *carrier.mutable_value_info() = graph.value_info();
  std::string bytes = carrier.SerializeAsString();
  uint64_t size = bytes.size();
  for (int i = 0; i < 8; ++i) {
    out->push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  }
  out->append(bytes);
}

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the parent gave up on us
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// The child: only this thread exists here. It touches the model (its own
// copy-on-write copy), libonnx's schema registry (built by the parent before
// the fork, so no lock of its lazy initialisation can be held) and malloc
// (glibc's is fork-safe), writes its answer and leaves with _exit: no atexit
// handlers, no destructors, no stdio flush of the parent's buffers.
[[noreturn]] void RunChild(ModelProto& model,
                           const std::vector<const NodeProto*>& skip,
                           InferenceChildFault fault, int fd) {
  // A crash must end this process with its signal (not a handler of the
  // parent's, nor a sanitizer's report) and write no core file.
  sigset_t unblock;
  sigemptyset(&unblock);
  for (int sig : {SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT, SIGPIPE}) {
    ::signal(sig, SIG_DFL);
    sigaddset(&unblock, sig);
  }
  ::pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Other descriptors (sockets of the server, the pipes of another open
  // running at the same time) are not ours to keep open.
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);

  if (fault == InferenceChildFault::kSegfault) ::raise(SIGSEGV);
  if (fault == InferenceChildFault::kHang) {
    for (;;) ::pause();
  }

  for (const NodeProto* node : skip) {
    // The parent's pointers into `model`, which is not const: this edits
    // the child's copy only.
    const_cast<NodeProto*>(node)->set_op_type(std::string(kSkippedOpType));
  }
  std::string answer;
  try {
    ::onnx::shape_inference::InferShapes(
        model, ::onnx::OpSchemaRegistry::Instance(),
        ::onnx::ShapeInferenceOptions(/*check_type_val=*/false,
                                      /*strict_mode_val=*/0,
                                      /*data_prop_val=*/true));
    answer.push_back(kAnswerInferred);
    std::vector<GraphProto*> graphs;
    CollectGraphs(model.mutable_graph(), 0, &graphs);
    for (const GraphProto* graph : graphs) AppendFrame(*graph, &answer);
  } catch (const std::exception& e) {
    answer.assign(1, kAnswerFailed);
    answer += e.what();
  } catch (...) {
    answer.assign(1, kAnswerFailed);
    answer += "non-standard exception";
  }
  WriteAll(fd, answer);
  // The parent reads the end of the answer now, not after this process's
  // memory is unmapped.
  ::close(fd);
  ::_exit(0);
}

std::string SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGFPE:
      return "SIGFPE";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGKILL:
      return "SIGKILL";
    default:
      return fmt::format("signal {}", sig);
  }
}

// Reads the child's answer until end of file or the deadline; false when
// the deadline passed.
bool ReadAnswer(int fd, std::chrono::milliseconds deadline,
                std::string* answer) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point end = Clock::now() + deadline;
  char chunk[1 << 16];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(
        &p, 1,
        static_cast<int>(std::min<int64_t>(left.count() + 1, 1'000'000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return true;  // treated as end of answer; the status tells the rest
    }
    if (ready == 0) continue;
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n > 0) {
      answer->append(chunk, static_cast<size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      return true;
    }
  }
}

// The answer's frames, one GraphProto per graph of the model, parsed onto
// the model's arena (so that ApplyFrames moves them in without a copy); a
// problem when they do not match the model.
class Carriers {
 public:
  explicit Carriers(google::protobuf::Arena* arena) : arena_(arena) {}
  GraphProto* Add() {
    if (arena_ != nullptr) {
      return all_.emplace_back(
          google::protobuf::Arena::CreateMessage<GraphProto>(arena_));
    }
    owned_.push_back(std::make_unique<GraphProto>());
    return all_.emplace_back(owned_.back().get());
  }
  const std::vector<GraphProto*>& all() const { return all_; }

 private:
  google::protobuf::Arena* arena_;
  std::vector<GraphProto*> all_;
  std::vector<std::unique_ptr<GraphProto>> owned_;  // without an arena
};

std::string DecodeFrames(std::string_view frames,
                         const std::vector<GraphProto*>& graphs,
                         Carriers* carriers) {
  while (!frames.empty()) {
    if (frames.size() < 8) return "answered with a truncated frame";
    uint64_t size = 0;
    for (int i = 0; i < 8; ++i) {
      size |= uint64_t{static_cast<uint8_t>(frames[i])} << (8 * i);
    }
    frames.remove_prefix(8);
    if (size > frames.size() || size > static_cast<uint64_t>(INT_MAX)) {
      return "answered with a truncated frame";
    }
    if (carriers->all().size() == graphs.size()) {
      return fmt::format("answered for more graphs than the model's {}",
                         graphs.size());
    }
    GraphProto* carrier = carriers->Add();
    if (!carrier->ParseFromArray(frames.data(), static_cast<int>(size))) {
      return "answered with an unreadable frame";
    }
    frames.remove_prefix(size);
  }
  if (carriers->all().size() != graphs.size()) {
    return fmt::format("answered for {} graphs; the model has {}",
                       carriers->all().size(), graphs.size());
  }
  for (size_t g = 0; g < graphs.size(); ++g) {
    const GraphProto& c = *carriers->all()[g];
    if (c.input_size() != graphs[g]->input_size() ||
        c.output_size() != graphs[g]->output_size()) {
      return "answered with other graph inputs or outputs than the model's";
    }
  }
  return {};
}

// Moves the inferred types in (a swap of pointers on the same arena).
void ApplyFrames(const Carriers& carriers,
                 const std::vector<GraphProto*>& graphs) {
  for (size_t g = 0; g < graphs.size(); ++g) {
    GraphProto& graph = *graphs[g];
    GraphProto& c = *carriers.all()[g];
    for (int i = 0; i < c.input_size(); ++i) {
      graph.mutable_input(i)->mutable_type()->Swap(
          c.mutable_input(i)->mutable_type());
    }
    for (int i = 0; i < c.output_size(); ++i) {
      graph.mutable_output(i)->mutable_type()->Swap(
          c.mutable_output(i)->mutable_type());
    }
    graph.mutable_value_info()->Swap(c.mutable_value_info());
  }
}

}  // namespace

std::vector<NodeUnfitForInference> FindNodesUnfitForInference(
    const ModelProto& model) {
  std::vector<NodeUnfitForInference> out;
  FindInGraph(model.graph(), 0, &out);
  for (const ::onnx::FunctionProto& function : model.functions()) {
    FindInNodes(function.node(), 1, &out);
  }
  FindRecursiveCalls(model, &out);
  return out;
}

namespace {

// One child: infers, and writes the answer into `model` when `apply`.
IsolatedInferenceResult RunOnce(ModelProto& model,
                                const std::vector<const NodeProto*>& skip,
                                const IsolatedInferenceOptions& options,
                                bool apply) {
  IsolatedInferenceResult result;
  // Builds the schema registry here, before the fork (see RunChild).
  (void)::onnx::OpSchemaRegistry::Schema("Conv", 11, "");

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.problem =
        fmt::format("could not start (pipe: {})", std::strerror(errno));
    return result;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    result.problem =
        fmt::format("could not start (fork: {})", std::strerror(error));
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(model, skip, options.fault_for_testing, fds[1]);
  }
  ::close(fds[1]);
  std::string answer;
  bool in_time = ReadAnswer(fds[0], options.deadline, &answer);
  ::close(fds[0]);
  if (!in_time) ::kill(pid, SIGKILL);
  // Decoded while the child's exit unmaps its copy of our memory (for a
  // process holding GBs that takes as long as the fork).
  std::vector<GraphProto*> graphs;
  Carriers carriers(model.GetArena());
  std::string decode_problem = "ended without an answer";
  if (in_time && !answer.empty() && answer[0] == kAnswerInferred) {
    CollectGraphs(model.mutable_graph(), 0, &graphs);
    decode_problem =
        DecodeFrames(std::string_view(answer).substr(1), graphs, &carriers);
  }
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);

  if (!in_time) {
    auto ms = options.deadline.count();
    result.problem =
        ms % 1000 == 0
            ? fmt::format("did not finish within {} s and was stopped",
                          ms / 1000)
            : fmt::format("did not finish within {} ms and was stopped", ms);
    return result;
  }
  // waited < 0: someone else reaped the child (SIGCHLD ignored); the
  // answer alone then tells whether it finished.
  if (waited == pid && WIFSIGNALED(status)) {
    result.problem = fmt::format("crashed ({})", SignalName(WTERMSIG(status)));
    return result;
  }
  if (waited == pid && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    result.problem =
        fmt::format("crashed (exit status {})", WEXITSTATUS(status));
    return result;
  }
  if (!answer.empty() && answer[0] == kAnswerFailed) {
    std::string message = answer.substr(1);
    if (message.empty()) message = "unknown error";
    result.problem = fmt::format("failed: {}", message);
    return result;
  }
  if (!answer.empty() && answer[0] != kAnswerInferred) {
    result.problem = "answered with an unknown status";
    return result;
  }
  if (!decode_problem.empty()) {
    result.problem = std::move(decode_problem);
    return result;
  }
  if (!apply) return result;
  ApplyFrames(carriers, graphs);
  result.applied = true;
  return result;
}

bool Crashed(const IsolatedInferenceResult& r) {
  return r.problem.starts_with("crashed");
}

// The first main-graph node (file order, which is the order libonnx infers
// in) whose inference crashes: a bisection over n, each step a child with
// the nodes from n on left out. nullptr when the crash does not go away
// with every node left out (it is elsewhere: a function, or the fault is
// not in a node at all), or the steps run past `budget`.
const NodeProto* LocateCrash(ModelProto& model,
                             std::vector<const NodeProto*> skip,
                             const IsolatedInferenceOptions& options,
                             std::chrono::steady_clock::time_point budget) {
  const auto& nodes = model.graph().node();
  const size_t base = skip.size();
  auto crashes_with_first = [&](int n) {
    skip.resize(base);
    for (int i = n; i < nodes.size(); ++i) skip.push_back(&nodes[i]);
    // A step that hangs ends with the budget, not a full deadline later.
    IsolatedInferenceOptions step = options;
    step.deadline =
        std::min(options.deadline,
                 std::max(std::chrono::milliseconds(1),
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                              budget - std::chrono::steady_clock::now())));
    return Crashed(RunOnce(model, skip, step, /*apply=*/false));
  };
  if (nodes.empty() || crashes_with_first(0)) return nullptr;
  int good = 0;            // the first `good` nodes infer
  int bad = nodes.size();  // the first `bad` nodes crash
  while (bad - good > 1) {
    if (std::chrono::steady_clock::now() > budget) return nullptr;
    int mid = good + (bad - good) / 2;
    (crashes_with_first(mid) ? bad : good) = mid;
  }
  return &nodes[bad - 1];
}

}  // namespace

IsolatedInferenceResult InferShapesIsolated(
    ModelProto& model, const std::vector<const NodeProto*>& skip,
    const IsolatedInferenceOptions& options) {
  IsolatedInferenceResult result = RunOnce(model, skip, options, true);
  if (!Crashed(result) || options.max_crashing_nodes_left_out == 0) {
    return result;
  }
  // Find the node it crashed in, leave it out, infer the rest again.
  const auto budget = std::chrono::steady_clock::now() + options.locate_budget;
  std::vector<const NodeProto*> left_out = skip;
  while (Crashed(result) &&
         result.crashed_in.size() < options.max_crashing_nodes_left_out) {
    const NodeProto* node = LocateCrash(model, left_out, options, budget);
    if (node == nullptr) break;
    std::string crash = result.problem;
    std::vector<CrashedNode> crashed_in = std::move(result.crashed_in);
    crashed_in.push_back({node, crash});
    left_out.push_back(node);
    result = RunOnce(model, left_out, options, true);
    result.crashed_in = std::move(crashed_in);
  }
  return result;
}

}  // namespace mi::importers::onnx_import
