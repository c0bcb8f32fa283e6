// mi_bench_trace_stages: where the time of `summary` goes on one trace, stage
// by stage, against the machine's parser limit (simdjson alone, parse only).
//
//   mi_bench_trace_stages TRACE [--repeat R] [--no-session] [--threads N]
//
// In-memory stages (the decompressed file is read once; each stage then runs
// over the same bytes, so reading is timed once, on its own):
//   read            ChunkReader over the file: read + gzip inflate
//   simdjson_dom    simdjson::dom::parser::parse of the whole document
//                   (stage 1 + tape; no model built). Not possible past
//                   simdjson's 4 GiB document limit: printed as null, with why
//   simdjson_ondemand  On-Demand walk of traceEvents touching every field of
//                   every event (raw token of each value): the least a
//                   trace reader built on simdjson must do
//   tokenize        our JsonTraceTokenizer alone (event boundaries)
//   parse           tokenizer + JsonTraceParser (ParsedEvent per event)
//   import_one_thread  the importer (tokenizer + parser + TraceEventBuilder)
//                   on this thread, fed 8 MiB slices
//   import_two_threads the same with parser and builder on a thread of
//                   their own, the tokenizer on this one (what
//                   Importer::Import runs)
// Session stages (from the path, as `summary` does):
//   open            Session::Open: read, import, link
//   summary_tables  Summary over the whole trace as a range (per op type,
//                   stream, node; no whole-trace analyses)
//   critical_path, idle_overlap, memory, findings: each analysis alone
//   summary         Session::Summary with every analysis (what the CLI runs)
//
// Each stage runs R times (default 1) and the best is printed, as MB/s of
// decompressed JSON and as a fraction of simdjson's On-Demand walk. Prints
// one JSON object on the last line (bench/trace/bench_trace_stages.py reads
// it) after a human-readable table.

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>
#include <nlohmann/json.hpp>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/chrome_trace/chrome_trace_importer.h"
#include "importers/common/trace_event/json_trace_parser.h"
#include "importers/common/trace_event/json_trace_tokenizer.h"
#include "io/chunk_reader.h"
#include "model_inspector/session.h"
#include "trace/trace.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace te = mi::importers::trace_event;

constexpr size_t kSliceBytes = size_t{8} << 20;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

double Best(int repeat, const std::function<bool()>& fn) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < repeat; ++i) {
    auto t0 = Clock::now();
    if (!fn()) return -1;
    best = std::min(best, Seconds(t0));
  }
  return best;
}

long long PeakRssBytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<long long>(usage.ru_maxrss) * 1024;
}

// Counts events and does nothing else: the tokenizer's own cost.
class CountingDelegate : public te::JsonTraceTokenizer::Delegate {
 public:
  mi::Status OnTraceEvent(std::string_view) override {
    ++events;
    return mi::Status::Ok();
  }
  mi::Status OnTopLevelValue(std::string_view, std::string_view) override {
    return mi::Status::Ok();
  }
  uint64_t events = 0;
};

// Parses every event into a ParsedEvent and drops it.
class ParsingDelegate : public te::JsonTraceTokenizer::Delegate {
 public:
  mi::Status OnTraceEvent(std::string_view json) override {
    te::EventParseError error;
    if (parser.Parse(json, &event, &error) ==
        te::JsonTraceParser::Outcome::kFailed) {
      return mi::MalformedInputError(error.what);
    }
    ++events;
    checksum += static_cast<uint64_t>(event.ts_ns) + event.name.size();
    return mi::Status::Ok();
  }
  mi::Status OnTopLevelValue(std::string_view, std::string_view) override {
    return mi::Status::Ok();
  }
  te::JsonTraceParser parser;
  te::ParsedEvent event;
  uint64_t events = 0;
  uint64_t checksum = 0;
};

bool FeedSlices(te::JsonTraceTokenizer& tokenizer, std::string_view text,
                std::string* error) {
  for (size_t at = 0; at < text.size(); at += kSliceBytes) {
    mi::Status s = tokenizer.Feed(text.substr(at, kSliceBytes));
    if (!s.ok()) {
      *error = s.ToString();
      return false;
    }
  }
  mi::Status s = tokenizer.Finish();
  if (!s.ok()) *error = s.ToString();
  return s.ok();
}

