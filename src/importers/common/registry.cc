#include "importers/common/registry.h"

#include <algorithm>

namespace mi::importers {

const Importer* ImporterRegistry::Detect(std::string_view head,
                                         std::string_view path) const {
  const Importer* best = nullptr;
  int best_score = 0;
  int best_priority = 0;
  std::string_view plain = StripGzSuffix(path);
  for (const auto& importer : importers_) {
    int score = importer->Sniff(head, path);
    if (score <= 0) continue;
    // A matching extension adds a little confidence.
    for (std::string_view ext : importer->descriptor().extensions) {
      if (plain.ends_with(ext)) {
        score += 5;
        break;
      }
    }
    int priority = importer->descriptor().priority;
    if (score > best_score ||
        (score == best_score && priority > best_priority)) {
      best = importer.get();
      best_score = score;
      best_priority = priority;
    }
  }
  return best;
}

void ImporterRegistry::ClaimRunFiles(RunFiles& files) const {
  for (const auto& importer : importers_) {
    files.set_claimant(importer->descriptor().name);
    importer->ClaimRunFiles(files);
  }
  files.set_claimant({});
}

std::string ImporterRegistry::DescribeFormats() const {
  std::vector<std::string_view> descriptions;
  for (const auto& importer : importers_) {
    std::string_view d = importer->descriptor().description;
    if (d.empty() || std::find(descriptions.begin(), descriptions.end(), d) !=
                         descriptions.end()) {
      continue;
    }
    descriptions.push_back(d);
  }
  std::string out;
  for (size_t i = 0; i < descriptions.size(); ++i) {
    if (i > 0) out += i + 1 == descriptions.size() ? " or " : ", ";
    out += descriptions[i];
  }
  return out;
}

const Importer* ImporterRegistry::FindByName(std::string_view name) const {
  for (const auto& importer : importers_) {
    if (importer->descriptor().name == name) return importer.get();
  }
  return nullptr;
}

const Importer* ImporterRegistry::FindByExtension(std::string_view path) const {
  std::string_view plain = StripGzSuffix(path);
  const Importer* best = nullptr;
  size_t best_length = 0;
  for (const auto& importer : importers_) {
    for (std::string_view ext : importer->descriptor().extensions) {
      if (plain.ends_with(ext) && ext.size() > best_length) {
        best = importer.get();
        best_length = ext.size();
      }
    }
  }
  return best;
}

}  // namespace mi::importers
