// Trace events flattened into CSV: one row per event, one column per field
// (`cat,pid,tid,dur,ts,ph,name,args_op_name,...,args_provider`), as
// onnx-array-api's `ort_profile` writes ONNX Runtime profiles for pandas.
// Same event model as the JSON container, so rows become ParsedEvents and go
// through the same TraceEventBuilder; only the container differs.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "importers/chrome_trace/chrome_trace_importer.h"
#include "importers/common/trace_event/json_trace_parser.h"
#include "importers/common/trace_event/trace_event_builder.h"

namespace mi::importers {
namespace {

using trace_event::ParsedEvent;
using trace_event::TraceEventBuilder;

// Column roles, found by header name.
enum class Column : uint8_t {
  kIgnored,
  kCat,
  kPid,
  kTid,
  kDur,
  kTs,
  kPh,
  kName,
  kOpName,
  kProvider,
  kInputShapes,
  kOutputShapes,
};

Column ColumnFor(std::string_view header) {
  static constexpr std::pair<std::string_view, Column> kColumns[] = {
      {"cat", Column::kCat},
      {"pid", Column::kPid},
      {"tid", Column::kTid},
      {"dur", Column::kDur},
      {"ts", Column::kTs},
      {"ph", Column::kPh},
      {"name", Column::kName},
      {"args_op_name", Column::kOpName},
      {"args_provider", Column::kProvider},
      {"args_input_type_shape", Column::kInputShapes},
      {"args_output_type_shape", Column::kOutputShapes},
  };
  for (const auto& [name, column] : kColumns) {
    if (name == header) return column;
  }
  return Column::kIgnored;
}

// Splits one CSV record (RFC 4180: quoted fields may hold commas, quotes
// doubled, newlines) into fields; `*storage` owns unquoted copies.
void SplitRecord(std::string_view record, std::vector<std::string>* fields) {
  fields->clear();
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < record.size(); ++i) {
    char c = record[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < record.size() && record[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields->push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field.push_back(c);
    }
  }
  fields->push_back(std::move(field));
}

// pandas writes the args' Python repr: [{'float': [1, 3]}] -> JSON.
std::string PythonReprToJson(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\'') c = '"';
  }
  return out;
}

class TraceEventCsvReader : public Reader, public TraceEventBuilder::Reporter {
 public:
  explicit TraceEventCsvReader(ImportContext& ctx)
      : ctx_(ctx),
        path_(ctx.path.empty() ? "<buffer>" : ctx.path),
        builder_(ctx.trace, EnsureSource(ctx), &stats_, this) {
    builder_.set_container(trace_event::TraceContainer::kArray);
  }

  Status Parse(std::string_view chunk) override {
    pending_.append(chunk);
    size_t start = 0;
    // A record ends at a newline outside quotes; quotes may span chunks.
    for (size_t i = scan_from_; i < pending_.size(); ++i) {
      char c = pending_[i];
      if (c == '"') {
        in_quotes_ = !in_quotes_;
      } else if (c == '\n' && !in_quotes_) {
        MI_RETURN_IF_ERROR(
            Record(std::string_view(pending_).substr(start, i - start)));
        start = i + 1;
      }
    }
    pending_.erase(0, start);
    scan_from_ = pending_.size();
    // One record is at most what one JSON trace event may be; a quote that
    // never closes would otherwise hold the rest of the file.
    if (pending_.size() > kMaxRecordBytes) {
      return MalformedInputError(
          path_ + ":" + std::to_string(line_ + 1) +
          ":1: record longer than 64 MiB (a quoted field never closed?); "
          "expected one trace event per line");
    }
    return Status::Ok();
  }

  size_t MemoryUsage() const override {
    return pending_.capacity() + builder_.MemoryUsage();
  }

  Status NotifyEndOfFile() override {
    if (in_quotes_) {
      return MalformedInputError(
          path_ + ":" + std::to_string(line_ + 1) +
          ":1: truncated: a quoted field is never closed; expected '\"' "
          "before the end of the file");
    }
    if (!pending_.empty()) MI_RETURN_IF_ERROR(Record(pending_));
    if (columns_.empty()) {
      return MalformedInputError(path_ +
                                 ":1:1: empty input; expected a CSV header "
                                 "with cat,pid,tid,dur,ts,ph,name columns");
    }
    builder_.Finish();
    return Status::Ok();
  }

  void ReportAtCurrentEvent(DiagnosticCode code, std::string message) override {
    SourceLocation location{path_, record_line_, 1};
    ctx_.diagnostics->Report(code, std::move(location), std::move(message));
  }
  void ReportAtEnd(DiagnosticCode code, std::string message) override {
    ctx_.diagnostics->Report(code, SourceLocation{path_}, std::move(message));
  }

