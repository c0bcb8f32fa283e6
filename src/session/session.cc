#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/summary/summary.h"
#include "analysis/timing/calibration.h"
#include "base/atomic_file.h"
#include "base/mapped_file.h"
#include "encoders/json_encoder.h"
#include "importers/builtin_importers.h"
#include "importers/common/registry.h"
#include "io/chunk_reader.h"
#include "linker/linker.h"
#include "linker/shape_completion.h"
#include "model_inspector/probes.h"
#include "model_inspector/session.h"
#include "session/layout_view.h"
#include "session/session_impl.h"

namespace mi {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kManifestName = "manifest.json";
// Folders never scanned inside a run directory.
bool IsIgnoredDirectory(const fs::path& p) {
  std::string name = p.filename().string();
  return name.empty() || name[0] == '.' || name == "node_modules" ||
         name == "model-inspector-export";
}

struct PendingFile {
  std::string path;
  importers::LevelHint hint = importers::LevelHint::kAuto;
  bool explicit_path = false;  // named by the user, not found in a folder
  // The source a trace file belongs to when an importer's claim put it in
  // one (the files of one profiler output folder), with the rank the folder
  // states; empty: the file is a source of its own.
  std::string source_key;
  int32_t source_rank = -1;
};

// Appends a listing's files in the load order the importers' claims gave
// it, and keeps what they left out (reported once the diagnostics exist).
void AppendClaimed(const importers::RunFiles& run, importers::LevelHint hint,
                   bool explicit_path, std::vector<PendingFile>* files,
                   std::vector<importers::RunFiles::LeftOut>* left_out) {
  for (size_t i : run.LoadOrder()) {
    PendingFile file{run.files()[i].path, hint, explicit_path, {}, -1};
    if (const importers::RunFiles::Source* source = run.source_of(i)) {
      file.source_key = source->key;
      file.source_rank = source->rank;
    }
    files->push_back(std::move(file));
  }
  for (importers::RunFiles::LeftOut& l : run.left_out()) {
    left_out->push_back(std::move(l));
  }
}

// The walked directory's own name, the first part of every
// RunFiles::File::in_run ("." and trailing separators resolved).
std::string RunDirectoryName(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (ec) p = fs::path(dir);
  p = p.lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

// Reads a run directory's manifest: {"files": {"framework_model": "...",
// "compiled_model": "..."}} with paths relative to the directory.
Status ReadManifest(const fs::path& dir, std::vector<PendingFile>* files,
                    std::vector<std::string>* claimed) {
  fs::path manifest = dir / kManifestName;
  std::string text;
  MI_ASSIGN_OR_RETURN(text, ReadWholeFile(manifest.string()));
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return MalformedInputError(manifest.string() +
                               ": not valid JSON; expected the run manifest "
                               "written by `model-inspector start`");
  }
  auto it = doc.find("files");
  if (it == doc.end() || !it->is_object()) return Status::Ok();
  for (auto [key, hint] :
       {std::pair{"framework_model", importers::LevelHint::kFramework},
        std::pair{"compiled_model", importers::LevelHint::kCompiled}}) {
    auto f = it->find(key);
    if (f == it->end() || !f->is_string()) continue;
    fs::path p = dir / f->get<std::string>();
    if (!fs::exists(p)) continue;  // not produced (yet): nothing to load
    files->push_back({p.lexically_normal().string(), hint, true});
    claimed->push_back(fs::weakly_canonical(p).string());
  }
  return Status::Ok();
}

// Expands the paths into the files to load. Every path is offered to the
// importers' claims (importers/common/run_files.h): a directory with its
// files, a named file alone; what they know about their tools' output
// folders decides sources, load order and what is left out.
// A run directory's probe store (probes/probes.db, written by the Python
// package's Inspector) is not an input file: its folder is left out of the
// walk and the directory holding it is remembered in `probe_run_dir` (the
// first one found).
Status ExpandPaths(const OpenOptions& options,
                   const importers::ImporterRegistry& registry,
                   std::vector<PendingFile>* files,
                   std::vector<importers::RunFiles::LeftOut>* left_out,
                   std::string* probe_run_dir) {
  if (!options.framework_model.empty()) {
    files->push_back(
        {options.framework_model, importers::LevelHint::kFramework, true});
  }
  if (!options.compiled_model.empty()) {
    files->push_back(
        {options.compiled_model, importers::LevelHint::kCompiled, true});
  }
  for (const std::string& path : options.paths) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
      return NotFoundError(path + ": no such file or directory");
    }
    if (!fs::is_directory(st)) {
      importers::RunFiles named({{path, path}}, /*named=*/true);
      registry.ClaimRunFiles(named);
      AppendClaimed(named, importers::LevelHint::kAuto, true, files, left_out);
      continue;
    }
    std::vector<std::string> claimed;
    if (fs::exists(fs::path(path) / kManifestName)) {
      MI_RETURN_IF_ERROR(ReadManifest(path, files, &claimed));
    }
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory() && IsIgnoredDirectory(it->path())) {
        it.disable_recursion_pending();
        continue;
      }
      // A probe store's folder (the run directory's, or a run's inside a
      // folder of runs): not input files.
      if (it->is_directory() && it->path().filename() == "probes" &&
          ProbeStore::Exists(it->path().parent_path().string())) {
        if (probe_run_dir->empty()) {
          *probe_run_dir = it->path().parent_path().string();
        }
        it.disable_recursion_pending();
        continue;
      }
      if (it.depth() > 4) it.disable_recursion_pending();
      if (!it->is_regular_file()) continue;
      if (it->path().filename() == kManifestName) continue;
      std::string canonical = fs::weakly_canonical(it->path()).string();
      if (std::find(claimed.begin(), claimed.end(), canonical) !=
          claimed.end()) {
        continue;
      }
      found.push_back(it->path());
    }
    if (ec) return IoError(path + ": cannot list directory: " + ec.message());
    std::sort(found.begin(), found.end());
    const fs::path root_name = RunDirectoryName(path);
    std::vector<importers::RunFiles::File> listing;
    listing.reserve(found.size());
    for (const fs::path& p : found) {
      listing.push_back(
          {p.string(), (root_name / p.lexically_relative(path)).string()});
    }
    importers::RunFiles run(std::move(listing), /*named=*/false);
    registry.ClaimRunFiles(run);
    AppendClaimed(run, importers::LevelHint::kAuto, false, files, left_out);
  }
  if (files->empty()) {
    if (!probe_run_dir->empty()) {
      return InvalidArgumentError(
          "no input: " + *probe_run_dir +
          " holds tensor probes only (probes/probes.db) and no model or "
          "trace; `model-inspector probes " +
          *probe_run_dir + "` lists them");
    }
    return InvalidArgumentError(
        "no input: give a model, a trace, or a run directory");
  }
  return Status::Ok();
}

