#pragma once

// Where a JSON text stops being JSON, for error messages that name the
// place ("file:12:7: not valid JSON; expected ...").

#include <string>
#include <string_view>

namespace mi::importers {

// "line:column" (1-based) of the first syntax error nlohmann's parser
// reports in `text`; "1:1" when it reports no place.
std::string JsonSyntaxErrorPlace(std::string_view text);

}  // namespace mi::importers
