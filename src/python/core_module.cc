// model_inspector._core: the Python package's view of the public Session
// API (python/model_inspector wraps it; docs/guides/python.md).
//
// Thin by design: every result crosses as the JSON its own Write() encodes
// (encoders/json_encoder.h), the same text as the CLI's `--format json`,
// the dumps and the HTTP API, and the Python side decodes it. So a field
// added to a result reaches Python with no change here. A failed Status
// raises the Python exception of its code (model_inspector/errors.py),
// with the message intact. Long calls release the GIL.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "encoders/json_encoder.h"
#include "model_inspector/diff.h"
#include "model_inspector/session.h"
#include "python/cluster_bindings.h"
#include "python/compare_bindings.h"
#include "python/probe_bindings.h"

namespace py = pybind11;

namespace mi::python {
namespace {

// A failed Status on its way to Python (translated in the module init).
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(const Status& status)
      : std::runtime_error(status.message()), code_(status.code()) {}
  StatusCode code() const { return code_; }

 private:
  StatusCode code_;
};

void Check(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

template <typename T>
T Take(StatusOr<T> value) {
  Check(value.status());
  return std::move(value).value();
}

std::string Json(const AnalysisResult& result) {
  return encoders::EncodeJson(result);
}

std::unique_ptr<Session> Open(std::vector<std::string> paths,
                              std::string framework_model,
                              std::string compiled_model, bool keep_going,
                              uint64_t memory_limit) {
  OpenOptions options;
  options.paths = std::move(paths);
  options.framework_model = std::move(framework_model);
  options.compiled_model = std::move(compiled_model);
  options.keep_going = keep_going;
  options.memory_limit = memory_limit;
  return Take(Session::Open(options));
}

// Input files and diagnostics are plain structs of the public API, not
// results with a Write(): handed over as dicts of their fields.
py::list Inputs(const Session& session) {
  py::list out;
  for (const InputFile& f : session.inputs()) {
    out.append(py::dict(py::arg("path") = f.path, py::arg("format") = f.format,
                        py::arg("role") = f.role));
  }
  return out;
}

py::list Diagnostics(const Session& session) {
  py::list out;
  for (const DiagnosticInfo& d : session.Diagnostics()) {
    out.append(py::dict(
        py::arg("code") = d.code, py::arg("severity") = d.severity,
        py::arg("count") = d.count, py::arg("description") = d.description,
        py::arg("examples") = d.examples));
  }
  return out;
}

std::string SummaryJson(const Session& session, int top, int run,
                        std::optional<int64_t> from_ns,
                        std::optional<int64_t> to_ns, bool calibrated) {
  SummaryOptions options;
  options.top_nodes = top;
  options.run = run;
  if (from_ns) options.from_ns = *from_ns;
  if (to_ns) options.to_ns = *to_ns;
  options.clock = calibrated ? TraceClock::kCalibrated : TraceClock::kRaw;
  return Json(session.Summary(options));
}

std::string AnalysesJson(const Session& session) {
  AnalysisListResult list;
  list.analyses = session.Analyses();
  return Json(list);
}

std::string RunAnalysisJson(const Session& session, const std::string& id,
                            const AnalysisParams& params) {
  return Json(*Take(session.RunAnalysis(id, params)));
}

std::string DigestJson(const Session& session, std::string model,
                       std::string label, std::string git_commit) {
  DigestOptions options;
  options.meta.model = std::move(model);
  options.meta.label = std::move(label);
  options.meta.git_commit = std::move(git_commit);
  return RunDigestJson(session.Digest(options));
}

// A digest of files or a run directory (opened as `summary` opens them), or
// of a digest file read as it is: one side of a diff.
std::string LoadDigestJson(std::vector<std::string> paths, std::string label,
                           uint64_t memory_limit) {
  DiffInputOptions options;
  options.paths = std::move(paths);
  options.digest.meta.label = std::move(label);
  options.memory_limit = memory_limit;
  return RunDigestJson(Take(LoadDiffInput(options)));
}

// `model-inspector diff BASE NEW --fail-on RULES` on two digests (their
// JSON text; `*_name` names them in parse errors).
std::string DiffJson(const std::string& base_json, const std::string& base_name,
                     const std::string& new_json, const std::string& new_name,
                     std::optional<std::string> fail_on) {
  RunDigest base = Take(ParseRunDigest(base_json, base_name));
  RunDigest next = Take(ParseRunDigest(new_json, new_name));
  std::vector<DiffRule> rules =
      Take(ParseFailOn(fail_on ? *fail_on : DefaultFailOn()));
  DiffReport report = Take(DiffRuns(base, next, DiffOptions()));
  ApplyDiffRules(rules, report);
  return Json(report);
}

}  // namespace
}  // namespace mi::python

