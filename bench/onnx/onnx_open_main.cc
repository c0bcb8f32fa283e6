// mi_bench_onnx_open: imports one ONNX file with our importer and prints
// node count, wall time and peak RSS (for bench/onnx/bench_onnx_open.sh).
//
//   mi_bench_onnx_open <model.onnx|model.onnxtxt> [--dump]
//
// Output (one line, key=value): nodes=... graphs=... values=... wall_ms=...
// cpu_ms=... peak_rss_kb=... file_bytes=...; wall_ms and cpu_ms cover the
// import alone (not process start or exit); --dump also prints every node
// with the types of its inputs and outputs, and the diagnostics.

#include <sys/resource.h>
#include <sys/stat.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "importers/onnx/onnx_importer.h"
#include "model/model.h"

namespace {

double ProcessCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void Dump(const mi::Model& model) {
  for (uint32_t g = 0; g < model.graph_count(); ++g) {
    const mi::GraphInfo& info = model.graph(mi::GraphId(g));
    fmt::print("graph {} '{}' level={} producer='{}' opset={} parent={}\n", g,
               model.str(info.name), mi::LayerLevelName(info.level),
               model.str(info.producer), info.opset,
               info.parent_graph.valid()
                   ? static_cast<int64_t>(info.parent_graph.value())
                   : -1);
    for (mi::NodeId n : model.graph_nodes(mi::GraphId(g))) {
      std::string line = fmt::format(
          "  {} {}:{} (", model.str(model.node_name(n)),
          model.str(model.node_domain(n)), model.str(model.node_op_type(n)));
      for (mi::ValueId v : model.node_inputs(n)) {
        line += v.valid()
                    ? fmt::format("{}:{} ", model.str(model.value_name(v)),
                                  model.FormatValueType(v))
                    : std::string("<none> ");
      }
      line += ") -> (";
      for (mi::ValueId v : model.node_outputs(n)) {
        line += v.valid()
                    ? fmt::format("{}:{} ", model.str(model.value_name(v)),
                                  model.FormatValueType(v))
                    : std::string("<none> ");
      }
      line += ")";
      for (const mi::Attribute& a : model.node_attributes(n)) {
        line += fmt::format(" {}={}", model.str(a.name),
                            a.kind == mi::AttributeKind::kInt
                                ? std::to_string(a.int_value)
                            : a.kind == mi::AttributeKind::kFloat
                                ? fmt::format("{}", a.float_value)
                                : std::string(model.str(a.text)));
      }
      fmt::print("{}\n", line);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <model.onnx> [--dump]\n", argv[0]);
    return 2;
  }
  bool dump = argc > 2 && std::strcmp(argv[2], "--dump") == 0;
  std::string path = argv[1];
  bool text = path.ends_with(".onnxtxt") || path.ends_with(".onnx.txt");

  auto start = std::chrono::steady_clock::now();
  const double cpu_start = ProcessCpuMs();
  mi::StringPool strings;
  mi::Model model(&strings);
  mi::DiagnosticSink diagnostics;
  mi::importers::ImportContext ctx;
  ctx.path = path;
  ctx.model = &model;
  ctx.diagnostics = &diagnostics;
  std::unique_ptr<mi::importers::Importer> importer =
      text ? mi::importers::CreateOnnxTextImporter()
           : mi::importers::CreateOnnxImporter();
  mi::Status status = importer->Import(ctx);
  auto end = std::chrono::steady_clock::now();
  const double cpu_ms = ProcessCpuMs() - cpu_start;
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return mi::ExitCodeFor(status.code());
  }
  double wall_ms =
      std::chrono::duration<double, std::milli>(end - start).count();
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  struct stat st;
  uint64_t file_bytes = ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
  if (dump) {
    Dump(model);
    for (const mi::Diagnostic& d : diagnostics.log()) {
      fmt::print("diagnostic {} ({}): {}\n", mi::DiagnosticName(d.code),
                 mi::SeverityName(mi::DiagnosticSeverity(d.code)), d.message);
    }
  }
  fmt::print(
      "nodes={} graphs={} values={} wall_ms={:.2f} cpu_ms={:.2f} "
      "peak_rss_kb={} file_bytes={} errors={}\n",
      model.node_count(), model.graph_count(), model.value_count(), wall_ms,
      cpu_ms, usage.ru_maxrss, file_bytes,
      diagnostics.CountWithSeverity(mi::Severity::kError));
  return 0;
}
