// model_inspector._core's compare functions (python/model_inspector/
// compare.py wraps them; docs/guides/compare.md):
//   compare_tensors(a, b, thresholds={}, dtype_a="", dtype_b="") -> dict
//     the metrics kernel on two buffers (NumPy arrays, anything with the
//     buffer protocol, C-contiguous), with the verdict;
//   compare_probe_sets_json(a, b, match="auto", thresholds={}) -> str
//     two probe sets as dicts (compare.py builds them from probe stores)
//     matched, measured and judged: the report's JSON;
//   compare_runs_json(a, b, run_a=0, run_b=0, match="auto", thresholds={})
//     -> str: two run directories' probe stores compared (CompareRuns), as
//     `model-inspector compare` does;
//   level_graphs(framework_model, compiled_model) -> dict
//     both levels with fused_from, for matching a model with its compiled
//     form.
// A failed Status raises the exception model_inspector.errors.from_status
// gives for its code. The long calls release the GIL.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "encoders/json_encoder.h"
#include "model_inspector/compare.h"
#include "model_inspector/session.h"
#include "python/raise_status.h"

namespace py = pybind11;

namespace mi::python {
namespace {

template <typename T>
T Take(StatusOr<T> value) {
  if (!value.ok()) Raise(value.status());
  return std::move(value).value();
}

// The element type of a buffer from its struct format and item size;
// `override` (e.g. "bfloat16" for torch's bfloat16 viewed as uint16) wins.
TensorDtype DtypeOf(const py::buffer_info& info, const std::string& override) {
  if (!override.empty()) return Take(ParseTensorDtype(override));
  std::string f = info.format;
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@')) {
    f = f.substr(1);
  }
  char c = f.empty() ? '?' : f[0];
  size_t n = static_cast<size_t>(info.itemsize);
  switch (c) {
    case 'f':
      return TensorDtype::kFloat32;
    case 'd':
      return TensorDtype::kFloat64;
    case 'e':
      return TensorDtype::kFloat16;
    case '?':
      return TensorDtype::kBool;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
      return n == 1   ? TensorDtype::kInt8
             : n == 2 ? TensorDtype::kInt16
             : n == 4 ? TensorDtype::kInt32
                      : TensorDtype::kInt64;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
      return n == 1   ? TensorDtype::kUint8
             : n == 2 ? TensorDtype::kUint16
             : n == 4 ? TensorDtype::kUint32
                      : TensorDtype::kUint64;
    default:
      Raise(UnsupportedError("buffer format '" + info.format +
                             "' cannot be compared; expected a numeric "
                             "array"));
  }
}

bool CContiguous(const py::buffer_info& info) {
  py::ssize_t expected = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    if (info.shape[d] > 1 && info.strides[d] != expected) return false;
    expected *= info.shape[d];
  }
  return true;
}

double DoubleOr(const py::dict& d, const char* key, double fallback) {
  if (!d.contains(key) || d[key].is_none()) return fallback;
  return d[key].cast<double>();
}

constexpr const char* kThresholdNames[] = {"rule",
                                           "cosine_min",
                                           "max_abs_err_max",
                                           "cosine_floor",
                                           "max_abs_err_ceiling",
                                           "stats_rel_err_max",
                                           "one_thousandth_min",
                                           "max_rel_err_max",
                                           "mean_rel_err_max",
                                           "relative_euclidean_max",
                                           "rmse_max",
                                           "fp16_overflow_fails"};

// Thresholds from a dict: "rule" ("msprobe", the default, or "msit")
// picks the preset, the other keys override its limits.
CompareThresholds Thresholds(const py::dict& t) {
  for (auto item : t) {
    std::string key = py::str(item.first);
    bool known = false;
    for (const char* name : kThresholdNames) known = known || key == name;
    if (!known) {
      std::string names;
      for (const char* name : kThresholdNames) {
        names += names.empty() ? name : std::string(", ") + name;
      }
      Raise(InvalidArgumentError("unknown threshold '" + key +
                                 "'; expected one of " + names));
    }
  }
  CompareThresholds out;
  if (t.contains("rule") && !t["rule"].is_none()) {
    std::string rule = py::str(t["rule"]);
    if (rule == "msit") {
      out = CompareThresholds::Msit();
    } else if (rule != "msprobe") {
      Raise(InvalidArgumentError("unknown rule '" + rule +
                                 "'; expected msprobe or msit"));
    }
  }
  out.cosine_min = DoubleOr(t, "cosine_min", out.cosine_min);
  out.max_abs_err_max = DoubleOr(t, "max_abs_err_max", out.max_abs_err_max);
  out.cosine_floor = DoubleOr(t, "cosine_floor", out.cosine_floor);
  out.max_abs_err_ceiling =
      DoubleOr(t, "max_abs_err_ceiling", out.max_abs_err_ceiling);
  out.stats_rel_err_max =
      DoubleOr(t, "stats_rel_err_max", out.stats_rel_err_max);
  out.one_thousandth_min =
      DoubleOr(t, "one_thousandth_min", out.one_thousandth_min);
  out.max_rel_err_max = DoubleOr(t, "max_rel_err_max", out.max_rel_err_max);
  out.mean_rel_err_max = DoubleOr(t, "mean_rel_err_max", out.mean_rel_err_max);
  out.relative_euclidean_max =
      DoubleOr(t, "relative_euclidean_max", out.relative_euclidean_max);
  out.rmse_max = DoubleOr(t, "rmse_max", out.rmse_max);
  if (t.contains("fp16_overflow_fails")) {
    out.fp16_overflow_fails = t["fp16_overflow_fails"].cast<bool>();
  }
  return out;
}

