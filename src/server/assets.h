#pragma once

// The web UI embedded into the binary at build time. tools/embed_assets.py
// turns every file of the built front end (web/dist) into a generated
// source, embedded_assets.cc; without a built front end it embeds a
// placeholder page that says so. An installed binary needs no files beside
// it, and requests are answered from this table only.

#include <string_view>
#include <vector>

namespace mi::server {

struct EmbeddedAsset {
  std::string_view path;  // URL path, e.g. "/index.html", "/assets/app.js"
  std::string_view mime;  // Content-Type
  std::string_view data;
};

// The table, sorted by path (generated).
const std::vector<EmbeddedAsset>& EmbeddedAssets();
// True when the front end was not built and the table holds the placeholder.
bool EmbeddedUiIsPlaceholder();

}  // namespace mi::server
