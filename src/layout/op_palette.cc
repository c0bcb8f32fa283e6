#include "layout/op_palette.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mi::layout {

extern const std::string_view kOpPaletteJson;  // op_palette_data.cc

namespace {

// Colours as doubles in [0, 1], computed exactly as web/src/palette.ts does
// (JavaScript numbers are doubles), then rounded the same way.
struct Colour {
  double r = 0, g = 0, b = 0;
};

struct Palette {
  std::map<std::string, Colour, std::less<>> fixed;
  double saturation = 0.6, lightness = 0.84, outline = 0.55;
};

Colour FromHex(std::string_view hex) {
  uint32_t v = 0;
  for (char c : hex.substr(1)) {
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
    if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
  }
  return {((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0,
          (v & 255) / 255.0};
}

const Palette& ThePalette() {
  // Parsed once; the JSON is ours and checked by op_palette_test, so a
  // broken file fails the tests rather than being handled here.
  static const Palette palette = [] {
    Palette p;
    nlohmann::json doc = nlohmann::json::parse(kOpPaletteJson);
    p.saturation = doc.at("fallback").at("saturation").get<double>();
    p.lightness = doc.at("fallback").at("lightness").get<double>();
    p.outline = doc.at("outline_factor").get<double>();
    for (const auto& family : doc.at("families")) {
      for (const auto& [op, hex] : family.at("ops").items()) {
        p.fixed.emplace(op, FromHex(hex.get<std::string>()));
      }
    }
    return p;
  }();
  return palette;
}

uint32_t Fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h;
}

Colour FromHsl(double h, double s, double l) {
  double a = s * std::min(l, 1 - l);
  auto f = [&](double n) {
    double k = std::fmod(n + h / 30, 12.0);
    return l - a * std::max(-1.0, std::min({k - 3, 9 - k, 1.0}));
  };
  return {f(0), f(8), f(4)};
}

Colour FillOf(std::string_view op) {
  const Palette& p = ThePalette();
  auto it = p.fixed.find(op);
  if (it != p.fixed.end()) return it->second;
  return FromHsl(static_cast<double>(Fnv1a(op) % 360), p.saturation,
                 p.lightness);
}

uint8_t Channel(double v) {
  // Math.round: halves go up.
  return static_cast<uint8_t>(
      std::clamp(std::floor(v * 255 + 0.5), 0.0, 255.0));
}

Rgb ToRgb(const Colour& c) {
  return {Channel(c.r), Channel(c.g), Channel(c.b)};
}

}  // namespace

Rgb OpFill(std::string_view op_type) { return ToRgb(FillOf(op_type)); }

Rgb OpOutline(std::string_view op_type) {
  Colour c = FillOf(op_type);
  double f = ThePalette().outline;
  return ToRgb({c.r * f, c.g * f, c.b * f});
}

std::string CssHex(Rgb c) {
  return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b);
}

}  // namespace mi::layout
