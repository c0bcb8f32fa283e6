#pragma once

// Field-by-field comparison of two Models (and their diagnostics), for the
// direct-vs-libonnx equivalence test and the fuzzer. Returns "" when equal,
// else a description of the first difference. Strings are compared by
// content, so the two models may use different StringPools.

#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "diag/diagnostics.h"
#include "model/model.h"

namespace mi::importers::onnx_test {

inline std::string DiffModels(const Model& a, const Model& b) {
  auto s = [](const Model& m, StringId id) { return m.str(id); };
  if (a.graph_count() != b.graph_count()) {
    return fmt::format("graph_count {} vs {}", a.graph_count(),
                       b.graph_count());
  }
  for (uint32_t g = 0; g < a.graph_count(); ++g) {
    const GraphInfo& x = a.graph(GraphId(g));
    const GraphInfo& y = b.graph(GraphId(g));
    if (x.level != y.level || s(a, x.name) != s(b, y.name) ||
        s(a, x.source_file) != s(b, y.source_file) ||
        s(a, x.producer) != s(b, y.producer) ||
        x.parent_graph != y.parent_graph || x.parent_node != y.parent_node ||
        x.opset != y.opset || x.inputs != y.inputs || x.outputs != y.outputs ||
        x.opset_imports.size() != y.opset_imports.size()) {
      return fmt::format("graph {} ('{}' vs '{}') differs", g, s(a, x.name),
                         s(b, y.name));
    }
    for (size_t k = 0; k < x.opset_imports.size(); ++k) {
      if (s(a, x.opset_imports[k].first) != s(b, y.opset_imports[k].first) ||
          x.opset_imports[k].second != y.opset_imports[k].second) {
        return fmt::format("graph {} opset import {} differs", g, k);
      }
    }
    auto na = a.graph_nodes(GraphId(g));
    auto nb = b.graph_nodes(GraphId(g));
    if (!std::equal(na.begin(), na.end(), nb.begin(), nb.end())) {
      return fmt::format("graph {} node list differs", g);
    }
  }
  if (a.value_count() != b.value_count()) {
    return fmt::format("value_count {} vs {}", a.value_count(),
                       b.value_count());
  }
  for (uint32_t i = 0; i < a.value_count(); ++i) {
    ValueId v(i);
    auto da = a.value_dims(v);
    auto db = b.value_dims(v);
    auto ma = a.value_dim_names(v);
    auto mb = b.value_dim_names(v);
    bool names_equal = ma.size() == mb.size();
    for (size_t k = 0; names_equal && k < ma.size(); ++k) {
      names_equal = s(a, ma[k]) == s(b, mb[k]);
    }
    if (a.value_graph(v) != b.value_graph(v) ||
        s(a, a.value_name(v)) != s(b, b.value_name(v)) ||
        a.value_dtype(v) != b.value_dtype(v) ||
        a.value_flags(v) != b.value_flags(v) ||
        a.value_has_shape(v) != b.value_has_shape(v) ||
        a.value_producer(v) != b.value_producer(v) ||
        a.value_data_bytes(v) != b.value_data_bytes(v) ||
        s(a, a.value_external_location(v)) !=
            s(b, b.value_external_location(v)) ||
        !std::equal(da.begin(), da.end(), db.begin(), db.end()) ||
        !names_equal) {
      return fmt::format("value {} ('{}' {} vs '{}' {}) differs", i,
                         s(a, a.value_name(v)), a.FormatValueType(v),
                         s(b, b.value_name(v)), b.FormatValueType(v));
    }
  }
  if (a.node_count() != b.node_count()) {
    return fmt::format("node_count {} vs {}", a.node_count(), b.node_count());
  }
  for (uint32_t i = 0; i < a.node_count(); ++i) {
    NodeId n(i);
    auto ia = a.node_inputs(n);
    auto ib = b.node_inputs(n);
    auto oa = a.node_outputs(n);
    auto ob = b.node_outputs(n);
    if (a.node_graph(n) != b.node_graph(n) ||
        s(a, a.node_op_type(n)) != s(b, b.node_op_type(n)) ||
        s(a, a.node_domain(n)) != s(b, b.node_domain(n)) ||
        s(a, a.node_name(n)) != s(b, b.node_name(n)) ||
        a.node_scope(n) != b.node_scope(n) ||
        !std::equal(ia.begin(), ia.end(), ib.begin(), ib.end()) ||
        !std::equal(oa.begin(), oa.end(), ob.begin(), ob.end())) {
      return fmt::format("node {} ('{}' vs '{}') differs", i,
                         s(a, a.node_name(n)), s(b, b.node_name(n)));
    }
    auto aa = a.node_attributes(n);
    auto ab = b.node_attributes(n);
    if (aa.size() != ab.size()) {
      return fmt::format("node {} attribute count differs", i);
    }
    for (size_t k = 0; k < aa.size(); ++k) {
      const Attribute& x = aa[k];
      const Attribute& y = ab[k];
      bool floats_equal = x.float_value == y.float_value ||
                          (x.float_value != x.float_value &&
                           y.float_value != y.float_value);  // NaN
      if (s(a, x.name) != s(b, y.name) || x.kind != y.kind ||
          x.int_value != y.int_value || !floats_equal ||
          s(a, x.text) != s(b, y.text) || x.subgraph != y.subgraph) {
        return fmt::format(
            "node {} ('{}') attribute {} '{}': kind {} vs {}, text '{}' vs "
            "'{}'",
            i, s(a, a.node_name(n)), k, s(a, x.name), AttributeKindName(x.kind),
            AttributeKindName(y.kind), s(a, x.text), s(b, y.text));
      }
    }
  }
  if (a.scope_count() != b.scope_count()) {
    return fmt::format("scope_count {} vs {}", a.scope_count(),
                       b.scope_count());
  }
  for (uint32_t i = 0; i < a.scope_count(); ++i) {
    ScopeId c(i);
    if (a.scope_parent(c) != b.scope_parent(c) ||
        s(a, a.scope_name(c)) != s(b, b.scope_name(c)) ||
        s(a, a.scope_path(c)) != s(b, b.scope_path(c)) ||
        a.scope_graph(c) != b.scope_graph(c)) {
      return fmt::format("scope {} ('{}' vs '{}') differs", i,
                         s(a, a.scope_path(c)), s(b, b.scope_path(c)));
    }
  }
  return {};
}

inline std::string DiffDiagnostics(const DiagnosticSink& a,
                                   const DiagnosticSink& b) {
  for (size_t c = 0; c < static_cast<size_t>(DiagnosticCode::kCount); ++c) {
    auto code = static_cast<DiagnosticCode>(c);
    if (a.count(code) != b.count(code)) {
      return fmt::format("diagnostic '{}' count {} vs {}", DiagnosticName(code),
                         a.count(code), b.count(code));
    }
  }
  const auto& x = a.log();
  const auto& y = b.log();
  if (x.size() != y.size()) {
    return fmt::format("diagnostic count {} vs {}", x.size(), y.size());
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].code != y[i].code || x[i].message != y[i].message ||
        x[i].location.file != y[i].location.file ||
        x[i].location.byte != y[i].location.byte ||
        x[i].location.has_byte != y[i].location.has_byte ||
        x[i].snippet != y[i].snippet) {
      return fmt::format("diagnostic {}: '{}' vs '{}'", i, x[i].message,
                         y[i].message);
    }
  }
  return {};
}

}  // namespace mi::importers::onnx_test
