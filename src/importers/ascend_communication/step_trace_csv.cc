// step_trace_time.csv and cluster_step_trace_time.csv (README.md).

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "importers/ascend_communication/ascend_communication_importer.h"
#include "importers/common/collectives.h"

namespace mi::importers {
namespace {

constexpr std::string_view kExpected =
    "expected torch_npu's step_trace_time.csv ([Device_id,]Step,Computing,"
    "Communication(Not Overlapped),Overlapped,Communication,Free,Stage,"
    "Bubble,Communication(Not Overlapped and Exclude Receive)[,Preparing]) or "
    "msprof-analyze's cluster_step_trace_time.csv (Step,Type,Index,...)";

struct Cell {
  std::string text;
  uint64_t column = 1;  // 1-based, of the cell's first character
};

// One CSV record of `text` from `*pos` (RFC 4180: quoted cells, "" inside
// them). A quote left open is an error naming where it opened.
Status ReadRecord(std::string_view text, size_t* pos, uint64_t line,
                  const std::string& path, std::vector<Cell>* cells) {
  cells->clear();
  size_t i = *pos;
  const size_t line_start = i;
  Cell cell;
  cell.column = 1;
  bool quoted = false;
  while (i < text.size()) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell.text.push_back('"');
          i += 2;
          continue;
        }
        quoted = false;
        ++i;
        continue;
      }
      if (c == '\n') {
        return MalformedInputError(
            fmt::format("{}:{}:{}: quoted cell not closed on its line; {}",
                        path, line, cell.column, kExpected));
      }
      cell.text.push_back(c);
      ++i;
      continue;
    }
    if (c == '"' && cell.text.empty()) {
      quoted = true;
      ++i;
      continue;
    }
    if (c == ',') {
      cells->push_back(std::move(cell));
      cell = Cell();
      cell.column = i + 2 - line_start;
      ++i;
      continue;
    }
    if (c == '\n') {
      ++i;
      break;
    }
    if (c != '\r') cell.text.push_back(c);
    ++i;
  }
  if (quoted) {
    return MalformedInputError(fmt::format(
        "{}:{}:{}: quoted cell never closed (is the file truncated?); {}", path,
        line, cell.column, kExpected));
  }
  cells->push_back(std::move(cell));
  *pos = i;
  return Status::Ok();
}

// "9847.663999999999" µs -> ns, rounded half up at the ns; exponents
// ("1e-05") through strtod. nullopt when not a number.
std::optional<int64_t> MicrosToNs(std::string_view v) {
  v = Trim(v, " \t");
  if (v.empty()) return std::nullopt;
  bool negative = v.front() == '-';
  std::string_view digits = negative ? v.substr(1) : v;
  size_t dot = digits.find('.');
  std::string_view whole = digits.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos
                              ? std::string_view()
                              : digits.substr(dot + 1);
  bool plain = !whole.empty() && whole.size() <= 15;
  for (char c : whole) plain = plain && IsAsciiDigit(c);
  for (char c : frac) plain = plain && IsAsciiDigit(c);
  if (plain) {
    int64_t ns = *ParseInteger<int64_t>(whole) * 1000;
    int64_t part = 0;
    for (size_t k = 0; k < 3; ++k) {
      part = part * 10 + (k < frac.size() ? frac[k] - '0' : 0);
    }
    ns += part;
    if (frac.size() > 3 && frac[3] >= '5') ++ns;
    return negative ? -ns : ns;
  }
  std::string copy(v);
  char* end = nullptr;
  double d = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(d) ||
      std::fabs(d) > 9e15) {
    return std::nullopt;
  }
  return std::llround(d * 1000);
}

// The time columns, by header name.
struct Column {
  std::string_view header;
  int64_t StepTraceRow::*field;
};
constexpr Column kColumns[] = {
    {"Computing", &StepTraceRow::computing_ns},
    {"Communication(Not Overlapped)",
     &StepTraceRow::communication_not_overlapped_ns},
    {"Overlapped", &StepTraceRow::overlapped_ns},
    {"Communication", &StepTraceRow::communication_ns},
    {"Free", &StepTraceRow::free_ns},
    {"Stage", &StepTraceRow::stage_ns},
    {"Bubble", &StepTraceRow::bubble_ns},
    {"Communication(Not Overlapped and Exclude Receive)",
     &StepTraceRow::communication_not_overlapped_excluding_receive_ns},
    {"Preparing", &StepTraceRow::preparing_ns},
};

}  // namespace

