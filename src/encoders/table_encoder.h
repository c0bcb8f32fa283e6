#pragma once

// The table encoder: any result as text, CSV or Markdown for people, with
// no code per result type (`model-inspector analyze ID --format ...`).
//
// From what the result writes:
//  - scalars (and arrays of scalars) of an object become "key: value"
//    lines (CSV / Markdown: a two-column table);
//  - an array of objects becomes a table whose columns are the keys (in
//    first-seen order over all rows; a nested object's scalars become
//    columns "outer.inner", an array of scalars one comma-separated cell,
//    an array of objects its item count);
//  - a nested object becomes a titled section, recursively.
// Units come from key names, the same way everywhere: `_ns` is shown in
// microseconds and `_us` as is (one decimal, header "x (us)"), `_bytes` in
// B / KiB / MiB / GiB, `share` and `*_share` (0..1) as a percentage;
// other numbers as written (doubles with 4 significant digits).

#include <string>
#include <string_view>

#include "encoders/result_tree.h"
#include "model_inspector/analysis_result.h"

namespace mi::encoders {

enum class TableFormat : uint8_t { kText, kCsv, kMarkdown };

// `title` heads the output (the analysis's title).
std::string EncodeTables(const AnalysisResult& result, std::string_view title,
                         TableFormat format);
std::string EncodeTables(const ResultValue& value, std::string_view title,
                         TableFormat format);

// The header and cell text of a value under `key` (units above); exposed
// for tests.
std::string HeaderOf(std::string_view key);
std::string CellOf(std::string_view key, const ResultValue& value);

}  // namespace mi::encoders
