// A training snapshot's views through the Session (include/model_inspector/
// session.h "Training snapshots"; docs/reference/training-snapshot.md). The
// per-step metrics come from the record the importer kept; the tensor-level
// tables (histograms, tensors, samples, projections) are read from the
// snapshot file at each call. Attention tensors are .npy files in BLOBs,
// read with ParseNpy (src/probes/npy.cc).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_writer.h"
#include "importers/common/sqlite_db.h"
#include "importers/training_snapshot/training_snapshot_importer.h"
#include "model_inspector/compare.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {
namespace {

using importers::SqliteDb;
using importers::SqliteQuery;
using training::TrainingRecord;

// Elements of an attention tensor the view returns at most (heads x
// queries x keys); a larger one is refused rather than sent whole.
constexpr uint64_t kAttentionLimit = uint64_t{1} << 22;

Status NotATrainingRun() {
  return InvalidArgumentError(
      "this run is not a training snapshot; open a snapshot written by "
      "model_inspector.train (docs/reference/training-snapshot.md)");
}

const TrainingRecord* RecordOf(const Session::Impl& run) {
  return run.training.path.empty() ? nullptr : &run.training;
}

Status CheckLayer(const TrainingRecord& rec, int32_t layer) {
  if (layer < 0 || static_cast<size_t>(layer) >= rec.layer_count()) {
    return NotFoundError(
        "layer " + std::to_string(layer) + " is not a layer of " + rec.path +
        " (0.." + std::to_string(static_cast<int64_t>(rec.layer_count()) - 1) +
        ")");
  }
  return Status::Ok();
}

Status CheckCapturedStep(const TrainingRecord& rec, int64_t step) {
  for (const training::TrainingStep& s : rec.steps) {
    if (s.step == step) {
      if (s.captured) return Status::Ok();
      break;
    }
  }
  std::string captured;
  for (const training::TrainingStep& s : rec.steps) {
    if (!s.captured) continue;
    captured += (captured.empty() ? "" : ", ") + std::to_string(s.step);
  }
  return NotFoundError("step " + std::to_string(step) + " of " + rec.path +
                       " was not captured at tensor level; captured: " +
                       (captured.empty() ? std::string("none") : captured));
}

// An optional table of the snapshot; absent in a file whose monitor kept
// no tensors.
bool HasTable(const SqliteDb& db, std::string_view table) {
  return db.HasTable(table);
}

void IntOrNull(JsonWriter& w, const SqliteQuery& q, int column) {
  if (q.IsNull(column)) {
    w.Null();
  } else {
    w.Int(q.Int(column));
  }
}

// The integers of a JSON array text (a histogram's counts); an error
// naming the table and row for anything else.
// Rows of (step, layer, text) from `table` when the snapshot has it, as
// objects {"step", "layer", <text_key>} (the overview's lists).
Status WriteStepLayerRows(const SqliteDb& db, std::string_view table,
                          const char* sql, std::string_view text_key,
                          JsonWriter& w) {
  if (!HasTable(db, table)) return Status::Ok();
  MI_ASSIGN_OR_RETURN(SqliteQuery q,
                      db.Query(sql, "reading table " + std::string(table)));
  while (true) {
    MI_ASSIGN_OR_RETURN(bool row, q.Next());
    if (!row) break;
    w.BeginObject().Key("step");
    IntOrNull(w, q, 0);
    w.Key("layer");
    IntOrNull(w, q, 1);
    w.Field(text_key, q.Text(2)).EndObject();
  }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> CountsOf(std::string_view text,
                                        const std::string& place) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    return MalformedInputError(place +
                               ": counts is not a JSON array of integers");
  }
  std::vector<int64_t> out;
  out.reserve(doc.size());
  for (const nlohmann::json& v : doc) {
    if (!v.is_number_integer()) {
      return MalformedInputError(place +
                                 ": counts holds a value that is not an "
                                 "integer; expected bin counts");
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// A JSON array of non-negative integers (a tensor's shape).
StatusOr<std::vector<int64_t>> ShapeOf(std::string_view text,
                                       const std::string& place) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    return MalformedInputError(place + ": shape '" +
                               std::string(text.substr(0, 40)) +
                               "' is not a JSON array of dimensions");
  }
  std::vector<int64_t> out;
  for (const nlohmann::json& v : doc) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      return MalformedInputError(place + ": shape '" +
                                 std::string(text.substr(0, 40)) +
                                 "' holds a value that is not a dimension");
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

}  // namespace

const std::string& Session::TrainingSnapshotPath() const {
  return impl_->training.path;
}

StatusOr<std::string> Session::TrainingOverviewJson() const {
  const TrainingRecord* rec = RecordOf(*impl_);
  if (rec == nullptr) return NotATrainingRun();
  MI_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                      importers::training_snapshot::OpenSnapshot(rec->path));
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("path", rec->path);
  w.Key("anomaly_step");
  if (rec->anomaly_step >= 0) {
    w.Int(rec->anomaly_step);
  } else {
    w.Null();
  }
  w.Key("captured_steps").BeginArray();
  for (const training::TrainingStep& s : rec->steps) {
    if (s.captured) w.Int(s.step);
  }
  w.EndArray();
  w.Key("layers").BeginArray();
  for (size_t i = 0; i < rec->layers.size(); ++i) {
    const training::TrainingLayer& l = rec->layers[i];
    w.BeginObject();
    w.FieldInt("id", static_cast<int64_t>(i));
    w.Field("name", l.name);
    w.Field("type", l.type);
    w.FieldIntOrNull("node", l.node);
    w.FieldIntOrNull("parent", l.parent);
    w.FieldIntOrNull("forward_order", l.forward_order);
    w.FieldInt("param_count", l.param_count);
    w.Key("attributes").BeginObject();
    for (const auto& [key, value] : l.attributes) w.Field(key, value);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();

  w.Key("histograms").BeginArray();
  MI_RETURN_IF_ERROR(WriteStepLayerRows(
      *db, "histograms",
      "SELECT step, layer, kind FROM histograms ORDER BY step, layer, kind",
      "kind", w));
  w.EndArray();

  w.Key("attention").BeginArray();
  if (HasTable(*db, "tensors")) {
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db->Query("SELECT step, layer, MIN(shape) FROM tensors WHERE kind = "
                  "'attention' GROUP BY step, layer ORDER BY step, layer",
                  "reading table tensors"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      w.BeginObject().Key("step");
      IntOrNull(w, q, 0);
      w.Key("layer");
      IntOrNull(w, q, 1);
      w.Key("heads");
      StatusOr<std::vector<int64_t>> shape =
          ShapeOf(q.Text(2), rec->path + ": table tensors");
      if (shape.ok() && !shape->empty()) {
        w.Int((*shape)[0]);
      } else {
        w.Null();
      }
      w.EndObject();
    }
  }
  w.EndArray();

  w.Key("projections").BeginArray();
  MI_RETURN_IF_ERROR(WriteStepLayerRows(
      *db, "projections",
      "SELECT DISTINCT step, layer, method FROM projections ORDER BY step, "
      "layer, method",
      "method", w));
  w.EndArray();

  w.Key("samples").BeginArray();
  if (HasTable(*db, "samples")) {
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db->Query("SELECT DISTINCT step FROM samples ORDER BY step",
                  "reading table samples"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      IntOrNull(w, q, 0);
    }
  }
  w.EndArray();
  w.EndObject();
  return out;
}

StatusOr<std::string> Session::TrainingLayerSeriesJson(int32_t layer) const {
  const TrainingRecord* rec = RecordOf(*impl_);
  if (rec == nullptr) return NotATrainingRun();
  MI_RETURN_IF_ERROR(CheckLayer(*rec, layer));
  const training::LayerStepColumns& m = rec->metrics;
  const size_t l = static_cast<size_t>(layer);
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("layer", layer);
  w.Field("name", rec->layers[l].name);
  w.Key("steps").BeginArray();
  for (const training::TrainingStep& s : rec->steps) w.Int(s.step);
  w.EndArray();
  auto reals = [&](std::string_view name, const std::vector<double>& column) {
    w.Key(name).BeginArray();
    for (size_t i = 0; i < rec->step_count(); ++i) {
      w.Double(column[rec->at(i, l)]);  // NaN (not measured) -> null
    }
    w.EndArray();
  };
  auto ints = [&](std::string_view name, const std::vector<int64_t>& column) {
    w.Key(name).BeginArray();
    for (size_t i = 0; i < rec->step_count(); ++i) {
      w.Int(column[rec->at(i, l)]);
    }
    w.EndArray();
  };
  reals("weight_norm", m.weight_norm);
  reals("grad_norm", m.grad_norm);
  reals("update_norm", m.update_norm);
  reals("update_ratio", m.update_ratio);
  reals("grad_zero_fraction", m.grad_zero_fraction);
  reals("dead_fraction", m.dead_fraction);
  ints("grad_nan", m.grad_nan);
  ints("grad_inf", m.grad_inf);
  reals("act_abs_max", m.act_abs_max);
  reals("act_rms", m.act_rms);
  reals("act_mean", m.act_mean);
  reals("act_std", m.act_std);
  reals("act_zero_fraction", m.act_zero_fraction);
  ints("act_nan", m.act_nan);
  ints("act_inf", m.act_inf);
  w.Key("act_dtype").BeginArray();
  for (size_t i = 0; i < rec->step_count(); ++i) {
    const std::string& d = m.act_dtype[rec->at(i, l)];
    if (d.empty()) {
      w.Null();
    } else {
      w.String(d);
    }
  }
  w.EndArray();
  reals("in_abs_max", m.in_abs_max);
  reals("in_rms", m.in_rms);
  ints("in_nan", m.in_nan);
  ints("in_inf", m.in_inf);
  reals("gout_norm", m.gout_norm);
  reals("gout_abs_max", m.gout_abs_max);
  ints("gout_nan", m.gout_nan);
  ints("gout_inf", m.gout_inf);
  w.EndObject();
  return out;
}

StatusOr<std::string> Session::TrainingHistogramsJson(int64_t step,
                                                      int32_t layer) const {
  const TrainingRecord* rec = RecordOf(*impl_);
  if (rec == nullptr) return NotATrainingRun();
  if (layer != -1) MI_RETURN_IF_ERROR(CheckLayer(*rec, layer));
  MI_RETURN_IF_ERROR(CheckCapturedStep(*rec, step));
  MI_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                      importers::training_snapshot::OpenSnapshot(rec->path));
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("step", step);
  w.Key("histograms").BeginArray();
  if (HasTable(*db, "histograms")) {
    std::string sql =
        "SELECT layer, kind, lo, hi, counts, nan, inf FROM histograms WHERE "
        "step = " +
        std::to_string(step);
    if (layer != -1) sql += " AND layer = " + std::to_string(layer);
    sql += " ORDER BY layer, kind";
    MI_ASSIGN_OR_RETURN(SqliteQuery q,
                        db->Query(sql, "reading table histograms"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_ASSIGN_OR_RETURN(
          std::vector<int64_t> counts,
          CountsOf(q.Text(4), rec->path + ": table histograms (step " +
                                  std::to_string(step) + ", layer " +
                                  std::string(q.Text(0)) + ")"));
      w.BeginObject().Key("layer");
      IntOrNull(w, q, 0);
      w.Field("kind", q.Text(1));
      w.FieldDouble("lo", q.Double(2));
      w.FieldDouble("hi", q.Double(3));
      w.Key("counts").BeginArray();
      for (int64_t c : counts) w.Int(c);
      w.EndArray();
      w.FieldInt("nan", q.Int(5));
      w.FieldInt("inf", q.Int(6));
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return out;
}

StatusOr<std::string> Session::TrainingAttentionJson(int64_t step,
                                                     int32_t layer) const {
  const TrainingRecord* rec = RecordOf(*impl_);
  if (rec == nullptr) return NotATrainingRun();
  MI_RETURN_IF_ERROR(CheckLayer(*rec, layer));
  MI_RETURN_IF_ERROR(CheckCapturedStep(*rec, step));
  MI_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                      importers::training_snapshot::OpenSnapshot(rec->path));
  const std::string where = rec->path + ": table tensors (attention of layer " +
                            std::to_string(layer) + " at step " +
                            std::to_string(step) + ")";
  if (!HasTable(*db, "tensors")) {
    return NotFoundError(rec->path +
                         ": no table tensors; the snapshot kept "
                         "no attention weights");
  }
  MI_ASSIGN_OR_RETURN(
      SqliteQuery q,
      db->Query("SELECT shape, sampled, data FROM tensors WHERE step = " +
                    std::to_string(step) +
                    " AND layer = " + std::to_string(layer) +
                    " AND kind = 'attention' ORDER BY id LIMIT 1",
                "reading table tensors"));
  MI_ASSIGN_OR_RETURN(bool row, q.Next());
  if (!row) {
    return NotFoundError("no attention weights of layer " +
                         std::to_string(layer) + " (" +
                         rec->layers[layer].name + ") at step " +
                         std::to_string(step) + " in " + rec->path);
  }
  if (q.Int(1) != 0) {
    return UnsupportedError(where +
                            ": the weights were sampled (above the "
                            "snapshot's sample_limit); expected them whole");
  }
  MI_ASSIGN_OR_RETURN(NpyArray array, ParseNpy(q.Blob(2), where));
  if (array.shape.size() != 3) {
    return MalformedInputError(where + ": shape of " +
                               std::to_string(array.shape.size()) +
                               " dimensions; expected [heads, queries, keys]");
  }
  const int64_t heads = array.shape[0], queries = array.shape[1],
                keys = array.shape[2];
  if (array.count() > kAttentionLimit) {
    return UnsupportedError(where + ": " + std::to_string(array.count()) +
                            " weights; the view shows at most " +
                            std::to_string(kAttentionLimit));
  }
  std::vector<double> values(array.count());
  WidenElements(array.view(), 0, values.size(), values.data());
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("step", step);
  w.FieldInt("layer", layer);
  w.FieldInt("heads", heads);
  w.FieldInt("queries", queries);
  w.FieldInt("keys", keys);
  w.Key("weights").BeginArray();
  size_t at = 0;
  for (int64_t h = 0; h < heads; ++h) {
    w.BeginArray();
    for (int64_t i = 0; i < queries; ++i) {
      w.BeginArray();
      for (int64_t k = 0; k < keys; ++k) w.Double(values[at++]);
      w.EndArray();
    }
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

StatusOr<std::string> Session::TrainingProjectionJson(
    int64_t step, int32_t layer, std::string_view method) const {
  const TrainingRecord* rec = RecordOf(*impl_);
  if (rec == nullptr) return NotATrainingRun();
  MI_RETURN_IF_ERROR(CheckLayer(*rec, layer));
  MI_RETURN_IF_ERROR(CheckCapturedStep(*rec, step));
  if (method != "pca" && method != "tsne") {
    return InvalidArgumentError("projection method '" + std::string(method) +
                                "'; expected pca or tsne");
  }
  MI_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                      importers::training_snapshot::OpenSnapshot(rec->path));
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("step", step);
  w.FieldInt("layer", layer);
  w.Field("method", method);
  w.Key("points").BeginArray();
  size_t points = 0;
  if (HasTable(*db, "projections")) {
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db->Query(
            "SELECT sample, x, y, anomalous FROM projections WHERE "
            "step = " +
                std::to_string(step) + " AND layer = " + std::to_string(layer) +
                " AND method = '" + std::string(method) + "' ORDER BY sample",
            "reading table projections"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      ++points;
      w.BeginObject().Key("sample");
      IntOrNull(w, q, 0);
      w.FieldDouble("x", q.Double(1));
      w.FieldDouble("y", q.Double(2));
      w.FieldBool("anomalous", q.Int(3) != 0);
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  if (points == 0) {
    return NotFoundError("no " + std::string(method) + " projection of layer " +
                         std::to_string(layer) + " (" +
                         rec->layers[layer].name + ") at step " +
                         std::to_string(step) + " in " + rec->path);
  }
  return out;
}

StatusOr<std::string> Session::TrainingSamplesJson(int64_t step) const {
  const TrainingRecord* rec = RecordOf(*impl_);
  if (rec == nullptr) return NotATrainingRun();
  MI_RETURN_IF_ERROR(CheckCapturedStep(*rec, step));
  MI_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                      importers::training_snapshot::OpenSnapshot(rec->path));
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("step", step);
  w.Key("samples").BeginArray();
  if (HasTable(*db, "samples")) {
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db->Query("SELECT sample, role, score FROM samples WHERE step = " +
                      std::to_string(step) +
                      " ORDER BY CASE role WHEN 'anomalous' THEN 0 ELSE 1 "
                      "END, sample",
                  "reading table samples"));
    const bool stats = HasTable(*db, "sample_stats");
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      const int64_t sample = q.Int(0);
      w.BeginObject();
      w.FieldInt("sample", sample);
      w.Field("role", q.Text(1));
      w.Key("score");
      if (q.IsNull(2)) {
        w.Null();
      } else {
        w.Double(q.Double(2));
      }
      w.Key("layers").BeginArray();
      if (stats) {
        MI_ASSIGN_OR_RETURN(
            SqliteQuery s,
            db->Query("SELECT layer, abs_max, rms, nonfinite FROM "
                      "sample_stats WHERE step = " +
                          std::to_string(step) + " AND sample = " +
                          std::to_string(sample) + " ORDER BY layer",
                      "reading table sample_stats"));
        while (true) {
          MI_ASSIGN_OR_RETURN(bool srow, s.Next());
          if (!srow) break;
          w.BeginObject().Key("layer");
          IntOrNull(w, s, 0);
          w.Key("abs_max");
          if (s.IsNull(1)) {
            w.Null();
          } else {
            w.Double(s.Double(1));
          }
          w.Key("rms");
          if (s.IsNull(2)) {
            w.Null();
          } else {
            w.Double(s.Double(2));
          }
          w.FieldInt("nonfinite", s.Int(3));
          w.EndObject();
        }
      }
      w.EndArray();
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace mi
