#pragma once

// Finds the importer for a file by content (Sniff), falling back to the
// extension only to break ties; never by extension alone.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "importers/common/importer.h"
#include "importers/common/run_files.h"

namespace mi::importers {

class ImporterRegistry {
 public:
  explicit ImporterRegistry(std::vector<std::unique_ptr<Importer>> importers)
      : importers_(std::move(importers)) {}

  // Best importer for a file given its (decompressed) head; nullptr if none.
  const Importer* Detect(std::string_view head, std::string_view path) const;
  const Importer* FindByName(std::string_view name) const;
  // The importer whose extension the path has (longest match), or nullptr.
  const Importer* FindByExtension(std::string_view path) const;
  // Lets every importer claim, in registration order (the first claim of a
  // file wins).
  void ClaimRunFiles(RunFiles& files) const;
  // Every importer's description, for "not a recognised format":
  // "a, b, c or d" (repeats dropped).
  std::string DescribeFormats() const;
  const std::vector<std::unique_ptr<Importer>>& importers() const {
    return importers_;
  }

 private:
  std::vector<std::unique_ptr<Importer>> importers_;
};

}  // namespace mi::importers
