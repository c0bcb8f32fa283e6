#include "cli/diagnose_command.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "cli/common.h"
#include "encoders/json_encoder.h"
#include "encoders/table_printer.h"
#include "model_inspector/diagnosis.h"
#include "model_inspector/results/training.h"
#include "report/pdf.h"
#include "report/training_report.h"

namespace mi::cli {
namespace {

using encoders::RenderText;
using encoders::Table;

struct DiagnoseFlags {
  InputFlags input;
  bool json = false;
  bool list_rules = false;
  std::vector<std::string> thresholds;  // RULE=VALUE
  std::vector<std::string> disabled;
  bool sequences = false;
  std::string sequence_by = "op_type";
  size_t sequence_max_length = 6;
  size_t sequence_top = 20;
  bool blocks = false;
  // Training snapshots.
  std::string report;  // FILE.html
  bool pdf = false;    // also FILE.pdf beside it
  bool fail_on_anomaly = false;
};

// "RULE=VALUE" -> options.thresholds; false (with a message) when malformed.
bool ParseThreshold(const std::string& text, DiagnoseOptions* options) {
  size_t eq = text.find('=');
  std::optional<double> v =
      eq == std::string::npos
          ? std::nullopt
          : ParseDouble(std::string_view(text).substr(eq + 1));
  if (eq == 0 || !v) {
    std::fprintf(stderr,
                 "error: --threshold: expected RULE=VALUE (e.g. "
                 "layout_conversion_share=0.1), found '%s'\n",
                 EscapeForTerminal(text).c_str());
    return false;
  }
  options->thresholds[text.substr(0, eq)] = *v;
  return true;
}

std::string Us(int64_t ns) { return fmt::format("{:.1f}", ns / 1e3); }

std::string IdList(const std::vector<uint32_t>& ids, size_t max) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < max; ++i) {
    out += (i ? ", " : "") + std::to_string(ids[i]);
  }
  if (ids.size() > max) out += fmt::format(", ... ({} in all)", ids.size());
  return out;
}

void PrintFindings(const std::vector<FindingInfo>& findings) {
  if (findings.empty()) {
    std::fputs("No findings: no rule fired.\n", stdout);
    return;
  }
  std::string out = fmt::format("{} finding{}\n\n", findings.size(),
                                findings.size() == 1 ? "" : "s");
  for (const FindingInfo& f : findings) {
    // Messages and suggestions name ops and nodes of the inputs.
    out += fmt::format("[{}] {}: {}\n", f.severity, f.rule_id,
                       EscapeForTerminal(f.message));
    out += fmt::format("  suggestion: {}\n", EscapeForTerminal(f.suggestion));
    if (!f.nodes.empty())
      out += fmt::format("  nodes: {}\n", IdList(f.nodes, 8));
    if (!f.tasks.empty())
      out += fmt::format("  tasks: {}\n", IdList(f.tasks, 8));
    out += "\n";
  }
  std::fputs(out.c_str(), stdout);
}

Table SequencesTable(const std::vector<SequenceInfo>& sequences,
                     const std::string& by) {
  Table t{fmt::format("Frequent sequences per stream (by {})", by),
          {"sequence", "length", "count", "total (us)", "share", "tracks"},
          {}};
  t.numeric = {false, true, true, true, true, false};
  for (const SequenceInfo& s : sequences) {
    std::string symbols;
    for (const std::string& sym : s.symbols) {
      symbols += (symbols.empty() ? "" : " > ") + sym;
    }
    t.rows.push_back({symbols, std::to_string(s.symbols.size()),
                      std::to_string(s.count), Us(s.total_ns),
                      fmt::format("{:.1f}%", s.share * 100),
                      IdList(s.tracks, 4)});
  }
  return t;
}

Table BlocksTable(const std::vector<BlockFamilyInfo>& families) {
  Table t{"Repeated blocks (time per instance)",
          {"block", "level", "instances", "nodes each", "total (us)",
           "mean (us)", "slowest", "slowest / median"},
          {}};
  t.numeric = {false, false, true, true, true, true, false, true};
  for (const BlockFamilyInfo& f : families) {
    std::string slowest =
        f.slowest >= 0 ? fmt::format("{} ({} us)", f.instances[f.slowest].path,
                                     Us(f.instances[f.slowest].total_ns))
                       : "-";
    t.rows.push_back({f.label, f.level, std::to_string(f.instances.size()),
                      std::to_string(f.nodes_per_instance), Us(f.total_ns),
                      Us(f.mean_ns), slowest,
                      fmt::format("{:.2f}", f.slowest_over_median)});
  }
  return t;
}