py::object OptionalDouble(const std::optional<double>& v) {
  return v ? py::object(py::float_(*v)) : py::object(py::none());
}

py::dict MetricsDict(const TensorMetrics& m) {
  py::dict d;
  d["count"] = m.count;
  d["compared"] = m.compared;
  d["cosine"] = OptionalDouble(m.cosine);
  d["max_abs_err"] = m.max_abs_err;
  d["mean_abs_err"] = m.mean_abs_err;
  d["rmse"] = m.rmse;
  d["max_rel_err"] = m.max_rel_err;
  d["mean_rel_err"] = m.mean_rel_err;
  d["one_thousandth_ratio"] = m.one_thousandth_ratio;
  d["five_thousandths_ratio"] = m.five_thousandths_ratio;
  d["ten_thousandth_ratio"] = m.ten_thousandth_ratio;
  d["relative_euclidean"] = m.relative_euclidean;
  d["nan_mismatch"] = m.nan_mismatch;
  d["inf_mismatch"] = m.inf_mismatch;
  d["nan_a"] = m.nan_a;
  d["nan_b"] = m.nan_b;
  d["inf_a"] = m.inf_a;
  d["inf_b"] = m.inf_b;
  d["fp16_overflow_a"] = m.fp16_overflow_a;
  d["fp16_overflow_b"] = m.fp16_overflow_b;
  return d;
}

py::dict CompareTensorsPy(const py::buffer& a, const py::buffer& b,
                          const py::dict& thresholds,
                          const std::string& dtype_a,
                          const std::string& dtype_b) {
  py::buffer_info ia = a.request(), ib = b.request();
  if (!CContiguous(ia) || !CContiguous(ib)) {
    Raise(
        InvalidArgumentError("compare_tensors needs C-contiguous arrays; pass "
                             "numpy.ascontiguousarray(x)"));
  }
  TensorSpan sa{DtypeOf(ia, dtype_a), ia.ptr, static_cast<uint64_t>(ia.size)};
  TensorSpan sb{DtypeOf(ib, dtype_b), ib.ptr, static_cast<uint64_t>(ib.size)};
  CompareThresholds t = Thresholds(thresholds);
  StatusOr<TensorMetrics> m = InvalidArgumentError("");
  {
    py::gil_scoped_release release;
    m = CompareTensors(sa, sb);
  }
  TensorMetrics metrics = Take(std::move(m));
  CompareJudgement j = JudgeTensors(metrics, t);
  py::dict d = MetricsDict(metrics);
  d["verdict"] = j.pass ? "pass" : "fail";
  d["reasons"] = j.reasons;
  return d;
}

std::vector<std::string> Strings(const py::handle& h) {
  std::vector<std::string> out;
  if (h.is_none()) return out;
  for (py::handle item : h) out.push_back(py::str(item));
  return out;
}

std::optional<double> OptDouble(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return std::nullopt;
  return d[key].cast<double>();
}

