// The training report on hand-filled diagnoses (training_samples.cc): the
// heat map's cells and colours (the bands written out below from
// training_report.h, the scores from the sample), the chain drawn on the
// graph with arrows in the propagation direction, the timeline's marks,
// escaping of names, binning of long runs, and the text output.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>
#include <string>
#include <string_view>

#include "report/training_report.h"
#include "report/training_samples.h"

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

// The fill of the heat map cell of a layer at a step, "" when none.
std::string CellFill(const std::string& html, int layer, int64_t step) {
  std::regex re("<rect class=\"cell\" data-layer=\"" + std::to_string(layer) +
                "\" data-step=\"" + std::to_string(step) +
                "\"[^>]*fill=\"(#[0-9a-f]{6})\"");
  std::smatch m;
  return std::regex_search(html, m, re) ? m[1].str() : "";
}

TEST(TrainingReport, ScoreBandsAreTheDocumentedOnes) {
  EXPECT_EQ(ScoreColour(100), "#2da44e");
  EXPECT_EQ(ScoreColour(90), "#2da44e");
  EXPECT_EQ(ScoreColour(89.9), "#9be9a8");
  EXPECT_EQ(ScoreColour(70), "#9be9a8");
  EXPECT_EQ(ScoreColour(69.9), "#f2cc60");
  EXPECT_EQ(ScoreColour(50), "#f2cc60");
  EXPECT_EQ(ScoreColour(49.9), "#fb8f44");
  EXPECT_EQ(ScoreColour(25), "#fb8f44");
  EXPECT_EQ(ScoreColour(24.9), "#cf222e");
  EXPECT_EQ(ScoreColour(0), "#cf222e");
  EXPECT_EQ(ScoreColour(std::numeric_limits<double>::quiet_NaN()), "#eaeef2");
  EXPECT_EQ(ScoreBand(12), "critical");
  EXPECT_EQ(ScoreBand(95), "healthy");
}

TEST(TrainingReport, HeatMapHasOneCellPerLayerAndStepColouredByScore) {
  std::string html = RenderTrainingHtml(samples::TrainingSample(),
                                        samples::TrainingSampleGraph());
  // 5 layers x 10 steps.
  EXPECT_EQ(Count(html, "<rect class=\"cell\""), 50u);
  // embed is 5 from step 6 on (critical, red), 95 before (healthy).
  EXPECT_EQ(CellFill(html, 0, 6), "#cf222e");
  EXPECT_EQ(CellFill(html, 0, 9), "#cf222e");
  EXPECT_EQ(CellFill(html, 0, 5), "#2da44e");
  EXPECT_EQ(CellFill(html, 1, 6), "#fb8f44");  // 40: poor
  EXPECT_EQ(CellFill(html, 2, 6), "#f2cc60");  // 65: degraded
  EXPECT_EQ(CellFill(html, 4, 0), "#eaeef2");  // not measured
  // The anomaly column is outlined once; steps 3..9 marked captured.
  EXPECT_EQ(Count(html, "class=\"anomaly-column\""), 1u);
  EXPECT_EQ(Count(html, "class=\"captured-mark\""), 7u);
}

TEST(TrainingReport, LongRunsAreBinnedToTheWorstScore) {
  TrainingDiagnosisResult r = samples::HealthyTrainingSample();
  r.steps.clear();
  r.heatmap.assign(2, std::vector<double>(500, 98));
  for (int s = 0; s < 500; ++s) {
    TrainingStepHealth h;
    h.step = 1000 + s;
    h.loss = 1;
    h.grad_norm = 1;
    r.steps.push_back(h);
  }
  r.last_step = 1499;
  r.heatmap[1][251] = 3;  // step 1251
  TrainingReportOptions options;
  options.max_step_columns = 100;  // 5 steps a column
  std::string html = RenderTrainingHtml(r, {}, options);
  EXPECT_EQ(Count(html, "<rect class=\"cell\""), 200u);
  // Column 50 covers steps 1250..1254: its worst is the 3.
  EXPECT_EQ(CellFill(html, 1, 1250), "#cf222e");
  EXPECT_EQ(CellFill(html, 1, 1255), "#2da44e");
  EXPECT_EQ(CellFill(html, 0, 1250), "#2da44e");
  EXPECT_NE(html.find("500 steps binned into 100 columns"), std::string::npos);
}

TEST(TrainingReport, ChainIsDrawnOnTheGraphInThePropagationDirection) {
  std::string html = RenderTrainingHtml(samples::TrainingSample(),
                                        samples::TrainingSampleGraph());
  EXPECT_EQ(Count(html, "<g class=\"node producer\">"), 1u);
  EXPECT_EQ(Count(html, "<g class=\"node propagator\">"), 2u);
  EXPECT_EQ(Count(html, "<g class=\"node layer\">"), 2u);
  // 4 data edges; embed->norm and norm->fc1 carry the chain, forward:
  // arrow heads at the end.
  EXPECT_EQ(Count(html, "<polyline class=\"edge"), 4u);
  EXPECT_EQ(Count(html, "<polyline class=\"edge chain\""), 2u);
  std::regex chain_edge("<polyline class=\"edge chain\"[^>]*marker-end=");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(html.begin(), html.end(), chain_edge),
                    std::sregex_iterator()),
      2);

  // Gradients travelling backward head -> encoder.fc2: drawn on the data
  // edge fc2 -> head with the arrow head at its start (at fc2).
  TrainingDiagnosisResult r = samples::TrainingSample();
  r.chain.resize(2);
  r.chain[0].layer = 4;
  r.chain[0].layer_name = "head";
  r.chain[1].layer = 3;
  r.chain[1].layer_name = "encoder.fc2";
  r.chain[0].direction = r.chain[1].direction = "backward";
  html = RenderTrainingHtml(r, samples::TrainingSampleGraph());
  std::regex backward("<polyline class=\"edge chain\"[^>]*marker-start=");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(html.begin(), html.end(), backward),
                    std::sregex_iterator()),
      1);
  EXPECT_NE(html.find("gradients, backward"), std::string::npos);

  // Chain layers with no data edge between them: a dashed extra arrow.
  r = samples::TrainingSample();
  r.chain.resize(2);
  r.chain[1].layer = 3;
  r.chain[1].layer_name = "encoder.fc2";
  html = RenderTrainingHtml(r, samples::TrainingSampleGraph());
  EXPECT_EQ(Count(html, "<polyline class=\"edge chain indirect\""), 1u);
  EXPECT_EQ(Count(html, "<polyline class=\"edge"), 5u);
}

