#pragma once

// Reports of a diff (include/model_inspector/diff.h) and of a single run
// for people and CI systems: a terminal table, Markdown for a pull-request
// comment, JUnit XML (each rule a test case), and a self-contained HTML
// page (tables, an op-type bar chart and graph drawings as inline SVG, no
// script, no network, no external asset). Every name from an input file is
// escaped for its format (escape.h). docs/design/diff.md "Reports".

#include <string>

#include "model_inspector/diff.h"

namespace mi::report {

// "FAILED: 2 of 4 rules crossed" / "PASSED: none of 3 rules crossed" /
// "PASSED: no rules".
std::string Headline(const DiffReport& report);

// Aligned text tables for a terminal: rules, structure, node and fusion
// changes, op-type counts, timing (total, op types, streams, nodes,
// unlinked tasks), concurrency.
std::string RenderDiffText(const DiffReport& report);

// A pull-request comment: the verdict, crossed rules with their numbers,
// the top timing changes, structure and fusion changes; long lists are
// cut with a note of how many were left out.
std::string RenderDiffMarkdown(const DiffReport& report);

// JUnit XML (testsuites > testsuite > testcase): one test case per rule,
// crossed rules as <failure> with the rule's message, rules that could not
// be measured (no trace) as <skipped>; the text report as the suite's
// system-out. Valid against test/fixtures/junit/junit.xsd.
std::string RenderDiffJUnit(const DiffReport& report);

// The digests a diff was made from, for drawing the changed subgraph
// (nodes and the tensors linking them); either may be null, and then no
// drawing is made for that side.
struct DiffDrawing {
  const RunDigest* base = nullptr;
  const RunDigest* next = nullptr;
  // Nodes beyond this in one drawing are left out (and said so).
  size_t max_nodes = 400;
};
std::string RenderDiffHtml(const DiffReport& report,
                           const DiffDrawing& drawing);

struct RunReportOptions {
  // Graphs with more nodes are not drawn (the page says so).
  size_t max_drawn_nodes = 2000;
};
// One run: metadata, levels, time per op type (table and bar chart),
// streams, the slowest nodes, each graph level drawn.
std::string RenderRunHtml(const RunDigest& run,
                          const RunReportOptions& options);

}  // namespace mi::report
