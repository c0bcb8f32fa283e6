// The report renderers on hand-filled diff reports (report_samples.cc):
// exact escaping, verdicts, JUnit counts, table ordering, the changed
// subgraph's nodes and edges (counted by hand from the sample graphs).

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "report/diff_tables.h"
#include "report/escape.h"
#include "report/format.h"
#include "report/report.h"
#include "report/report_samples.h"

namespace mi::report {
namespace {

size_t Count(std::string_view haystack, std::string_view needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string_view::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl = s.find('\n'); nl != std::string::npos;
       nl = s.find('\n', start)) {
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  if (start < s.size()) out.push_back(s.substr(start));
  return out;
}

TEST(Escape, XmlEscapesMarkupAndReplacesWhatXmlCannotHold) {
  // & < > " ' as entities; U+0001 and the stray byte 0xFF as U+FFFD; the
  // newline kept in content, written &#10; in an attribute.
  EXPECT_EQ(XmlEscape(samples::kNastyName),
            "a&lt;b&gt;&amp;&quot;c&#39;\n\xEF\xBF\xBDz\xEF\xBF\xBD"
            "&lt;/testcase&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(XmlAttributeEscape(samples::kNastyName),
            "a&lt;b&gt;&amp;&quot;c&#39;&#10;\xEF\xBF\xBDz\xEF\xBF\xBD"
            "&lt;/testcase&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(XmlEscape("tab\tcr\r"), "tab\tcr&#13;");
  EXPECT_EQ(XmlAttributeEscape("tab\tcr\r"), "tab&#9;cr&#13;");
  // Valid UTF-8 passes; U+FFFE is not an XML character.
  EXPECT_EQ(XmlEscape("caf\xC3\xA9 \xEF\xBF\xBE"), "caf\xC3\xA9 \xEF\xBF\xBD");
}

TEST(Escape, MarkdownNeitherBreaksTablesNorInjectsHtml) {
  // Terminal controls made visible first (\n, \x01, \xff as text), then
  // each backslash doubled and markup as entities.
  EXPECT_EQ(MarkdownEscape(samples::kNastyName),
            "a&lt;b&gt;&amp;\"c'\\\\n\\\\x01z\\\\xff&lt;/testcase&gt;"
            "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(MarkdownEscape("a|b*c_d`e[f](g)#h~i!j"),
            "a\\|b\\*c\\_d\\`e\\[f\\](g)\\#h\\~i\\!j");
}

TEST(Format, DurationsAndPercents) {
  EXPECT_EQ(Duration(950), "950 ns");
  EXPECT_EQ(Duration(12'500), "12.5 us");
  EXPECT_EQ(Duration(9'750'000), "9.75 ms");
  EXPECT_EQ(Duration(1'234'000'000), "1.234 s");
  EXPECT_EQ(SignedDuration(0), "0 ns");
  EXPECT_EQ(SignedDuration(1'200'000), "+1.20 ms");
  EXPECT_EQ(SignedDuration(-12'500), "-12.5 us");
  EXPECT_EQ(SignedPercent(12.3077), "+12.3%");
  EXPECT_EQ(SignedPercent(-0.01), "0.0%");
  EXPECT_EQ(Percent(0.75), "75%");
}

TEST(Headline, CountsCrossedRules) {
  EXPECT_EQ(Headline(samples::RegressedReport()),
            "FAILED: 2 of 4 rules crossed");
  EXPECT_EQ(Headline(samples::CleanReport()), "PASSED: none of 1 rule crossed");
  DiffReport none = samples::CleanReport();
  none.rules.clear();
  EXPECT_EQ(Headline(none), "PASSED: no rules");
}

TEST(Tables, RuleStates) {
  DiffReport r = samples::StructureOnlyReport();
  EXPECT_EQ(RuleState(r.rules[0]), "crossed");
  EXPECT_EQ(RuleState(r.rules[1]), "skipped");
  EXPECT_EQ(RuleValue(r.rules[0]), "1");
  EXPECT_EQ(RuleValue(r.rules[1]), "-");
  DiffReport g = samples::RegressedReport();
  EXPECT_EQ(RuleState(g.rules[1]), "passed");  // within the noise
  EXPECT_EQ(RuleValue(g.rules[0]), "+12.3%");
}

TEST(Tables, TopTimingChangesByAbsoluteDelta) {
  // Significant changes of the sample: op Conv +1.10 ms, stream gpu0/s7
  // +1.10 ms (a tie: op types come first), node conv1 +0.90 ms, op
  // BatchNormalization -0.40 ms, node relu2 +0.15 ms; Relu and the memcpy
  // are "same" and left out.
  Section s = TopTimingTable(samples::RegressedReport(), 10);
  std::vector<std::string> keys;
  for (const auto& row : s.table.rows) keys.push_back(row[0]);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "op Conv", "stream gpu0/s7", "node conv1 (framework)",
                      "op BatchNormalization", "node relu2 (framework)"}));
  Section cut = TopTimingTable(samples::RegressedReport(), 2);
  EXPECT_EQ(cut.table.rows.size(), 2u);
  EXPECT_EQ(cut.left_out, 3u);
}

TEST(Text, VerdictAndNumbers) {
  std::string text = RenderDiffText(samples::RegressedReport());
  std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "model-inspector diff: FAILED: 2 of 4 rules crossed");
  EXPECT_EQ(lines[1], "base: base @ 1111111");
  EXPECT_EQ(lines[2], "new:  new @ 2222222");
  EXPECT_EQ(lines[3],
            "total 9.75 ms -> 10.95 ms (+1.20 ms, +12.3%; noise 200.0 us): "
            "slower");
  EXPECT_NE(text.find("parallel_to_serial"), std::string::npos);
  EXPECT_NE(text.find("+1.45 ms"), std::string::npos);
}

TEST(Text, NamesCannotControlTheTerminal) {
  std::string text = RenderDiffText(samples::NastyReport());
  EXPECT_EQ(text.find('\x01'), std::string::npos);
  EXPECT_EQ(text.find('\xff'), std::string::npos);
  // The newline inside the name is shown as \n: no line starts with the
  // name's second half.
  for (const std::string& line : Lines(text)) {
    EXPECT_NE(line.rfind("\\x01z", 0), 0u) << line;
  }
  EXPECT_NE(text.find("a<b>&\"c'\\n\\x01z\\xff"), std::string::npos);
}

TEST(Markdown, FailedComment) {
  std::string md = RenderDiffMarkdown(samples::RegressedReport());
  std::vector<std::string> lines = Lines(md);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "## :x: model-inspector diff of tiny\\_cnn: FAILED: 2 of 4 rules "
            "crossed");
  EXPECT_EQ(lines[2],
            "**base @ 1111111** → **new @ 2222222** · total 9.75 ms -&gt; "
            "10.95 ms (+1.20 ms, +12.3%; noise 200.0 us): slower");
  // The crossed rules table: header, separator, two rows.
  size_t at = md.find("### Rules crossed\n\n");
  ASSERT_NE(at, std::string::npos);
  std::vector<std::string> table =
      Lines(md.substr(at + 19, md.find("\n\n", at + 19) - at - 19));
  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(table[2],
            "| total&gt;+5% | crossed | +12.3% | total | total +12.3% (+1.20 "
            "ms: 9.75 -&gt; 10.95 ms, noise 0.20 ms) &gt; +5% |");
  EXPECT_NE(table[3].find("| overlap-lost&gt;0 | crossed | 1 |"),
            std::string::npos);
  EXPECT_NE(md.find("### Top timing changes"), std::string::npos);
  EXPECT_NE(md.find("#### Fusion changes"), std::string::npos);
  EXPECT_NE(md.find("### Concurrency"), std::string::npos);
}

TEST(Markdown, PassedCommentHasNoCrossedSection) {
  std::string md = RenderDiffMarkdown(samples::CleanReport());
  EXPECT_EQ(Lines(md)[0],
            "## :white_check_mark: model-inspector diff of tiny\\_cnn: "
            "PASSED: none of 1 rule crossed");
  EXPECT_EQ(md.find("Rules crossed"), std::string::npos);
  EXPECT_NE(md.find("No op type, stream or node changed beyond the noise."),
            std::string::npos);
}

TEST(Markdown, NastyNamesStayInTheirCell) {
  std::string md = RenderDiffMarkdown(samples::NastyReport());
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_EQ(md.find('\x01'), std::string::npos);
  // Every table row has as many unescaped cell separators as its header.
  for (const std::string& line : Lines(md)) {
    if (line.empty() || line[0] != '|') continue;
    size_t bars = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\') {
        ++i;
        continue;
      }
      bars += line[i] == '|';
    }
    EXPECT_GE(bars, 2u) << line;
  }
  EXPECT_NE(md.find("op:a&lt;b&gt;&amp;\"c'\\\\n"), std::string::npos);
}

TEST(JUnit, CountsAndElements) {
  std::string xml = RenderDiffJUnit(samples::RegressedReport());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  EXPECT_EQ(Count(xml, "tests=\"4\" failures=\"2\" errors=\"0\" skipped=\"0\""),
            2u);  // <testsuites> and <testsuite>
  EXPECT_EQ(Count(xml, "<testcase "), 4u);
  EXPECT_EQ(Count(xml, "<failure "), 2u);
  EXPECT_NE(xml.find("<failure message=\"total +12.3% (+1.20 ms: 9.75 -&gt; "
                     "10.95 ms, noise 0.20 ms) &gt; +5%\" type=\"threshold "
                     "crossed\">"),
            std::string::npos);
  std::string skipped = RenderDiffJUnit(samples::StructureOnlyReport());
  EXPECT_EQ(Count(skipped,
                  "tests=\"2\" failures=\"1\" errors=\"0\" "
                  "skipped=\"1\""),
            2u);
  EXPECT_NE(skipped.find("<skipped message=\"not measured: no trace\"/>"),
            std::string::npos);
}

TEST(JUnit, NastyNamesAreEscaped) {
  std::string xml = RenderDiffJUnit(samples::NastyReport());
  EXPECT_EQ(xml.find("<script>"), std::string::npos);
  EXPECT_EQ(xml.find("</testcase><"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\xff'), std::string::npos);
  EXPECT_NE(xml.find("<testcase name=\"op:a&lt;b&gt;&amp;&quot;c&#39;&#10;"
                     "\xEF\xBF\xBDz\xEF\xBF\xBD&lt;/testcase&gt;"),
            std::string::npos);
}

// Hand count from report_samples.cc: focus nodes conv1 (changed), relu2
// (added), classifier (renamed) in the new graph, bn1 (removed) in the
// base; their neighbours relu1, conv2, add, pool (x and the weights have
// no producer). Edges: the new flow among them conv1->relu1,
// relu1->conv2, conv2->relu2, relu2->add, relu1->add, add->pool,
// pool->classifier, and the base flow of bn1: conv1->bn1, bn1->relu1.
TEST(Html, ChangedSubgraph) {
  RunDigest base = samples::RegressedBase();
  RunDigest next = samples::RegressedNew();
  DiffDrawing drawing;
  drawing.base = &base;
  drawing.next = &next;
  std::string html = RenderDiffHtml(samples::RegressedReport(), drawing);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(html, "<g class=\"node "), 8u);
  EXPECT_EQ(Count(html, "<g class=\"node added\"><title>relu2 (Relu)"), 1u);
  EXPECT_EQ(Count(html, "<g class=\"node removed\"><title>bn1 "), 1u);
  EXPECT_EQ(Count(html,
                  "<g class=\"node changed\"><title>conv1 (Conv): "
                  "changed\nattribute pads"),
            1u);
  EXPECT_EQ(Count(html,
                  "<g class=\"node renamed\"><title>classifier (Gemm): "
                  "renamed, was fc"),
            1u);
  EXPECT_EQ(Count(html, "<g class=\"node context\">"), 4u);
  EXPECT_EQ(Count(html, "<polyline class=\"edge\""), 9u);
  // The compiled level is not in the sample digests: said, not drawn.
  EXPECT_NE(html.find("were not given to the report"), std::string::npos);
  // The op-type chart: one bar per op type and side.
  EXPECT_EQ(Count(html, "<rect class=\"bar\""), 6u);
  EXPECT_NE(html.find("<div class=\"verdict failed\" id=\"verdict\">FAILED: "
                      "2 of 4 rules crossed</div>"),
            std::string::npos);
}

TEST(Html, SelfContained) {
  RunDigest base = samples::RegressedBase();
  RunDigest next = samples::RegressedNew();
  for (const std::string& html :
       {RenderDiffHtml(samples::RegressedReport(), {&base, &next}),
        RenderRunHtml(next, {})}) {
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_EQ(html.find("href="), std::string::npos);
    EXPECT_EQ(html.find("url(http"), std::string::npos);
    // The only URL is the SVG namespace name (not fetched); the other
    // "http" is the policy's http-equiv.
    EXPECT_EQ(Count(html, "http"),
              Count(html, "xmlns=\"http://www.w3.org/2000/svg\"") +
                  Count(html, "<meta http-equiv="));
    EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  }
}

TEST(Html, NastyNamesAreText) {
  RunDigest base = samples::RegressedBase();
  RunDigest next = samples::RegressedNew();
  std::string html = RenderDiffHtml(samples::NastyReport(), {&base, &next});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find(samples::kNastyName), std::string::npos);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
  EXPECT_NE(html.find("a&lt;b&gt;&amp;&quot;c&#39;"), std::string::npos);
}

TEST(Html, RunReport) {
  RunDigest run = samples::RegressedNew();
  std::string html = RenderRunHtml(run, {});
  EXPECT_NE(html.find("No trace was given"), std::string::npos);
  // All 7 nodes drawn with the 7 edges of the new graph (see above).
  EXPECT_EQ(Count(html, "<g class=\"node op\">"), 7u);
  EXPECT_EQ(Count(html, "<polyline class=\"edge\""), 7u);

  // Timing: runs of 10, 12, 11, 30, 13 ms: median 12 ms; p25 = 11, p75 =
  // 13 (closest ranks 1 and 3 of 0..4): spread 2 ms. Conv is 6 ms in
  // every run: 50% of the total.
  run.run_count = 5;
  run.runs_from = "model_run";
  run.total.key = "total";
  run.total.run_ns = {10'000'000, 12'000'000, 11'000'000, 30'000'000,
                      13'000'000};
  DigestSeries conv;
  conv.key = "Conv";
  conv.run_ns = std::vector<int64_t>(5, 6'000'000);
  conv.overlapped_ns = std::vector<int64_t>(5, 0);
  conv.count = std::vector<int64_t>(5, 2);
  run.op_types = {conv};
  html = RenderRunHtml(run, {});
  EXPECT_NE(html.find("<tr><td>time per run (median)</td><td>12.00 ms</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>spread (p75 - p25)</td><td>2.00 ms</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>Conv</td><td class=\"num\">6.00 ms</td><td "
                      "class=\"num\">0 ns</td><td class=\"num\">50%</td><td "
                      "class=\"num\">2</td>"),
            std::string::npos);
  EXPECT_EQ(Count(html, "<rect class=\"bar\""), 1u);

  RunReportOptions small;
  small.max_drawn_nodes = 3;
  html = RenderRunHtml(run, small);
  EXPECT_EQ(Count(html, "<g class=\"node"), 0u);
  EXPECT_NE(html.find("has 7 nodes, more than the 3 drawn here"),
            std::string::npos);
}

}  // namespace
}  // namespace mi::report