Status ImportAscendStepTraceFromBuffer(std::string_view text,
                                       ImportContext& ctx) {
  if (ctx.path.empty()) ctx.path = "<buffer>";
  const SourceId source = EnsureSource(ctx);
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  size_t pos = 0;
  uint64_t line = 1;
  std::vector<Cell> header;
  MI_RETURN_IF_ERROR(ReadRecord(text, &pos, line, ctx.path, &header));
  if (header.size() == 1 && Trim(header[0].text, " \t").empty()) {
    return MalformedInputError(
        fmt::format("{}:1:1: empty file; {}", ctx.path, kExpected));
  }
  int step_col = -1, type_col = -1, index_col = -1, device_col = -1;
  std::vector<int> time_cols(std::size(kColumns), -1);
  for (size_t c = 0; c < header.size(); ++c) {
    std::string_view h = Trim(header[c].text, " \t");
    const int ci = static_cast<int>(c);
    if (h == "Step") step_col = ci;
    if (h == "Type") type_col = ci;
    if (h == "Index") index_col = ci;
    if (h == "Device_id") device_col = ci;
    for (size_t k = 0; k < std::size(kColumns); ++k) {
      if (h == kColumns[k].header) time_cols[k] = ci;
    }
  }
  if (step_col < 0 || time_cols[0] < 0 || time_cols[3] < 0) {
    return MalformedInputError(fmt::format(
        "{}:1:1: header lacks {}; {}", ctx.path,
        step_col < 0 ? "'Step'"
                     : (time_cols[0] < 0 ? "'Computing'" : "'Communication'"),
        kExpected));
  }
  const bool cluster = type_col >= 0 && index_col >= 0;
  std::vector<StepTraceRow>& rows =
      ctx.trace->mutable_communication().step_trace;
  StringPool& strings = ctx.trace->strings();
  std::vector<Cell> cells;
  while (pos < text.size()) {
    ++line;
    MI_RETURN_IF_ERROR(ReadRecord(text, &pos, line, ctx.path, &cells));
    if (cells.size() == 1 && Trim(cells[0].text, " \t\r").empty()) continue;
    if (cells.size() < header.size()) {
      return MalformedInputError(fmt::format(
          "{}:{}:{}: row has {} cells, the header {}; {}", ctx.path, line,
          cells.back().column, cells.size(), header.size(), kExpected));
    }
    StepTraceRow row;
    row.source = source;
    row.line = line;
    row.step = strings.Intern(Trim(cells[step_col].text, " \t"));
    if (device_col >= 0) {
      std::optional<int32_t> device =
          ParseInteger<int32_t>(Trim(cells[device_col].text, " \t"));
      if (!device) {
        return MalformedInputError(fmt::format(
            "{}:{}:{}: Device_id '{}' is not a device number; {}", ctx.path,
            line, cells[device_col].column, cells[device_col].text, kExpected));
      }
      row.device = *device;
    }
    if (cluster) {
      std::string_view type = Trim(cells[type_col].text, " \t");
      row.type = strings.Intern(type);
      const Cell& index = cells[index_col];
      std::optional<std::vector<int32_t>> ranks =
          ParseRankList(index.text, 1 << 20);
      if (!ranks || ranks->empty()) {
        return MalformedInputError(fmt::format(
            "{}:{}:{}: Index '{}' is neither a rank nor a stage's ranks "
            "(\"(0, 1, 2)\"); {}",
            ctx.path, line, index.column, index.text, kExpected));
      }
      row.ranks = std::move(*ranks);
    }
    for (size_t k = 0; k < std::size(kColumns); ++k) {
      if (time_cols[k] < 0) continue;
      const Cell& cell = cells[time_cols[k]];
      std::string_view v = Trim(cell.text, " \t");
      if (v.empty() || v == "N/A") continue;
      std::optional<int64_t> ns = MicrosToNs(v);
      if (!ns) {
        return MalformedInputError(fmt::format(
            "{}:{}:{}: {} '{}' is not a number of microseconds; {}", ctx.path,
            line, cell.column, kColumns[k].header, cell.text, kExpected));
      }
      row.*(kColumns[k].field) = *ns;
    }
    rows.push_back(std::move(row));
  }
  SourceInfo& info = ctx.trace->mutable_source(source);
  if (info.dialect == StringPool::kEmpty)
    info.dialect = strings.Intern("ascend");
  return Status::Ok();
}

}  // namespace mi::importers
