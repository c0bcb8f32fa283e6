// A run digest as JSON ("model-inspector/run-digest/1";
// docs/reference/schemas/run-digest.schema.json): the `*.midigest.json`
// file and the text the run history stores. The reader is strict (every
// field present, no unknown field, types and series lengths checked) and
// bounded (the input's size is capped; everything else is proportional to
// it), and names the line:column of whatever it rejects.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_set>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_writer.h"
#include "diff/diff_internal.h"

namespace mi {
namespace {

constexpr std::string_view kSchema = "model-inspector/run-digest/1";
// A digest of a 1M-node graph with a few runs stays well below this.
constexpr size_t kMaxDigestBytes = size_t{1} << 30;

// ---------------------------------------------------------------------------
// Writing

void WriteStrings(JsonWriter& w, const std::vector<std::string>& items) {
  w.BeginArray();
  for (const std::string& s : items) w.String(s);
  w.EndArray();
}

void WriteInts(JsonWriter& w, const std::vector<int64_t>& items) {
  w.BeginArray();
  for (int64_t v : items) w.Int(v);
  w.EndArray();
}

void WriteTensors(JsonWriter& w, const std::vector<DigestTensor>& tensors) {
  w.BeginArray();
  for (const DigestTensor& t : tensors) {
    w.BeginObject();
    w.Field("name", t.name);
    w.Field("dtype", t.dtype);
    w.Key("shape");
    if (t.has_shape) {
      WriteStrings(w, t.shape);
    } else {
      w.Null();
    }
    w.Field("layout", t.layout);
    w.EndObject();
  }
  w.EndArray();
}

void WriteSeries(JsonWriter& w, const DigestSeries& s) {
  w.BeginObject();
  w.Field("key", s.key);
  w.Key("run_ns");
  WriteInts(w, s.run_ns);
  w.Key("overlapped_ns");
  WriteInts(w, s.overlapped_ns);
  w.Key("count");
  WriteInts(w, s.count);
  w.EndObject();
}

void WriteSeriesList(JsonWriter& w, std::string_view key,
                     const std::vector<DigestSeries>& list) {
  w.Key(key).BeginArray();
  for (const DigestSeries& s : list) WriteSeries(w, s);
  w.EndArray();
}

// ---------------------------------------------------------------------------
// Reading

// One step of a path into the document: an object key or an array index.
using PathStep = std::variant<std::string_view, size_t>;

size_t SkipSpace(std::string_view t, size_t i) {
  while (i < t.size() &&
         (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) {
    ++i;
  }
  return i;
}

// The end of the string starting at t[i] == '"'.
size_t SkipString(std::string_view t, size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') {
      ++i;
    } else if (t[i] == '"') {
      return i + 1;
    }
  }
  return t.size();
}

// The end of the (syntactically valid) value starting at t[i].
size_t SkipValue(std::string_view t, size_t i) {
  if (i >= t.size()) return i;
  if (t[i] == '"') return SkipString(t, i);
  if (t[i] != '{' && t[i] != '[') {
    while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' &&
           t[i] != ' ' && t[i] != '\n' && t[i] != '\r' && t[i] != '\t') {
      ++i;
    }
    return i;
  }
  // Nesting counted, not recursed: depth costs nothing here.
  size_t depth = 0;
  while (i < t.size()) {
    char c = t[i];
    if (c == '"') {
      i = SkipString(t, i);
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
    ++i;
  }
  return i;
}

// The byte offset of the value at `path` in the (valid JSON) text; where a
// step is not found, the offset of the last container found.
size_t PlaceOf(std::string_view t, const std::vector<PathStep>& path) {
  size_t at = SkipSpace(t, 0);
  for (const PathStep& step : path) {
    if (at >= t.size()) return at;
    if (const std::string_view* key = std::get_if<std::string_view>(&step)) {
      if (t[at] != '{') return at;
      size_t i = SkipSpace(t, at + 1);
      bool found = false;
      while (i < t.size() && t[i] == '"') {
        size_t end = SkipString(t, i);
        std::string_view raw = t.substr(i + 1, end - i - 2);
        i = SkipSpace(t, end);
        if (i < t.size() && t[i] == ':') i = SkipSpace(t, i + 1);
        if (raw == *key) {
          at = i;
          found = true;
          break;
        }
        i = SkipSpace(t, SkipValue(t, i));
        if (i < t.size() && t[i] == ',') i = SkipSpace(t, i + 1);
      }
      if (!found) return at;
    } else {
      size_t index = std::get<size_t>(step);
      if (t[at] != '[') return at;
      size_t i = SkipSpace(t, at + 1);
      for (size_t k = 0; k < index && i < t.size() && t[i] != ']'; ++k) {
        i = SkipSpace(t, SkipValue(t, i));
        if (i < t.size() && t[i] == ',') i = SkipSpace(t, i + 1);
      }
      if (i >= t.size() || t[i] == ']') return at;
      at = i;
    }
  }
  return at;
}

std::string LineColumn(std::string_view t, size_t offset) {
  uint64_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < t.size(); ++i) {
    if (t[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("{}:{}", line, column);
}

std::string PathText(const std::vector<PathStep>& path) {
  std::string out;
  for (const PathStep& step : path) {
    if (const std::string_view* key = std::get_if<std::string_view>(&step)) {
      if (!out.empty()) out += '.';
      out += *key;
    } else {
      out += fmt::format("[{}]", std::get<size_t>(step));
    }
  }
  return out.empty() ? std::string("the document") : out;
}

using Json = nlohmann::json;

class DigestReader {
 public:
  DigestReader(std::string_view text, std::string_view name)
      : text_(text), name_(name) {}

  Status Read(const Json& root, RunDigest* out) {
    MI_RETURN_IF_ERROR(Object(root, {"schema", "meta", "levels", "timing"}));
    std::string schema;
    MI_RETURN_IF_ERROR(Str(root, "schema", &schema));
    if (schema != kSchema) {
      Push("schema");
      return Fail(fmt::format("expected \"{}\", found \"{}\"", kSchema,
                              schema.substr(0, 80)));
    }
    MI_RETURN_IF_ERROR(Meta(root, out));
    MI_RETURN_IF_ERROR(Levels(root, out));
    MI_RETURN_IF_ERROR(Timing(root, out));
    return Status::Ok();
  }

 private:
  // The path of the value being read; errors locate it in the text.
  void Push(PathStep step) { path_.push_back(step); }
  void Pop() { path_.pop_back(); }

  Status Fail(std::string_view what) const {
    return MalformedInputError(fmt::format(
        "{}:{}: {}: {}", name_, LineColumn(text_, PlaceOf(text_, path_)),
        PathText(path_), what));
  }

  // The value is an object with exactly these keys.
  Status Object(const Json& j, std::initializer_list<std::string_view> keys) {
    if (!j.is_object()) return Fail("expected an object");
    for (std::string_view key : keys) {
      if (!j.contains(key)) {
        return Fail(fmt::format("expected a field \"{}\"", key));
      }
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (std::string_view key : keys) known |= it.key() == key;
      if (!known) {
        std::string key = it.key();
        Push(std::string_view(key));
        Status s = Fail(fmt::format("unknown field \"{}\" (schema {})",
                                    key.substr(0, 80), kSchema));
        Pop();
        return s;
      }
    }
    return Status::Ok();
  }

  Status Str(const Json& j, std::string_view key, std::string* out) {
    Push(key);
    const Json& v = j.at(key);
    if (!v.is_string()) {
      Status s = Fail("expected a string");
      Pop();
      return s;
    }
    *out = v.get_ref<const std::string&>();
    Pop();
    return Status::Ok();
  }

  Status IntValue(const Json& v, int64_t min, int64_t* out) {
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Fail("expected an integer below 2^63");
      }
      *out = static_cast<int64_t>(u);
    } else if (v.is_number_integer()) {
      *out = v.get<int64_t>();
    } else {
      return Fail("expected an integer");
    }
    if (*out < min) return Fail(fmt::format("expected an integer >= {}", min));
    return Status::Ok();
  }

  Status Int(const Json& j, std::string_view key, int64_t min, int64_t* out) {
    Push(key);
    Status s = IntValue(j.at(key), min, out);
    Pop();
    return s;
  }

  Status Strings(const Json& j, std::string_view key,
                 std::vector<std::string>* out) {
    Push(key);
    const Json& a = j.at(key);
    if (!a.is_array()) {
      Status s = Fail("expected an array of strings");
      Pop();
      return s;
    }
    out->reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string()) {
        Push(i);
        Status s = Fail("expected a string");
        Pop();
        Pop();
        return s;
      }
      out->push_back(a[i].get_ref<const std::string&>());
    }
    Pop();
    return Status::Ok();
  }

  // An array of non-negative integers; `length` >= 0 requires that many.
  Status Ints(const Json& j, std::string_view key, int64_t length,
              std::vector<int64_t>* out) {
    Push(key);
    const Json& a = j.at(key);
    Status s = Status::Ok();
    if (!a.is_array()) {
      s = Fail("expected an array of integers");
    } else if (length >= 0 && a.size() != static_cast<uint64_t>(length)) {
      s = Fail(fmt::format(
          "expected {} values (one per run, timing.run_count), found {}",
          length, a.size()));
    } else {
      out->reserve(a.size());
      for (size_t i = 0; i < a.size() && s.ok(); ++i) {
        Push(i);
        int64_t v = 0;
        s = IntValue(a[i], 0, &v);
        out->push_back(v);
        Pop();
      }
    }
    Pop();
    return s;
  }

  // Calls f(element, index) for each element of the array at key.
  template <typename F>
  Status Each(const Json& j, std::string_view key, F&& f) {
    Push(key);
    const Json& a = j.at(key);
    if (!a.is_array()) {
      Status s = Fail("expected an array");
      Pop();
      return s;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      Push(i);
      Status s = f(a[i], i);
      Pop();
      if (!s.ok()) {
        Pop();
        return s;
      }
    }
    Pop();
    return Status::Ok();
  }

  Status Meta(const Json& root, RunDigest* out) {
    Push("meta");
    const Json& j = root.at("meta");
    Status s = [&]() -> Status {
      MI_RETURN_IF_ERROR(
          Object(j, {"model", "label", "inputs", "formats", "tool_version",
                     "producers", "host", "created_utc", "git_commit"}));
      RunDigestMeta& m = out->meta;
      MI_RETURN_IF_ERROR(Str(j, "model", &m.model));
      MI_RETURN_IF_ERROR(Str(j, "label", &m.label));
      MI_RETURN_IF_ERROR(Strings(j, "inputs", &m.inputs));
      MI_RETURN_IF_ERROR(Strings(j, "formats", &m.formats));
      MI_RETURN_IF_ERROR(Str(j, "tool_version", &m.tool_version));
      MI_RETURN_IF_ERROR(Str(j, "producers", &m.producers));
      MI_RETURN_IF_ERROR(Str(j, "host", &m.host));
      MI_RETURN_IF_ERROR(Str(j, "created_utc", &m.created_utc));
      MI_RETURN_IF_ERROR(Str(j, "git_commit", &m.git_commit));
      return Status::Ok();
    }();
    Pop();
    return s;
  }

  Status Tensor(const Json& j, DigestTensor* t) {
    MI_RETURN_IF_ERROR(Object(j, {"name", "dtype", "shape", "layout"}));
    MI_RETURN_IF_ERROR(Str(j, "name", &t->name));
    MI_RETURN_IF_ERROR(Str(j, "dtype", &t->dtype));
    MI_RETURN_IF_ERROR(Str(j, "layout", &t->layout));
    if (j.at("shape").is_null()) return Status::Ok();
    t->has_shape = true;
    return Strings(j, "shape", &t->shape);
  }

  Status Node(const Json& j, int64_t run_count, DigestNode* n) {
    MI_RETURN_IF_ERROR(
        Object(j, {"name", "op_type", "domain", "scope", "attributes", "inputs",
                   "outputs", "fused_from", "status", "run_ns", "overlapped_ns",
                   "streams"}));
    MI_RETURN_IF_ERROR(Str(j, "name", &n->name));
    MI_RETURN_IF_ERROR(Str(j, "op_type", &n->op_type));
    MI_RETURN_IF_ERROR(Str(j, "domain", &n->domain));
    MI_RETURN_IF_ERROR(Str(j, "scope", &n->scope));
    MI_RETURN_IF_ERROR(
        Each(j, "attributes", [&](const Json& a, size_t) -> Status {
          if (!a.is_array() || a.size() != 2 || !a[0].is_string() ||
              !a[1].is_string()) {
            return Fail("expected [name, text], two strings");
          }
          std::string key = a[0].get<std::string>();
          if (!n->attributes.empty() && key <= n->attributes.back().first) {
            return Fail(fmt::format(
                "attribute \"{}\" out of order: attributes are sorted by "
                "name, each once",
                key.substr(0, 80)));
          }
          n->attributes.emplace_back(std::move(key), a[1].get<std::string>());
          return Status::Ok();
        }));
    MI_RETURN_IF_ERROR(Each(j, "inputs", [&](const Json& t, size_t) {
      n->inputs.emplace_back();
      return Tensor(t, &n->inputs.back());
    }));
    MI_RETURN_IF_ERROR(Each(j, "outputs", [&](const Json& t, size_t) {
      n->outputs.emplace_back();
      return Tensor(t, &n->outputs.back());
    }));
    MI_RETURN_IF_ERROR(Strings(j, "fused_from", &n->fused_from));
    MI_RETURN_IF_ERROR(Str(j, "status", &n->status));
    // Per-run node times: none (no trace linked to the level) or one per
    // run.
    size_t runs = j.at("run_ns").is_array() ? j.at("run_ns").size() : 0;
    int64_t length = runs == 0 ? 0 : run_count;
    MI_RETURN_IF_ERROR(Ints(j, "run_ns", length, &n->run_ns));
    MI_RETURN_IF_ERROR(Ints(j, "overlapped_ns", length, &n->overlapped_ns));
    MI_RETURN_IF_ERROR(Strings(j, "streams", &n->streams));
    return Status::Ok();
  }

  Status Levels(const Json& root, RunDigest* out) {
    // Node series lengths are checked against the run count, read first.
    int64_t run_count = 0;
    if (root.at("timing").is_object() &&
        root.at("timing").contains("run_count")) {
      const Json& rc = root.at("timing").at("run_count");
      if (rc.is_number_integer() && rc.get<int64_t>() >= 0) {
        run_count = rc.get<int64_t>();
      }
    }
    std::unordered_set<std::string_view> levels_seen;
    return Each(root, "levels", [&](const Json& j, size_t) -> Status {
      MI_RETURN_IF_ERROR(Object(j, {"level", "source_file", "format",
                                    "producer", "fingerprint", "nodes"}));
      DigestLevel& level = out->levels.emplace_back();
      MI_RETURN_IF_ERROR(Str(j, "level", &level.level));
      if (level.level != "framework" && level.level != "compiled") {
        Push("level");
        Status s = Fail("expected \"framework\" or \"compiled\"");
        Pop();
        return s;
      }
      if (!levels_seen.insert(level.level).second) {
        Push("level");
        Status s = Fail(fmt::format("a second {} level", level.level));
        Pop();
        return s;
      }
      MI_RETURN_IF_ERROR(Str(j, "source_file", &level.source_file));
      MI_RETURN_IF_ERROR(Str(j, "format", &level.format));
      MI_RETURN_IF_ERROR(Str(j, "producer", &level.producer));
      MI_RETURN_IF_ERROR(Str(j, "fingerprint", &level.fingerprint));
      std::unordered_set<std::string> names;
      return Each(j, "nodes", [&](const Json& nj, size_t) -> Status {
        DigestNode& n = level.nodes.emplace_back();
        MI_RETURN_IF_ERROR(Node(nj, run_count, &n));
        if (!names.insert(n.name).second) {
          Push("name");
          Status s = Fail(fmt::format(
              "node name \"{}\" repeats: names are unique within a level",
              n.name.substr(0, 80)));
          Pop();
          return s;
        }
        return Status::Ok();
      });
    });
  }

  Status Series(const Json& j, int64_t run_count, DigestSeries* s) {
    MI_RETURN_IF_ERROR(Object(j, {"key", "run_ns", "overlapped_ns", "count"}));
    MI_RETURN_IF_ERROR(Str(j, "key", &s->key));
    MI_RETURN_IF_ERROR(Ints(j, "run_ns", run_count, &s->run_ns));
    MI_RETURN_IF_ERROR(Ints(j, "overlapped_ns", run_count, &s->overlapped_ns));
    MI_RETURN_IF_ERROR(Ints(j, "count", run_count, &s->count));
    return Status::Ok();
  }

  Status SeriesList(const Json& j, std::string_view key, int64_t run_count,
                    std::vector<DigestSeries>* out) {
    std::unordered_set<std::string> keys;
    return Each(j, key, [&](const Json& sj, size_t) -> Status {
      DigestSeries& s = out->emplace_back();
      MI_RETURN_IF_ERROR(Series(sj, run_count, &s));
      if (!keys.insert(s.key).second) {
        Push("key");
        Status st = Fail(
            fmt::format("key \"{}\" repeats in {}", s.key.substr(0, 80), key));
        Pop();
        return st;
      }
      return Status::Ok();
    });
  }

  Status Timing(const Json& root, RunDigest* out) {
    Push("timing");
    const Json& j = root.at("timing");
    Status s = [&]() -> Status {
      MI_RETURN_IF_ERROR(
          Object(j, {"runs_from", "run_count", "total", "op_types", "streams",
                     "unlinked_tasks", "stream_pairs"}));
      MI_RETURN_IF_ERROR(Str(j, "runs_from", &out->runs_from));
      MI_RETURN_IF_ERROR(Int(j, "run_count", 0, &out->run_count));
      const int64_t runs = out->run_count;
      Push("total");
      Status total = Series(j.at("total"), runs, &out->total);
      Pop();
      MI_RETURN_IF_ERROR(total);
      MI_RETURN_IF_ERROR(SeriesList(j, "op_types", runs, &out->op_types));
      MI_RETURN_IF_ERROR(SeriesList(j, "streams", runs, &out->streams));
      MI_RETURN_IF_ERROR(
          SeriesList(j, "unlinked_tasks", runs, &out->unlinked_tasks));
      return Each(j, "stream_pairs", [&](const Json& pj, size_t) -> Status {
        MI_RETURN_IF_ERROR(Object(pj, {"stream_a", "stream_b", "overlap_ns"}));
        DigestStreamPair& p = out->stream_pairs.emplace_back();
        MI_RETURN_IF_ERROR(Str(pj, "stream_a", &p.stream_a));
        MI_RETURN_IF_ERROR(Str(pj, "stream_b", &p.stream_b));
        return Ints(pj, "overlap_ns", runs, &p.overlap_ns);
      });
    }();
    Pop();
    MI_RETURN_IF_ERROR(s);
    // Node series were checked against run_count as read from the text;
    // a run_count that is not a valid integer failed above.
    return Status::Ok();
  }

  std::string_view text_;
  std::string_view name_;
  std::vector<PathStep> path_;
};

}  // namespace

