#include "model_inspector/saved_session.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"

namespace mi {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A saved session is a few kilobytes; anything far larger is not one.
constexpr uintmax_t kMaxSessionBytes = 16 << 20;

std::string Resolve(const std::string& path, const std::string& base_dir) {
  fs::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (fs::path(base_dir) / p).lexically_normal().string();
}

std::string Relativise(const std::string& path, const std::string& base_dir) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) return path;
  if (base_dir.empty()) return abs.lexically_normal().string();
  fs::path base = fs::absolute(base_dir, ec);
  if (ec) return abs.lexically_normal().string();
  fs::path rel =
      abs.lexically_normal().lexically_relative(base.lexically_normal());
  if (rel.empty()) return abs.lexically_normal().string();
  return rel.string();
}

// Reads members with the place of a wrong type in the error.
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  Status Fail(const std::string& where, std::string_view what) const {
    return MalformedInputError(fmt::format("{}: {}: {}", origin_, where, what));
  }

  // `out` keeps its value when the key is absent.
  Status String(const json& obj, const std::string& where, const char* key,
                std::string* out) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) return Fail(where + "." + key, "expected a string");
    *out = it->get<std::string>();
    return Status::Ok();
  }
  Status Strings(const json& obj, const std::string& where, const char* key,
                 std::vector<std::string>* out) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return Status::Ok();
    if (!it->is_array()) {
      return Fail(where + "." + key, "expected an array of strings");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        return Fail(fmt::format("{}.{}[{}]", where, key, i),
                    "expected a string");
      }
      out->push_back((*it)[i].get<std::string>());
    }
    return Status::Ok();
  }
  template <typename T>
  Status Integer(const json& obj, const std::string& where, const char* key,
                 T* out) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return Status::Ok();
    if (!it->is_number_integer()) {
      return Fail(where + "." + key, "expected an integer");
    }
    *out = it->get<T>();
    return Status::Ok();
  }
  Status Number(const json& obj, const std::string& where, const char* key,
                double* out) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return Status::Ok();
    if (!it->is_number()) return Fail(where + "." + key, "expected a number");
    *out = it->get<double>();
    return Status::Ok();
  }
  Status Object(const json& obj, const std::string& where, const char* key,
                const json** out) const {
    auto it = obj.find(key);
    *out = nullptr;
    if (it == obj.end() || it->is_null()) return Status::Ok();
    if (!it->is_object()) return Fail(where + "." + key, "expected an object");
    *out = &*it;
    return Status::Ok();
  }
  Status Array(const json& obj, const std::string& where, const char* key,
               const json** out) const {
    auto it = obj.find(key);
    *out = nullptr;
    if (it == obj.end() || it->is_null()) return Status::Ok();
    if (!it->is_array()) return Fail(where + "." + key, "expected an array");
    *out = &*it;
    return Status::Ok();
  }

  Status NodeRef(const json& obj, const std::string& where,
                 SavedNodeRef* out) const {
    if (!obj.is_object()) return Fail(where, "expected an object");
    MI_RETURN_IF_ERROR(Integer(obj, where, "run", &out->run));
    MI_RETURN_IF_ERROR(String(obj, where, "level", &out->level));
    if (!obj.contains("node")) return Fail(where, "expected a node id");
    MI_RETURN_IF_ERROR(Integer(obj, where, "node", &out->node));
    MI_RETURN_IF_ERROR(String(obj, where, "name", &out->name));
    MI_RETURN_IF_ERROR(String(obj, where, "op", &out->op));
    if (out->run < 0) return Fail(where + ".run", "expected a run index >= 0");
    return Status::Ok();
  }

 private:
  std::string origin_;
};

json NodeRefJson(const SavedNodeRef& r) {
  json j = json::object();
  j["run"] = r.run;
  j["level"] = r.level;
  j["node"] = r.node;
  j["name"] = r.name;
  j["op"] = r.op;
  return j;
}

}  // namespace

bool IsSavedSessionPath(std::string_view path) {
  return path.size() > kSavedSessionExtension.size() &&
         path.ends_with(kSavedSessionExtension);
}

