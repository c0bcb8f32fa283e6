#include "importers/common/registry.h"

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
      if (EndsWith(plain, ext)) {
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
      if (EndsWith(plain, ext) && ext.size() > best_length) {
        best = importer.get();
        best_length = ext.size();
      }
    }
  }
  return best;
}

}  // namespace mi::importers