// The PDF beside the HTML report: "x.html" / "x.htm" -> "x.pdf", else
// the name with ".pdf" added.
std::string PdfPathFor(const std::string& html) {
  for (std::string_view ext : {".html", ".htm", ".HTML", ".HTM"}) {
    if (html.size() > ext.size() &&
        html.compare(html.size() - ext.size(), ext.size(), ext) == 0) {
      return html.substr(0, html.size() - ext.size()) + ".pdf";
    }
  }
  return html + ".pdf";
}

// The layers graph for the report: the run's framework graph (one node per
// layer, TrainingLayerHealth::node) with its data edges, as layer ids.
report::TrainingGraph LayerGraph(const Session& session,
                                 const TrainingDiagnosisResult& result) {
  report::TrainingGraph graph;
  std::unordered_map<int64_t, int32_t> layer_of_node;
  for (const TrainingLayerHealth& l : result.layers) {
    if (l.node >= 0) layer_of_node.emplace(l.node, l.layer);
  }
  for (const TrainingLayerHealth& l : result.layers) {
    if (l.node < 0) continue;
    auto details =
        session.NodeDetails("framework", static_cast<uint32_t>(l.node));
    if (!details.ok()) continue;
    for (const NodeValueInfo& in : details->inputs) {
      if (!in.producer) continue;
      auto p = layer_of_node.find(*in.producer);
      if (p != layer_of_node.end() && p->second != l.layer) {
        graph.edges.push_back({p->second, l.layer});
      }
    }
  }
  return graph;
}

// `diagnose SNAPSHOT`: the training diagnosis as text or JSON, the HTML
// report and its PDF. Exit 0, or 1 with --fail-on-anomaly when a trigger
// fired.
int RunTraining(const Session& session, const DiagnoseFlags& flags) {
  if (flags.sequences || flags.blocks || !flags.disabled.empty()) {
    std::fprintf(stderr,
                 "error: %s is a training snapshot: --sequences, --blocks and "
                 "--disable are for traces\n",
                 EscapeForTerminal(session.TrainingSnapshotPath()).c_str());
    return 2;
  }
  // --threshold NAME=VALUE sets the diagnosis's parameters (vanishing,
  // exploding, dead, ...); the analysis names an unknown one.
  AnalysisParams params;
  for (const std::string& t : flags.thresholds) {
    size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr,
                   "error: --threshold: expected NAME=VALUE (e.g. "
                   "exploding=100), found '%s'\n",
                   EscapeForTerminal(t).c_str());
      return 2;
    }
    params[t.substr(0, eq)] = t.substr(eq + 1);
  }
  auto analysed = session.RunAnalysis("training_diagnosis", params);
  if (!analysed.ok()) return ReportError(analysed.status());
  const auto* result =
      dynamic_cast<const TrainingDiagnosisResult*>(analysed->get());
  if (result == nullptr) {
    return ReportError(InternalError(
        "the training_diagnosis analysis did not return a training "
        "diagnosis"));
  }
  if (!flags.report.empty()) {
    std::string html =
        report::RenderTrainingHtml(*result, LayerGraph(session, *result));
    if (Status s =
            WriteFileAtomically(flags.report, html).WithContext(flags.report);
        !s.ok()) {
      return ReportError(s);
    }
    if (flags.pdf) {
      if (Status s = report::PrintHtmlToPdf(html, PdfPathFor(flags.report));
          !s.ok()) {
        return ReportError(s);
      }
    }
  }
  std::fputs(flags.json ? encoders::EncodeJson(*result).c_str()
                        : report::RenderTrainingText(*result).c_str(),
             stdout);
  return flags.fail_on_anomaly && result->anomaly_step >= 0 ? 1 : 0;
}

