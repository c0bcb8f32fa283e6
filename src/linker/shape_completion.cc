#include "linker/shape_completion.h"

#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace mi::linker {
namespace {

bool NeedsShape(const Model& m, ValueId v) {
  return v.valid() && (!m.value_has_shape(v) || m.value_dtype(v) == 0);
}

// Parses `[{"float":[1,3,224,224]}, ...]`; false when it is not that.
bool ParseOrtShapes(
    std::string_view text,
    std::vector<std::pair<int32_t, std::vector<int64_t>>>* out) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) return false;
  for (const auto& entry : doc) {
    if (!entry.is_object() || entry.size() != 1) return false;
    auto it = entry.begin();
    if (!it.value().is_array()) return false;
    std::vector<int64_t> dims;
    for (const auto& d : it.value()) {
      if (!d.is_number_integer()) return false;
      dims.push_back(d.get<int64_t>());
    }
    out->emplace_back(OrtTypeNameToDataType(it.key()), std::move(dims));
  }
  return true;
}

void Apply(Model* m, std::span<const ValueId> values, std::string_view text,
           uint32_t* completed) {
  std::vector<std::pair<int32_t, std::vector<int64_t>>> shapes;
  if (text.empty() || !ParseOrtShapes(text, &shapes)) return;
  std::vector<ValueId> present;
  for (ValueId v : values) {
    if (v.valid()) present.push_back(v);
  }
  // ORT lists only the inputs/outputs that exist; if the counts differ the
  // positions cannot be trusted.
  if (present.size() != shapes.size()) return;
  for (size_t i = 0; i < present.size(); ++i) {
    ValueId v = present[i];
    if (!NeedsShape(*m, v)) continue;
    if (m->value_dtype(v) == 0 && shapes[i].first != 0) {
      m->SetValueType(v, shapes[i].first);
    }
    if (!m->value_has_shape(v)) {
      std::vector<StringId> names(shapes[i].second.size(), StringPool::kEmpty);
      m->SetValueShape(v, shapes[i].second, names);
    }
    ++*completed;
  }
}

}  // namespace

int32_t OrtTypeNameToDataType(std::string_view name) {
  static constexpr std::pair<std::string_view, int32_t> kTypes[] = {
      {"float", 1},   {"uint8", 2},    {"int8", 3},       {"uint16", 4},
      {"int16", 5},   {"int32", 6},    {"int64", 7},      {"string", 8},
      {"bool", 9},    {"float16", 10}, {"MLFloat16", 10}, {"double", 11},
      {"uint32", 12}, {"uint64", 13},  {"bfloat16", 16},  {"BFloat16", 16}};
  for (const auto& [n, t] : kTypes) {
    if (n == name) return t;
  }
  return 0;
}

ShapeCompletion CompleteShapes(Model* model, const Trace& trace,
                               GraphId framework, GraphId compiled) {
  ShapeCompletion result;
  if (!compiled.valid()) return result;
  std::unordered_set<uint32_t> seen;
  // 1. Same-named framework tensors.
  if (framework.valid()) {
    for (NodeId n : model->graph_nodes(compiled)) {
      for (auto values : {model->node_inputs(n), model->node_outputs(n)}) {
        for (ValueId v : values) {
          if (!NeedsShape(*model, v) || !seen.insert(v.value()).second) {
            continue;
          }
          ValueId f =
              model->FindValue(framework, model->str(model->value_name(v)));
          if (!f.valid()) continue;
          bool done = false;
          if (model->value_dtype(v) == 0 && model->value_dtype(f) != 0) {
            model->SetValueType(v, model->value_dtype(f));
            done = true;
          }
          if (!model->value_has_shape(v) && model->value_has_shape(f)) {
            std::vector<int64_t> dims(model->value_dims(f).begin(),
                                      model->value_dims(f).end());
            std::vector<StringId> names(model->value_dim_names(f).begin(),
                                        model->value_dim_names(f).end());
            model->SetValueShape(v, dims, names);
            done = true;
          }
          if (done) ++result.from_framework;
        }
      }
    }
  }
  // 2. What the runtime saw: the first task of each compiled node.
  std::unordered_set<uint32_t> nodes_done;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    NodeId n = trace.task_node(t);
    if (!n.valid() || model->node_graph(n) != compiled ||
        !nodes_done.insert(n.value()).second) {
      continue;
    }
    Apply(model, model->node_inputs(n), trace.str(trace.task_shapes(t)),
          &result.from_trace);
    Apply(model, model->node_outputs(n), trace.str(trace.task_output_shapes(t)),
          &result.from_trace);
  }
  return result;
}

}  // namespace mi::linker
