#pragma once

// Diagnosis rules that need the timing analyses, as data: the rule
// table (TimingRuleSpecs) and their evaluation. The diagnosis module runs
// these together with its own rules (Diagnose()).
//  - copy_not_overlapped: on a device, copy time during which no compute
//    ran, as a share of the device's busy time, above the threshold;
//  - host_sync_gap: host synchronize calls that left the devices idle
//    (from the call's start until device work resumed) for at least the
//    threshold in microseconds;
//  - false_dependency: a task that was ready (launched, inputs done) but
//    waited at least the threshold in microseconds behind a task of an
//    unrelated graph node on its own stream, while another stream of the
//    same device was idle for most of that wait.

#include <span>
#include <vector>

#include "analysis/finding.h"
#include "analysis/timing/dependency_graph.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis {

std::span<const RuleSpec> TimingRuleSpecs();

// Reads calibrated times (the session applies calibration at open).
// `graphs`: the run's cache of dependency graphs (null: built here).
std::vector<Finding> EvaluateTimingRules(
    const Model& model, const Trace& trace, const Links& links,
    const DiagnosisOptions& options, DependencyGraphCache* graphs = nullptr);

}  // namespace mi::analysis
