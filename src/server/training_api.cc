// GET /api/runs/{run}/training/...: a training snapshot's views for the UI
// (docs/reference/http-api.md "Training"): what the snapshot holds, one
// layer's per-step metrics, and the tensor-level views of a captured step
// (histograms, attention, projection, normal vs anomalous sample). Read
// from the snapshot at each request through the Session's Training*
// queries; the diagnosis itself is the generic analysis route
// (/api/runs/{run}/analyses/training_diagnosis).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "model_inspector/session.h"
#include "server/api.h"

namespace mi::server {
namespace {

constexpr std::string_view kRoutes =
    "training: /api/runs/{run}/training/overview, "
    "/training/layers/{layer}/series, /training/histograms?step=S[&layer=L], "
    "/training/attention?step=S&layer=L, "
    "/training/projection?step=S&layer=L[&method=pca|tsne], "
    "/training/samples?step=S";

std::optional<std::string_view> Param(const HttpRequest& r,
                                      std::string_view key) {
  for (const auto& [k, v] : r.params) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

HttpResponse Answer(const StatusOr<std::string>& json) {
  if (!json.ok()) return Api::StatusError(json.status());
  return Api::JsonBody(json.value());
}

// A required step (a non-negative optimizer step), or the 400 saying why.
std::optional<HttpResponse> ParseStep(const HttpRequest& r, int64_t* step) {
  std::optional<std::string_view> text = Param(r, "step");
  if (!text) {
    return Api::Error(400,
                      "step: missing; expected a captured step (the "
                      "overview's captured_steps), e.g. ?step=12");
  }
  std::optional<int64_t> v = ParseInteger<int64_t>(*text);
  if (!v || *v < 0) {
    return Api::Error(400, "step: expected a step number (0 or more), found '" +
                               std::string(*text) + "'");
  }
  *step = *v;
  return std::nullopt;
}

// A layer id; `required` false: absent means -1 (every layer).
std::optional<HttpResponse> ParseLayer(std::string_view text, bool present,
                                       bool required, int32_t* layer) {
  if (!present) {
    if (!required) {
      *layer = -1;
      return std::nullopt;
    }
    return Api::Error(400,
                      "layer: missing; expected a layer id (the overview's "
                      "layers[].id), e.g. &layer=3");
  }
  std::optional<int32_t> v = ParseInteger<int32_t>(text);
  if (!v || *v < 0) {
    return Api::Error(400, "layer: expected a layer id (0 or more), found '" +
                               std::string(text) + "'");
  }
  *layer = *v;
  return std::nullopt;
}

std::optional<HttpResponse> LayerParam(const HttpRequest& r, bool required,
                                       int32_t* layer) {
  std::optional<std::string_view> text = Param(r, "layer");
  return ParseLayer(text.value_or(""), text.has_value(), required, layer);
}

}  // namespace

HttpResponse TrainingEndpoint(const Session& session,
                              const std::vector<std::string_view>& seg,
                              const HttpRequest& request) {
  // seg: api, runs, {run}, training, ...
  if (session.TrainingSnapshotPath().empty()) {
    return Api::Error(
        404,
        "this run is not a training snapshot (open a snapshot written "
        "by model_inspector.train or `model-inspector trace`)");
  }
  if (seg.size() == 5 && seg[4] == "overview") {
    return Answer(session.TrainingOverviewJson());
  }
  if (seg.size() == 7 && seg[4] == "layers" && seg[6] == "series") {
    int32_t layer = -1;
    if (auto bad = ParseLayer(seg[5], true, true, &layer)) return *bad;
    return Answer(session.TrainingLayerSeriesJson(layer));
  }
  if (seg.size() == 5) {
    int64_t step = 0;
    int32_t layer = -1;
    if (seg[4] == "histograms") {
      if (auto bad = ParseStep(request, &step)) return *bad;
      if (auto bad = LayerParam(request, false, &layer)) return *bad;
      return Answer(session.TrainingHistogramsJson(step, layer));
    }
    if (seg[4] == "attention") {
      if (auto bad = ParseStep(request, &step)) return *bad;
      if (auto bad = LayerParam(request, true, &layer)) return *bad;
      return Answer(session.TrainingAttentionJson(step, layer));
    }
    if (seg[4] == "projection") {
      if (auto bad = ParseStep(request, &step)) return *bad;
      if (auto bad = LayerParam(request, true, &layer)) return *bad;
      std::string_view method = Param(request, "method").value_or("pca");
      if (method != "pca" && method != "tsne") {
        return Api::Error(400, "method: expected pca or tsne, found '" +
                                   std::string(method) + "'");
      }
      return Answer(session.TrainingProjectionJson(step, layer, method));
    }
    if (seg[4] == "samples") {
      if (auto bad = ParseStep(request, &step)) return *bad;
      return Answer(session.TrainingSamplesJson(step));
    }
  }
  return Api::Error(
      404, "no API endpoint " + request.path + "; " + std::string(kRoutes));
}

}  // namespace mi::server
