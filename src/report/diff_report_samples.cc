// The hand-filled diff reports (report_samples.h) in each report format,
// for the checks that run outside GoogleTest:
//   diff_report_samples json        "<name>\t<json>" per line on stdout
//                                   (tools/validate_diff_samples.py checks
//                                   them against diff.schema.json)
//   diff_report_samples write DIR   DIR/<name>.xml (JUnit, validated by
//                                   xmllint --schema), DIR/<name>.html
//                                   (rendered in Chromium by
//                                   web/test/report_html_test.mjs),
//                                   DIR/sample_run.html (the new run's
//                                   single-run report)

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/atomic_file.h"
#include "encoders/json_encoder.h"
#include "report/report.h"
#include "report/report_samples.h"

int main(int argc, char** argv) {
  using namespace mi::report::samples;
  mi::RunDigest base = RegressedBase();
  mi::RunDigest next = RegressedNew();
  const std::vector<std::pair<std::string, mi::DiffReport>> reports = {
      {"regressed", RegressedReport()},
      {"clean", CleanReport()},
      {"structure_only", StructureOnlyReport()},
      {"nasty", NastyReport()},
  };
  if (argc == 2 && std::strcmp(argv[1], "json") == 0) {
    for (const auto& [name, report] : reports) {
      std::string json = mi::encoders::EncodeJson(report);
      std::printf("%s\t%s", name.c_str(), json.c_str());
    }
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "write") == 0) {
    std::string dir = argv[2];
    mi::report::DiffDrawing drawing;
    drawing.base = &base;
    drawing.next = &next;
    for (const auto& [name, report] : reports) {
      for (const auto& [path, text] :
           {std::pair{dir + "/" + name + ".xml",
                      mi::report::RenderDiffJUnit(report)},
            std::pair{dir + "/" + name + ".html",
                      mi::report::RenderDiffHtml(report, drawing)}}) {
        mi::Status s = mi::WriteFileAtomically(path, text);
        if (!s.ok()) {
          std::fprintf(stderr, "%s\n", s.ToString().c_str());
          return 1;
        }
      }
    }
    mi::Status s = mi::WriteFileAtomically(dir + "/sample_run.html",
                                           mi::report::RenderRunHtml(next, {}));
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "usage: diff_report_samples json | write DIR\n");
  return 2;
}