// Touches every field of every event: the raw token of scalars, and every
// member of nested objects/arrays walked the same way.
uint64_t WalkValue(simdjson::ondemand::value value) {
  uint64_t n = 1;
  simdjson::ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return n;
  if (type == simdjson::ondemand::json_type::object) {
    simdjson::ondemand::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) return n;
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) return n;
      n += key.size() + WalkValue(field.value());
    }
  } else if (type == simdjson::ondemand::json_type::array) {
    simdjson::ondemand::array array;
    if (value.get_array().get(array) != simdjson::SUCCESS) return n;
    for (auto element : array) n += WalkValue(element.value());
  } else if (type == simdjson::ondemand::json_type::string) {
    std::string_view s;
    if (value.get_string().get(s) == simdjson::SUCCESS) n += s.size();
  } else {
    n += value.raw_json_token().size();
  }
  return n;
}

std::string Fmt(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE [--repeat R] [--no-session]\n",
                 argv[0]);
    return 2;
  }
  std::string path = argv[1];
  int repeat = 1;
  bool session_stages = true;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--no-session") == 0) {
      session_stages = false;
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  nlohmann::ordered_json out;  // stages in the order they ran
  out["trace"] = path;
  out["repeat"] = repeat;
  std::vector<std::pair<std::string, double>> stages;  // name, seconds
  std::string error;

  // read: ChunkReader, keeping the bytes for the in-memory stages.
  std::string text;
  double read_s = Best(1, [&]() {
    auto reader = mi::io::ChunkReader::Open(path);
    if (!reader.ok()) {
      error = reader.status().ToString();
      return false;
    }
    if (!(*reader)->is_gzip()) text.reserve((*reader)->file_size());
    for (;;) {
      auto chunk = (*reader)->Next();
      if (!chunk.ok()) {
        error = chunk.status().ToString();
        return false;
      }
      if (chunk->empty()) break;
      text.append(chunk->data(), chunk->size());
    }
    return true;
  });
  if (read_s < 0) {
    std::fprintf(stderr, "read: %s\n", error.c_str());
    return 1;
  }
  const double megabytes = static_cast<double>(text.size()) / 1e6;
  out["bytes"] = text.size();
  stages.emplace_back("read", read_s);

  // simdjson alone.
  if (text.size() < simdjson::SIMDJSON_MAXSIZE_BYTES) {
    simdjson::padded_string padded(text);
    simdjson::dom::parser dom;
    double dom_s = Best(repeat, [&]() {
      simdjson::dom::element root;
      auto e = dom.parse(padded).get(root);
      if (e) error = simdjson::error_message(e);
      return !e;
    });
    if (dom_s < 0) {
      std::fprintf(stderr, "simdjson dom: %s\n", error.c_str());
      return 1;
    }
    stages.emplace_back("simdjson_dom", dom_s);
    dom = simdjson::dom::parser();  // frees the tape
    simdjson::ondemand::parser ondemand;
    uint64_t touched = 0;
    uint64_t simd_events = 0;
    double od_s = Best(repeat, [&]() {
      touched = 0;
      simd_events = 0;
      simdjson::ondemand::document doc;
      auto e = ondemand.iterate(padded).get(doc);
      if (e) {
        error = simdjson::error_message(e);
        return false;
      }
      simdjson::ondemand::array events;
      simdjson::ondemand::json_type type;
      if (doc.type().get(type) != simdjson::SUCCESS) return false;
      if (type == simdjson::ondemand::json_type::array) {
        if (doc.get_array().get(events) != simdjson::SUCCESS) return false;
      } else if (doc["traceEvents"].get_array().get(events) !=
                 simdjson::SUCCESS) {
        error = "no traceEvents array";
        return false;
      }
      for (auto event : events) {
        ++simd_events;
        touched += WalkValue(event.value());
      }
      return true;
    });
    if (od_s < 0) {
      std::fprintf(stderr, "simdjson ondemand: %s\n", error.c_str());
      return 1;
    }
    stages.emplace_back("simdjson_ondemand", od_s);
    out["simdjson_events"] = simd_events;
  } else {
    out["simdjson_unavailable"] =
        "the document is over simdjson's 4 GiB limit "
        "(SIMDJSON_MAXSIZE_BYTES); it parses one document in memory only";
  }

  // Ours, stage by stage, over the same bytes.
  uint64_t events = 0;
  double tokenize_s = Best(repeat, [&]() {
    CountingDelegate delegate;
    te::JsonTraceTokenizer tokenizer(path, &delegate);
    if (!FeedSlices(tokenizer, text, &error)) return false;
    events = delegate.events;
    return true;
  });
  if (tokenize_s < 0) {
    std::fprintf(stderr, "tokenize: %s\n", error.c_str());
    return 1;
  }
  stages.emplace_back("tokenize", tokenize_s);
  out["events"] = events;
  double parse_s = Best(repeat, [&]() {
    ParsingDelegate delegate;
    te::JsonTraceTokenizer tokenizer(path, &delegate);
    return FeedSlices(tokenizer, text, &error);
  });
  if (parse_s < 0) {
    std::fprintf(stderr, "parse: %s\n", error.c_str());
    return 1;
  }
  stages.emplace_back("parse", parse_s);
  size_t tasks = 0;
  auto import_with = [&](bool threaded) {
    return Best(repeat, [&]() {
      mi::StringPool strings;
      mi::Trace trace(&strings);
      mi::DiagnosticSink diagnostics;
      mi::importers::ImportContext ctx;
      ctx.path = path;
      ctx.trace = &trace;
      ctx.diagnostics = &diagnostics;
      mi::importers::ChromeTraceStats stats;
      auto reader = mi::importers::CreateChromeTraceReader(
          ctx, &stats, text.size(), threaded);
      for (size_t at = 0; at < text.size(); at += kSliceBytes) {
        mi::Status s =
            reader->Parse(std::string_view(text).substr(at, kSliceBytes));
        if (!s.ok()) {
          error = s.ToString();
          return false;
        }
      }
      mi::Status s = reader->NotifyEndOfFile();
      if (!s.ok()) error = s.ToString();
      tasks = trace.task_count();
      return s.ok();
    });
  };
  double import_s = import_with(false);
  if (import_s < 0) {
    std::fprintf(stderr, "import: %s\n", error.c_str());
    return 1;
  }
  stages.emplace_back("import_one_thread", import_s);
  double threaded_s = import_with(true);
  if (threaded_s < 0) {
    std::fprintf(stderr, "import (threaded): %s\n", error.c_str());
    return 1;
  }
  stages.emplace_back("import_two_threads", threaded_s);
  out["tasks"] = tasks;
  std::string().swap(text);

  if (session_stages) {
    mi::OpenOptions options;
    options.paths = {path};
    std::unique_ptr<mi::Session> session;
    double open_s = Best(repeat, [&]() {
      session.reset();
      auto s = mi::Session::Open(options);
      if (!s.ok()) {
        error = s.status().ToString();
        return false;
      }
      session = std::move(s).value();
      return true;
    });
    if (open_s < 0) {
      std::fprintf(stderr, "open: %s\n", error.c_str());
      return 1;
    }
    stages.emplace_back("open", open_s);
    mi::SummaryOptions tables;
    tables.from_ns = std::numeric_limits<int64_t>::min() + 1;
    stages.emplace_back("summary_tables", Best(repeat, [&]() {
                          return session->Summary(tables).tasks > 0;
                        }));
    mi::TimingRequest whole;
    stages.emplace_back("critical_path", Best(repeat, [&]() {
                          return session->CriticalPath(whole).ok();
                        }));
    stages.emplace_back("idle_overlap", Best(repeat, [&]() {
                          return session->IdleOverlap(whole).ok();
                        }));
    stages.emplace_back("memory", Best(repeat, [&]() {
                          (void)session->Memory("compiled");
                          return true;
                        }));
    stages.emplace_back("findings", Best(repeat, [&]() {
                          return session->Findings(mi::DiagnoseOptions{}).ok();
                        }));
    // What `summary` runs: the same Session's Summary with every analysis,
    // on a fresh session (no analysis cached by the calls above).
    session.reset();
    double summary_s = Best(repeat, [&]() {
      auto s = mi::Session::Open(options);
      if (!s.ok()) {
        error = s.status().ToString();
        return false;
      }
      mi::SummaryReport report = (*s)->Summary(mi::SummaryOptions{});
      return report.tasks > 0;
    });
    stages.emplace_back("open_and_summary", summary_s);
  }

  double limit_s = 0;
  for (const auto& [name, s] : stages) {
    if (name == "simdjson_ondemand") limit_s = s;
  }
  std::printf("%-20s %10s %10s %14s\n", "stage", "seconds", "MB/s",
              "x simdjson OD");
  nlohmann::ordered_json stage_json = nlohmann::ordered_json::object();
  for (const auto& [name, s] : stages) {
    double rate = s > 0 ? megabytes / s : 0;
    std::string ratio = limit_s > 0 && s > 0 ? Fmt("%.3f", limit_s / s) : "-";
    std::printf("%-20s %10.3f %10.1f %14s\n", name.c_str(), s, rate,
                ratio.c_str());
    stage_json[name] = {{"seconds", s}, {"mb_per_s", rate}};
  }
  out["stages"] = stage_json;
  out["megabytes"] = megabytes;
  out["peak_rss_mb"] = static_cast<double>(PeakRssBytes()) / 1e6;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