StatusOr<SavedSession> ParseSavedSession(std::string_view text,
                                         const std::string& base_dir,
                                         const std::string& origin) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return MalformedInputError(
        origin +
        ": not JSON; a saved session (.mis) is a JSON document "
        "written by the web UI's \"save session\"");
  }
  Reader r(origin);
  if (!doc.is_object()) return r.Fail("document", "expected an object");
  std::string format;
  MI_RETURN_IF_ERROR(r.String(doc, "document", "format", &format));
  if (format != kSavedSessionFormat) {
    return r.Fail("format", fmt::format("expected \"{}\", found \"{}\"",
                                        kSavedSessionFormat, format));
  }
  int version = 0;
  MI_RETURN_IF_ERROR(r.Integer(doc, "document", "version", &version));
  if (version < 1) {
    return r.Fail("version", "expected a version number >= 1");
  }
  if (version > kSavedSessionVersion) {
    return UnsupportedError(fmt::format(
        "{}: version {} is newer than this model-inspector reads ({}); "
        "update model-inspector",
        origin, version, kSavedSessionVersion));
  }
  SavedSession s;
  const json* runs = nullptr;
  MI_RETURN_IF_ERROR(r.Array(doc, "document", "runs", &runs));
  if (runs != nullptr) {
    for (size_t i = 0; i < runs->size(); ++i) {
      std::string where = fmt::format("runs[{}]", i);
      const json& run = (*runs)[i];
      if (!run.is_object()) return r.Fail(where, "expected an object");
      SavedRun out;
      MI_RETURN_IF_ERROR(r.String(run, where, "name", &out.name));
      MI_RETURN_IF_ERROR(r.Strings(run, where, "paths", &out.paths));
      if (out.paths.empty()) return r.Fail(where + ".paths", "expected paths");
      for (std::string& p : out.paths) p = Resolve(p, base_dir);
      s.runs.push_back(std::move(out));
    }
  }
  const json* probes = nullptr;
  MI_RETURN_IF_ERROR(r.Object(doc, "document", "probes", &probes));
  if (probes != nullptr) {
    SavedProbeSettings& p = s.probes;
    MI_RETURN_IF_ERROR(r.Strings(*probes, "probes", "patterns", &p.patterns));
    MI_RETURN_IF_ERROR(r.Strings(*probes, "probes", "triggers", &p.triggers));
    MI_RETURN_IF_ERROR(r.String(*probes, "probes", "keep", &p.keep));
    if (p.keep != "stats" && p.keep != "tensor") {
      return r.Fail("probes.keep", "expected \"stats\" or \"tensor\"");
    }
    MI_RETURN_IF_ERROR(r.Strings(*probes, "probes", "inputs", &p.inputs));
    for (std::string& in : p.inputs) in = Resolve(in, base_dir);
    MI_RETURN_IF_ERROR(r.Integer(*probes, "probes", "input", &p.input));
    if (p.input < -1 || p.input >= static_cast<int32_t>(p.inputs.size())) {
      return r.Fail(
          "probes.input",
          fmt::format("expected -1 or an index below {}", p.inputs.size()));
    }
  }
  const json* bookmarks = nullptr;
  MI_RETURN_IF_ERROR(r.Array(doc, "document", "bookmarks", &bookmarks));
  if (bookmarks != nullptr) {
    for (size_t i = 0; i < bookmarks->size(); ++i) {
      SavedNodeRef b;
      MI_RETURN_IF_ERROR(
          r.NodeRef((*bookmarks)[i], fmt::format("bookmarks[{}]", i), &b));
      s.bookmarks.push_back(std::move(b));
    }
  }
  const json* notes = nullptr;
  MI_RETURN_IF_ERROR(r.Array(doc, "document", "notes", &notes));
  if (notes != nullptr) {
    for (size_t i = 0; i < notes->size(); ++i) {
      std::string where = fmt::format("notes[{}]", i);
      SavedNote n;
      MI_RETURN_IF_ERROR(r.NodeRef((*notes)[i], where, &n.at));
      MI_RETURN_IF_ERROR(r.String((*notes)[i], where, "text", &n.text));
      s.notes.push_back(std::move(n));
    }
  }
  const json* view = nullptr;
  MI_RETURN_IF_ERROR(r.Object(doc, "document", "view", &view));
  if (view != nullptr) {
    MI_RETURN_IF_ERROR(r.String(*view, "view", "hash", &s.view.hash));
    MI_RETURN_IF_ERROR(
        r.String(*view, "view", "probe_stat", &s.view.probe_stat));
    const json* vp = nullptr;
    MI_RETURN_IF_ERROR(r.Object(*view, "view", "viewport", &vp));
    if (vp != nullptr) {
      SavedViewport v;
      MI_RETURN_IF_ERROR(r.Number(*vp, "view.viewport", "x", &v.x));
      MI_RETURN_IF_ERROR(r.Number(*vp, "view.viewport", "y", &v.y));
      MI_RETURN_IF_ERROR(r.Number(*vp, "view.viewport", "scale", &v.scale));
      if (!(v.scale > 0)) {
        return r.Fail("view.viewport.scale", "expected a number > 0");
      }
      s.view.viewport = v;
    }
  }
  for (const SavedNodeRef* ref : [&] {
         std::vector<const SavedNodeRef*> all;
         for (const SavedNodeRef& b : s.bookmarks) all.push_back(&b);
         for (const SavedNote& n : s.notes) all.push_back(&n.at);
         return all;
       }()) {
    if (!s.runs.empty() && ref->run >= static_cast<int32_t>(s.runs.size())) {
      return r.Fail("bookmarks/notes",
                    fmt::format("node '{}' names run {}, the session has {}",
                                ref->name, ref->run, s.runs.size()));
    }
  }
  return s;
}

