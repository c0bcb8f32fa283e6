#pragma once

// The analysis registry: the explicit list of analyses
// (builtin_analyses.cc, one line each) and what the front ends need from
// it: lookup, parameter parsing, whether an analysis applies to a run, the
// whole-run document of analyses.json and docs/reference/analyses.md.
// Above the analyses (it includes them all, as the session does); below
// the session.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "model_inspector/analysis_result.h"
#include "model_inspector/status.h"

namespace mi::analysis {

// Every analysis, in the order of analyses.json and the docs.
const std::vector<const AnalysisDescriptor*>& BuiltinAnalyses();

// nullptr for an unknown id.
const AnalysisDescriptor* FindAnalysis(std::string_view id);

// Whether what the analysis needs is in the run.
bool Applies(const AnalysisDescriptor& analysis, const AnalysisContext& ctx);

// The given values (text by name) checked against the declared parameters
// and completed with the defaults. InvalidArgument naming the parameter for
// an unknown name, a value of the wrong type, out of range or not among the
// choices.
StatusOr<ParsedParams> ParseParams(const AnalysisDescriptor& analysis,
                                   const AnalysisParams& given);

// Looks the analysis up, checks that it applies and its parameters, runs
// it. NotFound for an unknown id; InvalidArgument when it does not apply or
// for a bad parameter.
StatusOr<std::unique_ptr<AnalysisResult>> RunAnalysis(
    const AnalysisContext& ctx, std::string_view id,
    const AnalysisParams& given);

// The public description; `ctx` (may be null) decides `applies`.
AnalysisInfo InfoOf(const AnalysisDescriptor& analysis,
                    const AnalysisContext* ctx);

// Every in_export analysis that applies, with default parameters.
AnalysesDocument ExportAnalyses(const AnalysisContext& ctx);

// docs/reference/analyses.md, generated from the list.
std::string AnalysesReferenceMarkdown();

}  // namespace mi::analysis
