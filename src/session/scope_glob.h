#pragma once

// Glob patterns over '/'-separated scope paths, as the node search reads
// them (docs/reference/http-api.md, "Search"): matched case-insensitively
// against any trailing run of whole segments of a path, so
// "layer1/*/conv*" finds "/layer1/layer1.0/conv1" and "encoder/*/conv"
// finds "/model/encoder/block0/conv". A pattern that starts with '/' is
// anchored at the root and must match the whole path.
//
// Within a pattern: '?' is one character other than '/', '*' any run
// within one segment, '**' any run across segments, and '**/' also matches
// no segment at all.

#include <cstdint>
#include <string_view>
#include <vector>

namespace mi {

// Whether `pattern` matches a trailing run of whole segments of `path`
// (the whole of `path` when `pattern` starts with '/'). A leading '/' of
// `path` is ignored. `scratch` is reused between calls to save
// allocations. Dynamic programming over (pattern, path) positions: time
// linear in pattern x path whatever the pattern, never exponential.
bool ScopeGlobMatch(std::string_view pattern, std::string_view path,
                    std::vector<uint8_t>* scratch);

}  // namespace mi