bool LooksOptimised(std::string_view path) {
  std::string name = fs::path(path).filename().string();
  return name.find("optim") != std::string::npos ||
         name.find(".opt.") != std::string::npos;
}

// A root graph read from a model file, with the role the caller gave it.
struct LoadedRoot {
  GraphId graph;
  importers::LevelHint hint = importers::LevelHint::kAuto;
  size_t input = 0;  // index into Impl::inputs
};

bool IsGeStage(const Model& model, GraphId g) {
  std::string_view producer = model.str(model.graph(g).producer);
  return producer.size() > 3 && producer.substr(0, 3) == "GE ";
}

// Whether two graphs can be levels of one model: they share a graph input
// or output name (ONNX Runtime and GE keep them). Graphs that name none
// cannot be told apart and count as related.
bool SharesGraphTensorNames(const Model& model, GraphId a, GraphId b) {
  auto names = [&](GraphId g) {
    std::vector<uint32_t> out;
    for (ValueId v : model.graph(g).inputs) {
      if (v.valid()) out.push_back(model.value_name(v).value());
    }
    for (ValueId v : model.graph(g).outputs) {
      if (v.valid()) out.push_back(model.value_name(v).value());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  std::vector<uint32_t> na = names(a), nb = names(b);
  if (na.empty() || nb.empty()) return true;
  std::vector<uint32_t> common;
  std::set_intersection(na.begin(), na.end(), nb.begin(), nb.end(),
                        std::back_inserter(common));
  return !common.empty();
}

// Distinct node names the trace's tasks give (ONNX Runtime profiles, CANN
// timelines) found in a root graph: the graph the trace names best is the
// one that ran.
size_t TraceNamesFound(const Model& model, const Trace& trace, GraphId root) {
  std::vector<uint32_t> names;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    StringId n = trace.task_node_name(TaskId(i));
    if (n != StringPool::kEmpty) names.push_back(n.value());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  size_t found = 0;
  for (uint32_t n : names) {
    if (!model.FindNodes(root, trace.str(StringId(n))).empty()) ++found;
  }
  return found;
}

std::string GraphFile(const Model& model, GraphId g) {
  return std::string(model.str(model.graph(g).source_file));
}

// Decides the framework and the compiled graph among the loaded models
// (see docs/design/architecture.md "Model roles"), in this order:
//  1. explicit roles (--framework / --compiled, the run manifest);
//  2. the level the importer read from the content (ONNX Runtime contrib
//     / NCHWc domains, GE stage names and declared origins; a GE Build
//     stage is the compiled level of a dump directory);
//  3. of two framework-looking graphs of one model (sharing graph input or
//     output names), the one whose node names the trace names best ran;
//  4. a file name saying "optim" / ".opt." (info diagnostic: a guess).
// A model none of this places is reported (model_unplaced) and listed with
// role "unplaced"; GE dump stages are all placed, as stage levels.
void PlaceModels(const std::vector<LoadedRoot>& roots, Session::Impl* impl) {
  Model& model = impl->model;
  DiagnosticSink& diagnostics = impl->diagnostics;
  size_t ge_stages = 0;
  for (const LoadedRoot& r : roots) ge_stages += IsGeStage(model, r.graph);
  const bool stage_dump = ge_stages >= 2;
  auto is_stage = [&](GraphId g) { return stage_dump && IsGeStage(model, g); };

  GraphId framework, compiled;
  bool framework_explicit = false;
  for (const LoadedRoot& r : roots) {
    if (r.hint == importers::LevelHint::kFramework && !framework.valid()) {
      framework = r.graph;
      framework_explicit = true;
    } else if (r.hint == importers::LevelHint::kCompiled && !compiled.valid()) {
      compiled = r.graph;
    }
  }
  auto placed = [&](GraphId g) { return g == framework || g == compiled; };
  if (!framework.valid()) {
    for (const LoadedRoot& r : roots) {
      if (!placed(r.graph) && r.hint == importers::LevelHint::kAuto &&
          model.graph(r.graph).level == LayerLevel::kFramework) {
        framework = r.graph;
        break;
      }
    }
  }
  if (!compiled.valid()) {
    // A directory of GE dump stages: the Build exit graph is the compiled
    // level (the earliest stage, first in load order, is the framework).
    for (const LoadedRoot& r : roots) {
      if (!placed(r.graph) &&
          model.graph(r.graph).level == LayerLevel::kCompiled &&
          model.str(model.graph(r.graph).producer) == "GE Build") {
        compiled = r.graph;
        break;
      }
    }
  }
  if (!compiled.valid()) {
    for (const LoadedRoot& r : roots) {
      if (!placed(r.graph) && r.hint == importers::LevelHint::kAuto &&
          model.graph(r.graph).level == LayerLevel::kCompiled) {
        compiled = r.graph;
        break;
      }
    }
  }
  // Two framework-looking graphs and no compiled one.
  std::vector<std::pair<GraphId, std::string>> unplaced;
  if (framework.valid() && !compiled.valid()) {
    GraphId other;
    for (const LoadedRoot& r : roots) {
      if (!placed(r.graph) && !is_stage(r.graph) &&
          model.graph(r.graph).level == LayerLevel::kFramework) {
        other = r.graph;
        break;
      }
    }
    if (other.valid()) {
      const std::string framework_file = GraphFile(model, framework);
      const std::string other_file = GraphFile(model, other);
      if (!SharesGraphTensorNames(model, framework, other)) {
        unplaced.emplace_back(
            other,
            "shares no graph input or output name with the framework "
            "graph '" +
                framework_file +
                "': it is a graph of another model, so it cannot be "
                "that model's compiled graph");
      } else {
        size_t in_framework = TraceNamesFound(model, impl->trace, framework);
        size_t in_other = TraceNamesFound(model, impl->trace, other);
        if (framework_explicit || in_other > in_framework) {
          compiled = other;  // the other role is the only one left / it ran
        } else if (in_framework > in_other) {
          compiled = framework;  // the trace ran this one
          framework = other;
        } else if (LooksOptimised(other_file) ||
                   LooksOptimised(framework_file)) {
          if (!LooksOptimised(other_file)) std::swap(framework, other);
          compiled = other;
          diagnostics.Report(
              DiagnosticCode::kModelRoleGuessed, {GraphFile(model, compiled)},
              "taken as the compiled graph of '" + GraphFile(model, framework) +
                  "' because its file name says 'optim' / '.opt.': neither "
                  "graph uses compiler-only ops and the trace does not tell "
                  "which one ran");
        } else {
          unplaced.emplace_back(
              other,
              "looks like a framework graph as '" + framework_file +
                  "' does, and nothing tells which of the two ran (no "
                  "compiler-only ops, the trace names neither better); name "
                  "the compiled one with --compiled or a run manifest");
        }
      }
    }
  }
  if (compiled.valid()) model.SetLevel(compiled, LayerLevel::kCompiled);
  if (framework.valid()) model.SetLevel(framework, LayerLevel::kFramework);
  for (const LoadedRoot& r : roots) {
    if (placed(r.graph) || is_stage(r.graph)) continue;
    if (std::none_of(unplaced.begin(), unplaced.end(),
                     [&](const auto& u) { return u.first == r.graph; })) {
      std::string why =
          r.hint == importers::LevelHint::kFramework
              ? "is a second framework model given explicitly"
          : r.hint == importers::LevelHint::kCompiled
              ? "is a second compiled model given explicitly"
              : "is one model too many: the framework graph is '" +
                    (framework.valid() ? GraphFile(model, framework)
                                       : std::string("-")) +
                    "' and the compiled graph '" +
                    (compiled.valid() ? GraphFile(model, compiled)
                                      : std::string("-")) +
                    "'";
      unplaced.emplace_back(r.graph, std::move(why));
    }
  }
  for (const auto& [g, why] : unplaced) {
    diagnostics.Report(DiagnosticCode::kModelUnplaced, {GraphFile(model, g)},
                       "model '" + std::string(model.str(model.graph(g).name)) +
                           "' not placed: it " + why +
                           "; it is loaded but not linked");
  }
  impl->framework = framework;
  impl->compiled = compiled;
  for (const LoadedRoot& r : roots) {
    InputFile& input = impl->inputs[r.input];
    if (r.graph == framework) {
      input.role = "framework";
    } else if (r.graph == compiled) {
      input.role = "compiled";
    } else if (is_stage(r.graph)) {
      input.role = std::string(LayerLevelName(model.graph(r.graph).level));
    } else {
      input.role = "unplaced";
    }
  }
}

// Names repeated within a graph: reported once per repeat, with both nodes.
void ReportDuplicateNodeNames(Session::Impl* impl) {
  const Model& model = impl->model;
  for (const auto& [first, later] : model.duplicate_node_names()) {
    GraphId root = model.RootOf(model.node_graph(first));
    std::string name(model.str(model.node_name(first)));
    impl->diagnostics.Report(
        DiagnosticCode::kDuplicateNodeName, {GraphFile(model, root)},
        fmt::format("node {} ({}) and node {} ({}) are both named '{}'; a "
                    "task or declared origin naming '{}' is linked by op type "
                    "when that decides, else left unlinked",
                    first.value(), model.str(model.node_op_type(first)),
                    later.value(), model.str(model.node_op_type(later)), name,
                    name));
  }
}

std::string FormatLocation(const SourceLocation& loc) {
  if (loc.file.empty()) return "";
  if (loc.has_byte) return fmt::format("{}@byte {}: ", loc.file, loc.byte);
  if (loc.line > 0) {
    return fmt::format("{}:{}:{}: ", loc.file, loc.line, loc.column);
  }
  return loc.file + ": ";
}

}  // namespace

std::string_view Version() { return "0.1.0"; }

std::string DetectInputFormat(const std::string& path) {
  // The head Open sniffs, so both agree (a long '//' block included).
  auto head = importers::ReadSniffHead(path);
  if (!head.ok()) return {};
  importers::ImporterRegistry registry(importers::CreateBuiltinImporters());
  const importers::Importer* importer = registry.Detect(*head, path);
  return importer != nullptr ? std::string(importer->descriptor().name)
                             : std::string();
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

StatusOr<std::unique_ptr<Session>> Session::Open(const OpenOptions& options) {
  importers::ImporterRegistry registry(importers::CreateBuiltinImporters());
  std::vector<PendingFile> files;
  std::vector<importers::RunFiles::LeftOut> left_out;
  std::string probe_run_dir;
  MI_RETURN_IF_ERROR(
      ExpandPaths(options, registry, &files, &left_out, &probe_run_dir));
  auto impl = std::make_unique<Impl>();
  impl->probe_run_dir = std::move(probe_run_dir);
  if (options.memory_limit > 0) {
    impl->own_budget = std::make_unique<MemoryBudget>(options.memory_limit);
  }
  impl->held = std::make_unique<MemoryCharge>(impl->own_budget.get());
  for (const importers::RunFiles::LeftOut& l : left_out) {
    std::string examples;
    for (size_t i = 0; i < l.paths.size() && i < 3; ++i) {
      examples += (i ? ", " : "") + fs::path(l.paths[i]).filename().string();
    }
    if (l.paths.size() > 3) examples += ", ...";
    impl->diagnostics.Report(
        DiagnosticCode::kRunFileLeftOut, {l.paths.front()},
        fmt::format("{} file{} left out by {}: {} ({})", l.paths.size(),
                    l.paths.size() == 1 ? "" : "s", l.importer, l.why,
                    examples));
  }

  std::vector<LoadedRoot> roots;
  std::vector<uint32_t> ranks_read;  // sources whose folder was looked at
  for (const PendingFile& file : files) {
    auto head = importers::ReadSniffHead(file.path);
    if (!head.ok()) {
      if (!file.explicit_path) {
        impl->diagnostics.Report(DiagnosticCode::kFileSkipped, {file.path},
                                 head.status().message());
        continue;
      }
      return std::move(head).status();
    }
    const importers::Importer* importer = registry.Detect(*head, file.path);
    if (head->empty() && file.explicit_path && importer == nullptr) {
      // Nothing to sniff (and no importer claimed the file by its name):
      // let the importer the extension names explain what it expected;
      // without one, say so in general terms.
      importer = registry.FindByExtension(file.path);
      if (importer == nullptr) {
        return MalformedInputError(
            file.path + ": empty file; expected an ONNX model or a trace");
      }
    }
    if (importer == nullptr) {
      if (!file.explicit_path) {
        impl->diagnostics.Report(DiagnosticCode::kFileSkipped, {file.path},
                                 "not a recognised model or trace format");
        continue;
      }
      return UnsupportedError(file.path +
                              ": not a recognised format; expected " +
                              registry.DescribeFormats());
    }
    importers::ImportContext ctx;
    ctx.path = file.path;
    ctx.model = &impl->model;
    ctx.trace = &impl->trace;
    ctx.diagnostics = &impl->diagnostics;
    ctx.level_hint = file.hint;
    training::TrainingRecord training;
    ctx.training = &training;
    ctx.budget = &impl->held->budget();
    ctx.held = impl->held.get();
    const bool trace_file =
        importer->descriptor().content == importers::ContentKind::kTrace;
    if (trace_file) {
      // The files an importer's claim grouped share a source, with the rank
      // their folder states (set once, before the first file is read, so it
      // wins over what a trace says itself); any other file is its own.
      const std::string& key =
          file.source_key.empty() ? file.path : file.source_key;
      ctx.source = impl->trace.FindOrAddSource(impl->strings.Intern(key));
      if (!file.source_key.empty() &&
          std::find(ranks_read.begin(), ranks_read.end(), ctx.source.value()) ==
              ranks_read.end()) {
        ranks_read.push_back(ctx.source.value());
        if (file.source_rank >= 0) {
          impl->trace.mutable_source(ctx.source).rank = file.source_rank;
        }
      }
    }
    if (options.progress) {
      ctx.progress = [&options, &file](uint64_t done, uint64_t total) {
        options.progress(file.path, done, total);
      };
    }
    MI_RETURN_IF_ERROR(importer->Import(ctx));
    if (!training.path.empty()) {
      // One training run per session: its views and diagnosis read one
      // record.
      if (!impl->training.path.empty()) {
        return InvalidArgumentError(
            file.path + ": a second training snapshot; a run holds one (" +
            impl->training.path + " is open)");
      }
      impl->training = std::move(training);
    }
    // Formats read whole (ONNX, .om, GE dumps) are charged once read.
    MI_RETURN_IF_ERROR(importers::ChargeBuilt(ctx, file.path));
    InputFile input;
    input.path = file.path;
    input.format = std::string(importer->descriptor().name);
    if (trace_file) {
      input.role = "trace";
    } else {
      for (GraphId g : ctx.graphs_added) {
        if (file.hint == importers::LevelHint::kFramework) {
          impl->model.SetLevel(g, LayerLevel::kFramework);
        } else if (file.hint == importers::LevelHint::kCompiled) {
          impl->model.SetLevel(g, LayerLevel::kCompiled);
        }
        input.role = std::string(LayerLevelName(impl->model.graph(g).level));
        roots.push_back({g, file.hint, impl->inputs.size()});
      }
    }
    impl->inputs.push_back(std::move(input));
  }

  Model& model = impl->model;
  PlaceModels(roots, impl.get());
  ReportDuplicateNodeNames(impl.get());
  model.BuildIndexes();
  impl->links =
      linker::Link(model, &impl->trace, {impl->framework, impl->compiled},
                   &impl->diagnostics);
  // Shapes the compiled file lacks (contrib ops have no schema for
  // inference) come from the framework graph and from what the runtime saw.
  linker::CompleteShapes(&model, impl->trace, impl->framework, impl->compiled);
  if (options.calibrate_clocks && impl->trace.task_count() > 0) {
    impl->calibration =
        analysis::Calibrate(model, impl->trace, impl->links, {});
    analysis::ApplyCalibration(impl->calibration, &impl->trace);
  }

  // Faults of the graph itself, which a viewer can show on the graph.
  auto allowed = [&options](DiagnosticCode code) {
    return options.allow_graph_faults &&
           (code == DiagnosticCode::kDanglingInput ||
            code == DiagnosticCode::kGraphCycle);
  };
  uint64_t blocking = 0;
  for (const Diagnostic& d : impl->diagnostics.log()) {
    if (DiagnosticSeverity(d.code) == Severity::kError && !allowed(d.code)) {
      ++blocking;
    }
  }
  if (!options.keep_going && blocking > 0) {
    std::string message;
    int shown = 0;
    for (const Diagnostic& d : impl->diagnostics.log()) {
      if (DiagnosticSeverity(d.code) != Severity::kError || allowed(d.code)) {
        continue;
      }
      if (shown++ == 5) break;
      if (!message.empty()) message += "\n  ";
      message += FormatLocation(d.location) + d.message;
    }
    if (blocking > 5) {
      message += fmt::format("\n  ... and {} more", blocking - 5);
    }
    return MalformedInputError(message +
                               "\n(use --keep-going to load the input anyway)");
  }
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<InputFile>& Session::inputs() const { return impl_->inputs; }

SummaryReport Session::Summary(const SummaryOptions& options) const {
  SummaryReport report =
      analysis::Summarize(impl_->model, impl_->trace, impl_->links, options);
  if (!options.has_window()) {
    AddWholeTraceAnalyses(*this, *impl_, options, &report);
  }
  return report;
}

Status Session::ExportDumps(const std::string& out_dir) const {
  // Encode everything first, then write the four files as one set: the
  // directory holds either the previous export or this one, never a mix
  // (base/atomic_file.h).
  std::string graph = EncodeGraphJson(*impl_);
  std::string trace = EncodeTraceJson(*impl_);
  SummaryOptions options;
  options.top_nodes = 50;
  std::string summary =
      encoders::EncodeJson(Summary(options), encoders::JsonStyle::kPretty);
  std::string analyses =
      encoders::EncodeJson(ExportedAnalyses(), encoders::JsonStyle::kPretty);
  std::vector<FileContent> files = {{"graph.json", graph},
                                    {"trace.json", trace},
                                    {"summary.json", summary},
                                    {"analyses.json", analyses}};
  // Ranks of several sources: the cluster report too (the JSON of
  // `cluster --format json`, docs/reference/schemas/cluster.schema.json).
  std::string cluster;
  if (HasSeveralRanks()) {
    MI_ASSIGN_OR_RETURN(ClusterReport report,
                        AnalyzeCluster(ClusterRanks(), {}));
    cluster = encoders::EncodeJson(report, encoders::JsonStyle::kPretty);
    files.push_back({"cluster.json", cluster});
  }
  return WriteDirectoryAtomically(out_dir, files);
}

StatusOr<std::string> Session::RenderSvg(const RenderOptions& options) const {
  // The hierarchical view with its default budget: small graphs are drawn
  // fully expanded, with their scopes as frames.
  LayoutViewOptions view_options;
  view_options.level = options.level;
  view_options.left_to_right = options.left_to_right;
  std::unique_ptr<LayoutView> view;
  MI_ASSIGN_OR_RETURN(view, OpenLayoutView(view_options));
  return view->Svg();
}

StatusOr<std::unique_ptr<LayoutView>> Session::OpenLayoutView(
    const LayoutViewOptions& options) const {
  return CreateLayoutView(*impl_, options);
}

std::vector<DiagnosticInfo> Session::Diagnostics() const {
  std::vector<DiagnosticInfo> out;
  const DiagnosticSink& sink = impl_->diagnostics;
  for (size_t i = 0; i < static_cast<size_t>(DiagnosticCode::kCount); ++i) {
    auto code = static_cast<DiagnosticCode>(i);
    if (sink.count(code) == 0) continue;
    DiagnosticInfo info;
    info.code = std::string(DiagnosticName(code));
    info.severity = std::string(SeverityName(DiagnosticSeverity(code)));
    info.count = sink.count(code);
    info.description = std::string(DiagnosticDescription(code));
    for (const Diagnostic& d : sink.log()) {
      if (d.code == code && info.examples.size() < 3) {
        info.examples.push_back(FormatLocation(d.location) + d.message);
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::string DiagnosticsReferenceMarkdown() {
  std::string out =
      "# Diagnostic codes\n\n"
      "Generated by `model-inspector list-diagnostics`; do not edit.\n"
      "Recoverable problems found while reading inputs are counted, not "
      "fatal. Severity `error` makes a command fail with exit code 4 unless "
      "`--keep-going` is given; `data_loss` means part of the input was "
      "dropped or repaired; `info` is for information.\n\n"
      "| code | severity | meaning |\n|---|---|---|\n";
  for (size_t i = 0; i < static_cast<size_t>(DiagnosticCode::kCount); ++i) {
    auto code = static_cast<DiagnosticCode>(i);
    out += fmt::format("| `{}` | {} | {} |\n", DiagnosticName(code),
                       SeverityName(DiagnosticSeverity(code)),
                       DiagnosticDescription(code));
  }
  return out;
}

}  // namespace mi
