#include "importers/onnx/onnx_convert_util.h"
#include <cstring>
#include <vector>

#include <algorithm>
#include <vector>

namespace mi::importers::onnx_import {

void CheckGraphCycles(
    const Model& model_, GraphId graph,
    const std::function<SourceLocation(size_t)>& node_location,
    const ReportFn& report) {
  std::span<const NodeId> nodes = model_.graph_nodes(graph);
  if (nodes.empty()) return;
  // This graph's nodes were added consecutively (bodies come later).
  const uint32_t first = nodes.front().value();
  const size_t n = nodes.size();
  auto local = [&](NodeId id) -> std::optional<size_t> {
    if (!id.valid() || id.value() < first || id.value() - first >= n) {
      return std::nullopt;
    }
    return id.value() - first;
  };
  // Predecessor lists (CSR) and in-degrees over data edges in this graph.
  std::vector<uint32_t> pred_begin(n + 1, 0);
  std::vector<uint32_t> preds;
  std::vector<uint32_t> succ_count(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (ValueId v : model_.node_inputs(nodes[i])) {
      if (!v.valid()) continue;
      if (auto p = local(model_.value_producer(v))) {
        preds.push_back(static_cast<uint32_t>(*p));
        ++succ_count[*p];
      }
    }
    pred_begin[i + 1] = static_cast<uint32_t>(preds.size());
  }
  std::vector<uint32_t> succ_begin(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    succ_begin[i + 1] = succ_begin[i] + succ_count[i];
  std::vector<uint32_t> succs(preds.size());
  std::vector<uint32_t> fill(succ_begin.begin(), succ_begin.end() - 1);
  std::vector<uint32_t> in_degree(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t k = pred_begin[i]; k < pred_begin[i + 1]; ++k) {
      succs[fill[preds[k]]++] = static_cast<uint32_t>(i);
      ++in_degree[i];
    }
  }
  // Kahn's algorithm.
  std::vector<uint32_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (in_degree[i] == 0) ready.push_back(static_cast<uint32_t>(i));
  }
  size_t ordered = 0;
  while (!ready.empty()) {
    uint32_t i = ready.back();
    ready.pop_back();
    ++ordered;
    for (uint32_t k = succ_begin[i]; k < succ_begin[i + 1]; ++k) {
      if (--in_degree[succs[k]] == 0) ready.push_back(succs[k]);
    }
  }
  if (ordered == n) return;

  // Every unordered node has an unordered predecessor: walking backwards
  // from one must revisit a node, and the walk from there is a cycle.
  size_t start = 0;
  while (in_degree[start] == 0) ++start;
  std::vector<int64_t> seen_at(n, -1);
  std::vector<uint32_t> walk;
  uint32_t current = static_cast<uint32_t>(start);
  while (seen_at[current] < 0) {
    seen_at[current] = static_cast<int64_t>(walk.size());
    walk.push_back(current);
    for (uint32_t k = pred_begin[current]; k < pred_begin[current + 1]; ++k) {
      if (in_degree[preds[k]] != 0) {
        current = preds[k];
        break;
      }
    }
  }
  std::vector<uint32_t> cycle(walk.begin() + seen_at[current], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // in data-flow order
  // Start at the node first in the file, for stable messages.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()),
              cycle.end());
  std::string names;
  for (size_t k = 0; k < cycle.size() && k < kMaxCycleNodesNamed; ++k) {
    NodeId id = nodes[cycle[k]];
    names += fmt::format("'{}' ({}) -> ",
                         ShortString(model_.str(model_.node_name(id))),
                         model_.str(model_.node_op_type(id)));
  }
  if (cycle.size() > kMaxCycleNodesNamed) {
    names += fmt::format("... ({} nodes) -> ", cycle.size());
  }
  names += fmt::format(
      "'{}'", ShortString(model_.str(model_.node_name(nodes[cycle[0]]))));
  report(DiagnosticCode::kGraphCycle, node_location(cycle[0]),
         fmt::format("graph '{}' has a cycle: {}; {} of {} nodes cannot be "
                     "ordered",
                     ShortString(model_.str(model_.graph(graph).name)), names,
                     n - ordered, n));
}

namespace {
// TensorProto.DataType values whose payloads are shown.
constexpr int32_t kDataTypeFloat = 1;
constexpr int32_t kDataTypeInt32 = 6;
constexpr int32_t kDataTypeInt64 = 7;
}  // namespace

std::string DescribeTensor(const TensorDisplayView& t) {
  std::string out =
      fmt::format("tensor {}{}", DataTypeName(t.data_type), FormatDims(t.dims));
  std::optional<uint64_t> count = ElementCount(t.dims);
  if (!count || *count > kMaxListItemsShown || t.external) return out;
  auto decode = [&](auto type_tag) {
    using T = decltype(type_tag);
    std::vector<T> values;
    if (!t.has_raw || t.raw.size() != *count * sizeof(T)) return values;
    values.resize(*count);
    if (!t.raw.empty()) std::memcpy(values.data(), t.raw.data(), t.raw.size());
    return values;
  };
  auto number = [](auto v) { return fmt::format("{}", v); };
  std::string values;
  switch (t.data_type) {
    case kDataTypeFloat:
      if (!t.floats.empty()) {
        values = FormatList(t.floats, number);
      } else if (auto v = decode(float{}); !v.empty()) {
        values = FormatList(v, number);
      }
      break;
    case kDataTypeInt32:
      if (!t.int32s.empty()) {
        values = FormatList(t.int32s, number);
      } else if (auto v = decode(int32_t{}); !v.empty()) {
        values = FormatList(v, number);
      }
      break;
    case kDataTypeInt64:
      if (!t.int64s.empty()) {
        values = FormatList(t.int64s, number);
      } else if (auto v = decode(int64_t{}); !v.empty()) {
        values = FormatList(v, number);
      }
      break;
    default:
      break;
  }
  if (!values.empty()) out += " = " + values;
  return out;
}

}  // namespace mi::importers::onnx_import
