#include "cli/diagnose_command.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/common.h"
#include "encoders/json_encoder.h"
#include "encoders/table_printer.h"
#include "model_inspector/diagnosis.h"

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

int Run(const DiagnoseFlags& flags) {
  DiagnoseOptions options;
  for (const std::string& t : flags.thresholds) {
    if (!ParseThreshold(t, &options)) return 2;
  }
  options.disabled = flags.disabled;
  SequenceOptions sequence_options;
  sequence_options.by = flags.sequence_by;
  sequence_options.max_length = flags.sequence_max_length;
  sequence_options.top = flags.sequence_top;
  int exit_code = 0;
  std::unique_ptr<Session> session = OpenOrReport(flags.input, &exit_code);
  if (!session) return exit_code;
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
      "with evidence and suggested fixes");
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
    *exit_code = Run(*flags);
  });
}

}  // namespace mi::cli
