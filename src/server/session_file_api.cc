#include "server/session_file_api.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace mi::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json; charset=utf-8";
  r.body = std::move(body);
  Api::AddSecurityHeaders(&r, /*cacheable=*/false);
  return r;
}

std::string FolderOf(const std::string& path) {
  std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

SessionFileApi::SessionFileApi(std::string path,
                               std::optional<SavedSession> restored)
    : path_(std::move(path)), restored_(std::move(restored)) {}

HttpResponse SessionFileApi::Handle(const HttpRequest& request,
                                    const std::vector<SavedRun>& runs,
                                    const std::vector<std::string>& inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (request.method == "GET" || request.method == "HEAD") {
    json out = json::object();
    out["path"] = path_.empty() ? json(nullptr) : json(path_);
    out["restored"] = restored_.has_value();
    const std::optional<SavedSession>& shown = saved_ ? saved_ : restored_;
    if (shown) {
      out["session"] = json::parse(
          SavedSessionJson(*shown, path_.empty() ? "" : FolderOf(path_)));
    } else {
      out["session"] = nullptr;
    }
    return JsonResponse(200, out.dump());
  }
  // POST: the UI's parts of the session; paths are the server's.
  // Inputs are the server's: the UI's list keeps only the ones the server
  // offers (a request never adds a path), `input` follows its entry.
  std::string body = request.body;
  json doc = json::parse(body, nullptr, false);
  if (doc.is_object() && doc.contains("probes") && doc["probes"].is_object()) {
    json& probes = doc["probes"];
    json kept = json::array();
    int64_t chosen = -1;
    if (probes.contains("inputs") && probes["inputs"].is_array()) {
      int64_t at =
          probes.contains("input") && probes["input"].is_number_integer()
              ? probes["input"].get<int64_t>()
              : -1;
      for (size_t i = 0; i < probes["inputs"].size(); ++i) {
        const json& in = probes["inputs"][i];
        if (!in.is_string() ||
            std::find(inputs.begin(), inputs.end(), in.get<std::string>()) ==
                inputs.end()) {
          continue;
        }
        if (static_cast<int64_t>(i) == at) chosen = kept.size();
        kept.push_back(in);
      }
    }
    probes["inputs"] = std::move(kept);
    probes["input"] = chosen;
    body = doc.dump();
  }
  StatusOr<SavedSession> parsed = ParseSavedSession(body, "", "request body");
  if (!parsed.ok()) return Api::Error(400, parsed.status().message());
  SavedSession session = std::move(parsed).value();
  session.runs = runs;
  json out = json::object();
  if (path_.empty()) {
    out["saved"] = nullptr;
    out["document"] = SavedSessionJson(session, "");
    saved_ = std::move(session);
    return JsonResponse(200, out.dump());
  }
  Status written = WriteSavedSession(path_, session);
  if (!written.ok()) {
    return Api::Error(500, fmt::format("{}: the session could not be saved: {}",
                                       path_, written.message()));
  }
  out["saved"] = path_;
  out["document"] = SavedSessionJson(session, FolderOf(path_));
  saved_ = std::move(session);
  return JsonResponse(200, out.dump());
}

}  // namespace mi::server