PYBIND11_MODULE(_core, m) {
  using namespace mi;
  using namespace mi::python;
  using Release = py::call_guard<py::gil_scoped_release>;
  m.doc() =
      "model-inspector's C++ core (use the model_inspector package instead)";

  // The exception classes live in errors.py, where users read them; it is
  // imported at raise time (the package has imported this module by then).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      py::object error =
          py::module_::import("model_inspector.errors")
              .attr("from_status")(std::string(StatusCodeName(e.code())),
                                   std::string(e.what()));
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())),
                      error.ptr());
    }
  });

  m.def("version", [] { return std::string(Version()); });
  m.def("detect_format", &DetectInputFormat, py::arg("path"), Release());
  m.def("registered_analyses_json", [] {
    AnalysisListResult list;
    list.analyses = RegisteredAnalyses();
    return Json(list);
  });
  m.def("default_fail_on", [] { return std::string(DefaultFailOn()); });
  m.def("load_digest_json", &LoadDigestJson, py::arg("paths"),
        py::arg("label") = "", py::arg("memory_limit") = 0, Release());
  m.def("diff_json", &DiffJson, py::arg("base_json"), py::arg("base_name"),
        py::arg("new_json"), py::arg("new_name"),
        py::arg("fail_on") = std::nullopt, Release());

  py::class_<Session>(m, "Session")
      .def_static("open", &Open, py::arg("paths"),
                  py::arg("framework_model") = "",
                  py::arg("compiled_model") = "", py::arg("keep_going") = false,
                  py::arg("memory_limit") = 0, Release())
      .def("inputs", &Inputs)
      .def("diagnostics", &Diagnostics)
      .def("levels", &Session::Levels)
      .def("summary_json", &SummaryJson, py::arg("top") = 20,
           py::arg("run") = -1, py::arg("from_ns") = std::nullopt,
           py::arg("to_ns") = std::nullopt, py::arg("calibrated") = false,
           Release())
      .def("analyses_json", &AnalysesJson)
      .def("run_analysis_json", &RunAnalysisJson, py::arg("id"),
           py::arg("params"), Release())
      .def(
          "find_node_id",
          [](const Session& s, const std::string& level,
             const std::string& name) {
            return Take(s.FindNodeId(level, name));
          },
          py::arg("level"), py::arg("name"))
      .def(
          "node_details_json",
          [](const Session& s, const std::string& level, uint32_t node) {
            return Json(Take(s.NodeDetails(level, node)));
          },
          py::arg("level"), py::arg("node"), Release())
      .def(
          "search_json",
          [](const Session& s, const std::string& level,
             const std::string& query, const std::string& mode, size_t limit) {
            return Take(s.SearchJson(level, query, mode, limit));
          },
          py::arg("level"), py::arg("query"), py::arg("mode"), py::arg("limit"),
          Release())
      .def(
          "export_dumps",
          [](const Session& s, const std::string& out_dir) {
            Check(s.ExportDumps(out_dir));
          },
          py::arg("out_dir"), Release())
      .def(
          "properties_json",
          [](const Session& s, const std::string& level) {
            return Take(s.ModelPropertiesJson(level));
          },
          py::arg("level"), Release())
      .def(
          "tensor_values_json",
          [](const Session& s, const std::string& level,
             const std::string& name, size_t limit) {
            return Take(s.TensorValuesJson(level, name, limit));
          },
          py::arg("level"), py::arg("name"), py::arg("limit"), Release())
      .def("digest_json", &DigestJson, py::arg("model") = "",
           py::arg("label") = "", py::arg("git_commit") = "", Release())
      // A training snapshot's views (session.h "Training snapshots").
      .def("training_snapshot_path", &Session::TrainingSnapshotPath)
      .def(
          "training_overview_json",
          [](const Session& s) { return Take(s.TrainingOverviewJson()); },
          Release())
      .def(
          "training_layer_series_json",
          [](const Session& s, int32_t layer) {
            return Take(s.TrainingLayerSeriesJson(layer));
          },
          py::arg("layer"), Release())
      .def(
          "training_histograms_json",
          [](const Session& s, int64_t step, int32_t layer) {
            return Take(s.TrainingHistogramsJson(step, layer));
          },
          py::arg("step"), py::arg("layer") = -1, Release())
      .def(
          "training_attention_json",
          [](const Session& s, int64_t step, int32_t layer) {
            return Take(s.TrainingAttentionJson(step, layer));
          },
          py::arg("step"), py::arg("layer"), Release())
      .def(
          "training_projection_json",
          [](const Session& s, int64_t step, int32_t layer,
             const std::string& method) {
            return Take(s.TrainingProjectionJson(step, layer, method));
          },
          py::arg("step"), py::arg("layer"), py::arg("method") = "pca",
          Release())
      .def(
          "training_samples_json",
          [](const Session& s, int64_t step) {
            return Take(s.TrainingSamplesJson(step));
          },
          py::arg("step"), Release());

  RegisterProbeBindings(m);
  RegisterCompareBindings(m);
  RegisterClusterBindings(m);
}
