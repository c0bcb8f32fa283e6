// The diff as JUnit XML: CI systems (Jenkins, GitLab, GitHub Actions test
// reporters) show each rule as a test case.

#include <fmt/format.h>

#include "report/diff_tables.h"
#include "report/escape.h"
#include "report/report.h"

namespace mi::report {

std::string RenderDiffJUnit(const DiffReport& r) {
  size_t failures = 0;
  size_t skipped = 0;
  for (const RuleOutcome& o : r.rules) {
    std::string_view state = RuleState(o);
    failures += state == "crossed" ? 1 : 0;
    skipped += state == "skipped" ? 1 : 0;
  }
  std::string model =
      r.next.meta.model.empty() ? r.base.meta.model : r.next.meta.model;
  std::string suite = "model-inspector diff";
  if (!model.empty()) suite += " " + model;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"model-inspector diff\" tests=\"{}\" "
      "failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"0\">\n",
      r.rules.size(), failures, skipped);
  out += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"{}\" time=\"0\">\n",
      XmlAttributeEscape(suite), r.rules.size(), failures, skipped);
  out += "    <properties>\n";
  auto property = [&](std::string_view name, const std::string& value) {
    if (value.empty()) return;
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name,
                       XmlAttributeEscape(value));
  };
  property("base.label", r.base.meta.label);
  property("base.git_commit", r.base.meta.git_commit);
  property("new.label", r.next.meta.label);
  property("new.git_commit", r.next.meta.git_commit);
  property("verdict", Headline(r));
  out += "    </properties>\n";
  for (const RuleOutcome& o : r.rules) {
    std::string_view state = RuleState(o);
    out += fmt::format(
        "    <testcase name=\"{}\" classname=\"model-inspector.diff.{}\" "
        "time=\"0\"",
        XmlAttributeEscape(o.rule.text), XmlAttributeEscape(o.rule.metric));
    if (state == "passed") {
      out += fmt::format(
          ">\n      <system-out>{}</system-out>\n    "
          "</testcase>\n",
          XmlEscape(o.message));
    } else if (state == "skipped") {
      out += fmt::format(
          ">\n      <skipped message=\"{}\"/>\n    "
          "</testcase>\n",
          XmlAttributeEscape(o.note));
    } else {
      out += fmt::format(
          ">\n      <failure message=\"{}\" type=\"threshold crossed\">{}\n"
          "measured on: {}\nvalue: {}</failure>\n    </testcase>\n",
          XmlAttributeEscape(o.message), XmlEscape(o.message),
          XmlEscape(o.measured_on), XmlEscape(RuleValue(o)));
    }
  }
  out += "    <system-out>" + XmlEscape(RenderDiffText(r)) + "</system-out>\n";
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace mi::report