 private:
  Status Record(std::string_view record) {
    record_line_ = line_ + 1;
    for (char c : record) line_ += c == '\n';
    ++line_;
    if (record.empty() || record == "\r") return Status::Ok();
    SplitRecord(record, &fields_);
    if (columns_.empty()) {
      for (const std::string& header : fields_) {
        columns_.push_back(ColumnFor(header));
      }
      return Status::Ok();
    }
    if (fields_.size() != columns_.size()) {
      return MalformedInputError(
          path_ + ":" + std::to_string(record_line_) + ":1: expected " +
          std::to_string(columns_.size()) + " fields (as the header), found " +
          std::to_string(fields_.size()));
    }
    ParsedEvent event;
    input_shapes_.clear();
    output_shapes_.clear();
    for (size_t i = 0; i < fields_.size(); ++i) {
      std::string_view value = fields_[i];
      switch (columns_[i]) {
        case Column::kCat:
          event.cat = value;
          break;
        case Column::kPid:
        case Column::kTid: {
          auto number = trace_event::ParseInt64(value);
          auto& id = columns_[i] == Column::kPid ? event.pid : event.tid;
          id.present = !value.empty();
          if (number) {
            id.number = *number;
          } else {
            id.label = value;
          }
          break;
        }
        case Column::kDur:
        case Column::kTs: {
          if (value.empty()) break;
          auto ns = trace_event::ParseMicrosecondsToNanoseconds(value);
          if (!ns) {
            return MalformedInputError(
                path_ + ":" + std::to_string(record_line_) + ":1: column " +
                (columns_[i] == Column::kTs ? "ts" : "dur") +
                ": expected a number of microseconds, found '" +
                std::string(value.substr(0, 40)) + "'");
          }
          if (columns_[i] == Column::kTs) {
            event.has_ts = true;
            event.ts_ns = *ns;
          } else {
            event.has_dur = true;
            event.dur_ns = *ns;
          }
          break;
        }
        case Column::kPh:
          event.ph = value;
          break;
        case Column::kName:
          event.name = value;
          event.has_name = true;
          break;
        case Column::kOpName:
          event.op_name = value;
          break;
        case Column::kProvider:
          event.provider = value;
          break;
        case Column::kInputShapes:
          input_shapes_ = PythonReprToJson(value);
          event.shapes = input_shapes_;
          break;
        case Column::kOutputShapes:
          output_shapes_ = PythonReprToJson(value);
          event.output_shapes = output_shapes_;
          break;
        case Column::kIgnored:
          break;
      }
    }
    builder_.AddEvent(event);
    return Status::Ok();
  }

  static constexpr size_t kMaxRecordBytes = size_t{64} << 20;

  ImportContext& ctx_;
  std::string path_;
  ChromeTraceStats stats_;
  TraceEventBuilder builder_;
  std::string pending_;
  size_t scan_from_ = 0;
  bool in_quotes_ = false;
  uint64_t line_ = 0;
  uint64_t record_line_ = 0;
  std::vector<Column> columns_;
  std::vector<std::string> fields_;
  std::string input_shapes_;
  std::string output_shapes_;
};

class TraceEventCsvImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor kDescriptor{
        "trace_event_csv",
        {".csv"},
        0,
        ContentKind::kTrace,
        "trace events as CSV (an ONNX Runtime profile saved with pandas)"};
    return kDescriptor;
  }

  int Sniff(std::string_view head, std::string_view) const override {
    size_t end = head.find('\n');
    if (end == std::string_view::npos) return 0;
    std::vector<std::string> header;
    SplitRecord(head.substr(0, end), &header);
    int found = 0;
    for (const std::string& h : header) {
      Column c = ColumnFor(h);
      found += c == Column::kTs || c == Column::kPh || c == Column::kName ||
               c == Column::kDur || c == Column::kCat;
    }
    return found == 5 ? 80 : 0;
  }

 protected:
  std::unique_ptr<Reader> CreateReader(ImportContext& ctx) const override {
    return std::make_unique<TraceEventCsvReader>(ctx);
  }
};

}  // namespace

std::unique_ptr<Importer> CreateTraceEventCsvImporter() {
  return std::make_unique<TraceEventCsvImporter>();
}

Status ImportTraceEventCsvFromBuffer(std::string_view data, ImportContext& ctx,
                                     size_t chunk_size) {
  if (ctx.trace == nullptr || ctx.diagnostics == nullptr) {
    return InternalError("ImportTraceEventCsvFromBuffer: incomplete context");
  }
  TraceEventCsvReader reader(ctx);
  if (chunk_size == 0) chunk_size = data.size() / 3 + 1;
  for (size_t offset = 0; offset < data.size(); offset += chunk_size) {
    MI_RETURN_IF_ERROR(reader.Parse(data.substr(offset, chunk_size)));
  }
  return reader.NotifyEndOfFile();
}

}  // namespace mi::importers
