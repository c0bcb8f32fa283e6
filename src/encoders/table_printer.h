#pragma once

// Renders simple tables as aligned text, CSV (RFC 4180 quoting) or Markdown.

#include <string>
#include <vector>

namespace mi::encoders {

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;  // right-align these columns in text output
  // Text output shortens long cells (kernel names) to head...tail; prose
  // in the last column (finding messages) is kept whole instead.
  bool full_last_column = false;
};

std::string RenderText(const Table& table);
std::string RenderCsv(const Table& table);
std::string RenderMarkdown(const Table& table);

}  // namespace mi::encoders