StatusOr<SavedSession> ReadSavedSession(const std::string& path) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    return NotFoundError(path + ": saved session not found (" + ec.message() +
                         ")");
  }
  if (size > kMaxSessionBytes) {
    return MalformedInputError(
        fmt::format("{}: {} bytes; a saved session is small JSON (at most {} "
                    "bytes)",
                    path, size, kMaxSessionBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot read the saved session");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string base_dir = fs::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  // Paths as written, for the error messages.
  json raw = json::parse(buffer.str(), nullptr, false);
  MI_ASSIGN_OR_RETURN(SavedSession session,
                      ParseSavedSession(buffer.str(), base_dir, path));
  auto written = [&](const char* section, size_t i, const char* key,
                     size_t j) -> std::string {
    const json* at = &raw;
    if (!at->contains(section)) return "";
    at = &(*at)[section];
    if (i != SIZE_MAX) at = &(*at)[i];
    const json& list = (*at)[key];
    return list.is_array() && j < list.size() && list[j].is_string()
               ? list[j].get<std::string>()
               : "";
  };
  for (size_t i = 0; i < session.runs.size(); ++i) {
    const SavedRun& run = session.runs[i];
    for (size_t j = 0; j < run.paths.size(); ++j) {
      if (fs::exists(run.paths[j], ec)) continue;
      return NotFoundError(fmt::format(
          "{}: run {} ({}): input '{}' not found (looked for {}); the "
          "session's paths are relative to the .mis file's folder: copy the "
          "runs with it, keeping their places",
          path, i, run.name, written("runs", i, "paths", j), run.paths[j]));
    }
  }
  for (size_t j = 0; j < session.probes.inputs.size(); ++j) {
    if (fs::exists(session.probes.inputs[j], ec)) continue;
    return NotFoundError(fmt::format(
        "{}: probe input '{}' not found (looked for {}); the session's paths "
        "are relative to the .mis file's folder",
        path, written("probes", SIZE_MAX, "inputs", j),
        session.probes.inputs[j]));
  }
  return session;
}

std::string SavedSessionJson(const SavedSession& s,
                             const std::string& base_dir) {
  json doc = json::object();
  doc["format"] = kSavedSessionFormat;
  doc["version"] = kSavedSessionVersion;
  json runs = json::array();
  for (const SavedRun& r : s.runs) {
    json run = json::object();
    run["name"] = r.name;
    json paths = json::array();
    for (const std::string& p : r.paths)
      paths.push_back(Relativise(p, base_dir));
    run["paths"] = std::move(paths);
    runs.push_back(std::move(run));
  }
  doc["runs"] = std::move(runs);
  json probes = json::object();
  probes["patterns"] = s.probes.patterns;
  probes["triggers"] = s.probes.triggers;
  probes["keep"] = s.probes.keep;
  json inputs = json::array();
  for (const std::string& p : s.probes.inputs) {
    inputs.push_back(Relativise(p, base_dir));
  }
  probes["inputs"] = std::move(inputs);
  probes["input"] = s.probes.input;
  doc["probes"] = std::move(probes);
  json bookmarks = json::array();
  for (const SavedNodeRef& b : s.bookmarks) bookmarks.push_back(NodeRefJson(b));
  doc["bookmarks"] = std::move(bookmarks);
  json notes = json::array();
  for (const SavedNote& n : s.notes) {
    json j = NodeRefJson(n.at);
    j["text"] = n.text;
    notes.push_back(std::move(j));
  }
  doc["notes"] = std::move(notes);
  json view = json::object();
  view["hash"] = s.view.hash;
  if (s.view.viewport) {
    view["viewport"] = {{"x", s.view.viewport->x},
                        {"y", s.view.viewport->y},
                        {"scale", s.view.viewport->scale}};
  }
  view["probe_stat"] = s.view.probe_stat;
  doc["view"] = std::move(view);
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Status WriteSavedSession(const std::string& path, const SavedSession& s) {
  std::string base_dir = fs::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  return WriteFileAtomically(path, SavedSessionJson(s, base_dir));
}

}  // namespace mi
