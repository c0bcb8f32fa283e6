#include "importers/common/trace_event/json_trace_reader.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

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
//
// Threaded (CreateJsonTraceReader(..., threaded = true)): the caller's
// thread tokenizes, a thread of the reader's own parses and builds (the
// tokenizer is ~30% of the work, parsing ~40%, building ~30%: handing
// parsed events across instead would cost a copy of each event and its
// strings, measured as much as the building it moved). Events cross in
// batches (one per Parse() call): a copy of the input bytes they lie in
// (the chunk, or one event begun in an earlier chunk) with each event's
// place in it, and the actions that must reach the builder in order (the
// container, the top-level values). The parser and builder see exactly
// the sequence the single-threaded reader gives them, so the trace, the
// diagnostics and the first error are the same (an error found on the
// worker is returned by a later Parse() or NotifyEndOfFile(); one the
// tokenizer finds after it is not reported); the worker charges the memory
// budget after each batch.
class JsonTraceReader : public Reader,
                        public JsonTraceTokenizer::Delegate,
                        public TraceEventBuilder::Reporter {
 public:
  JsonTraceReader(ImportContext& ctx, ChromeTraceStats* external_stats,
                  uint64_t expected_bytes, const ExtensionFactory& extension,
                  bool threaded)
      : ctx_(ctx),
        path_(ctx.path.empty() ? "<buffer>" : ctx.path),
        stats_(external_stats != nullptr ? external_stats : &own_stats_),
        tokenizer_(path_, this),
        builder_(ctx.trace, EnsureSource(ctx), stats_, this),
        threaded_(threaded) {
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
    if (threaded_) worker_ = std::thread([this] { BuildLoop(); });
  }

  ~JsonTraceReader() override { StopWorker(); }

  bool ChargesWhatItBuilds() const override { return threaded_; }

  Status Parse(std::string_view chunk) override {
    if (!threaded_) return tokenizer_.Feed(chunk);
    MI_RETURN_IF_ERROR(WorkerError());
    OpenBatch();
    Status status = tokenizer_.Feed(chunk);
    bytes_fed_ += chunk.size();
    SubmitBatch();
    if (!status.ok()) {
      // The events before are parsed and built first: their diagnostics,
      // and a parse error among them, come before the tokenizer's error.
      Drain();
      MI_RETURN_IF_ERROR(WorkerError());
      return status;
    }
    return Status::Ok();
  }

  size_t MemoryUsage() const override {
    // Threaded: called by Import() only after NotifyEndOfFile (the builder
    // thread has stopped).
    return builder_.MemoryUsage() + tokenizer_.MemoryUsage();
  }

  Status NotifyEndOfFile() override {
    if (threaded_) {
      MI_RETURN_IF_ERROR(WorkerError());
      OpenBatch();
    }
    if (!started_) StartIfNeeded();
    Status finish = tokenizer_.Finish();
    if (finish.ok()) StartIfNeeded();
    if (threaded_) {
      SubmitBatch();
      Drain();
      StopWorker();
      MI_RETURN_IF_ERROR(WorkerError());
    }
    MI_RETURN_IF_ERROR(finish);
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
    if (threaded_) {
      Enqueue(event_json);
      return Status::Ok();
    }
    current_event_ = event_json;
    return ParseAndBuild(event_json, [this](size_t offset) {
      return tokenizer_.PositionInCurrentEvent(offset);
    });
  }

  Status OnTopLevelValue(std::string_view key,
                         std::string_view value_json) override {
    if (threaded_) {
      // In order with the events, on the worker.
      open_batch_->actions.push_back(
          {open_batch_->events.size(),
           [this, k = std::string(key), v = std::string(value_json)] {
             ApplyTopLevelValue(k, v);
           }});
      return Status::Ok();
    }
    ApplyTopLevelValue(key, value_json);
    return Status::Ok();
  }

  // TraceEventBuilder::Reporter
  void ReportAtCurrentEvent(DiagnosticCode code, std::string message) override {
    // Locating costs a newline count: only for occurrences that are logged.
    if (ctx_.diagnostics->count(code) >= DiagnosticSink::kMaxLoggedPerCode) {
      ctx_.diagnostics->Count(code);
      return;
    }
    if (threaded_) {
      // On the worker: the event is located in the batch's copy
      // of the input it came from.
      std::string_view text = current_segment_->text;
      TextPosition position = AdvancePosition(
          current_segment_->start, text.substr(0, current_queued_->offset));
      SourceLocation location;
      location.file = path_;
      location.line = position.line;
      location.column = position.column;
      location.byte = current_segment_->byte_offset + current_queued_->offset;
      location.has_byte = false;
      ctx_.diagnostics->Report(
          code, std::move(location), std::move(message),
          PrintableSnippet(
              text.substr(current_queued_->offset, current_queued_->size),
              120));
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
  // The input bytes events came from: a Parse() call's whole chunk, or one
  // event begun in an earlier chunk.
  struct Segment {
    TextPosition start;
    uint64_t byte_offset = 0;
    std::string text;
  };
  struct QueuedEvent {
    uint32_t segment = 0;
    uint32_t offset = 0;  // of the event's first byte in its segment
    uint32_t size = 0;
  };
  struct Batch {
    std::vector<QueuedEvent> events;
    // Run on the worker before events[index] (or after the last).
    std::vector<std::pair<size_t, std::function<void()>>> actions;
    std::vector<Segment> segments;
    uint64_t end_offset = 0;  // decompressed bytes fed through this batch
    int32_t chunk_segment = -1;

    void Clear() {
      events.clear();
      actions.clear();
      segments.clear();
      end_offset = 0;
      chunk_segment = -1;
    }
    size_t Bytes() const {
      size_t bytes = events.capacity() * sizeof(QueuedEvent) + sizeof(Batch);
      for (const Segment& s : segments) bytes += s.text.capacity();
      return bytes;
    }
  };
  // Batches in flight at most: the parser waits for the builder beyond.
  static constexpr size_t kMaxQueuedBatches = 4;

  // Parses one event and hands it to the builder; `position(offset)` says
  // where byte `offset` of the event is, for the error.
  template <typename Position>
  Status ParseAndBuild(std::string_view event_json, const Position& position) {
    EventParseError error;
    JsonTraceParser::Outcome outcome =
        parser_.Parse(event_json, &event_, &error);
    if (outcome == JsonTraceParser::Outcome::kFailed) {
      TextPosition at = position(error.offset);
      return MalformedInputError(
          path_ + ":" + std::to_string(at.line) + ":" +
          std::to_string(at.column) + ": " + error.what +
          "; expected a valid JSON trace event, found '" +
          PrintableSnippet(event_json.substr(std::min(
                               error.offset > 20 ? error.offset - 20 : 0,
                               event_json.size())),
                           60) +
          "'");
    }
    if (outcome == JsonTraceParser::Outcome::kRepaired) ReportRepaired();
    builder_.AddEvent(event_);
    return Status::Ok();
  }

  void ReportRepaired() {
    ++stats_->repaired_events;
    ReportAtCurrentEvent(DiagnosticCode::kUnescapedString,
                         "string written without JSON escaping (raw control "
                         "character or lone backslash) repaired");
  }

  void ApplyTopLevelValue(std::string_view key, std::string_view value_json) {
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
  }

  void StartIfNeeded() {
    if (started_ || tokenizer_.container() == TraceContainer::kUnknown) return;
    started_ = true;
    TraceContainer container = tokenizer_.container();
    auto start = [this, container] {
      builder_.set_container(container);
      stats_->object_container = container == TraceContainer::kObject;
    };
    if (threaded_) {
      open_batch_->actions.push_back({open_batch_->events.size(), start});
    } else {
      start();
    }
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

  // --- threaded: the parser's side ---

  void OpenBatch() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      open_batch_ = std::move(free_.back());
      free_.pop_back();
    } else {
      open_batch_ = std::make_unique<Batch>();
    }
    open_batch_->Clear();
  }

  // Where the event's bytes are in the batch's copy of the input (the
  // chunk is copied once per batch, at its first event).
  void Enqueue(std::string_view event_json) {
    Batch& b = *open_batch_;
    QueuedEvent& q = b.events.emplace_back();
    if (tokenizer_.current_event_in_chunk()) {
      std::string_view chunk = tokenizer_.current_chunk();
      if (b.chunk_segment < 0) {
        b.chunk_segment = static_cast<int32_t>(b.segments.size());
        Segment& s = b.segments.emplace_back();
        s.start = tokenizer_.current_chunk_start_position();
        s.byte_offset = tokenizer_.current_chunk_byte_offset();
        s.text.assign(chunk);
      }
      q.segment = static_cast<uint32_t>(b.chunk_segment);
      q.offset = static_cast<uint32_t>(event_json.data() - chunk.data());
    } else {
      q.segment = static_cast<uint32_t>(b.segments.size());
      Segment& s = b.segments.emplace_back();
      s.start = tokenizer_.partial_event_start_position();
      s.byte_offset = tokenizer_.current_event_byte_offset();
      s.text.assign(event_json);
      q.offset = 0;
    }
    q.size = static_cast<uint32_t>(event_json.size());
  }

  void SubmitBatch() {
    open_batch_->end_offset = bytes_fed_;
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [this] { return queue_.size() < kMaxQueuedBatches; });
    queued_bytes_ += open_batch_->Bytes();
    queue_.push_back(std::move(open_batch_));
    work_.notify_one();
  }

  // Waits until the builder has built every batch submitted.
  void Drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [this] { return queue_.empty() && !building_; });
  }

  Status WorkerError() {
    std::lock_guard<std::mutex> lock(mutex_);
    return worker_error_;
  }

  void StopWorker() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    work_.notify_one();
    worker_.join();
  }

  // --- threaded: the builder's side ---

  void BuildLoop() {
    for (;;) {
      std::unique_ptr<Batch> batch;
      size_t queued_after = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        batch = std::move(queue_.front());
        queue_.pop_front();
        building_ = true;
        queued_bytes_ -= batch->Bytes();
        queued_after = queued_bytes_;
        if (!worker_error_.ok() || stopping_) batch->Clear();
      }
      Status built = Build(*batch);
      Status charge = Status::Ok();
      if (built.ok() && !batch->events.empty()) {
        // What the parser's side holds: the batches still queued, the one
        // it fills (at most a batch's worth), the tokenizer's partial event.
        charge = ChargeBuiltAt(
            ctx_, batch->end_offset,
            builder_.MemoryUsage() + 2 * queued_after + batch->Bytes());
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (!built.ok() && worker_error_.ok()) worker_error_ = built;
      if (!charge.ok() && worker_error_.ok()) worker_error_ = charge;
      building_ = false;
      free_.push_back(std::move(batch));
      space_.notify_all();
    }
  }

  Status Build(Batch& b) {
    size_t action = 0;
    Status status = Status::Ok();
    for (size_t i = 0; i < b.events.size() && status.ok(); ++i) {
      while (action < b.actions.size() && b.actions[action].first <= i) {
        b.actions[action++].second();
      }
      const QueuedEvent& q = b.events[i];
      const Segment& segment = b.segments[q.segment];
      current_queued_ = &q;
      current_segment_ = &segment;
      std::string_view event_json =
          std::string_view(segment.text).substr(q.offset, q.size);
      status = ParseAndBuild(event_json, [&segment, &q](size_t offset) {
        return AdvancePosition(
            segment.start,
            std::string_view(segment.text).substr(0, q.offset + offset));
      });
    }
    while (status.ok() && action < b.actions.size()) {
      b.actions[action++].second();
    }
    current_queued_ = nullptr;
    current_segment_ = nullptr;
    return status;
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

  // Threaded only. The parser's side: the batch it fills, bytes fed.
  const bool threaded_;
  std::unique_ptr<Batch> open_batch_;
  uint64_t bytes_fed_ = 0;
  // Shared, under mutex_.
  std::mutex mutex_;
  std::condition_variable work_;   // a batch queued, or stopping
  std::condition_variable space_;  // a batch built
  std::deque<std::unique_ptr<Batch>> queue_;
  std::vector<std::unique_ptr<Batch>> free_;
  size_t queued_bytes_ = 0;
  bool building_ = false;
  bool stopping_ = false;
  Status worker_error_ = Status::Ok();
  // The worker's side: the event being built.
  const QueuedEvent* current_queued_ = nullptr;
  const Segment* current_segment_ = nullptr;
  std::thread worker_;
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

std::unique_ptr<Reader> CreateJsonTraceReader(ImportContext& ctx,
                                              ChromeTraceStats* stats,
                                              uint64_t expected_bytes,
                                              const ExtensionFactory& extension,
                                              bool threaded) {
  return std::make_unique<JsonTraceReader>(ctx, stats, expected_bytes,
                                           extension, threaded);
}

Status ImportJsonTraceFromBuffer(std::string_view data, ImportContext& ctx,
                                 ChromeTraceStats* stats, size_t chunk_size,
                                 const ExtensionFactory& extension,
                                 bool threaded) {
  if (ctx.trace == nullptr || ctx.diagnostics == nullptr) {
    return InvalidArgumentError(
        "importing a trace from a buffer needs ctx.trace and ctx.diagnostics");
  }
  JsonTraceReader reader(ctx, stats, data.size(), extension, threaded);
  // Three pieces by default, so events straddle chunk boundaries.
  if (chunk_size == 0) chunk_size = std::max<size_t>(1, data.size() / 3 + 1);
  for (size_t offset = 0; offset < data.size(); offset += chunk_size) {
    MI_RETURN_IF_ERROR(reader.Parse(data.substr(offset, chunk_size)));
  }
  return reader.NotifyEndOfFile();
}

}  // namespace mi::importers::trace_event
