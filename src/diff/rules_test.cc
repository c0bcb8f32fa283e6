// `--fail-on`: the grammar, its errors (rule, column, what was expected),
// the default set and the outcome of each rule on a report.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model_inspector/diff.h"

namespace mi {
namespace {

TEST(ParseFailOn, TheIssuesExample) {
  StatusOr<std::vector<DiffRule>> rules = ParseFailOn(
      "total>+5%,op:Conv>+10%,nodes!=0,fusions-lost>0,overlap-lost>0");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  ASSERT_EQ(rules->size(), 5u);
  const DiffRule& total = (*rules)[0];
  EXPECT_EQ(total.text, "total>+5%");
  EXPECT_EQ(total.metric, "total");
  EXPECT_EQ(total.subject, "");
  EXPECT_EQ(total.comparison, ">");
  EXPECT_EQ(total.threshold, 5);
  EXPECT_EQ(total.unit, "percent");
  EXPECT_EQ((*rules)[1].metric, "op");
  EXPECT_EQ((*rules)[1].subject, "Conv");
  EXPECT_EQ((*rules)[1].threshold, 10);
  EXPECT_EQ((*rules)[2].metric, "nodes");
  EXPECT_EQ((*rules)[2].comparison, "!=");
  EXPECT_EQ((*rules)[2].unit, "count");
  EXPECT_EQ((*rules)[3].metric, "fusions-lost");
  EXPECT_EQ((*rules)[4].metric, "overlap-lost");
  EXPECT_EQ((*rules)[4].threshold, 0);
}

TEST(ParseFailOn, SubjectsUnitsAndSpaces) {
  StatusOr<std::vector<DiffRule>> rules = ParseFailOn(
      " stream:device 0 \u00b7 stream 7 >= +2ms , node:*>+20%,"
      "op:aten::addmm<-1.5us, task:\"k<4>, \"\"x\"\"\">500ns,nodes>=+3%,"
      "total>2s");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  ASSERT_EQ(rules->size(), 6u);
  EXPECT_EQ((*rules)[0].subject, "device 0 \u00b7 stream 7");
  EXPECT_EQ((*rules)[0].comparison, ">=");
  EXPECT_EQ((*rules)[0].unit, "ns");
  EXPECT_EQ((*rules)[0].threshold, 2e6);
  EXPECT_EQ((*rules)[0].text, "stream:device 0 \u00b7 stream 7 >= +2ms");
  EXPECT_EQ((*rules)[1].subject, "*");
  EXPECT_EQ((*rules)[2].subject, "aten::addmm");
  EXPECT_EQ((*rules)[2].comparison, "<");
  EXPECT_EQ((*rules)[2].threshold, -1500);
  // Quoted: a comma and comparison characters inside, "" is a quote.
  EXPECT_EQ((*rules)[3].subject, "k<4>, \"x\"");
  EXPECT_EQ((*rules)[3].threshold, 500);
  EXPECT_EQ((*rules)[4].unit, "percent");
  EXPECT_EQ((*rules)[5].threshold, 2e9);
  EXPECT_TRUE(ParseFailOn("").ok());
  EXPECT_TRUE(ParseFailOn("  ")->empty());
}

std::string ErrorOf(std::string_view spec) {
  StatusOr<std::vector<DiffRule>> rules = ParseFailOn(spec);
  EXPECT_FALSE(rules.ok()) << spec;
  return rules.ok() ? "" : std::string(rules.status().message());
}

TEST(ParseFailOn, ErrorsNameRuleColumnAndExpectation) {
  // Columns count from 1 in the whole spec.
  EXPECT_EQ(ErrorOf("total>+5%,op:Conv>+10x"),
            "--fail-on rule 2 'op:Conv>+10x', column 22: expected a unit: "
            "%, ns, us, ms or s");
  EXPECT_EQ(ErrorOf("total>5"),
            "--fail-on rule 1 'total>5', column 8: expected a unit after the "
            "number: % (relative change) or ns, us, ms, s (time change)");
  EXPECT_EQ(ErrorOf("totl>5%"),
            "--fail-on rule 1 'totl>5%', column 1: expected a metric (total, "
            "op:, stream:, node:, task:, nodes, added, removed, changed, "
            "renamed, fusions-lost, fusions-gained, fusions-changed, "
            "overlap-lost), not 'totl'");
  EXPECT_EQ(ErrorOf("op>5%"),
            "--fail-on rule 1 'op>5%', column 3: expected ':' and the op type "
            "(op:NAME, or op:* for every one)");
  EXPECT_EQ(ErrorOf("fusions-lost=>0"),
            "--fail-on rule 1 'fusions-lost=>0', column 13: expected a "
            "comparison (>, >=, <, <=, ==, !=)");
  EXPECT_EQ(ErrorOf("nodes>x"),
            "--fail-on rule 1 'nodes>x', column 7: expected a number (5, +5, "
            "-2.5)");
  EXPECT_EQ(ErrorOf("overlap-lost>0ms"),
            "--fail-on rule 1 'overlap-lost>0ms', column 15: expected the "
            "end of the rule: overlap-lost is a count, not a time");
  EXPECT_EQ(ErrorOf("added>1%"),
            "--fail-on rule 1 'added>1%', column 8: expected the end of the "
            "rule: added is a count, without a unit");
  EXPECT_EQ(ErrorOf("total:x>1%"),
            "--fail-on rule 1 'total:x>1%', column 6: expected a comparison: "
            "total takes no subject");
  EXPECT_EQ(ErrorOf("total>1%,"),
            "--fail-on rule 2 '', column 10: expected a metric (total, op:, "
            "stream:, node:, task:, nodes, added, removed, changed, renamed, "
            "fusions-lost, fusions-gained, fusions-changed, overlap-lost)");
  EXPECT_EQ(ErrorOf("op:\"Conv>1%"),
            "--fail-on rule 1 'op:\"Conv>1%', column 4: expected a closing "
            "'\"' for the quoted subject");
}

TEST(DefaultFailOn, Parses) {
  StatusOr<std::vector<DiffRule>> rules = ParseFailOn(DefaultFailOn());
  ASSERT_TRUE(rules.ok());
  EXPECT_EQ(rules->size(), 3u);
}

TimingDelta Delta(std::string key, int64_t base, int64_t next, int64_t noise,
                  std::string verdict) {
  TimingDelta d;
  d.key = std::move(key);
  d.base.median_ns = base;
  d.next.median_ns = next;
  d.delta_ns = next - base;
  d.delta_pct = base ? 100.0 * (next - base) / base : 0;
  d.noise_ns = noise;
  d.verdict = std::move(verdict);
  return d;
}

DiffReport Report() {
  DiffReport r;
  r.has_timing = true;
  // 9.75 ms -> 10.95 ms: +1.20 ms, +12.3 %.
  r.total = Delta("total", 9'750'000, 10'950'000, 80'000, "slower");
  r.op_types.push_back(Delta("Conv", 4'000'000, 4'300'000, 50'000, "slower"));
  // +20 % but within its noise.
  r.op_types.push_back(Delta("Relu", 100'000, 120'000, 30'000, "same"));
  r.op_types.push_back(Delta("Gemm", 0, 50'000, 1'000, "added"));
  LevelDiff l;
  l.level = "compiled";
  l.base_nodes = 50;
  l.new_nodes = 52;
  l.added = 3;
  l.removed = 1;
  l.fusions_lost = 1;
  r.structure.push_back(l);
  LevelDiff within;  // one run's levels: not counted
  within.level = "framework->compiled";
  within.fusions_lost = 7;
  r.structure.push_back(within);
  return r;
}

RuleOutcome Apply(std::string_view spec, DiffReport& r) {
  StatusOr<std::vector<DiffRule>> rules = ParseFailOn(spec);
  EXPECT_TRUE(rules.ok()) << rules.status().ToString();
  ApplyDiffRules(*rules, r);
  EXPECT_EQ(r.rules.size(), 1u);
  return r.rules.empty() ? RuleOutcome() : r.rules[0];
}

TEST(ApplyDiffRules, OutcomesWithTheirNumbers) {
  DiffReport r = Report();
  RuleOutcome total = Apply("total>+5%", r);
  EXPECT_TRUE(total.crossed);
  EXPECT_TRUE(r.failed);
  EXPECT_NEAR(total.value, 12.3077, 1e-3);
  EXPECT_EQ(total.message,
            "total +12.3% (+1.20 ms: 9.75 -> 10.95 ms, noise 80.00 us) > +5%");

  RuleOutcome big = Apply("total>+20%", r);
  EXPECT_FALSE(big.crossed);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(big.message,
            "total +12.3% (+1.20 ms: 9.75 -> 10.95 ms, noise 80.00 us), not "
            "> +20%");

  RuleOutcome ns = Apply("total>=1ms", r);
  EXPECT_TRUE(ns.crossed);
  EXPECT_EQ(ns.value, 1'200'000);
  EXPECT_EQ(ns.message,
            "total +1.20 ms (9.75 -> 10.95 ms, noise 80.00 us) >= +1.00 ms");

  // Within the noise a time rule is never crossed.
  RuleOutcome relu = Apply("op:Relu>+10%", r);
  EXPECT_FALSE(relu.crossed);
  EXPECT_EQ(relu.note, "noise");
  EXPECT_EQ(relu.message,
            "op:Relu +20.0% (+20.00 us: 100.00 -> 120.00 us, noise 30.00 us) "
            "> +10%, but within the noise: not crossed");

  // '*': the worst crossing subject; Gemm (new only) has no relative
  // change, Relu is noise, Conv (+7.5 %) crosses.
  RuleOutcome any = Apply("op:*>+5%", r);
  EXPECT_TRUE(any.crossed);
  EXPECT_EQ(any.measured_on, "Conv");
  // In ns, the added Gemm counts: +50 us > +40 us, Conv's +300 us too.
  RuleOutcome any_ns = Apply("op:*>+40us", r);
  EXPECT_TRUE(any_ns.crossed);
  EXPECT_EQ(any_ns.measured_on, "Conv");

  RuleOutcome absent = Apply("op:Softmax>+1%", r);
  EXPECT_FALSE(absent.crossed);
  EXPECT_EQ(absent.note, "absent");

  // Counts: over the levels of both runs; a run's framework->compiled diff
  // is no change between runs.
  RuleOutcome nodes = Apply("nodes!=0", r);
  EXPECT_TRUE(nodes.crossed);
  EXPECT_EQ(nodes.value, 2);
  EXPECT_EQ(nodes.message, "nodes +2 (50 -> 52) != 0");
  RuleOutcome pct = Apply("nodes>+5%", r);
  EXPECT_FALSE(pct.crossed);
  EXPECT_EQ(pct.message, "nodes +4.0% (+2 nodes: 50 -> 52), not > +5%");
  RuleOutcome lost = Apply("fusions-lost>0", r);
  EXPECT_TRUE(lost.crossed);
  EXPECT_EQ(lost.value, 1);
  EXPECT_EQ(lost.message, "fusions-lost 1 > 0");
  RuleOutcome overlap = Apply("overlap-lost>0", r);
  EXPECT_FALSE(overlap.crossed);
  EXPECT_EQ(overlap.message, "overlap-lost 0, not > 0");
}

TEST(ApplyDiffRules, StreamNodeAndTaskSubjects) {
  DiffReport r = Report();
  r.streams.push_back(Delta("device 0 \u00b7 stream 7", 5'000'000, 7'500'000,
                            10'000, "slower"));
  // A node renamed between the runs: either name picks it.
  r.nodes.push_back(Delta("conv_1 -> backbone/conv_1", 1'000'000, 1'300'000,
                          20'000, "slower"));
  r.unlinked_tasks.push_back(
      Delta("Memcpy DtoH", 40'000, 30'000, 1'000, "faster"));
  RuleOutcome stream = Apply("stream:device 0 \u00b7 stream 7>+2ms", r);
  EXPECT_TRUE(stream.crossed);
  EXPECT_EQ(stream.measured_on, "device 0 \u00b7 stream 7");
  EXPECT_EQ(stream.message,
            "stream:device 0 \u00b7 stream 7 +2.50 ms (5.00 -> 7.50 ms, noise "
            "10.00 us) > +2.00 ms");
  EXPECT_TRUE(Apply("node:conv_1>+20%", r).crossed);
  EXPECT_TRUE(Apply("node:backbone/conv_1>+20%", r).crossed);
  EXPECT_EQ(Apply("node:conv>+20%", r).note, "absent");
  RuleOutcome task = Apply("task:\"Memcpy DtoH\"<-20%", r);
  EXPECT_TRUE(task.crossed);
  EXPECT_EQ(task.value, -25);
}

TEST(ApplyDiffRules, NoTimingIsNotCrossed) {
  DiffReport r;
  RuleOutcome o = Apply("total>+5%", r);
  EXPECT_FALSE(o.crossed);
  EXPECT_EQ(o.note, "no timing");
  EXPECT_FALSE(r.failed);
}

}  // namespace
}  // namespace mi
