#pragma once

// The diff report as titled tables, shared by the text, Markdown and HTML
// renderers so each shows the same rows. Cells hold raw names: each
// renderer escapes them for its format.

#include <string>
#include <string_view>
#include <vector>

#include "encoders/table_printer.h"
#include "model_inspector/diff.h"

namespace mi::report {

struct Section {
  encoders::Table table;
  size_t left_out = 0;  // rows cut by max_rows
};

// "crossed" | "passed" | "skipped" (the rule could not be measured: no
// trace, no such level).
std::string_view RuleState(const RuleOutcome& rule);
// The rule's measured value in its unit: "+12.3%", "+1.20 ms", "1".
std::string RuleValue(const RuleOutcome& rule);

Section RulesTable(const DiffReport& report, bool crossed_only);
Section StructureTable(const DiffReport& report);
Section NodeChangesTable(const DiffReport& report, size_t max_rows);
Section FusionTable(const DiffReport& report, size_t max_rows);
Section OpCountTable(const DiffReport& report, size_t max_rows);
// Timing of one kind ("total" + op types, streams, nodes, unlinked tasks).
Section TimingTable(std::string title, const std::vector<TimingDelta>& rows,
                    size_t max_rows);
// The largest significant changes (slower / faster / added / removed) of
// op types, streams and nodes together, by |delta|.
Section TopTimingTable(const DiffReport& report, size_t max_rows);
Section OverlapTable(const DiffReport& report, size_t max_rows);
Section UnmatchedTasksTable(const DiffReport& report, size_t max_rows);
// Run metadata: model, label, commit, inputs, runs.
Section RunsTable(const DiffReport& report);

// Every section in report order, for the full text and HTML reports.
std::vector<Section> AllSections(const DiffReport& report, size_t max_rows);

}  // namespace mi::report
