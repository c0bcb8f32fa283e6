#include "encoders/table_printer.h"

#include <algorithm>

#include "base/strings.h"

namespace mi::encoders {
namespace {

// Display width in code points (UTF-8 continuation bytes do not count).
size_t Width(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

std::string MarkdownCell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += " ";
    else
      out.push_back(c);
  }
  return out;
}

// Long kernel names (C++ templates) would push every other column off the
// screen: text tables keep their head and tail. CSV/Markdown/JSON keep all.
constexpr size_t kMaxTextCell = 72;

std::string Shorten(const std::string& s) {
  if (Width(s) <= kMaxTextCell || s.size() != Width(s)) return s;
  size_t keep = (kMaxTextCell - 3) / 2;
  return s.substr(0, keep) + "..." + s.substr(s.size() - keep);
}

// Cells hold names from input files: terminal controls in them are made
// visible in every format (a CSV or Markdown table is read on a terminal
// too), before each format's own quoting.
Table Escaped(const Table& input) {
  Table table = input;
  table.title = EscapeForTerminal(table.title);
  for (auto& h : table.header) h = EscapeForTerminal(h);
  for (auto& row : table.rows) {
    for (auto& cell : row) cell = EscapeForTerminal(cell);
  }
  return table;
}

}  // namespace

std::string RenderText(const Table& input) {
  Table table = Escaped(input);
  for (auto& row : table.rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (table.full_last_column && c + 1 == row.size()) continue;
      row[c] = Shorten(row[c]);
    }
  }
  size_t cols = table.header.size();
  std::vector<size_t> width(cols, 0);
  for (size_t c = 0; c < cols; ++c) width[c] = Width(table.header[c]);
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < cols && c < row.size(); ++c) {
      width[c] = std::max(width[c], Width(row[c]));
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cols; ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      std::string pad(width[c] - Width(cell), ' ');
      bool right = c < table.numeric.size() && table.numeric[c];
      out += right ? pad + cell : cell + pad;
      if (c + 1 < cols) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = table.title + "\n";
  out += line(table.header);
  std::vector<std::string> rule;
  for (size_t c = 0; c < cols; ++c) rule.push_back(std::string(width[c], '-'));
  out += line(rule);
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string RenderCsv(const Table& input) {
  Table table = Escaped(input);
  std::string out = "# " + table.title + "\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out.push_back(',');
      out += CsvField(cells[c]);
    }
    out.push_back('\n');
  };
  line(table.header);
  for (const auto& row : table.rows) line(row);
  return out;
}

std::string RenderMarkdown(const Table& input) {
  Table table = Escaped(input);
  std::string out = "### " + MarkdownCell(table.title) + "\n\n|";
  for (const auto& h : table.header) out += " " + MarkdownCell(h) + " |";
  out += "\n|";
  for (size_t c = 0; c < table.header.size(); ++c) {
    bool right = c < table.numeric.size() && table.numeric[c];
    out += right ? "---:|" : "---|";
  }
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + MarkdownCell(cell) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace mi::encoders
