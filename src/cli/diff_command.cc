#include "cli/diff_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "cli/common.h"
#include "cli/history_command.h"
#include "encoders/json_encoder.h"
#include "model_inspector/diff.h"
#include "report/report.h"

namespace mi::cli {
namespace {

struct DiffFlags {
  // Positional sides: BASE NEW (each a run directory, a file or a digest
  // file), or one of them when the other comes from --base-run /
  // --new-run, or RUN alone with --levels.
  std::vector<std::string> sides;
  std::vector<std::string> base_run;  // the base side's files
  std::vector<std::string> new_run;   // the new side's files
  std::string fail_on;
  bool fail_on_given = false;
  std::string format = "text";
  std::string out;
  bool levels = false;
  std::string save_base_digest;
  std::string save_new_digest;
  std::string base_label;
  std::string new_label;
  size_t max_nodes = 200;
  bool quiet = false;
  // The base run from the run history: a baseline's stored digest.
  std::string baseline;
  // --history, and --record with --model-name / --commit: the new run is
  // recorded in the run history after the diff.
  RecordFlags record;
};

struct DigestFlags {
  std::vector<std::string> paths;
  std::string out;
  std::string model;
  std::string label;
  std::string commit;
};

// A usage error: exit code 2 (as CLI11's own).
Status Usage(std::string message) {
  return InvalidArgumentError(std::move(message));
}

StatusOr<RunDigest> LoadSide(const std::vector<std::string>& paths,
                             const std::string& label, std::string_view side,
                             bool quiet) {
  DiffInputOptions options;
  options.paths = paths;
  options.digest.meta.label = label;
  TerminalProgress progress(quiet);
  options.progress = progress.Callback();
  StatusOr<RunDigest> digest = LoadDiffInput(options);
  progress.Finish();
  if (!digest.ok()) {
    return digest.status().WithContext(fmt::format("the {} run", side));
  }
  return digest;
}

// The base side of `diff`, and the one place it is resolved: the files of
// --base-run, else the first positional side (a run directory, a file or a
// digest file), which is then taken off `sides` so that what remains is
// the new run. A base from elsewhere (a stored baseline) is resolved here
// too.
StatusOr<RunDigest> ResolveDiffBase(const DiffFlags& flags,
                                    std::vector<std::string>* sides) {
  if (!flags.baseline.empty() && !flags.base_run.empty()) {
    return Usage("diff: --baseline and --base-run both give the base run");
  }
  // The count of positional sides is checked before any run is read.
  size_t positional_base =
      flags.base_run.empty() && flags.baseline.empty() ? 1 : 0;
  size_t positional_new = flags.new_run.empty() ? 1 : 0;
  if (sides->size() != positional_base + positional_new) {
    return Usage(
        fmt::format("diff: expected {} positional side{} ({}), found {}",
                    positional_base + positional_new,
                    positional_base + positional_new == 1 ? "" : "s",
                    positional_base && positional_new ? "BASE NEW"
                    : positional_base                 ? "BASE; NEW is --new-run"
                    : positional_new ? "NEW; BASE is --base-run or --baseline"
                                     : "none: --base-run and --new-run "
                                       "give both",
                    sides->size()));
  }
  if (!flags.baseline.empty()) {
    StatusOr<RunDigest> digest = LoadBaselineDigest(
        HistoryPathOrDefault(flags.record.history), flags.baseline);
    if (!digest.ok()) {
      return digest.status().WithContext("the base run (baseline " +
                                         flags.baseline + ")");
    }
    if (!flags.base_label.empty()) digest->meta.label = flags.base_label;
    return digest;
  }
  if (!flags.base_run.empty()) {
    return LoadSide(flags.base_run, flags.base_label, "base", flags.quiet);
  }
  std::string base = sides->front();
  sides->erase(sides->begin());
  return LoadSide({base}, flags.base_label, "base", flags.quiet);
}

// The new side: --new-run, else the one positional side left.
StatusOr<RunDigest> ResolveDiffNew(const DiffFlags& flags,
                                   const std::vector<std::string>& sides) {
  if (!flags.new_run.empty()) {
    if (!sides.empty()) {
      return Usage(
          fmt::format("diff: '{}' is a side too many: the new run "
                      "is given by --new-run",
                      sides.front()));
    }
    return LoadSide(flags.new_run, flags.new_label, "new", flags.quiet);
  }
  if (sides.size() != 1) {
    return Usage(sides.empty()
                     ? "diff: the new run is missing: give BASE and NEW"
                     : fmt::format("diff: expected two sides (BASE NEW), "
                                   "found {} more: '{}'",
                                   sides.size() - 1, sides[1]));
  }
  return LoadSide({sides.front()}, flags.new_label, "new", flags.quiet);
}

Status SaveDigest(const std::string& path, const RunDigest& digest) {
  if (path.empty()) return Status::Ok();
  return WriteFileAtomically(path, RunDigestJson(digest)).WithContext(path);
}

std::string Render(const DiffFlags& flags, const DiffReport& report,
                   const RunDigest* base, const RunDigest* next) {
  if (flags.format == "json") {
    return encoders::EncodeJson(report, encoders::JsonStyle::kPretty);
  }
  if (flags.format == "md") return report::RenderDiffMarkdown(report);
  if (flags.format == "junit") return report::RenderDiffJUnit(report);
  if (flags.format == "html") {
    report::DiffDrawing drawing;
    drawing.base = base;
    drawing.next = next;
    return report::RenderDiffHtml(report, drawing);
  }
  return report::RenderDiffText(report);
}

Status Emit(const std::string& out, const std::string& text) {
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return Status::Ok();
  }
  return WriteFileAtomically(out, text).WithContext(out);
}

int RunDiff(const DiffFlags& flags) {
  // The rules first: a typo in --fail-on is a usage error before any run
  // is read.
  StatusOr<std::vector<DiffRule>> rules =
      ParseFailOn(flags.fail_on_given ? flags.fail_on : DefaultFailOn());
  if (!rules.ok()) return ReportError(rules.status());

  DiffOptions options;
  options.max_nodes = flags.max_nodes;
  std::vector<std::string> sides = flags.sides;
  RunDigest base;
  RunDigest next;
  StatusOr<DiffReport> report = Usage("diff: nothing to compare");
  if (flags.levels && sides.size() == 1 && flags.base_run.empty() &&
      flags.new_run.empty()) {
    // One run's framework graph against its compiled graph.
    StatusOr<RunDigest> run = LoadSide(sides, flags.new_label, "", flags.quiet);
    if (!run.ok()) return ReportError(run.status());
    next = std::move(run).value();
    if (Status s = SaveDigest(flags.save_new_digest, next); !s.ok()) {
      return ReportError(s);
    }
    report = DiffLevelsWithinRun(next, options);
    base = next;
  } else {
    StatusOr<RunDigest> b = ResolveDiffBase(flags, &sides);
    if (!b.ok()) return ReportError(b.status());
    StatusOr<RunDigest> n = ResolveDiffNew(flags, sides);
    if (!n.ok()) return ReportError(n.status());
    base = std::move(b).value();
    next = std::move(n).value();
    for (const auto& [path, digest] :
         {std::pair{flags.save_base_digest, &base},
          std::pair{flags.save_new_digest, &next}}) {
      if (Status s = SaveDigest(path, *digest); !s.ok()) {
        return ReportError(s);
      }
    }
    options.levels_within_run = flags.levels;
    report = DiffRuns(base, next, options);
  }
  if (!report.ok()) return ReportError(report.status());
  ApplyDiffRules(*rules, *report);

  std::string text = Render(flags, *report, &base, &next);
  if (Status s = Emit(flags.out, text); !s.ok()) return ReportError(s);
  if (flags.record.record) {
    // Recorded whatever the verdict: the history keeps what ran. The line
    // goes to stderr, stdout may hold the report.
    CompleteRunMeta(flags.record, {}, &next);
    StatusOr<int64_t> id = RecordRun(flags.record, next, stderr);
    if (!id.ok()) return ReportError(id.status());
  }
  // The verdict and the crossed rules on stderr too when the report went
  // elsewhere (a file, or a format for machines), so a CI log shows why the
  // gate failed.
  bool report_on_terminal = flags.out.empty() && flags.format == "text";
  if (!report_on_terminal && !flags.quiet) {
    std::fprintf(stderr, "model-inspector: diff: %s\n",
                 report::Headline(*report).c_str());
    for (const RuleOutcome& r : report->rules) {
      if (r.crossed) {
        std::fprintf(stderr, "  %s\n", EscapeForTerminal(r.message).c_str());
      }
    }
  }
  return report->failed ? 1 : 0;
}

int RunDigestCommand(const DigestFlags& flags) {
  DiffInputOptions options;
  options.paths = flags.paths;
  options.digest.meta.model = flags.model;
  options.digest.meta.label = flags.label;
  options.digest.meta.git_commit = flags.commit;
  TerminalProgress progress(/*quiet=*/false);
  options.progress = progress.Callback();
  StatusOr<RunDigest> digest = LoadDiffInput(options);
  progress.Finish();
  if (!digest.ok()) return ReportError(digest.status());
  if (Status s = Emit(flags.out, RunDigestJson(*digest)); !s.ok()) {
    return ReportError(s);
  }
  return 0;
}

}  // namespace

void RegisterDiffCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<DiffFlags>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "what changed between two runs (structure, fusion, timing, "
      "concurrency), and a gate: exit code 1 when a --fail-on rule is "
      "crossed (docs/design/diff.md)");
  cmd->add_option("sides", flags->sides,
                  "BASE NEW: each a run directory, a file (model or trace) "
                  "or a digest file (*.midigest.json); RUN alone with "
                  "--levels");
  cmd->add_option("--base-run", flags->base_run,
                  "the base run as several files (model, compiled model, "
                  "trace)")
      ->expected(1, -1);
  cmd->add_option("--new-run", flags->new_run, "the new run as several files")
      ->expected(1, -1);
  cmd->add_option_function<std::string>(
         "--fail-on",
         [flags](const std::string& v) {
           flags->fail_on = v;
           flags->fail_on_given = true;
         },
         "rules that fail the gate, comma-separated, e.g. "
         "'total>+5%,op:Conv>+10%,nodes!=0,fusions-lost>0,overlap-lost>0' "
         "('' for none; default: " +
             std::string(DefaultFailOn()) + ")")
      ->type_name("RULES");
  cmd->add_option("--format", flags->format,
                  "text (tables), md (a pull-request comment), json "
                  "(docs/reference/schemas/diff.schema.json), junit (JUnit "
                  "XML, one test case per rule), html (a self-contained "
                  "page)")
      ->check(CLI::IsMember({"text", "md", "json", "junit", "html"}));
  cmd->add_option("--out", flags->out,
                  "write the report to FILE (atomically) instead of stdout");
  cmd->add_flag("--levels", flags->levels,
                "the framework graph against the compiled graph: of RUN "
                "when one run is given, else also of the new run");
  cmd->add_option("--save-base-digest", flags->save_base_digest,
                  "also write the base run's digest to FILE");
  cmd->add_option("--save-new-digest", flags->save_new_digest,
                  "also write the new run's digest to FILE");
  cmd->add_option("--base-label", flags->base_label,
                  "a label for the base run in the reports");
  cmd->add_option("--new-label", flags->new_label,
                  "a label for the new run in the reports");
  cmd->add_option("--max-nodes", flags->max_nodes,
                  "nodes listed in the timing of nodes, by |delta| (all are "
                  "compared)");
  cmd->add_flag("-q,--quiet", flags->quiet,
                "no verdict on stderr when the report goes to a file");
  cmd->add_option("--baseline", flags->baseline,
                  "the base run is baseline NAME of the run history "
                  "(`history baseline set NAME RUN`); give only NEW")
      ->type_name("NAME");
  AddHistoryPathOption(cmd, &flags->record.history);
  cmd->add_flag("--record", flags->record.record,
                "record the new run in the run history after the diff "
                "(whatever the verdict)");
  cmd->add_option("--model-name", flags->record.model,
                  "with --record: the model's name in the run history "
                  "(default: the digest's)")
      ->type_name("NAME");
  cmd->add_option("--commit", flags->record.commit,
                  "with --record: the git commit the new run was made from");
  AddMemoryLimitOption(cmd);
  cmd->callback([flags, exit_code]() {
    const RecordFlags& r = flags->record;
    if (!r.record && (!r.model.empty() || !r.commit.empty())) {
      throw CLI::ValidationError("diff",
                                 "--model-name and --commit go with --record");
    }
    *exit_code = RunDiff(*flags);
  });

  auto digest = std::make_shared<DigestFlags>();
  CLI::App* dig = app.add_subcommand(
      "digest",
      "write a run's digest (graph levels, per-run timing; "
      "docs/reference/schemas/run-digest.schema.json): what `diff` and the "
      "run history read instead of the run's files");
  dig->add_option("paths", digest->paths, "a run directory, or the run's files")
      ->required();
  dig->add_option("--out", digest->out,
                  "the digest file (atomically; stdout when not given)");
  dig->add_option("--model-name", digest->model,
                  "the model's name (the run history groups runs by it)");
  dig->add_option("--label", digest->label, "free text, e.g. a CI job id");
  dig->add_option("--commit", digest->commit, "the git commit of the run");
  AddMemoryLimitOption(dig);
  dig->callback(
      [digest, exit_code]() { *exit_code = RunDigestCommand(*digest); });
}

}  // namespace mi::cli
