// CompareReport::Write: the compare report as every front end shows it
// (`model-inspector compare --format json`, model_inspector.compare();
// docs/reference/schemas/compare.schema.json).

#include <optional>
#include <string>
#include <vector>

#include "model_inspector/compare.h"

namespace mi {
namespace {

void WriteOptionalDouble(ResultWriter& w, std::string_view key,
                         const std::optional<double>& v) {
  w.Key(key);
  if (v) {
    w.Double(*v);
  } else {
    w.Null();
  }
}

void WriteShape(ResultWriter& w, std::string_view key,
                const std::vector<int64_t>& shape) {
  w.Key(key).BeginArray();
  for (int64_t d : shape) w.Int(d);
  w.EndArray();
}

void WriteMetrics(ResultWriter& w, const TensorMetrics& m) {
  w.BeginObject();
  w.FieldUInt("count", m.count);
  w.FieldUInt("compared", m.compared);
  WriteOptionalDouble(w, "cosine", m.cosine);
  w.FieldDouble("max_abs_err", m.max_abs_err);
  w.FieldDouble("mean_abs_err", m.mean_abs_err);
  w.FieldDouble("rmse", m.rmse);
  w.FieldDouble("max_rel_err", m.max_rel_err);
  w.FieldDouble("mean_rel_err", m.mean_rel_err);
  w.FieldDouble("one_thousandth_ratio", m.one_thousandth_ratio);
  w.FieldDouble("five_thousandths_ratio", m.five_thousandths_ratio);
  w.FieldDouble("ten_thousandth_ratio", m.ten_thousandth_ratio);
  w.FieldDouble("relative_euclidean", m.relative_euclidean);
  w.FieldUInt("nan_mismatch", m.nan_mismatch);
  w.FieldUInt("inf_mismatch", m.inf_mismatch);
  w.FieldUInt("nan_a", m.nan_a);
  w.FieldUInt("nan_b", m.nan_b);
  w.FieldUInt("inf_a", m.inf_a);
  w.FieldUInt("inf_b", m.inf_b);
  w.FieldUInt("fp16_overflow_a", m.fp16_overflow_a);
  w.FieldUInt("fp16_overflow_b", m.fp16_overflow_b);
  w.EndObject();
}

void WriteStats(ResultWriter& w, const StatsMetrics& m) {
  w.BeginObject();
  WriteOptionalDouble(w, "max_diff", m.max_diff);
  WriteOptionalDouble(w, "min_diff", m.min_diff);
  WriteOptionalDouble(w, "mean_diff", m.mean_diff);
  WriteOptionalDouble(w, "l2_diff", m.l2_diff);
  WriteOptionalDouble(w, "max_rel_err", m.max_rel_err);
  WriteOptionalDouble(w, "min_rel_err", m.min_rel_err);
  WriteOptionalDouble(w, "mean_rel_err", m.mean_rel_err);
  WriteOptionalDouble(w, "l2_rel_err", m.l2_rel_err);
  w.FieldBool("nonfinite_mismatch", m.nonfinite_mismatch);
  w.EndObject();
}

void WriteStrings(ResultWriter& w, std::string_view key,
                  const std::vector<std::string>& items) {
  w.Key(key).BeginArray();
  for (const std::string& s : items) w.String(s);
  w.EndArray();
}

}  // namespace

void CompareReport::Write(ResultWriter& w) const {
  w.BeginObject();
  w.Field("schema", "model-inspector/compare/1");
  w.Field("a", a);
  w.Field("b", b);
  w.Field("level_a", level_a);
  w.Field("level_b", level_b);
  w.Field("match", match);
  w.FieldBool("pass", pass);
  w.FieldInt("compared", compared);
  w.FieldInt("passed", passed);
  w.FieldInt("failed", failed);
  w.FieldInt("not_compared", not_compared);
  w.FieldInt("groups_matched", groups_matched);
  w.FieldInt("groups_unmatched", groups_unmatched);
  w.FieldInt("first_divergent", first_divergent);
  w.Field("first_divergent_node", first_divergent_node);
  w.Key("thresholds").BeginObject();
  w.FieldDouble("cosine_min", thresholds.cosine_min);
  w.FieldDouble("max_abs_err_max", thresholds.max_abs_err_max);
  w.FieldDouble("cosine_floor", thresholds.cosine_floor);
  w.FieldDouble("max_abs_err_ceiling", thresholds.max_abs_err_ceiling);
  w.FieldDouble("stats_rel_err_max", thresholds.stats_rel_err_max);
  w.FieldDouble("one_thousandth_min", thresholds.one_thousandth_min);
  w.FieldDouble("max_rel_err_max", thresholds.max_rel_err_max);
  w.FieldDouble("mean_rel_err_max", thresholds.mean_rel_err_max);
  w.FieldDouble("relative_euclidean_max", thresholds.relative_euclidean_max);
  w.FieldDouble("rmse_max", thresholds.rmse_max);
  w.FieldBool("fp16_overflow_fails", thresholds.fp16_overflow_fails);
  w.EndObject();
  w.Key("entries").BeginArray();
  for (const CompareEntry& e : entries) {
    w.BeginObject();
    w.Field("probe_a", e.probe_a);
    w.Field("probe_b", e.probe_b);
    w.Field("node_a", e.node_a);
    w.Field("node_b", e.node_b);
    w.Field("kind", e.kind);
    w.FieldOptional("step", e.step);
    w.FieldInt("order", e.order);
    w.Field("matched_by", e.matched_by);
    w.Field("layout", e.layout);
    w.Field("mode", e.mode);
    w.Field("verdict", e.verdict);
    w.Field("dtype_a", e.dtype_a);
    w.Field("dtype_b", e.dtype_b);
    WriteShape(w, "shape_a", e.shape_a);
    WriteShape(w, "shape_b", e.shape_b);
    WriteStrings(w, "reasons", e.reasons);
    w.Key("metrics");
    if (e.metrics) {
      WriteMetrics(w, *e.metrics);
    } else {
      w.Null();
    }
    w.Key("stats");
    if (e.stats) {
      WriteStats(w, *e.stats);
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("groups").BeginArray();
  for (const CompareGroup& g : groups) {
    w.BeginObject();
    w.Field("compiled_node", g.compiled_node);
    w.Field("op_type", g.op_type);
    WriteStrings(w, "fused_from", g.fused_from);
    w.Field("compared_with", g.compared_with);
    w.Field("status", g.status);
    w.Field("reason", g.reason);
    w.FieldInt("entry", g.entry);
    w.EndObject();
  }
  w.EndArray();
  WriteStrings(w, "only_in_a", only_in_a);
  WriteStrings(w, "only_in_b", only_in_b);
  w.EndObject();
}

}  // namespace mi
