#pragma once

// Colours of op types, the same in every view: the fill of a node by its op
// type, from src/layout/op_palette.json (a table for common ONNX ops,
// families sharing a hue) with a hash of the name for the rest. The web UI
// reads the same file (web/src/palette.ts), so the SVG and the browser
// agree.

#include <cstdint>
#include <string>
#include <string_view>

namespace mi::layout {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

Rgb OpFill(std::string_view op_type);
// The outline: the fill darkened by the palette's outline factor.
Rgb OpOutline(std::string_view op_type);
// "#rrggbb".
std::string CssHex(Rgb colour);

}  // namespace mi::layout
