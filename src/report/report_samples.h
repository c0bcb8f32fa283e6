#pragma once

// Diff reports filled in by hand, for the renderers' tests and the JSON
// schema check (diff_report_samples): every field set, every verdict and
// change kind present once, names holding markup, quotes, control
// characters and bytes that are not UTF-8. The numbers are written out in
// report_samples.cc with how they relate (delta = new - base, ...), so the
// tests can state what a renderer must print without running the diff.

#include <string>
#include <vector>

#include "model_inspector/diff.h"

namespace mi::report::samples {

// Two runs of a small CNN: a Conv changed, a Relu added, a BatchNorm
// removed, a node renamed; one fusion lost, one gained; timing slower
// overall with one op type within the noise; one stream pair went from
// parallel to serial; three rules, two crossed.
DiffReport RegressedReport();
// The same model twice: nothing changed, every rule passes.
DiffReport CleanReport();
// A graph-only diff (no trace on either side): timing absent, a count rule.
DiffReport StructureOnlyReport();
// Names that must be escaped in every format: "<script>", "&", quotes,
// a newline, a control character, a byte that is not UTF-8.
inline constexpr char kNastyName[] =
    "a<b>&\"c'\n\x01z\xff</testcase><script>alert(1)</script>";
DiffReport NastyReport();

// The digests RegressedReport was made from, for the changed-subgraph
// drawing (node names, op types and tensors linking them).
RunDigest RegressedBase();
RunDigest RegressedNew();

}  // namespace mi::report::samples