ProbeSet ProbeSetOf(const py::dict& d) {
  ProbeSet set;
  if (d.contains("label")) set.label = py::str(d["label"]);
  if (d.contains("level")) set.level = py::str(d["level"]);
  if (d.contains("probes")) {
    for (py::handle h : d["probes"]) {
      py::dict p = py::reinterpret_borrow<py::dict>(h);
      ProbeTensor r;
      r.probe = py::str(p["probe"]);
      r.node = py::str(p["node"]);
      if (p.contains("kind")) r.kind = py::str(p["kind"]);
      if (p.contains("index")) r.index = p["index"].cast<int32_t>();
      if (p.contains("step") && !p["step"].is_none()) {
        r.step = p["step"].cast<int64_t>();
      }
      if (p.contains("order")) r.order = p["order"].cast<int64_t>();
      if (p.contains("dtype") && !p["dtype"].is_none()) {
        r.dtype = py::str(p["dtype"]);
      }
      if (p.contains("shape") && !p["shape"].is_none()) {
        for (py::handle s : p["shape"]) r.shape.push_back(s.cast<int64_t>());
      }
      if (p.contains("array_path") && !p["array_path"].is_none()) {
        r.array_path = py::str(p["array_path"]);
      }
      if (p.contains("stats") && !p["stats"].is_none()) {
        py::dict s = p["stats"];
        r.has_stats = true;
        r.stats.min = OptDouble(s, "min");
        r.stats.max = OptDouble(s, "max");
        r.stats.mean = OptDouble(s, "mean");
        r.stats.l2 = OptDouble(s, "l2");
        std::optional<double> nan = OptDouble(s, "nan"),
                              pos = OptDouble(s, "pos_inf"),
                              neg = OptDouble(s, "neg_inf");
        if (nan && pos && neg && *nan >= 0 && *pos >= 0 && *neg >= 0) {
          r.stats.has_counts = true;
          r.stats.nan = static_cast<uint64_t>(*nan);
          r.stats.pos_inf = static_cast<uint64_t>(*pos);
          r.stats.neg_inf = static_cast<uint64_t>(*neg);
        }
      }
      set.probes.push_back(std::move(r));
    }
  }
  if (d.contains("nodes") && !d["nodes"].is_none()) {
    for (py::handle h : d["nodes"]) {
      py::dict n = py::reinterpret_borrow<py::dict>(h);
      LevelNode node;
      node.name = py::str(n["name"]);
      if (n.contains("op_type")) node.op_type = py::str(n["op_type"]);
      if (n.contains("domain")) node.domain = py::str(n["domain"]);
      if (n.contains("inputs")) node.inputs = Strings(n["inputs"]);
      if (n.contains("outputs")) node.outputs = Strings(n["outputs"]);
      if (n.contains("fused_from")) node.fused_from = Strings(n["fused_from"]);
      set.nodes.push_back(std::move(node));
    }
  }
  return set;
}

std::string CompareProbeSetsJson(const py::dict& a, const py::dict& b,
                                 const std::string& match,
                                 const py::dict& thresholds) {
  ProbeSet sa = ProbeSetOf(a), sb = ProbeSetOf(b);
  CompareOptions options;
  options.match = match;
  options.thresholds = Thresholds(thresholds);
  StatusOr<CompareReport> report = InvalidArgumentError("");
  {
    py::gil_scoped_release release;
    report = CompareProbeSets(sa, sb, options);
  }
  return encoders::EncodeJson(Take(std::move(report)));
}

std::string CompareRunsJson(const std::string& a, const std::string& b,
                            int64_t run_a, int64_t run_b,
                            const std::string& match,
                            const py::dict& thresholds) {
  CompareRunsOptions options;
  options.a = a;
  options.b = b;
  options.run_a = run_a;
  options.run_b = run_b;
  options.compare.match = match;
  options.compare.thresholds = Thresholds(thresholds);
  StatusOr<CompareReport> report = InvalidArgumentError("");
  {
    py::gil_scoped_release release;
    report = CompareRuns(options);
  }
  return encoders::EncodeJson(Take(std::move(report)));
}

py::list NodesList(const std::vector<LevelNode>& nodes) {
  py::list out;
  for (const LevelNode& n : nodes) {
    out.append(py::dict(
        py::arg("name") = n.name, py::arg("op_type") = n.op_type,
        py::arg("domain") = n.domain, py::arg("inputs") = n.inputs,
        py::arg("outputs") = n.outputs, py::arg("fused_from") = n.fused_from));
  }
  return out;
}

py::dict LevelGraphsPy(const std::string& framework_model,
                       const std::string& compiled_model) {
  StatusOr<LevelGraphs> graphs = InvalidArgumentError("");
  {
    py::gil_scoped_release release;
    OpenOptions options;
    options.framework_model = framework_model;
    options.compiled_model = compiled_model;
    StatusOr<std::unique_ptr<Session>> session = Session::Open(options);
    if (session.ok()) {
      graphs = ReadLevelGraphs(**session);
    } else {
      graphs = session.status();
    }
  }
  LevelGraphs g = Take(std::move(graphs));
  return py::dict(py::arg("framework") = NodesList(g.framework),
                  py::arg("compiled") = NodesList(g.compiled));
}

}  // namespace

void RegisterCompareBindings(py::module_& m) {
  m.def("compare_tensors", &CompareTensorsPy, py::arg("a"), py::arg("b"),
        py::arg("thresholds") = py::dict(), py::arg("dtype_a") = "",
        py::arg("dtype_b") = "");
  m.def("compare_probe_sets_json", &CompareProbeSetsJson, py::arg("a"),
        py::arg("b"), py::arg("match") = "auto",
        py::arg("thresholds") = py::dict());
  m.def("compare_runs_json", &CompareRunsJson, py::arg("a"), py::arg("b"),
        py::arg("run_a") = 0, py::arg("run_b") = 0, py::arg("match") = "auto",
        py::arg("thresholds") = py::dict());
  m.def("level_graphs", &LevelGraphsPy, py::arg("framework_model") = "",
        py::arg("compiled_model") = "");
}

}  // namespace mi::python
