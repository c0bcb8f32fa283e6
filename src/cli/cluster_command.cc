#include "cli/cluster_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "cli/common.h"
#include "encoders/json_encoder.h"
#include "encoders/table_printer.h"
#include "model_inspector/cluster.h"

namespace mi::cli {
namespace {

struct ClusterFlags {
  std::vector<std::string> paths;
  std::string format = "table";
  unsigned jobs = 0;
  std::string link_peaks;
  std::string rank_summaries;
  size_t max_collectives = 500;
  bool quiet = false;
};

struct ReduceFlags {
  std::vector<std::string> paths;
  std::string out;
  unsigned jobs = 0;
};

std::string Ms(int64_t ns) { return fmt::format("{:.3f}", ns / 1e6); }
std::string Opt(double v, const char* f = "{:.2f}") {
  return v >= 0 ? fmt::format(fmt::runtime(f), v) : "-";
}

std::string Render(const encoders::Table& t, const std::string& format) {
  if (format == "csv") return t.title + "\n" + encoders::RenderCsv(t) + "\n";
  if (format == "md") return encoders::RenderMarkdown(t) + "\n";
  return encoders::RenderText(t) + "\n";
}

std::string Tables(const ClusterReport& r, const std::string& format) {
  std::string out;
  {
    encoders::Table t{"Cluster", {"what", "value"}, {}};
    std::string missing;
    for (size_t k = 0; k < r.missing_ranks.size() && k < 32; ++k) {
      missing += (k ? ", " : "") + std::to_string(r.missing_ranks[k]);
    }
    if (r.missing_ranks.size() > 32) missing += ", ...";
    t.rows = {
        {"ranks read", std::to_string(r.ranks.size())},
        {"world size",
         r.world_size >= 0
             ? fmt::format("{} (from {})", r.world_size, r.world_size_from)
             : "-"},
        {"missing ranks", missing.empty() ? "none" : missing},
        {"steps", std::to_string(r.steps.size())},
        {"collective instances", std::to_string(r.collective_instances)},
        {"clocks", r.clock.note},
    };
    t.full_last_column = true;
    out += Render(t, format);
  }
  {
    encoders::Table t{
        "Ranks x steps (ms)",
        {"step", "rank", "wall", "compute", "communication", "exposed comm",
         "overlapped comm", "idle", "host-bound", "data loading"},
        {}};
    t.numeric = {false, true, true, true, true, true, true, true, true, true};
    for (const ClusterStep& s : r.steps) {
      for (const ClusterStepRank& x : s.ranks) {
        t.rows.push_back({s.label, std::to_string(x.rank), Ms(x.wall_ns),
                          Ms(x.compute_ns), Ms(x.communication_ns),
                          Ms(x.exposed_communication_ns),
                          Ms(x.overlapped_communication_ns), Ms(x.idle_ns),
                          Ms(x.host_bound_ns), Ms(x.data_loading_ns)});
      }
    }
    out += Render(t, format);
  }
  {
    encoders::Table t{"Slow ranks",
                      {"rank", "last at", "mean lateness ms",
                       "others waited ms", "duration outlier", "why"},
                      {}};
    for (const ClusterSlowRank& s : r.slow_ranks) {
      std::string why;
      for (const ClusterSlowReason& x : s.reasons) {
        why += (why.empty() ? "" : "; ") + x.message;
      }
      t.rows.push_back(
          {std::to_string(s.rank),
           fmt::format("{} of {}", s.last_arrivals, s.collectives),
           Ms(s.mean_lateness_ns), Ms(s.others_wait_ns),
           std::to_string(s.duration_outlier_count),
           why.empty() ? "no reason stands out in its step figures" : why});
    }
    t.full_last_column = true;
    if (t.rows.empty()) t.rows.push_back({"-", "-", "-", "-", "-", "none"});
    out += Render(t, format);
  }
  {
    encoders::Table t{
        fmt::format("Collectives by exposed time ({} of {} listed)",
                    std::min<size_t>(r.collectives.size(), 30),
                    r.collective_instances),
        {"name", "group", "step", "ranks", "last rank", "skew ms",
         "transfer ms", "busbw GB/s", "link", "efficiency", "exposed ms",
         "matched by"},
        {}};
    for (size_t k = 0; k < r.collectives.size() && k < 30; ++k) {
      const ClusterCollective& c = r.collectives[k];
      t.rows.push_back(
          {c.name, c.group.empty() ? "-" : c.group,
           c.step >= 0 ? std::to_string(c.step) : c.step_label,
           std::to_string(c.ranks.size()), std::to_string(c.last_rank),
           Ms(c.arrival_skew_ns), Ms(c.transfer_ns), Opt(c.busbw_gbps),
           c.link_type.empty() ? "-" : c.link_type,
           c.efficiency >= 0 ? fmt::format("{:.1f}%", c.efficiency * 100) : "-",
           Ms(c.exposed_ns), c.matched_by});
    }
    out += Render(t, format);
  }
  {
    encoders::Table t{"Communication / computation overlap per rank",
                      {"rank", "compute ms", "communication ms",
                       "overlapped ms", "overlap", "step_trace overlap"},
                      {}};
    for (const ClusterRankOverlap& o : r.overlap) {
      t.rows.push_back(
          {std::to_string(o.rank), Ms(o.compute_ns), Ms(o.communication_ns),
           Ms(o.overlapped_ns), fmt::format("{:.1f}%", o.overlap_share * 100),
           o.step_trace_overlap_share >= 0
               ? fmt::format("{:.1f}%", o.step_trace_overlap_share * 100)
               : "-"});
    }
    out += Render(t, format);
  }
  if (!r.bandwidth.empty()) {
    encoders::Table t{"Bandwidth per link type",
                      {"link", "transfers", "GB/s", "peak GB/s", "efficiency"},
                      {}};
    for (const ClusterLinkBandwidth& b : r.bandwidth) {
      t.rows.push_back({b.link_type, std::to_string(b.collectives),
                        Opt(b.busbw_gbps), Opt(b.peak_gbps, "{:.1f}"),
                        b.efficiency >= 0
                            ? fmt::format("{:.1f}%", b.efficiency * 100)
                            : "-"});
    }
    out += Render(t, format);
  }
  {
    encoders::Table t{"Findings", {"severity", "rule", "message"}, {}};
    for (const ClusterFinding& f : r.findings) {
      t.rows.push_back({f.severity, f.rule_id, f.message});
    }
    if (t.rows.empty()) t.rows.push_back({"-", "-", "no findings"});
    t.full_last_column = true;
    out += Render(t, format);
  }
  return out;
}

std::function<void(const std::string&, uint64_t, uint64_t)> Progress(
    bool quiet) {
  if (quiet || ::isatty(STDERR_FILENO) != 1) return nullptr;
  return [](const std::string& what, uint64_t done, uint64_t total) {
    std::fprintf(stderr, "\rreduced %s (%llu of %llu)\033[K",
                 EscapeForTerminal(what).c_str(),
                 static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total));
    if (done == total) std::fprintf(stderr, "\r\033[K");
  };
}

int RunCluster(const ClusterFlags& flags) {
  ClusterOptions options;
  options.paths = flags.paths;
  options.jobs = flags.jobs;
  options.link_peaks_file = flags.link_peaks;
  options.rank_summaries_dir = flags.rank_summaries;
  options.analysis.max_collectives = flags.max_collectives;
  options.progress = Progress(flags.quiet);
  auto report = OpenCluster(options);
  if (!report.ok()) return ReportError(report.status());
  if (flags.format == "json") {
    std::fputs(
        encoders::EncodeJson(*report, encoders::JsonStyle::kPretty).c_str(),
        stdout);
  } else {
    std::fputs(Tables(*report, flags.format).c_str(), stdout);
  }
  return 0;
}

int RunReduce(const ReduceFlags& flags) {
  auto inputs = DiscoverClusterRanks(flags.paths);
  if (!inputs.ok()) return ReportError(inputs.status());
  ClusterSummary merged;
  ClusterOptions options;
  options.jobs = flags.jobs;
  for (const std::string& f : inputs->summary_files) {
    auto s = ReadClusterSummary(f);
    if (!s.ok()) return ReportError(s.status());
    if (Status m = MergeClusterSummaries(merged, std::move(*s)); !m.ok()) {
      return ReportError(m);
    }
  }
  for (const ClusterRankInput& in : inputs->ranks) {
    auto s = ReduceClusterRank(in, options);
    if (!s.ok()) return ReportError(s.status());
    if (Status m = MergeClusterSummaries(merged, std::move(*s)); !m.ok()) {
      return ReportError(m);
    }
  }
  if (Status w = WriteFileAtomically(flags.out, ClusterSummaryJson(merged));
      !w.ok()) {
    return ReportError(w);
  }
  std::printf("wrote %s (%zu rank%s)\n", EscapeForTerminal(flags.out).c_str(),
              merged.ranks.size(), merged.ranks.size() == 1 ? "" : "s");
  return 0;
}

int RunMerge(const ReduceFlags& flags) {
  ClusterSummary merged;
  for (const std::string& f : flags.paths) {
    auto s = ReadClusterSummary(f);
    if (!s.ok()) return ReportError(s.status());
    if (Status m = MergeClusterSummaries(merged, std::move(*s)); !m.ok()) {
      return ReportError(m.WithContext(f));
    }
  }
  if (Status w = WriteFileAtomically(flags.out, ClusterSummaryJson(merged));
      !w.ok()) {
    return ReportError(w);
  }
  std::printf("wrote %s (%zu ranks)\n", EscapeForTerminal(flags.out).c_str(),
              merged.ranks.size());
  return 0;
}

}  // namespace

void RegisterClusterCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ClusterFlags>();
  CLI::App* cmd = app.add_subcommand(
      "cluster",
      "the ranks of a distributed job side by side: rank x step times, slow "
      "ranks and why, collectives aligned across ranks, bandwidth, "
      "findings (docs/design/clusters.md)");
  cmd->add_option("paths", flags->paths,
                  "a directory of rank profiles (*_ascend_pt, PROF_*, PyTorch "
                  "profiler traces) or the rank profiles, or rank summary "
                  "files");
  cmd->add_option("--format", flags->format, "output format")
      ->check(CLI::IsMember({"table", "json", "csv", "md"}));
  cmd->add_option("--jobs", flags->jobs,
                  "ranks read at a time (default: the hardware threads); peak "
                  "memory is about jobs x one rank's");
  cmd->add_option("--link-peaks", flags->link_peaks,
                  "a JSON file of link peak bandwidths replacing the built-in "
                  "table (docs/design/clusters.md \"Link peaks\")");
  cmd->add_option("--rank-summaries", flags->rank_summaries,
                  "also write each rank's summary to this directory "
                  "(rank_<N>.json)");
  cmd->add_option("--max-collectives", flags->max_collectives,
                  "collectives listed with their per-rank figures in JSON (0: "
                  "all)");
  cmd->add_flag("-q,--quiet", flags->quiet, "no progress output");
  AddMemoryLimitOption(cmd);
  cmd->require_subcommand(0, 1);

  auto reduce = std::make_shared<ReduceFlags>();
  CLI::App* red = cmd->add_subcommand(
      "reduce",
      "write the rank summary of rank profiles (one rank, or several "
      "merged) to --out");
  red->add_option("paths", reduce->paths, "rank profiles")->required();
  red->add_option("--out", reduce->out, "the summary file")->required();
  AddMemoryLimitOption(red);
  red->callback([reduce, exit_code]() { *exit_code = RunReduce(*reduce); });

  auto merge = std::make_shared<ReduceFlags>();
  CLI::App* mer = cmd->add_subcommand(
      "merge", "merge rank summary files into one (each rank once) at --out");
  mer->add_option("files", merge->paths, "rank summary files")->required();
  mer->add_option("--out", merge->out, "the merged summary file")->required();
  mer->callback([merge, exit_code]() { *exit_code = RunMerge(*merge); });

  cmd->callback([cmd, flags, exit_code]() {
    if (!cmd->get_subcommands().empty()) return;
    if (flags->paths.empty()) {
      throw CLI::ValidationError(
          "cluster",
          "give a directory of rank profiles, the profiles, or "
          "rank summary files");
    }
    *exit_code = RunCluster(*flags);
  });
}

}  // namespace mi::cli
