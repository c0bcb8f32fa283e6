// `model-inspector start`: prepares a run directory with a manifest and
// tells the user what to set so ONNX Runtime and PyTorch write into it.
// `export --input-dir` later detects what landed there by content.

#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/json_writer.h"
#include "model_inspector/session.h"

namespace mi {

namespace {

std::string CreatedTimestamp() {
  std::time_t now = std::time(nullptr);
  char created[32];
  std::strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ",
                std::gmtime(&now));
  return created;
}

// Single-quoted for a POSIX shell: ' becomes '\''.
std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

// CANN: GE writes graph dumps where DUMP_GRAPH_PATH says, msprof and
// torch_npu write PROF_* / *_ascend_pt directories where they are told;
// `export --input-dir` finds all of them by content. The output is
// eval-able: `eval "$(model-inspector start ... --backend cann)"`.
StatusOr<std::string> StartCannRunDirectory(const StartOptions& options,
                                            const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* sub : {"ge", "prof"}) {
    fs::create_directories(dir / sub, ec);
    if (ec) {
      return IoError((dir / sub).string() +
                     ": cannot create directory: " + ec.message());
    }
  }
  bool graph = options.enable_graph || !options.enable_runtime;
  bool runtime = options.enable_runtime || !options.enable_graph;
  std::string manifest;
  JsonWriter w(&manifest, /*pretty=*/true);
  w.BeginObject();
  w.FieldInt("model_inspector_run", 1);
  w.Field("created", CreatedTimestamp());
  w.Field("backend", "cann");
  w.FieldBool("enable_graph", graph);
  w.FieldBool("enable_runtime", runtime);
  // No fixed file names: GE and the profilers choose them; detection is by
  // content.
  w.Key("files").BeginObject().EndObject();
  w.EndObject();
  manifest.push_back('\n');
  MI_RETURN_IF_ERROR(
      WriteFileAtomically((dir / "manifest.json").string(), manifest));

  std::string d = dir.string();
  std::string text = fmt::format(
      "# model-inspector run directory for CANN: {0}\n"
      "# eval these lines in the shell that runs the model, then:\n"
      "#   model-inspector export --input-dir {0}\n"
      "export MODEL_INSPECTOR_RUN_DIR={1}\n",
      d, ShellQuote(d));
  if (graph) {
    text += fmt::format(
        "# GE graph dumps: every whitelisted stage (PreRunBegin ... Build), "
        "without weights, as ge_proto text\n"
        "export DUMP_GE_GRAPH=2\n"
        "export DUMP_GRAPH_LEVEL=2\n"
        "export DUMP_GRAPH_FORMAT=ge_proto\n"
        "export DUMP_GRAPH_PATH={0}\n",
        ShellQuote(d + "/ge"));
  }
  if (runtime) {
    text += fmt::format(
        "# Profiles (run one of these; both write under {0}/prof):\n"
        "#   msprof --output={0}/prof --application=\"python your_script.py\"\n"
        "#   torch_npu: torch_npu.profiler.profile(..., on_trace_ready="
        "torch_npu.profiler.tensorboard_trace_handler(\"{0}/prof\"))\n",
        d);
  }
  return text;
}

}  // namespace

StatusOr<std::string> StartRunDirectory(const StartOptions& options) {
  namespace fs = std::filesystem;
  if (options.output_dir.empty()) {
    return InvalidArgumentError("--output-dir is required");
  }
  if (options.backend != "onnxruntime" && options.backend != "cann") {
    return InvalidArgumentError(
        "--backend: expected 'onnxruntime' or 'cann', "
        "found '" +
        options.backend + "'");
  }
  fs::path dir = fs::absolute(options.output_dir);
  std::error_code ec;
  if (fs::exists(dir / "manifest.json")) {
    return InvalidArgumentError(
        dir.string() +
        ": already holds a run (manifest.json); choose a new --output-dir");
  }
  if (options.backend == "cann") return StartCannRunDirectory(options, dir);
  for (const char* sub : {"ort", "torch"}) {
    fs::create_directories(dir / sub, ec);
    if (ec) {
      return IoError((dir / sub).string() +
                     ": cannot create directory: " + ec.message());
    }
  }
  bool graph = options.enable_graph || !options.enable_runtime;
  bool runtime = options.enable_runtime || !options.enable_graph;
  std::time_t now = std::time(nullptr);
  char created[32];
  std::strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ",
                std::gmtime(&now));
  std::string manifest;
  JsonWriter w(&manifest, /*pretty=*/true);
  w.BeginObject();
  w.FieldInt("model_inspector_run", 1);
  w.Field("created", created);
  w.FieldBool("enable_graph", graph);
  w.FieldBool("enable_runtime", runtime);
  w.Key("files").BeginObject();
  w.Field("framework_model", "model.onnx");
  if (graph) w.Field("compiled_model", "ort/model.optimized.onnx");
  w.EndObject();
  w.EndObject();
  manifest.push_back('\n');
  MI_RETURN_IF_ERROR(
      WriteFileAtomically((dir / "manifest.json").string(), manifest));

  std::string d = dir.string();
  std::string text = fmt::format(
      "Run directory ready: {0}\n\n"
      "export MODEL_INSPECTOR_RUN_DIR={0}\n\n"
      "Save the framework model as {0}/model.onnx (e.g. torch.onnx.export).\n",
      d);
  if (graph || runtime) {
    text +=
        "\nONNX Runtime (Python: onnxruntime.SessionOptions, Node: the "
        "session options object):\n";
  }
  if (graph) {
    text += fmt::format(
        "  optimized_model_filepath = \"{0}/ort/model.optimized.onnx\"   "
        "# Node: optimizedModelFilePath\n",
        d);
  }
  if (runtime) {
    text += fmt::format(
        "  enable_profiling = True                          "
        "# Node: enableProfiling: true\n"
        "  profile_file_prefix = \"{0}/ort/onnxruntime_profile\"   "
        "# Node: profileFilePrefix\n"
        "\nPyTorch profiler:\n"
        "  torch.profiler.profile(..., on_trace_ready="
        "torch.profiler.tensorboard_trace_handler(\"{0}/torch\"))\n"
        "  # or prof.export_chrome_trace(\"{0}/torch/trace.json\")\n",
        d);
  }
  text += fmt::format(
      "\nAfterwards: model-inspector export --input-dir {0} --format json\n",
      d);
  return text;
}

}  // namespace mi
