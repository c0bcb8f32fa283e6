#pragma once

// The diagnosis findings, frequent sequences and repeated blocks as
// results (the row types are in model_inspector/diagnosis.h;
// docs/reference/schemas/findings.schema.json). Each writes a JSON array.

#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"
#include "model_inspector/diagnosis.h"

namespace mi {

struct FindingsResult : AnalysisResult {
  std::vector<FindingInfo> findings;  // most severe first, then time

  std::string_view analysis_id() const override { return "findings"; }
  void Write(ResultWriter& w) const override;
};

struct SequencesResult : AnalysisResult {
  std::vector<SequenceInfo> sequences;  // by total time

  std::string_view analysis_id() const override { return "sequences"; }
  void Write(ResultWriter& w) const override;
};

struct BlocksResult : AnalysisResult {
  std::vector<BlockFamilyInfo> families;  // by total time

  std::string_view analysis_id() const override { return "blocks"; }
  void Write(ResultWriter& w) const override;
};

// One finding as an object (findings.schema.json "finding"); summaries
// list findings too.
void WriteFinding(ResultWriter& w, const FindingInfo& f);

}  // namespace mi
