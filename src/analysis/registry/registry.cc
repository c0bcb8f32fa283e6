#include "analysis/registry/registry.h"

#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/check.h"
#include "base/strings.h"

namespace mi::analysis {
namespace {

std::string ParameterNames(const AnalysisDescriptor& a) {
  if (a.parameters.empty()) return "it takes none";
  std::vector<std::string_view> names;
  for (const ParameterSpec& p : a.parameters) names.push_back(p.name);
  return "its parameters are " + Join(names, ", ");
}

// "0..100", ">= 0", "<= 10" for a declared range.
std::string RangeText(const ParameterSpec& p) {
  constexpr double kLow = std::numeric_limits<double>::lowest();
  constexpr double kHigh = std::numeric_limits<double>::max();
  if (p.min != kLow && p.max != kHigh)
    return fmt::format("{}..{}", p.min, p.max);
  if (p.min != kLow) return fmt::format(">= {}", p.min);
  return fmt::format("<= {}", p.max);
}

// `text` as the parameter's type, checked against its range / choices.
StatusOr<ParameterValue> ParseValue(const AnalysisDescriptor& a,
                                    const ParameterSpec& p,
                                    std::string_view text) {
  auto error = [&](std::string what) {
    return InvalidArgumentError(
        fmt::format("analysis '{}': parameter '{}': {}", a.id, p.name, what));
  };
  ParameterValue v;
  v.type = p.type;
  switch (p.type) {
    case ParameterType::kInt: {
      std::optional<int64_t> parsed = ParseInteger<int64_t>(text);
      if (!parsed) {
        return error(fmt::format("expected an integer, found '{}'", text));
      }
      v.int_value = *parsed;
      if (static_cast<double>(v.int_value) < p.min ||
          static_cast<double>(v.int_value) > p.max) {
        return error(
            fmt::format("expected {}, found {}", RangeText(p), v.int_value));
      }
      v.double_value = static_cast<double>(v.int_value);
      return v;
    }
    case ParameterType::kDouble: {
      std::optional<double> parsed = ParseDouble(text);
      if (!parsed) {
        return error(fmt::format("expected a number, found '{}'", text));
      }
      v.double_value = *parsed;
      if (v.double_value < p.min || v.double_value > p.max) {
        return error(
            fmt::format("expected {}, found {}", RangeText(p), v.double_value));
      }
      return v;
    }
    case ParameterType::kBool:
      if (text == "true" || text == "1") {
        v.bool_value = true;
      } else if (text == "false" || text == "0") {
        v.bool_value = false;
      } else {
        return error(fmt::format("expected true or false, found '{}'", text));
      }
      return v;
    case ParameterType::kString:
      if (!p.choices.empty()) {
        bool known = false;
        for (std::string_view c : p.choices) known |= c == text;
        if (!known) {
          return error(fmt::format("expected one of {}, found '{}'",
                                   Join(p.choices, ", "), text));
        }
      }
      v.string_value = std::string(text);
      return v;
  }
  return error("unknown type");
}

std::string NeedsText(uint8_t needs) {
  std::vector<std::string_view> parts;
  if (needs & kNeedsTrace) parts.push_back("trace");
  if (needs & kNeedsGraph) parts.push_back("graph");
  if (needs & kNeedsTraining) parts.push_back("training");
  return parts.empty() ? std::string("-") : Join(parts, ", ");
}

// What the run lacks of what the analysis needs, for the refusal.
std::string_view MissingText(const AnalysisDescriptor& a,
                             const AnalysisContext& ctx) {
  if ((a.needs & kNeedsTrace) && !ctx.has_trace()) return "a trace (tasks)";
  if ((a.needs & kNeedsGraph) && !ctx.has_graph()) {
    return "a model (a framework or compiled graph)";
  }
  return "a training snapshot (model_inspector.train)";
}

}  // namespace

const AnalysisDescriptor* FindAnalysis(std::string_view id) {
  for (const AnalysisDescriptor* a : BuiltinAnalyses()) {
    if (a->id == id) return a;
  }
  return nullptr;
}

bool Applies(const AnalysisDescriptor& a, const AnalysisContext& ctx) {
  if ((a.needs & kNeedsTrace) && !ctx.has_trace()) return false;
  if ((a.needs & kNeedsGraph) && !ctx.has_graph()) return false;
  if ((a.needs & kNeedsTraining) && !ctx.has_training()) return false;
  return true;
}

StatusOr<ParsedParams> ParseParams(const AnalysisDescriptor& a,
                                   const AnalysisParams& given) {
  for (const auto& [name, value] : given) {
    bool known = false;
    for (const ParameterSpec& p : a.parameters) known |= p.name == name;
    if (!known) {
      return InvalidArgumentError(
          fmt::format("analysis '{}': unknown parameter '{}'; {}", a.id, name,
                      ParameterNames(a)));
    }
  }
  ParsedParams out;
  for (const ParameterSpec& p : a.parameters) {
    auto it = given.find(std::string(p.name));
    bool was_given = it != given.end();
    ParameterValue v;
    MI_ASSIGN_OR_RETURN(v, ParseValue(a, p,
                                      was_given ? std::string_view(it->second)
                                                : p.default_value));
    out.Set(p.name, std::move(v), was_given);
  }
  return out;
}

StatusOr<std::unique_ptr<AnalysisResult>> RunAnalysis(
    const AnalysisContext& ctx, std::string_view id,
    const AnalysisParams& given) {
  const AnalysisDescriptor* a = FindAnalysis(id);
  if (a == nullptr) {
    std::vector<std::string_view> ids;
    for (const AnalysisDescriptor* d : BuiltinAnalyses()) ids.push_back(d->id);
    return NotFoundError(
        fmt::format("no analysis '{}'; analyses are {}", id, Join(ids, ", ")));
  }
  if (!Applies(*a, ctx)) {
    return InvalidArgumentError(fmt::format(
        "analysis '{}' needs {}; this run has none", id, MissingText(*a, ctx)));
  }
  ParsedParams params;
  MI_ASSIGN_OR_RETURN(params, ParseParams(*a, given));
  return a->run(ctx, params);
}

AnalysisInfo InfoOf(const AnalysisDescriptor& a, const AnalysisContext* ctx) {
  AnalysisInfo info;
  info.id = std::string(a.id);
  info.title = std::string(a.title);
  info.summary = std::string(a.summary);
  info.needs_trace = (a.needs & kNeedsTrace) != 0;
  info.needs_graph = (a.needs & kNeedsGraph) != 0;
  info.needs_training = (a.needs & kNeedsTraining) != 0;
  for (const ParameterSpec& p : a.parameters) {
    AnalysisParameterInfo pi;
    pi.name = std::string(p.name);
    pi.type = std::string(ParameterTypeName(p.type));
    pi.default_value = std::string(p.default_value);
    pi.help = std::string(p.help);
    for (std::string_view c : p.choices) pi.choices.emplace_back(c);
    info.parameters.push_back(std::move(pi));
  }
  info.in_export = a.in_export;
  info.applies = ctx != nullptr && Applies(a, *ctx);
  return info;
}

AnalysesDocument ExportAnalyses(const AnalysisContext& ctx) {
  AnalysesDocument doc;
  for (const AnalysisDescriptor* a : BuiltinAnalyses()) {
    if (!a->in_export || !Applies(*a, ctx)) continue;
    StatusOr<std::unique_ptr<AnalysisResult>> result =
        RunAnalysis(ctx, a->id, {});
    // Default parameters are valid by construction (registry_test).
    MI_CHECK(result.ok());
    doc.sections.push_back(std::move(result).value());
  }
  return doc;
}

std::string AnalysesReferenceMarkdown() {
  std::string out =
      "# Analyses\n\n"
      "Generated from the analysis registry "
      "(src/analysis/registry/builtin_analyses.cc) by `model-inspector "
      "analyze --list --format markdown`; test/python/test_analyze.py keeps "
      "this file equal to it. How to add one: "
      "[../contributing/adding-an-analysis.md]"
      "(../contributing/adding-an-analysis.md).\n\n"
      "Every analysis runs as `model-inspector analyze ID PATH... [--param "
      "NAME=VALUE ...] [--format text|json|csv|markdown]` and as `GET "
      "/api/runs/{run}/analyses/{id}?NAME=VALUE` "
      "([http-api.md](http-api.md)); those marked *in export* are also in "
      "`analyses.json` and `GET /api/runs/{run}/analyses` under their id, "
      "with default parameters. *Needs*: what the run must hold (a trace's "
      "tasks, a model's graph, a training snapshot's steps); otherwise the "
      "analysis does not apply (400).\n"
      "\n| id | title | needs | in export | parameters |\n"
      "|---|---|---|---|---|\n";
  for (const AnalysisDescriptor* a : BuiltinAnalyses()) {
    std::vector<std::string_view> names;
    for (const ParameterSpec& p : a->parameters) names.push_back(p.name);
    out +=
        fmt::format("| [`{}`](#{}) | {} | {} | {} | {} |\n", a->id, a->id,
                    a->title, NeedsText(a->needs), a->in_export ? "yes" : "no",
                    names.empty() ? std::string("-") : Join(names, ", "));
  }
  for (const AnalysisDescriptor* a : BuiltinAnalyses()) {
    out += fmt::format("\n## {}\n\n{}: {}.\n", a->id, a->title, a->summary);
    if (!a->parameters.empty()) {
      out += "\n| parameter | type | default | meaning |\n|---|---|---|---|\n";
      for (const ParameterSpec& p : a->parameters) {
        std::string help(p.help);
        if (!p.choices.empty()) help += " (" + Join(p.choices, ", ") + ")";
        std::string value = p.default_value.empty()
                                ? std::string("(empty)")
                                : fmt::format("`{}`", p.default_value);
        out += fmt::format("| `{}` | {} | {} | {} |\n", p.name,
                           ParameterTypeName(p.type), value, help);
      }
    }
    if (!a->fields.empty()) {
      out += "\n| field | meaning |\n|---|---|\n";
      for (const FieldDoc& f : a->fields) {
        out += fmt::format("| `{}` | {} |\n", f.path, f.help);
      }
    }
    if (!a->reference.empty()) {
      std::string_view ref = a->reference;
      constexpr std::string_view kDocs = "docs/reference/";
      std::string_view target =
          ref.substr(0, kDocs.size()) == kDocs ? ref.substr(kDocs.size()) : ref;
      out += fmt::format("\nFields: [{}]({}).\n", ref, target);
    }
  }
  return out;
}

}  // namespace mi::analysis