std::string RunDigestJson(const RunDigest& d) {
  std::string out;
  size_t nodes = 0;
  for (const DigestLevel& level : d.levels) nodes += level.nodes.size();
  out.reserve(4096 + nodes * 400);
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("schema", kSchema);
  w.Key("meta").BeginObject();
  w.Field("model", d.meta.model);
  w.Field("label", d.meta.label);
  w.Key("inputs");
  WriteStrings(w, d.meta.inputs);
  w.Key("formats");
  WriteStrings(w, d.meta.formats);
  w.Field("tool_version", d.meta.tool_version);
  w.Field("producers", d.meta.producers);
  w.Field("host", d.meta.host);
  w.Field("created_utc", d.meta.created_utc);
  w.Field("git_commit", d.meta.git_commit);
  w.EndObject();
  w.Key("levels").BeginArray();
  for (const DigestLevel& level : d.levels) {
    w.BeginObject();
    w.Field("level", level.level);
    w.Field("source_file", level.source_file);
    w.Field("format", level.format);
    w.Field("producer", level.producer);
    w.Field("fingerprint", level.fingerprint);
    w.Key("nodes").BeginArray();
    for (const DigestNode& n : level.nodes) {
      w.BeginObject();
      w.Field("name", n.name);
      w.Field("op_type", n.op_type);
      w.Field("domain", n.domain);
      w.Field("scope", n.scope);
      w.Key("attributes").BeginArray();
      for (const auto& [key, text] : n.attributes) {
        w.BeginArray().String(key).String(text).EndArray();
      }
      w.EndArray();
      w.Key("inputs");
      WriteTensors(w, n.inputs);
      w.Key("outputs");
      WriteTensors(w, n.outputs);
      w.Key("fused_from");
      WriteStrings(w, n.fused_from);
      w.Field("status", n.status);
      w.Key("run_ns");
      WriteInts(w, n.run_ns);
      w.Key("overlapped_ns");
      WriteInts(w, n.overlapped_ns);
      w.Key("streams");
      WriteStrings(w, n.streams);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("timing").BeginObject();
  w.Field("runs_from", d.runs_from);
  w.FieldInt("run_count", d.run_count);
  w.Key("total");
  WriteSeries(w, d.total);
  WriteSeriesList(w, "op_types", d.op_types);
  WriteSeriesList(w, "streams", d.streams);
  WriteSeriesList(w, "unlinked_tasks", d.unlinked_tasks);
  w.Key("stream_pairs").BeginArray();
  for (const DigestStreamPair& p : d.stream_pairs) {
    w.BeginObject();
    w.Field("stream_a", p.stream_a);
    w.Field("stream_b", p.stream_b);
    w.Key("overlap_ns");
    WriteInts(w, p.overlap_ns);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  out.push_back('\n');
  return out;
}

StatusOr<RunDigest> ParseRunDigest(std::string_view json,
                                   std::string_view name) {
  if (json.size() > kMaxDigestBytes) {
    return MalformedInputError(
        fmt::format("{}: {} bytes; a run digest is at most {} bytes", name,
                    json.size(), kMaxDigestBytes));
  }
  Json root = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    size_t byte = 0;
    try {
      Json again = Json::parse(json);
      (void)again;
    } catch (const Json::parse_error& e) {
      byte = e.byte;
    } catch (const Json::exception&) {
    }
    return MalformedInputError(
        fmt::format("{}:{}: not valid JSON; expected a run digest ({})", name,
                    LineColumn(json, byte > 0 ? byte - 1 : 0), kSchema));
  }
  RunDigest digest;
  DigestReader reader(json, name);
  MI_RETURN_IF_ERROR(reader.Read(root, &digest));
  return digest;
}

}  // namespace mi
