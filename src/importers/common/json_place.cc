#include "importers/common/json_place.h"

#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "importers/common/protobuf_text.h"

namespace mi::importers {

std::string JsonSyntaxErrorPlace(std::string_view text) {
  // The non-throwing parse says only "discarded"; the place is in the
  // exception of a second, throwing parse (error paths only).
  size_t byte = 0;
  try {
    nlohmann::json parsed = nlohmann::json::parse(text);
    (void)parsed;
  } catch (const nlohmann::json::parse_error& e) {
    byte = e.byte;
  } catch (const nlohmann::json::exception&) {
  }
  uint64_t line = 1, column = 1;
  LineAndColumnAt(text, byte > 0 ? byte - 1 : 0, &line, &column);
  return fmt::format("{}:{}", line, column);
}

}  // namespace mi::importers
