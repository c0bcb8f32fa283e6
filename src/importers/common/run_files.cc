#include "importers/common/run_files.h"

#include <algorithm>
#include <tuple>

namespace mi::importers {

RunFiles::RunFiles(std::vector<File> files, bool named)
    : files_(std::move(files)), named_(named), claims_(files_.size()) {}

std::optional<size_t> RunFiles::FindSource(std::string_view key) const {
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (sources_[i].key == key) return i;
  }
  return std::nullopt;
}

size_t RunFiles::AddSource(Source source) {
  sources_.push_back(std::move(source));
  return sources_.size() - 1;
}

bool RunFiles::Take(size_t i, size_t source, uint32_t stage) {
  if (i >= claims_.size() || claims_[i].state != State::kOpen ||
      source >= sources_.size()) {
    return false;
  }
  Claim& claim = claims_[i];
  claim.state = State::kTaken;
  claim.stage = std::max<uint32_t>(stage, 1);
  claim.sequence = next_sequence_++;
  claim.source = source;
  claim.importer = claimant_;
  return true;
}

bool RunFiles::LeaveOut(size_t i, std::string why) {
  if (named_ || i >= claims_.size() || claims_[i].state != State::kOpen) {
    return false;
  }
  Claim& claim = claims_[i];
  claim.state = State::kLeftOut;
  claim.importer = claimant_;
  claim.why = std::move(why);
  return true;
}

std::vector<size_t> RunFiles::LoadOrder() const {
  std::vector<size_t> order;
  for (size_t i = 0; i < files_.size(); ++i) {
    if (claims_[i].state != State::kLeftOut) order.push_back(i);
  }
  if (named_) return order;
  // Unclaimed files (stage 0) keep the listing's order: the sort is stable
  // and their sequence is 0.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tuple(claims_[a].stage, claims_[a].sequence) <
           std::tuple(claims_[b].stage, claims_[b].sequence);
  });
  return order;
}

const RunFiles::Source* RunFiles::source_of(size_t i) const {
  if (i >= claims_.size() || claims_[i].state != State::kTaken) return nullptr;
  return &sources_[claims_[i].source];
}

std::vector<RunFiles::LeftOut> RunFiles::left_out() const {
  std::vector<LeftOut> out;
  for (size_t i = 0; i < files_.size(); ++i) {
    const Claim& claim = claims_[i];
    if (claim.state != State::kLeftOut) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const LeftOut& l) {
      return l.importer == claim.importer && l.why == claim.why;
    });
    if (it == out.end()) {
      out.push_back({claim.importer, claim.why, {}});
      it = out.end() - 1;
    }
    it->paths.push_back(files_[i].path);
  }
  return out;
}

}  // namespace mi::importers
