// Prints the hand-filled diff reports (report_samples.h) as JSON, one per
// line as "<name>\t<json>": tools/validate_diff_samples.py checks them
// against docs/reference/schemas/diff.schema.json.

#include <cstdio>
#include <string>

#include "encoders/json_encoder.h"
#include "report/report_samples.h"

int main() {
  using namespace mi::report::samples;
  const std::pair<const char*, mi::DiffReport> reports[] = {
      {"regressed", RegressedReport()},
      {"clean", CleanReport()},
      {"structure_only", StructureOnlyReport()},
      {"nasty", NastyReport()},
  };
  for (const auto& [name, report] : reports) {
    std::string json = mi::encoders::EncodeJson(report);
    std::printf("%s\t%s", name, json.c_str());
  }
  return 0;
}