int Run(const DiagnoseFlags& flags) {
  int exit_code = 0;
  std::unique_ptr<Session> session = OpenOrReport(flags.input, &exit_code);
  if (!session) return exit_code;
  if (!session->TrainingSnapshotPath().empty()) {
    return RunTraining(*session, flags);
  }
  if (!flags.report.empty() || flags.pdf || flags.fail_on_anomaly) {
    std::fprintf(stderr,
                 "error: --report, --pdf and --fail-on-anomaly are for "
                 "training snapshots (written by model_inspector.train), and "
                 "the inputs hold none; `model-inspector report` writes a "
                 "run's HTML report\n");
    return 2;
  }
  DiagnoseOptions options;
  for (const std::string& t : flags.thresholds) {
    if (!ParseThreshold(t, &options)) return 2;
  }
  options.disabled = flags.disabled;
  SequenceOptions sequence_options;
  sequence_options.by = flags.sequence_by;
  sequence_options.max_length = flags.sequence_max_length;
  sequence_options.top = flags.sequence_top;
  auto findings = session->Findings(options);
  if (!findings.ok()) return ReportError(findings.status());
  SequencesResult sequences;
  if (flags.sequences) {
    auto s = session->Sequences(sequence_options);
    if (!s.ok()) return ReportError(s.status());
    sequences = std::move(s).value();
  }
  BlocksResult blocks;
  if (flags.blocks) blocks = session->Blocks();
  if (flags.json) {
    // The same sections as GET /api/runs/{run}/analyses.
    std::string out;
    encoders::JsonResultWriter w(&out);
    w.BeginObject();
    w.Key("findings");
    findings->Write(w);
    if (flags.sequences) {
      w.Key("sequences");
      sequences.Write(w);
    }
    if (flags.blocks) {
      w.Key("blocks");
      blocks.Write(w);
    }
    w.EndObject();
    out.push_back('\n');
    std::fputs(out.c_str(), stdout);
    return 0;
  }
  PrintFindings(findings->findings);
  if (flags.sequences) {
    std::fputs(("\n" + RenderText(SequencesTable(sequences.sequences,
                                                 flags.sequence_by)))
                   .c_str(),
               stdout);
  }
  if (flags.blocks) {
    std::fputs(("\n" + RenderText(BlocksTable(blocks.families))).c_str(),
               stdout);
  }
  return 0;
}

}  // namespace

void RegisterDiagnoseCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<DiagnoseFlags>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose",
      "diagnosis rules (layout conversions, data movement, unfused patterns, "
      "redundant transposes, dynamic shapes, eager launches, timing rules) "
      "with evidence and suggested fixes; for a training snapshot, its "
      "training diagnosis (health score, anomaly, problem layers, root "
      "causes) and --report FILE.html");
  AddInputFlags(cmd, &flags->input, /*paths_required=*/false);
  cmd->add_flag("--json", flags->json, "JSON output");
  cmd->add_flag("--list-rules", flags->list_rules,
                "print the rule table (docs/reference/diagnosis-rules.md)");
  cmd->add_option("--threshold", flags->thresholds,
                  "override a rule's threshold: RULE=VALUE (repeatable)");
  cmd->add_option("--disable", flags->disabled, "skip a rule (repeatable)");
  cmd->add_flag("--sequences", flags->sequences,
                "also list the most time-consuming recurring task sequences "
                "per stream (fusion candidates)");
  cmd->add_option("--sequence-by", flags->sequence_by,
                  "sequence symbols: op_type or name (kernel name)")
      ->check(CLI::IsMember({"op_type", "name"}));
  cmd->add_option("--sequence-max-length", flags->sequence_max_length,
                  "longest sequence searched (2..32)");
  cmd->add_option("--sequence-top", flags->sequence_top,
                  "sequences listed (1..10000)");
  cmd->add_flag("--blocks", flags->blocks,
                "also list repeated blocks (layers) with the time of each "
                "instance");
  cmd->add_option("--report", flags->report,
                  "training snapshot: write the diagnosis as a "
                  "self-contained HTML page (written atomically)");
  cmd->add_flag("--pdf", flags->pdf,
                "with --report FILE.html: also print it to FILE.pdf through "
                "headless Chromium (MI_CHROMIUM, else /usr/bin/chromium)");
  cmd->add_flag("--fail-on-anomaly", flags->fail_on_anomaly,
                "training snapshot: exit code 1 when a trigger fired");
  cmd->callback([flags, exit_code]() {
    if (flags->list_rules) {
      std::fputs(DiagnosisRulesMarkdown().c_str(), stdout);
      *exit_code = 0;
      return;
    }
    if (flags->input.empty()) {
      throw CLI::ValidationError("diagnose",
                                 "give at least one PATH, or --list-rules");
    }
    if (flags->pdf && flags->report.empty()) {
      throw CLI::ValidationError(
          "diagnose",
          "--pdf prints the --report page: give --report FILE.html");
    }
    *exit_code = Run(*flags);
  });
}

}  // namespace mi::cli
