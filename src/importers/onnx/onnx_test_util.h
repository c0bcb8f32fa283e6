#pragma once

// Helpers for the ONNX importer tests: build small ModelProtos with
// libonnx's protobuf API and import them into a fresh Model.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "importers/onnx/onnx_importer.h"
#include "model/model.h"
#include "onnx/onnx_pb.h"

namespace mi::importers::onnx_test {

inline ::onnx::ModelProto MakeModel(int64_t opset = 13) {
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("test");
  model.set_producer_version("1.0");
  auto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model.mutable_graph()->set_name("main");
  return model;
}

inline void SetType(::onnx::ValueInfoProto* info, std::string_view name,
                    int32_t dtype, std::initializer_list<int64_t> dims) {
  info->set_name(std::string(name));
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(dtype);
  auto* shape = tensor->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) {
      shape->add_dim()->set_dim_param("N");
    } else {
      shape->add_dim()->set_dim_value(d);
    }
  }
}

inline void AddInput(::onnx::GraphProto* g, std::string_view name,
                     int32_t dtype, std::initializer_list<int64_t> dims) {
  SetType(g->add_input(), name, dtype, dims);
}
inline void AddOutput(::onnx::GraphProto* g, std::string_view name,
                      int32_t dtype, std::initializer_list<int64_t> dims) {
  SetType(g->add_output(), name, dtype, dims);
}

inline ::onnx::NodeProto* AddNode(::onnx::GraphProto* g, std::string_view op,
                                  std::vector<std::string> inputs,
                                  std::vector<std::string> outputs,
                                  std::string_view name = {}) {
  auto* node = g->add_node();
  node->set_op_type(std::string(op));
  node->set_name(std::string(name));
  for (auto& i : inputs) node->add_input(i);
  for (auto& o : outputs) node->add_output(o);
  return node;
}

// A float initializer whose raw_data holds `dims` elements.
inline ::onnx::TensorProto* AddFloatInitializer(
    ::onnx::GraphProto* g, std::string_view name,
    std::initializer_list<int64_t> dims) {
  auto* t = g->add_initializer();
  t->set_name(std::string(name));
  t->set_data_type(::onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    count *= d;
  }
  t->set_raw_data(std::string(static_cast<size_t>(count) * 4, '\x01'));
  return t;
}

inline ::onnx::TensorProto* AddInt64Initializer(::onnx::GraphProto* g,
                                                std::string_view name,
                                                std::vector<int64_t> values) {
  auto* t = g->add_initializer();
  t->set_name(std::string(name));
  t->set_data_type(::onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return t;
}

// A fresh Model + diagnostics with an import result.
struct Imported {
  StringPool strings;
  Model model{&strings};
  DiagnosticSink diagnostics;
  ImportContext ctx;
  Status status;

  std::string_view str(StringId id) const { return model.str(id); }
  NodeId Node(std::string_view name) const {
    return model.FindNode(GraphId(0), name);
  }
  ValueId Value(std::string_view name, GraphId graph = GraphId(0)) const {
    return model.FindValue(graph, name);
  }
  const Diagnostic* Find(DiagnosticCode code) const {
    for (const Diagnostic& d : diagnostics.log()) {
      if (d.code == code) return &d;
    }
    return nullptr;
  }
};

inline std::unique_ptr<Imported> ImportBytes(
    std::string_view bytes, std::string path = "test.onnx",
    LevelHint hint = LevelHint::kAuto) {
  auto result = std::make_unique<Imported>();
  result->ctx.path = std::move(path);
  result->ctx.model = &result->model;
  result->ctx.diagnostics = &result->diagnostics;
  result->ctx.level_hint = hint;
  result->status = ImportOnnxFromBuffer(bytes, result->ctx);
  return result;
}

inline std::unique_ptr<Imported> ImportProto(
    const ::onnx::ModelProto& proto, LevelHint hint = LevelHint::kAuto) {
  return ImportBytes(proto.SerializeAsString(), "test.onnx", hint);
}

inline std::unique_ptr<Imported> ImportText(std::string_view text,
                                            std::string path = "test.onnxtxt") {
  auto result = std::make_unique<Imported>();
  result->ctx.path = std::move(path);
  result->ctx.model = &result->model;
  result->ctx.diagnostics = &result->diagnostics;
  result->status = ImportOnnxTextFromBuffer(text, result->ctx);
  return result;
}

// Runs an importer's Import() on a file (mmap path).
inline std::unique_ptr<Imported> ImportFile(const std::string& path,
                                            bool text = false) {
  auto result = std::make_unique<Imported>();
  result->ctx.path = path;
  result->ctx.model = &result->model;
  result->ctx.diagnostics = &result->diagnostics;
  auto importer = text ? CreateOnnxTextImporter() : CreateOnnxImporter();
  result->status = importer->Import(result->ctx);
  return result;
}

}  // namespace mi::importers::onnx_test