TEST(TrainingReport, LargeGraphsAreDrawnAroundTheChain) {
  TrainingDiagnosisResult r = samples::TrainingSample();
  TrainingGraph g = samples::TrainingSampleGraph();
  TrainingReportOptions options;
  options.max_drawn_layers = 3;
  // embed, norm, fc1 (chain and problems) and fc2 (fc1's neighbour); head
  // is two edges away.
  std::string html = RenderTrainingHtml(r, g, options);
  EXPECT_EQ(Count(html, "<g class=\"node "), 4u);
  EXPECT_NE(html.find("more than the 3 drawn whole"), std::string::npos);
}

TEST(TrainingReport, TimelineMarksTheAnomalyAndTheCapturedWindow) {
  std::string html = RenderTrainingHtml(samples::TrainingSample(),
                                        samples::TrainingSampleGraph());
  EXPECT_EQ(Count(html, "<g class=\"trigger anomaly\" data-step=\"6\">"), 1u);
  EXPECT_EQ(Count(html, "<g class=\"trigger"), 1u);
  // One captured run, steps 3 to 9.
  EXPECT_EQ(Count(html, "<rect class=\"captured\""), 1u);
  EXPECT_NE(html.find("captured steps 3 to 9"), std::string::npos);
  EXPECT_EQ(Count(html, "<polyline class=\"series loss\""), 1u);
  // The gradient norm spans 0.7 .. 350 (> 2 decades): log scale.
  EXPECT_NE(html.find("gradient norm (log scale)"), std::string::npos);
  EXPECT_NE(html.find("Anomaly at step 6"), std::string::npos);
}

TEST(TrainingReport, NamesAreEscapedAndThePageHasNoScript) {
  std::string html = RenderTrainingHtml(samples::TrainingSample(),
                                        samples::TrainingSampleGraph());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("TinyEncoder&lt;script&gt;alert(1)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  // The snippet is kept with its line break and its ">" escaped.
  EXPECT_NE(html.find("x = (x - mean) / std\nif x.abs().max() &gt; 10"),
            std::string::npos);
  // Causes in the given order, with their confidence.
  size_t a = html.find("data-cause=\"input_out_of_range\"");
  size_t b = html.find("data-cause=\"bad_initialization\"");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_NE(html.find("width:80%"), std::string::npos);
  // The score badge: 12, critical, red.
  EXPECT_NE(html.find("style=\"background:#cf222e\"></div><div><div "
                      "class=\"value\" style=\"color:#cf222e\">12<"),
            std::string::npos);
}

TEST(TrainingReport, HealthyRunSaysNoTriggerFired) {
  std::string html = RenderTrainingHtml(samples::HealthyTrainingSample(), {});
  EXPECT_NE(html.find("class=\"anomaly none\""), std::string::npos);
  EXPECT_NE(html.find("No trigger fired"), std::string::npos);
  EXPECT_EQ(Count(html, "<rect class=\"cell\""), 8u);
  EXPECT_EQ(Count(html, "<g class=\"trigger"), 0u);
  EXPECT_EQ(Count(html, "<svg"), 2u);  // timeline and heat map, no graph
  std::string text = RenderTrainingText(samples::HealthyTrainingSample());
  EXPECT_NE(text.find("Health score: 98/100 (healthy) at the last step"),
            std::string::npos);
  EXPECT_NE(text.find("Anomaly: none, no trigger fired."), std::string::npos);
}

TEST(TrainingReport, TextListsScoreAnomalyLayersCausesAndChain) {
  TrainingDiagnosisResult r = samples::TrainingSample();
  r.layers[1].name = "encoder.norm\x1b[31m";  // a terminal control
  std::string text = RenderTrainingText(r);
  EXPECT_NE(text.find("Health score: 12/100 (critical) at the anomaly step 6"),
            std::string::npos);
  EXPECT_NE(text.find("Anomaly: step 6\n  trigger loss_spike at step 6: "
                      "value 8.7, threshold 3.6"),
            std::string::npos);
  EXPECT_NE(text.find("Captured steps: 3 to 9 (7)"), std::string::npos);
  EXPECT_NE(text.find("1. Input out of range [input_out_of_range] in embed at "
                      "step 6 (confidence 80%)"),
            std::string::npos);
  EXPECT_NE(text.find("2. Bad initialisation [bad_initialization] in "
                      "encoder.fc1 at step 0 (confidence 15%)"),
            std::string::npos);
  EXPECT_NE(text.find("   snippet:\n     x = (x - mean) / std\n     if "),
            std::string::npos);
  EXPECT_NE(text.find("(act_rms = 310, healthy about 1)"), std::string::npos);
  EXPECT_NE(text.find("Propagation chain (forward, with the activations)\n"
                      "  1. embed [producer] at step 6"),
            std::string::npos);
  // The problem-layer table names the layer with its control made visible.
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("encoder.norm\\x1b[31m"), std::string::npos);
}

}  // namespace
}  // namespace mi::report
