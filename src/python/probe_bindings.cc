// model_inspector._core's tensor probe bindings: the statistics kernel over
// any buffer-protocol array (NumPy arrays; torch tensors are converted by
// python/model_inspector/store.py), the probe store, and the node-search
// glob the Inspector reads probe patterns with. Store reads cross as the
// JSON of include/model_inspector/probes.h's encoders. The kernel and the
// store's writes release the GIL.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model_inspector/probes.h"
#include "model_inspector/session.h"
#include "python/probe_bindings.h"
#include "python/raise_status.h"

namespace py = pybind11;

namespace mi::python {
namespace {

void Check(const Status& status) {
  if (!status.ok()) Raise(status);
}

template <typename T>
T Take(StatusOr<T> value) {
  Check(value.status());
  return std::move(value).value();
}

// A read-only view of a buffer-protocol object, released on destruction.
class Buffer {
 public:
  Buffer(const py::handle& obj, bool c_order) {
    const int flags =
        PyBUF_FORMAT | (c_order ? PyBUF_C_CONTIGUOUS : PyBUF_ANY_CONTIGUOUS);
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) {
      PyErr_Clear();
      Raise(InvalidArgumentError(
          std::string("expected a contiguous array with the buffer protocol "
                      "(a NumPy array") +
          (c_order ? ", C order" : "") + "), got " +
          std::string(py::str(py::type::of(obj).attr("__name__")))));
    }
    held_ = true;
  }
  ~Buffer() {
    if (held_) PyBuffer_Release(&view_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // The tensor it holds; `dtype` ("bfloat16" for 16-bit integers holding
  // bfloat16, as torch's bfloat16 tensors reach NumPy) overrides the
  // buffer's own type.
  TensorView View(const std::optional<std::string>& dtype) const {
    TensorView t;
    t.data = view_.buf;
    for (int i = 0; i < view_.ndim; ++i) t.shape.push_back(view_.shape[i]);
    if (view_.ndim == 0 && view_.len != view_.itemsize) {
      t.shape.push_back(view_.len / view_.itemsize);
    }
    const size_t size = static_cast<size_t>(view_.itemsize);
    if (dtype) {
      std::optional<ProbeDType> named = ParseProbeDType(*dtype);
      if (!named) {
        Raise(InvalidArgumentError("dtype '" + *dtype +
                                   "': expected a NumPy type name or "
                                   "'bfloat16'"));
      }
      if (ProbeDTypeSize(*named) != size) {
        Raise(InvalidArgumentError("dtype '" + *dtype + "' has " +
                                   std::to_string(ProbeDTypeSize(*named)) +
                                   "-byte elements; the array has " +
                                   std::to_string(size)));
      }
      t.dtype = *named;
      return t;
    }
    std::string format = view_.format != nullptr ? view_.format : "B";
    if (!format.empty() && (format[0] == '>' || format[0] == '!')) {
      Raise(UnsupportedError("big-endian array (format '" + format +
                             "'): convert it to native byte order"));
    }
    if (!format.empty() &&
        (format[0] == '@' || format[0] == '=' || format[0] == '<')) {
      format.erase(0, 1);
    }
    std::optional<ProbeDType> type;
    if (format.size() == 1) {
      const char c = format[0];
      if (c == 'e') type = ProbeDType::kFloat16;
      if (c == 'f') type = ProbeDType::kFloat32;
      if (c == 'd') type = ProbeDType::kFloat64;
      if (c == '?') type = ProbeDType::kBool;
      const bool is_signed =
          c == 'b' || c == 'h' || c == 'i' || c == 'l' || c == 'q' || c == 'n';
      const bool is_unsigned =
          c == 'B' || c == 'H' || c == 'I' || c == 'L' || c == 'Q' || c == 'N';
      if (is_signed || is_unsigned) {
        switch (size) {
          case 1:
            type = is_signed ? ProbeDType::kInt8 : ProbeDType::kUInt8;
            break;
          case 2:
            type = is_signed ? ProbeDType::kInt16 : ProbeDType::kUInt16;
            break;
          case 4:
            type = is_signed ? ProbeDType::kInt32 : ProbeDType::kUInt32;
            break;
          case 8:
            type = is_signed ? ProbeDType::kInt64 : ProbeDType::kUInt64;
            break;
          default:
            break;
        }
      }
    }
    if (!type || ProbeDTypeSize(*type) != size) {
      Raise(UnsupportedError(
          "array element format '" + format +
          "': expected float16/32/64, bfloat16 (as uint16 with "
          "dtype='bfloat16'), int8..int64, uint8..uint64 or bool"));
    }
    t.dtype = *type;
    return t;
  }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

py::object Real(const std::optional<double>& v) {
  return v ? py::object(py::float_(*v)) : py::object(py::none());
}

py::object Count(int64_t v) {
  return v >= 0 ? py::object(py::int_(v)) : py::object(py::none());
}

py::dict StatsDict(const TensorStats& s) {
  py::dict d;
  d["count"] = Count(s.count);
  d["nan"] = Count(s.nan);
  d["pos_inf"] = Count(s.pos_inf);
  d["neg_inf"] = Count(s.neg_inf);
  d["zero"] = Count(s.zero);
  d["min"] = Real(s.min);
  d["max"] = Real(s.max);
  d["mean"] = Real(s.mean);
  d["std"] = Real(s.std);
  d["l2"] = Real(s.l2);
  d["abs_max"] = Real(s.abs_max);
  d["dtype"] = s.dtype;
  d["shape"] = py::cast(s.shape);
  return d;
}

py::dict TensorStatsOf(const py::handle& array,
                       const std::optional<std::string>& dtype) {
  Buffer buffer(array, false);
  TensorView view = buffer.View(dtype);
  StatusOr<TensorStats> stats = InvalidArgumentError("");
  {
    py::gil_scoped_release release;
    stats = ComputeTensorStats(view);
  }
  return StatsDict(Take(std::move(stats)));
}

// The store as Python sees it: close() drops the connection.
class PyProbeStore {
 public:
  PyProbeStore(const std::string& run_dir, int keep_runs, bool create) {
    store_ = Take(ProbeStore::Open(run_dir, create, keep_runs));
  }

  ProbeStore& store() {
    if (!store_) Raise(InvalidArgumentError("the probe store is closed"));
    return *store_;
  }
  void Close() { store_.reset(); }

  std::unique_ptr<ProbeStore> store_;
};

ProbeRecord Record(int64_t run, std::string probe, std::string node,
                   std::string kind, int64_t index, std::optional<int64_t> step,
                   int64_t order) {
  ProbeRecord r;
  r.run = run;
  r.probe = std::move(probe);
  r.node = std::move(node);
  r.kind = std::move(kind);
  r.index = index;
  r.step = step;
  r.order = order;
  return r;
}

std::string JsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ",";
    out += items[i];
  }
  return out + "]";
}

}  // namespace

void RegisterProbeBindings(py::module_& m) {
  m.def("tensor_stats", &TensorStatsOf, py::arg("array"),
        py::arg("dtype") = std::nullopt,
        "Statistics of one array (buffer protocol): count, nan, pos_inf, "
        "neg_inf, zero, min, max, mean, std, l2, abs_max, dtype, shape.");
  m.def(
      "scope_glob_match",
      [](const std::string& pattern, const std::string& path) {
        return ScopeGlobMatches(pattern, path);
      },
      py::arg("pattern"), py::arg("path"),
      "Whether a node-search glob matches a '/'-separated name (trailing "
      "whole segments, case-insensitive; '*' in a segment, '**' across).");
  // The Session's probe queries (Run.probes / Run.node_probes).
  m.def(
      "session_probes_json",
      [](const Session& s, const std::string& level) {
        return Take(s.ProbesJson(level));
      },
      py::arg("session"), py::arg("level"));
  m.def(
      "session_node_probes_json",
      [](const Session& s, const std::string& level, uint32_t node,
         size_t last) { return Take(s.NodeProbesJson(level, node, last)); },
      py::arg("session"), py::arg("level"), py::arg("node"),
      py::arg("last") = 10);
  m.attr("probe_sample_limit") = py::int_(kProbeSampleLimit);
  m.attr("tensor_stats_names") = py::cast(TensorStatsNames());

  py::class_<PyProbeStore>(m, "ProbeStore")
      .def(py::init<const std::string&, int, bool>(), py::arg("run_dir"),
           py::arg("keep_runs") = ProbeStore::kDefaultKeepRuns,
           py::arg("create") = true)
      .def("close", &PyProbeStore::Close)
      .def_property_readonly(
          "probes_dir", [](PyProbeStore& s) { return s.store().probes_dir(); })
      .def(
          "begin_run",
          [](PyProbeStore& s, std::string backend, std::string model,
             std::string level, std::string label, std::string inputs) {
            ProbeRunInfo info;
            info.backend = std::move(backend);
            info.model = std::move(model);
            info.level = std::move(level);
            info.label = std::move(label);
            info.inputs = std::move(inputs);
            ProbeStore& store = s.store();
            StatusOr<int64_t> id = InvalidArgumentError("");
            {
              py::gil_scoped_release release;
              id = store.BeginRun(info);
            }
            return Take(std::move(id));
          },
          py::arg("backend"), py::arg("model") = "",
          py::arg("level") = "framework", py::arg("label") = "",
          py::arg("inputs") = "")
      .def(
          "add",
          [](PyProbeStore& s, int64_t run, std::string probe,
             const py::handle& array, std::string node, std::string kind,
             int64_t index, std::optional<int64_t> step, int64_t order,
             bool keep_tensor, bool fp16,
             const std::optional<std::string>& dtype) {
            ProbeStore& store = s.store();
            Buffer buffer(array, keep_tensor);
            TensorView view = buffer.View(dtype);
            ProbeRecord record = Record(run, std::move(probe), std::move(node),
                                        std::move(kind), index, step, order);
            StatusOr<TensorStats> stats = InvalidArgumentError("");
            {
              py::gil_scoped_release release;
              stats = store.Add(std::move(record), view,
                                ProbeKeep{keep_tensor, fp16});
            }
            return StatsDict(Take(std::move(stats)));
          },
          py::arg("run"), py::arg("probe"), py::arg("array"), py::arg("node"),
          py::arg("kind") = "output", py::arg("index") = 0,
          py::arg("step") = std::nullopt, py::arg("order") = 0,
          py::arg("keep_tensor") = false, py::arg("fp16") = false,
          py::arg("dtype") = std::nullopt)
      .def(
          "add_stats",
          [](PyProbeStore& s, int64_t run, std::string probe,
             const std::string& stats_json, std::string node, std::string kind,
             int64_t index, std::optional<int64_t> step, int64_t order) {
            ProbeRecord record = Record(run, std::move(probe), std::move(node),
                                        std::move(kind), index, step, order);
            record.stats =
                Take(ParseTensorStatsJson(stats_json, &record.extra_json));
            Check(s.store().AddStats(std::move(record)));
          },
          py::arg("run"), py::arg("probe"), py::arg("stats_json"),
          py::arg("node"), py::arg("kind") = "output", py::arg("index") = 0,
          py::arg("step") = std::nullopt, py::arg("order") = 0)
      .def(
          "add_plugin_metrics",
          [](PyProbeStore& s, int64_t run, std::string probe,
             std::string plugin, std::string metrics_json) {
            Check(s.store().AddPluginMetrics({run, std::move(probe),
                                              std::move(plugin),
                                              std::move(metrics_json)}));
          },
          py::arg("run"), py::arg("probe"), py::arg("plugin"),
          py::arg("metrics_json"))
      .def(
          "add_trigger_hit",
          [](PyProbeStore& s, int64_t run, std::string trigger,
             std::string probe, std::string node, std::string role,
             std::string detail, int64_t order) {
            Check(s.store().AddTriggerHit(
                {run, std::move(trigger), std::move(probe), std::move(node),
                 std::move(role), std::move(detail), order}));
          },
          py::arg("run"), py::arg("trigger"), py::arg("probe"), py::arg("node"),
          py::arg("role"), py::arg("detail") = "", py::arg("order") = 0)
      .def(
          "end_run",
          [](PyProbeStore& s, int64_t run, const std::string& status,
             const std::string& stopped_at, int64_t elapsed_ns) {
            ProbeStore& store = s.store();
            Status result;
            {
              py::gil_scoped_release release;
              result = store.EndRun(run, status, stopped_at, elapsed_ns);
            }
            Check(result);
          },
          py::arg("run"), py::arg("status") = "complete",
          py::arg("stopped_at") = "", py::arg("elapsed_ns") = 0)
      .def("runs_json",
           [](PyProbeStore& s) {
             std::vector<std::string> items;
             for (const ProbeRunInfo& r : Take(s.store().Runs())) {
               items.push_back(ProbeRunJson(r));
             }
             return JsonList(items);
           })
      .def(
          "latest_run_json",
          [](PyProbeStore& s, const std::string& level) {
            std::optional<ProbeRunInfo> r = Take(s.store().LatestRun(level));
            return r ? ProbeRunJson(*r) : std::string("null");
          },
          py::arg("level") = "")
      .def(
          "probes_json",
          [](PyProbeStore& s, int64_t run) {
            std::vector<std::string> items;
            for (const ProbeRecord& r : Take(s.store().Probes(run))) {
              items.push_back(ProbeRecordJson(r));
            }
            return JsonList(items);
          },
          py::arg("run"))
      .def(
          "probe_rows_json",
          [](PyProbeStore& s, const std::string& probe, int64_t run,
             size_t last) {
            std::vector<std::string> items;
            for (const ProbeRecord& r :
                 Take(s.store().ProbeRows(probe, run, last))) {
              items.push_back(ProbeRecordJson(r));
            }
            return JsonList(items);
          },
          py::arg("probe"), py::arg("run") = 0, py::arg("last") = 10)
      .def(
          "plugin_metrics_json",
          [](PyProbeStore& s, int64_t run) {
            std::vector<std::string> items;
            for (const ProbePluginMetrics& m :
                 Take(s.store().PluginMetrics(run))) {
              items.push_back(ProbePluginMetricsJson(m));
            }
            return JsonList(items);
          },
          py::arg("run"))
      .def(
          "trigger_hits_json",
          [](PyProbeStore& s, int64_t run) {
            std::vector<std::string> items;
            for (const ProbeTriggerHit& h : Take(s.store().TriggerHits(run))) {
              items.push_back(ProbeTriggerHitJson(h));
            }
            return JsonList(items);
          },
          py::arg("run"));
}

}  // namespace mi::python
