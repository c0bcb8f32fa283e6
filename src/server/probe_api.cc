// GET /api/runs/{run}/probes and /api/runs/{run}/probes/node: a run's
// tensor probes for the UI (docs/reference/http-api.md "Probes"). Read from
// the run directory's probe store at each request, never cached: a re-run
// adds a probe run while the server holds the session.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "model_inspector/session.h"
#include "server/api.h"

namespace mi::server {
namespace {

std::string_view ProbeParam(const HttpRequest& r, std::string_view key,
                            bool* found) {
  for (const auto& [k, v] : r.params) {
    if (k == key) {
      *found = true;
      return v;
    }
  }
  *found = false;
  return {};
}

}  // namespace

HttpResponse ProbesEndpoint(const Session& session,
                            const std::vector<std::string_view>& seg,
                            const HttpRequest& request) {
  bool has_level = false;
  std::string_view level = ProbeParam(request, "level", &has_level);
  if (!has_level) level = "framework";
  if (seg.size() == 4) {
    auto json = session.ProbesJson(level);
    if (!json.ok()) return Api::StatusError(json.status());
    return Api::JsonBody(std::move(json).value());
  }
  if (seg.size() == 5 && seg[4] == "node") {
    bool has_id = false;
    std::string_view id = ProbeParam(request, "id", &has_id);
    std::optional<uint32_t> node =
        has_id ? ParseInteger<uint32_t>(id) : std::nullopt;
    if (!node) {
      return Api::Error(400, "id: expected a node id (a number), found '" +
                                 std::string(id) + "'");
    }
    bool has_last = false;
    std::string_view last_text = ProbeParam(request, "last", &has_last);
    std::optional<uint32_t> last =
        has_last ? ParseInteger<uint32_t>(last_text) : uint32_t{10};
    if (!last || *last == 0 || *last > 1000) {
      return Api::Error(400,
                        "last: expected a number of runs 1..1000, found '" +
                            std::string(last_text) + "'");
    }
    auto json = session.NodeProbesJson(level, *node, *last);
    if (!json.ok()) return Api::StatusError(json.status());
    return Api::JsonBody(std::move(json).value());
  }
  return Api::Error(404, "no API endpoint " + request.path +
                             "; probes: /api/runs/{run}/probes?level=L and "
                             "/api/runs/{run}/probes/node?level=L&id=N");
}

}  // namespace mi::server
