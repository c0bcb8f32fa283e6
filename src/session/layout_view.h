#pragma once

// The LayoutView behind Session::OpenLayoutView: one graph level's
// hierarchical layout (scopes, fusion groups, repeated blocks), folded to a
// budget of visible items, re-laid out incrementally as groups are toggled,
// and encoded as binary, JSON or SVG (src/layout/layout_encoding.h).

#include <memory>

#include "model_inspector/session.h"
#include "model_inspector/status.h"

namespace mi {

StatusOr<std::unique_ptr<LayoutView>> CreateLayoutView(
    const Session::Impl& session, const LayoutViewOptions& options);

}  // namespace mi
