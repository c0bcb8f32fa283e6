#pragma once

// The files the session is about to load from one path the user gave (a run
// directory, walked, or one named file), offered to every registered
// importer before anything is read (Importer::ClaimRunFiles). The format
// whose tool wrote a folder knows its layout: which files form one source
// (trace/trace.h SourceInfo: one profiled process), in which order they
// load (a table that joins onto a timeline's tasks loads after it), and
// which files are copies, raw data or configuration, left out with why.
// Files nobody claims load first, in path order, each its own source, and
// are detected by content like every other file.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mi::importers {

class RunFiles {
 public:
  struct File {
    std::string path;  // as the session opens it
    // The path from the walked directory's own name down ("PROF_1/host/x"):
    // folder names above the run directory say nothing about the run. For
    // a named file, the path as given.
    std::string in_run;
  };
  // One profiled process whose files load together.
  struct Source {
    std::string key;    // what its files share (their output folder)
    int32_t rank = -1;  // when the folder says, else -1
  };
  // Files left out for one reason by one importer.
  struct LeftOut {
    std::string importer;
    std::string why;
    std::vector<std::string> paths;
  };

  // `named`: the listing is one file the user named. It is never left out
  // and loads as given; a claim may still put it into a source.
  RunFiles(std::vector<File> files, bool named);

  const std::vector<File>& files() const { return files_; }
  bool named() const { return named_; }
  // True once an importer took or left out file i.
  bool claimed(size_t i) const { return claims_[i].state != State::kOpen; }

  std::optional<size_t> FindSource(std::string_view key) const;
  // Adds a source; its key must be new (FindSource first).
  size_t AddSource(Source source);

  // Takes file i into source `source`, to load at `stage` (>= 1): unclaimed
  // files load first, then the claimed ones stage by stage, in the order
  // they were taken within a stage. False when file i is claimed already.
  bool Take(size_t i, size_t source, uint32_t stage);
  // Leaves file i out, saying why (the session reports it as the info
  // diagnostic run_file_left_out). False when file i is claimed already or
  // the listing is a named file.
  bool LeaveOut(size_t i, std::string why);

  // For the session.
  // Names the importer whose claims follow (in left_out()).
  void set_claimant(std::string_view importer) { claimant_ = importer; }
  // The files to load, in load order.
  std::vector<size_t> LoadOrder() const;
  // The source file i was taken into, if any.
  const Source* source_of(size_t i) const;
  // Grouped by importer and reason, in the order first seen.
  std::vector<LeftOut> left_out() const;

 private:
  enum class State : uint8_t { kOpen, kTaken, kLeftOut };
  struct Claim {
    State state = State::kOpen;
    uint32_t stage = 0;
    uint64_t sequence = 0;  // taking order
    size_t source = 0;
    std::string importer;
    std::string why;
  };
  std::vector<File> files_;
  bool named_;
  std::vector<Claim> claims_;
  std::vector<Source> sources_;
  std::string claimant_;
  uint64_t next_sequence_ = 0;
};

}  // namespace mi::importers
