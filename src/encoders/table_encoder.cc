#include "encoders/table_encoder.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "encoders/table_printer.h"

namespace mi::encoders {
namespace {

// Items of an array of scalars shown in one cell / line.
constexpr size_t kMaxListItems = 8;

// The last segment of a flattened key ("idle.total_ns" -> "total_ns").
std::string_view LastSegment(std::string_view key) {
  size_t dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

enum class Unit : uint8_t { kNone, kNs, kUs, kBytes, kShare };

Unit UnitOfSegment(std::string_view segment) {
  if (segment.ends_with("_ns") || segment == "ns") return Unit::kNs;
  if (segment.ends_with("_us") || segment == "us") return Unit::kUs;
  if (segment.ends_with("_bytes") || segment == "bytes") return Unit::kBytes;
  if (segment == "share" || segment.ends_with("_share")) return Unit::kShare;
  return Unit::kNone;
}

// The segment before the last one ("idle_by_reason_ns" of
// "idle_by_reason_ns.host"), empty for a key of one segment.
std::string_view ParentSegment(std::string_view key) {
  size_t dot = key.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string_view parent = key.substr(0, dot);
  size_t before = parent.rfind('.');
  return before == std::string_view::npos ? parent : parent.substr(before + 1);
}

// A member's unit is its own suffix's; a member without one takes its
// object's ("idle_by_reason_ns": {"host": ...} holds nanoseconds), so a
// breakdown keyed by name still prints in microseconds with its unit.
Unit UnitOf(std::string_view key) {
  Unit own = UnitOfSegment(LastSegment(key));
  if (own != Unit::kNone) return own;
  Unit inherited = UnitOfSegment(ParentSegment(key));
  return inherited == Unit::kShare ? Unit::kNone : inherited;
}

std::string Bytes(double b) {
  if (std::fabs(b) < 1024) return fmt::format("{} B", static_cast<int64_t>(b));
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = b / 1024;
  size_t u = 0;
  while (std::fabs(v) >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

std::string Scalar(std::string_view key, const ResultValue& v) {
  using K = ResultValue::Kind;
  switch (v.kind) {
    case K::kNull:
      return "";
    case K::kBool:
      return v.bool_value ? "true" : "false";
    case K::kString:
      return v.string_value;
    case K::kInt:
    case K::kUInt:
    case K::kDouble:
      break;
    default:
      return "";
  }
  switch (UnitOf(key)) {
    case Unit::kNs:
      return fmt::format("{:.1f}", v.AsDouble() / 1000.0);
    case Unit::kUs:
      return fmt::format("{:.1f}", v.AsDouble());
    case Unit::kBytes:
      return Bytes(v.AsDouble());
    case Unit::kShare:
      return fmt::format("{:.1f}%", v.AsDouble() * 100);
    case Unit::kNone:
      break;
  }
  if (v.kind == K::kInt) return std::to_string(v.int_value);
  if (v.kind == K::kUInt) return std::to_string(v.uint_value);
  return fmt::format("{:.4g}", v.double_value);
}

std::string List(std::string_view key, const ResultValue& v) {
  std::string out;
  for (size_t i = 0; i < v.items.size() && i < kMaxListItems; ++i) {
    out += (i ? ", " : "") + CellOf(key, v.items[i]);
  }
  if (v.items.size() > kMaxListItems) {
    out += fmt::format(", ... ({} in all)", v.items.size());
  }
  return out;
}

bool IsObjectArray(const ResultValue& v) {
  if (v.kind != ResultValue::Kind::kArray || v.items.empty()) return false;
  for (const ResultValue& item : v.items) {
    if (item.kind != ResultValue::Kind::kObject) return false;
  }
  return true;
}

// One table row's cells by flattened key.
void Flatten(const std::string& prefix, const ResultValue& object,
             std::vector<std::pair<std::string, const ResultValue*>>* out) {
  for (const auto& [k, v] : object.members) {
    std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.kind == ResultValue::Kind::kObject) {
      Flatten(key, v, out);
    } else {
      out->emplace_back(key, &v);
    }
  }
}

Table ArrayTable(std::string title, const ResultValue& array) {
  Table t;
  t.title = std::move(title);
  std::vector<std::string> keys;
  std::vector<std::vector<std::pair<std::string, const ResultValue*>>> rows;
  for (const ResultValue& item : array.items) {
    rows.emplace_back();
    Flatten("", item, &rows.back());
    for (const auto& [k, v] : rows.back()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
        keys.push_back(k);
      }
    }
  }
  std::vector<bool> numeric(keys.size(), true);
  for (const auto& row : rows) {
    t.rows.emplace_back(keys.size());
    for (const auto& [k, v] : row) {
      size_t c = std::find(keys.begin(), keys.end(), k) - keys.begin();
      t.rows.back()[c] = CellOf(k, *v);
      if (!v->is_number() && v->kind != ResultValue::Kind::kNull) {
        numeric[c] = false;
      }
    }
  }
  for (const std::string& k : keys) t.header.push_back(HeaderOf(k));
  t.numeric = numeric;
  return t;
}

std::string Render(const Table& t, TableFormat format) {
  switch (format) {
    case TableFormat::kCsv:
      return RenderCsv(t);
    case TableFormat::kMarkdown:
      return RenderMarkdown(t);
    case TableFormat::kText:
      break;
  }
  return RenderText(t);
}

// Headings, key: value lines and lists are printed outside the table
// printer: terminal controls in them are made visible here.
std::string Heading(std::string_view title, TableFormat format) {
  std::string shown = EscapeForTerminal(title);
  switch (format) {
    case TableFormat::kCsv:
      return "# " + shown + "\n";
    case TableFormat::kMarkdown:
      return "## " + shown + "\n";
    case TableFormat::kText:
      break;
  }
  return shown + "\n";
}

// Appends the blocks of one object (its scalars, then its tables and
// sections in member order) to `out`, separated by blank lines.
void RenderObject(const std::string& title, const ResultValue& object,
                  TableFormat format, std::vector<std::string>* out) {
  Table scalars{title, {"field", "value"}, {}};
  std::vector<std::pair<std::string, const ResultValue*>> nested;
  for (const auto& [k, v] : object.members) {
    if (v.kind == ResultValue::Kind::kObject || IsObjectArray(v)) {
      nested.emplace_back(k, &v);
    } else {
      scalars.rows.push_back(
          {HeaderOf(k),
           v.kind == ResultValue::Kind::kArray
               ? (v.items.empty() ? std::string("none") : List(k, v))
               : CellOf(k, v)});
    }
  }
  if (!scalars.rows.empty()) {
    if (format == TableFormat::kText) {
      std::string block = EscapeForTerminal(title) + "\n";
      for (const auto& row : scalars.rows) {
        block += EscapeForTerminal(row[0]) + ": " +
                 (row[1].empty() ? "-" : EscapeForTerminal(row[1])) + "\n";
      }
      out->push_back(std::move(block));
    } else {
      out->push_back(Render(scalars, format));
    }
  }
  for (const auto& [k, v] : nested) {
    std::string sub = title.empty() ? HeaderOf(k) : title + " / " + HeaderOf(k);
    if (v->kind == ResultValue::Kind::kObject) {
      RenderObject(sub, *v, format, out);
    } else {
      out->push_back(Render(ArrayTable(sub, *v), format));
    }
  }
}

}  // namespace

std::string HeaderOf(std::string_view key) {
  std::string base(key);
  Unit unit = UnitOf(key);
  auto strip = [&](std::string_view suffix) {
    if (base.ends_with(suffix)) base.resize(base.size() - suffix.size());
  };
  if (UnitOfSegment(LastSegment(key)) == Unit::kNone && unit != Unit::kNone) {
    // The unit came from the parent: drop its suffix there
    // ("idle_by_reason_ns.host" reads "idle by reason.host (us)").
    size_t dot = base.rfind('.');
    std::string parent = base.substr(0, dot);
    for (std::string_view suffix : {"_ns", "_us", "_bytes"}) {
      if (parent.ends_with(suffix)) {
        parent.resize(parent.size() - suffix.size());
        break;
      }
    }
    base = parent + base.substr(dot);
  }
  if (unit == Unit::kNs) strip("_ns");
  if (unit == Unit::kUs) strip("_us");
  if (unit == Unit::kBytes) strip("_bytes");
  for (char& c : base) {
    if (c == '_') c = ' ';
  }
  if (unit == Unit::kNs || unit == Unit::kUs) {
    // "ns" alone (a time column) reads "time (us)".
    if (base == "ns" || base == "us" || base.ends_with(".ns") ||
        base.ends_with(".us")) {
      base.resize(base.size() - 2);
      base += "time";
    }
    base += " (us)";
  }
  if (unit == Unit::kBytes && (base == "bytes" || base.ends_with(".bytes"))) {
    base.resize(base.size() - 5);
    base += "size";
  }
  return base;
}

std::string CellOf(std::string_view key, const ResultValue& value) {
  if (value.kind == ResultValue::Kind::kArray) {
    if (IsObjectArray(value))
      return fmt::format("{} items", value.items.size());
    return List(key, value);
  }
  if (value.kind == ResultValue::Kind::kObject) {
    std::string out;
    for (const auto& [k, v] : value.members) {
      out += (out.empty() ? "" : ", ") + HeaderOf(k) + "=" + CellOf(k, v);
    }
    return out;
  }
  return Scalar(key, value);
}

std::string EncodeTables(const ResultValue& value, std::string_view title,
                         TableFormat format) {
  std::vector<std::string> blocks;
  if (value.kind == ResultValue::Kind::kObject) {
    RenderObject(std::string(title), value, format, &blocks);
  } else if (IsObjectArray(value)) {
    blocks.push_back(Render(ArrayTable(std::string(title), value), format));
  } else if (value.kind == ResultValue::Kind::kArray) {
    blocks.push_back(Heading(title, format) +
                     (value.items.empty()
                          ? std::string("none")
                          : EscapeForTerminal(List("", value))) +
                     "\n");
  } else {
    blocks.push_back(Heading(title, format) +
                     EscapeForTerminal(CellOf("", value)) + "\n");
  }
  if (blocks.empty()) blocks.push_back(Heading(title, format) + "none\n");
  std::string out;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i > 0) out += "\n";
    out += blocks[i];
  }
  return out;
}

std::string EncodeTables(const AnalysisResult& result, std::string_view title,
                         TableFormat format) {
  return EncodeTables(ToTree(result), title, format);
}

}  // namespace mi::encoders
