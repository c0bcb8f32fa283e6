#include "importers/common/trace_event/json_trace_reader.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include <simdjson.h>

#include "base/strings.h"
#include "importers/common/trace_event/json_trace_parser.h"
#include "importers/common/trace_event/json_trace_tokenizer.h"

namespace mi::importers::trace_event {
namespace {

// Average decompressed bytes per event in real traces (ORT ~300, Kineto
// pretty-printed ~450): used only to reserve the task columns up front.
constexpr uint64_t kReserveBytesPerEvent = 160;
// Reserving more than this from a size estimate is not worth the risk.
constexpr uint64_t kMaxReservedTasks = uint64_t{64} << 20;
// A task's columns (Trace::MemoryUsage), rounded up.
constexpr uint64_t kReservedBytesPerTask = 128;

std::string PrintableSnippet(std::string_view text, size_t max_bytes) {
  std::string out;
  for (char c : text.substr(0, max_bytes)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u == '\n') {
      out += "\\n";
    } else if (u == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += '?';
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Kineto's distributedInfo: world_size and pg_config (a list of
// {pg_name, pg_desc, backend_config, pg_size, ranks}; some writers key the
// groups by name instead). Loose: what does not fit is left out.
TraceEventBuilder::DistributedInfo ReadDistributedInfo(std::string_view json) {
  TraceEventBuilder::DistributedInfo info;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS) {
    return info;
  }
  int64_t world_size;
  if (root["world_size"].get_int64().get(world_size) == simdjson::SUCCESS) {
    info.world_size = world_size;
  }
  auto read_group = [&info](simdjson::dom::element g, std::string_view key) {
    TraceEventBuilder::ProcessGroupConfig config;
    std::string_view text;
    int64_t number;
    if (g["pg_name"].get_string().get(text) == simdjson::SUCCESS) {
      config.name = text;
    } else if (g["pg_name"].get_int64().get(number) == simdjson::SUCCESS) {
      config.name = std::to_string(number);
    } else {
      config.name = key;
    }
    if (config.name.empty() || config.name.size() > 256) return;
    if (g["pg_desc"].get_string().get(text) == simdjson::SUCCESS) {
      config.description = text.substr(0, 256);
    }
    simdjson::dom::array ranks;
    if (g["ranks"].get_array().get(ranks) == simdjson::SUCCESS) {
      for (simdjson::dom::element r : ranks) {
        if (r.get_int64().get(number) != simdjson::SUCCESS || number < 0 ||
            number > INT32_MAX) {
          config.ranks.clear();
          break;
        }
        config.ranks.push_back(static_cast<int32_t>(number));
      }
    }
    info.groups.push_back(std::move(config));
  };
  simdjson::dom::element groups;
  if (root["pg_config"].get(groups) != simdjson::SUCCESS) return info;
  simdjson::dom::array list;
  simdjson::dom::object by_name;
  if (groups.get_array().get(list) == simdjson::SUCCESS) {
    for (simdjson::dom::element g : list) {
      if (g.is_object()) read_group(g, {});
    }
  } else if (groups.get_object().get(by_name) == simdjson::SUCCESS) {
    for (auto [key, g] : by_name) {
      if (g.is_object()) read_group(g, key);
    }
  }
  return info;
}

// One file's import: tokenizer -> parser -> builder.
class JsonTraceReader : public Reader,
                        public JsonTraceTokenizer::Delegate,
                        public TraceEventBuilder::Reporter {
 public:
  JsonTraceReader(ImportContext& ctx, ChromeTraceStats* external_stats,
                  uint64_t expected_bytes, const ExtensionFactory& extension)
      : ctx_(ctx),
        path_(ctx.path.empty() ? "<buffer>" : ctx.path),
        stats_(external_stats != nullptr ? external_stats : &own_stats_),
        tokenizer_(path_, this),
        builder_(ctx.trace, EnsureSource(ctx), stats_, this) {
    *stats_ = ChromeTraceStats();
    if (extension) {
      extension_ = extension(builder_);
      builder_.set_extension(extension_.get());
    }
    if (expected_bytes > 0) {
      uint64_t tasks =
          std::min(expected_bytes / kReserveBytesPerEvent, kMaxReservedTasks);
      // Never more than half of what the memory budget has left: the
      // reservation is charged as soon as it is made.
      const MemoryBudget& budget = ctx.held_charge().budget();
      uint64_t room =
          budget.limit() > budget.used() ? budget.limit() - budget.used() : 0;
      tasks = std::min(tasks, room / 2 / kReservedBytesPerTask);
      ctx.trace->Reserve(ctx.trace->task_count() + tasks);
    }
  }

  Status Parse(std::string_view chunk) override {
    return tokenizer_.Feed(chunk);
  }

  size_t MemoryUsage() const override {
    return builder_.MemoryUsage() + tokenizer_.MemoryUsage();
  }

  Status NotifyEndOfFile() override {
    if (!started_) StartIfNeeded();
    MI_RETURN_IF_ERROR(tokenizer_.Finish());
    StartIfNeeded();
    if (tokenizer_.unterminated_array()) {
      ReportAtEnd(DiagnosticCode::kUnterminatedArray,
                  tokenizer_.container() == TraceContainer::kArray
                      ? "the trace array has no closing ']'"
                      : "the traceEvents array or the trace object is not "
                        "closed");
    }
    if (tokenizer_.trailing_garbage_bytes() > 0) {
      ctx_.diagnostics->Report(
          DiagnosticCode::kTrailingGarbage,
          Location(tokenizer_.trailing_garbage_position()),
          std::to_string(tokenizer_.trailing_garbage_bytes()) +
              " bytes after the end of the trace ignored");
    }
    stats_->has_device_properties = tokenizer_.saw_device_properties();
    builder_.Finish();
    return Status::Ok();
  }

  // JsonTraceTokenizer::Delegate
  Status OnTraceEvent(std::string_view event_json) override {
    StartIfNeeded();
    EventParseError error;
    current_event_ = event_json;
    switch (parser_.Parse(event_json, &event_, &error)) {
      case JsonTraceParser::Outcome::kParsed:
        break;
      case JsonTraceParser::Outcome::kRepaired:
        ++stats_->repaired_events;
        ReportAtCurrentEvent(
            DiagnosticCode::kUnescapedString,
            "string written without JSON escaping (raw control character or "
            "lone backslash) repaired");
        break;
      case JsonTraceParser::Outcome::kFailed:
        return MalformedInputError(
            tokenizer_.Where(tokenizer_.PositionInCurrentEvent(error.offset)) +
            error.what + "; expected a valid JSON trace event, found '" +
            PrintableSnippet(event_json.substr(std::min(
                                 error.offset > 20 ? error.offset - 20 : 0,
                                 event_json.size())),
                             60) +
            "'");
    }
    builder_.AddEvent(event_);
    return Status::Ok();
  }

  Status OnTopLevelValue(std::string_view key,
                         std::string_view value_json) override {
    if (key == "baseTimeNanoseconds") {
      std::optional<int64_t> base = ParseInt64(value_json);
      if (base) {
        stats_->has_base_time = true;
        stats_->base_time_ns = *base;
      }
    } else if (key == "schemaVersion") {
      std::optional<int64_t> version = ParseInt64(value_json);
      stats_->has_schema_version = true;
      stats_->schema_version = version.value_or(0);
    } else if (key == "displayTimeUnit") {
      std::string_view unit = value_json;
      if (unit.size() >= 2 && unit.front() == '"') {
        unit = unit.substr(1, unit.size() - 2);
      }
      stats_->display_time_unit = std::string(unit.substr(0, 16));
    } else if (key == "distributedInfo") {
      simdjson::padded_string padded(value_json);
      simdjson::ondemand::parser parser;
      simdjson::ondemand::document doc;
      int64_t rank;
      if (parser.iterate(padded).get(doc) == simdjson::SUCCESS &&
          doc.find_field_unordered("rank").get_int64().get(rank) ==
              simdjson::SUCCESS) {
        stats_->distributed_rank = rank;
      }
      builder_.set_distributed_info(ReadDistributedInfo(value_json));
    }
    return Status::Ok();
  }

  // TraceEventBuilder::Reporter
  void ReportAtCurrentEvent(DiagnosticCode code, std::string message) override {
    // Locating costs a newline count: only for occurrences that are logged.
    if (ctx_.diagnostics->count(code) >= DiagnosticSink::kMaxLoggedPerCode) {
      ctx_.diagnostics->Count(code);
      return;
    }
    ctx_.diagnostics->Report(
        code, Location(tokenizer_.PositionInCurrentEvent(0)),
        std::move(message), PrintableSnippet(current_event_, 120));
  }

  void ReportAtEnd(DiagnosticCode code, std::string message) override {
    SourceLocation location;
    location.file = path_;
    ctx_.diagnostics->Report(code, std::move(location), std::move(message));
  }

 private:
  void StartIfNeeded() {
    if (started_ || tokenizer_.container() == TraceContainer::kUnknown) return;
    started_ = true;
    builder_.set_container(tokenizer_.container());
    stats_->object_container =
        tokenizer_.container() == TraceContainer::kObject;
  }

  SourceLocation Location(TextPosition position) const {
    SourceLocation location;
    location.file = path_;
    location.line = position.line;
    location.column = position.column;
    location.byte = tokenizer_.current_event_byte_offset();
    location.has_byte = false;
    return location;
  }

  ImportContext& ctx_;
  std::string path_;
  ChromeTraceStats own_stats_;
  ChromeTraceStats* stats_;
  JsonTraceTokenizer tokenizer_;
  JsonTraceParser parser_;
  TraceEventBuilder builder_;
  std::unique_ptr<TraceEventBuilder::Extension> extension_;
  ParsedEvent event_;
  std::string_view current_event_;
  bool started_ = false;
};

}  // namespace

std::string_view SkipBomAndSpace(std::string_view s) {
  if (s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);
  return TrimLeft(s, kJsonWhitespace);
}

// Scores: a trace-event key in the head of an object, or an array of
// objects with "ph", is near certain; an object/array of objects with a
// trace-like file name is likely; any other JSON is a weak guess so that a
// trace whose head is all metadata (TraceLens) is still tried.
int SniffTraceEventJson(std::string_view head, std::string_view path) {
  std::string_view name = StripGzSuffix(path);
  const bool trace_extension =
      name.ends_with(".pt.trace.json") || name.ends_with(".trace.json");
  const bool json_extension = name.ends_with(".json");
  std::string_view s = SkipBomAndSpace(head);
  if (s.empty()) return 0;
  if (s.front() == '[') {
    std::string_view rest = SkipBomAndSpace(s.substr(1));
    if (rest.empty()) return json_extension ? 20 : 5;
    if (rest.front() != '{') return 0;
    if (Contains(s, "\"ph\"")) return 90;
    if (Contains(s, "\"ts\"") && Contains(s, "\"name\"")) return 60;
    return trace_extension ? 50 : 10;
  }
  if (s.front() != '{') return 0;
  for (std::string_view key :
       {"\"traceEvents\"", "\"schemaVersion\"", "\"deviceProperties\"",
        "\"baseTimeNanoseconds\"", "\"displayTimeUnit\"",
        "\"systemTraceEvents\""}) {
    if (Contains(s, key)) return 95;
  }
  std::string_view first_key = SkipBomAndSpace(s.substr(1));
  if ((first_key.starts_with("\"ph\"") || first_key.starts_with("\"name\"") ||
       first_key.starts_with("\"cat\"")) &&
      Contains(s, "\"ph\"")) {
    return 30;  // a lone event object: we explain what is missing
  }
  if (trace_extension) return 60;
  if (Contains(s, "profiler") || Contains(s, "\"traceName\"")) return 40;
  return json_extension ? 5 : 0;
}

uint64_t ExpectedTraceBytes(const std::string& path) {
  std::error_code error;
  uint64_t size = std::filesystem::file_size(path, error);
  if (error) return 0;
  // gzip: the decompressed size is unknown; traces compress ~15x.
  if (path.ends_with(".gz")) size *= 15;
  return size;
}

std::unique_ptr<Reader> CreateJsonTraceReader(
    ImportContext& ctx, ChromeTraceStats* stats, uint64_t expected_bytes,
    const ExtensionFactory& extension) {
  return std::make_unique<JsonTraceReader>(ctx, stats, expected_bytes,
                                           extension);
}

Status ImportJsonTraceFromBuffer(std::string_view data, ImportContext& ctx,
                                 ChromeTraceStats* stats, size_t chunk_size,
                                 const ExtensionFactory& extension) {
  if (ctx.trace == nullptr || ctx.diagnostics == nullptr) {
    return InvalidArgumentError(
        "importing a trace from a buffer needs ctx.trace and ctx.diagnostics");
  }
  JsonTraceReader reader(ctx, stats, data.size(), extension);
  // Three pieces by default, so events straddle chunk boundaries.
  if (chunk_size == 0) chunk_size = std::max<size_t>(1, data.size() / 3 + 1);
  for (size_t offset = 0; offset < data.size(); offset += chunk_size) {
    MI_RETURN_IF_ERROR(reader.Parse(data.substr(offset, chunk_size)));
  }
  return reader.NotifyEndOfFile();
}

}  // namespace mi::importers::trace_event
