#include "importers/training_snapshot/training_snapshot_importer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/strings.h"

namespace mi::importers {
namespace training_snapshot {
namespace {

constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
constexpr std::string_view kWhat =
    "a training snapshot (model_inspector.train, "
    "docs/reference/training-snapshot.md)";
constexpr std::string_view kTables =
    "meta, layers, edges, steps, layer_steps, triggers";

using training::TrainingLayer;
using training::TrainingRecord;

// The columns of the tables read, as format version 1 has them.
const std::vector<std::string_view> kLayerColumns = {
    "id",          "name",      "type", "parent", "forward_order",
    "param_count", "attributes"};
const std::vector<std::string_view> kStepColumns = {
    "step", "loss",       "loss_nonfinite", "grad_norm",  "grad_nonfinite",
    "lr",   "loss_scale", "clipped",        "elapsed_ns", "captured"};
const std::vector<std::string_view> kLayerStepColumns = {
    "step",        "layer",        "weight_norm",        "grad_norm",
    "update_norm", "update_ratio", "grad_zero_fraction", "dead_fraction",
    "grad_nan",    "grad_inf",     "act_abs_max",        "act_rms",
    "act_mean",    "act_std",      "act_zero_fraction",  "act_nan",
    "act_inf",     "act_dtype",    "in_abs_max",         "in_rms",
    "in_nan",      "in_inf",       "gout_norm",          "gout_abs_max",
    "gout_nan",    "gout_inf"};
const std::vector<std::string_view> kTriggerColumns = {
    "id", "step", "trigger", "layer", "value", "threshold", "detail"};

std::string JoinViews(const std::vector<std::string_view>& v) {
  std::string out;
  for (std::string_view s : v) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

std::string SelectList(const std::vector<std::string_view>& v) {
  std::string out;
  for (std::string_view s : v) {
    if (!out.empty()) out += ", ";
    out += QuoteIdentifier(s);
  }
  return out;
}

class Reader {
 public:
  Reader(ImportContext& ctx, const SqliteDb& db, TrainingRecord* record)
      : ctx_(ctx), db_(db), rec_(*record) {}

  Status Read() {
    rec_ = TrainingRecord();
    rec_.path = ctx_.path;
    for (std::string_view table :
         {"meta", "layers", "edges", "steps", "layer_steps", "triggers"}) {
      if (!db_.HasTable(table)) {
        return Malformed("no table " + std::string(table) +
                         "; expected the tables of " + std::string(kWhat) +
                         ": " + std::string(kTables));
      }
    }
    MI_RETURN_IF_ERROR(ReadMeta());
    MI_RETURN_IF_ERROR(ReadLayers());
    MI_RETURN_IF_ERROR(ReadEdges());
    MI_RETURN_IF_ERROR(ReadSteps());
    MI_RETURN_IF_ERROR(ReadLayerSteps());
    MI_RETURN_IF_ERROR(ReadTriggers());
    MI_RETURN_IF_ERROR(ResolveOptimizerLayers());
    return Status::Ok();
  }

 private:
  Status Malformed(const std::string& what) const {
    return MalformedInputError(ctx_.path + ": " + what);
  }
  static std::string Row(std::string_view table, uint64_t row) {
    return "table " + std::string(table) + " row " + std::to_string(row);
  }

  Status RequireColumns(std::string_view table,
                        const std::vector<std::string_view>& needed) {
    MI_ASSIGN_OR_RETURN(std::vector<std::string> found, db_.Columns(table));
    for (std::string_view column : needed) {
      if (std::find(found.begin(), found.end(), column) != found.end()) {
        continue;
      }
      std::string have;
      for (const std::string& f : found) {
        have += (have.empty() ? "" : ", ") + f;
      }
      return Malformed("table " + std::string(table) + " has no column '" +
                       std::string(column) + "'; expected the columns " +
                       JoinViews(needed) + " (found: " + have + ")");
    }
    return Status::Ok();
  }

  // An integer column: `absent` for NULL, an error for anything else that
  // is not an integer.
  StatusOr<int64_t> IntAt(const SqliteQuery& q, int column,
                          std::string_view table, std::string_view name,
                          std::optional<int64_t> absent) const {
    if (q.IsNull(column)) {
      if (absent) return *absent;
      return Malformed(Row(table, q.rows()) + ": " + std::string(name) +
                       " is NULL; expected an integer");
    }
    std::optional<int64_t> v = q.IntIfAny(column);
    if (!v) {
      return Malformed(Row(table, q.rows()) + ": " + std::string(name) +
                       " is '" + std::string(q.Text(column).substr(0, 40)) +
                       "'; expected an integer");
    }
    return *v;
  }

  // A REAL column: NaN for NULL; an error for text that is not a number.
  StatusOr<double> RealAt(const SqliteQuery& q, int column,
                          std::string_view table, std::string_view name) const {
    if (q.IsNull(column)) return training::kNotMeasured;
    if (q.IntIfAny(column).has_value() || IsNumber(q, column)) {
      return q.Double(column);
    }
    return Malformed(Row(table, q.rows()) + ": " + std::string(name) + " is '" +
                     std::string(q.Text(column).substr(0, 40)) +
                     "'; expected a number or NULL");
  }
  static bool IsNumber(const SqliteQuery& q, int column) {
    std::string_view t = q.Text(column);
    if (t.empty()) return false;
    std::string s(t);
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
  }

  StatusOr<int32_t> LayerAt(const SqliteQuery& q, int column,
                            std::string_view table, std::string_view name,
                            bool nullable) const {
    MI_ASSIGN_OR_RETURN(
        int64_t v, IntAt(q, column, table, name,
                         nullable ? std::optional<int64_t>(-1) : std::nullopt));
    if (nullable && q.IsNull(column)) return -1;
    if (v < 0 || static_cast<uint64_t>(v) >= rec_.layers.size()) {
      return Malformed(
          Row(table, q.rows()) + ": " + std::string(name) + " " +
          std::to_string(v) + " is not a layer; expected an id " +
          "of table layers (0.." +
          std::to_string(static_cast<int64_t>(rec_.layers.size()) - 1) + ")");
    }
    return static_cast<int32_t>(v);
  }

  // ---- meta ----

  Status ReadMeta() {
    MI_RETURN_IF_ERROR(RequireColumns("meta", {"key", "value"}));
    MI_ASSIGN_OR_RETURN(SqliteQuery q, db_.Query("SELECT key, value FROM meta",
                                                 "reading table meta"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      rec_.meta[std::string(q.Text(0))] = std::string(q.Text(1));
    }
    auto format = rec_.meta.find("format");
    if (format == rec_.meta.end()) {
      return Malformed("table meta has no key 'format'; expected format '" +
                       std::string(kFormat) + "' (" + std::string(kWhat) + ")");
    }
    if (format->second != kFormat) {
      return Malformed("table meta: format is '" +
                       format->second.substr(0, 80) + "'; expected '" +
                       std::string(kFormat) + "'");
    }
    MI_ASSIGN_OR_RETURN(std::optional<int64_t> version, MetaInt("version"));
    if (!version) {
      return Malformed("table meta has no key 'version'; expected version " +
                       std::to_string(kVersion));
    }
    if (*version != kVersion) {
      return UnsupportedError(
          ctx_.path + ": training snapshot format version " +
          std::to_string(*version) + " is not supported; expected version " +
          std::to_string(kVersion) + " (written by this release's monitor)");
    }
    rec_.version = *version;
    rec_.model = MetaText("model");
    rec_.optimizer = MetaText("optimizer");
    rec_.status = MetaText("status");
    MI_ASSIGN_OR_RETURN(std::optional<int64_t> window,
                        MetaInt("capture_window"));
    rec_.capture_window = window.value_or(0);
    MI_ASSIGN_OR_RETURN(std::optional<int64_t> anomaly,
                        MetaInt("anomaly_step"));
    rec_.anomaly_step = anomaly.value_or(-1);
    MI_ASSIGN_OR_RETURN(std::optional<int64_t> first, MetaInt("window_first"));
    rec_.window_first = first.value_or(-1);
    MI_ASSIGN_OR_RETURN(std::optional<int64_t> last, MetaInt("window_last"));
    rec_.window_last = last.value_or(-1);

    MI_ASSIGN_OR_RETURN(nlohmann::json triggers, MetaJson("triggers"));
    if (!triggers.is_null()) {
      if (!triggers.is_array()) return MetaShape("triggers", "a JSON array");
      for (const nlohmann::json& t : triggers) {
        if (!t.is_string()) {
          return MetaShape("triggers", "a JSON array of strings");
        }
        rec_.triggers_armed.push_back(t.get<std::string>());
      }
    }
    MI_ASSIGN_OR_RETURN(nlohmann::json th, MetaJson("thresholds"));
    if (!th.is_null()) {
      if (!th.is_object()) return MetaShape("thresholds", "a JSON object");
      training::TrainingThresholds& t = rec_.thresholds;
      for (auto [key, target] :
           {std::pair<const char*, double*>{"vanishing", &t.vanishing},
            {"exploding", &t.exploding},
            {"dead", &t.dead},
            {"grad_norm", &t.grad_norm},
            {"loss_spike_factor", &t.loss_spike_factor},
            {"act_range", &t.act_range}}) {
        auto it = th.find(key);
        if (it == th.end() || it->is_null()) continue;
        if (!it->is_number()) {
          return MetaShape("thresholds",
                           "numbers (" + std::string(key) + " is not one)");
        }
        *target = it->get<double>();
      }
      auto w = th.find("loss_spike_window");
      if (w != th.end() && !w->is_null()) {
        if (!w->is_number()) {
          return MetaShape("thresholds",
                           "numbers (loss_spike_window is not one)");
        }
        double v = w->get<double>();
        if (!(v >= 0 && v <= 1e9)) {
          return MetaShape("thresholds",
                           "a loss_spike_window between 0 and 1e9");
        }
        t.loss_spike_window = static_cast<int64_t>(v);
      }
    }
    MI_ASSIGN_OR_RETURN(optimizer_config_, MetaJson("optimizer_config"));
    if (!optimizer_config_.is_null() && !optimizer_config_.is_array()) {
      return MetaShape("optimizer_config", "a JSON array of param groups");
    }
    return Status::Ok();
  }

  std::string MetaText(const std::string& key) const {
    auto it = rec_.meta.find(key);
    return it == rec_.meta.end() ? std::string() : it->second;
  }
  StatusOr<std::optional<int64_t>> MetaInt(const std::string& key) const {
    auto it = rec_.meta.find(key);
    if (it == rec_.meta.end()) return std::optional<int64_t>();
    std::optional<int64_t> v = ParseInteger<int64_t>(it->second);
    if (!v) {
      return Malformed("table meta: " + key + " is '" +
                       it->second.substr(0, 40) +
                       "'; expected a decimal integer");
    }
    return v;
  }
  StatusOr<nlohmann::json> MetaJson(const std::string& key) const {
    auto it = rec_.meta.find(key);
    if (it == rec_.meta.end()) return nlohmann::json();
    nlohmann::json doc = nlohmann::json::parse(it->second, nullptr, false);
    if (doc.is_discarded()) {
      return Malformed("table meta: " + key + " is not valid JSON ('" +
                       it->second.substr(0, 40) + "')");
    }
    return doc;
  }
  Status MetaShape(const std::string& key, const std::string& expected) const {
    return Malformed("table meta: " + key + " is not " + expected);
  }

  Status ResolveOptimizerLayers() {
    if (optimizer_config_.is_null()) return Status::Ok();
    std::map<std::string, int32_t> by_name;
    for (size_t i = 0; i < rec_.layers.size(); ++i) {
      by_name.emplace(rec_.layers[i].name, static_cast<int32_t>(i));
    }
    size_t index = 0;
    for (const nlohmann::json& g : optimizer_config_) {
      if (!g.is_object()) {
        return MetaShape("optimizer_config",
                         "a JSON array of param group objects (group " +
                             std::to_string(index) + " is not an object)");
      }
      training::OptimizerGroup group;
      for (auto [key, target] :
           {std::pair<const char*, double*>{"lr", &group.lr},
            {"momentum", &group.momentum},
            {"weight_decay", &group.weight_decay}}) {
        auto it = g.find(key);
        if (it != g.end() && it->is_number()) *target = it->get<double>();
      }
      auto layers = g.find("layers");
      if (layers != g.end() && !layers->is_null()) {
        if (!layers->is_array()) {
          return MetaShape("optimizer_config",
                           "param groups whose 'layers' is an array (group " +
                               std::to_string(index) + ")");
        }
        for (const nlohmann::json& name : *layers) {
          auto found = name.is_string() ? by_name.find(name.get<std::string>())
                                        : by_name.end();
          if (found == by_name.end()) {
            return Malformed(
                "table meta: optimizer_config group " + std::to_string(index) +
                " names layer " + name.dump().substr(0, 80) +
                ", which table layers lacks; expected layer names");
          }
          group.layers.push_back(found->second);
        }
      }
      rec_.optimizer_groups.push_back(std::move(group));
      ++index;
    }
    return Status::Ok();
  }

  // ---- layers, edges ----

  Status ReadLayers() {
    MI_RETURN_IF_ERROR(RequireColumns("layers", kLayerColumns));
    MI_ASSIGN_OR_RETURN(SqliteQuery q,
                        db_.Query("SELECT " + SelectList(kLayerColumns) +
                                      " FROM layers ORDER BY id",
                                  "reading table layers"));
    std::vector<int64_t> parents;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_ASSIGN_OR_RETURN(int64_t id, IntAt(q, 0, "layers", "id", {}));
      if (id != static_cast<int64_t>(rec_.layers.size())) {
        return Malformed(Row("layers", q.rows()) + ": id " +
                         std::to_string(id) + "; expected " +
                         std::to_string(rec_.layers.size()) +
                         " (layer ids run 0, 1, 2, ... without gaps)");
      }
      TrainingLayer layer;
      layer.name = std::string(q.Text(1));
      layer.type = std::string(q.Text(2));
      MI_ASSIGN_OR_RETURN(int64_t parent, IntAt(q, 3, "layers", "parent", -1));
      parents.push_back(q.IsNull(3) ? -1 : parent);
      MI_ASSIGN_OR_RETURN(int64_t order,
                          IntAt(q, 4, "layers", "forward_order", -1));
      if (order < -1 || order > std::numeric_limits<int32_t>::max()) {
        return Malformed(Row("layers", q.rows()) + ": forward_order " +
                         std::to_string(order) +
                         "; expected a rank >= 0 or NULL");
      }
      layer.forward_order = static_cast<int32_t>(order);
      MI_ASSIGN_OR_RETURN(layer.param_count,
                          IntAt(q, 5, "layers", "param_count", {}));
      if (layer.param_count < 0) {
        return Malformed(Row("layers", q.rows()) + ": param_count " +
                         std::to_string(layer.param_count) +
                         "; expected a count >= 0");
      }
      if (!q.IsNull(6) && !q.Text(6).empty()) {
        nlohmann::json attrs = nlohmann::json::parse(q.Text(6), nullptr, false);
        if (attrs.is_discarded() || !attrs.is_object()) {
          return Malformed(Row("layers", q.rows()) +
                           ": attributes is not a JSON object ('" +
                           std::string(q.Text(6).substr(0, 40)) + "')");
        }
        for (auto it = attrs.begin(); it != attrs.end(); ++it) {
          layer.attributes[it.key()] =
              it->is_string() ? it->get<std::string>() : it->dump();
        }
      }
      rec_.layers.push_back(std::move(layer));
      if (rec_.layers.size() % 4096 == 0) {
        MI_RETURN_IF_ERROR(Charge("table layers"));
      }
    }
    for (size_t i = 0; i < parents.size(); ++i) {
      int64_t p = parents[i];
      if (p == -1) continue;
      if (p < 0 || static_cast<uint64_t>(p) >= rec_.layers.size() ||
          static_cast<size_t>(p) == i) {
        return Malformed(Row("layers", i + 1) + ": parent " +
                         std::to_string(p) +
                         " is not another layer; expected an id of table "
                         "layers or NULL");
      }
      rec_.layers[i].parent = static_cast<int32_t>(p);
    }
    // Parents form a tree: no layer is its own ancestor. Each layer's
    // chain is walked once (state 1: on the chain being walked, 2: known
    // to end at a root), so a long chain costs linear time.
    std::vector<uint8_t> state(rec_.layers.size(), 0);
    std::vector<size_t> chain;
    for (size_t i = 0; i < rec_.layers.size(); ++i) {
      chain.clear();
      int64_t l = static_cast<int64_t>(i);
      while (l >= 0 && state[l] == 0) {
        state[l] = 1;
        chain.push_back(static_cast<size_t>(l));
        l = rec_.layers[l].parent;
      }
      if (l >= 0 && state[l] == 1) {
        return Malformed(Row("layers", static_cast<uint64_t>(l) + 1) +
                         ": its parents form a cycle; expected the module "
                         "tree");
      }
      for (size_t c : chain) state[c] = 2;
    }
    return Status::Ok();
  }

  Status ReadEdges() {
    MI_RETURN_IF_ERROR(RequireColumns("edges", {"src", "dst"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q, db_.Query("SELECT src, dst FROM edges ORDER BY src, dst",
                                 "reading table edges"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_ASSIGN_OR_RETURN(int32_t src, LayerAt(q, 0, "edges", "src", false));
      MI_ASSIGN_OR_RETURN(int32_t dst, LayerAt(q, 1, "edges", "dst", false));
      rec_.edges.emplace_back(src, dst);
    }
    return Status::Ok();
  }

  // ---- steps ----

  Status ReadSteps() {
    MI_RETURN_IF_ERROR(RequireColumns("steps", kStepColumns));
    MI_ASSIGN_OR_RETURN(SqliteQuery q,
                        db_.Query("SELECT " + SelectList(kStepColumns) +
                                      " FROM steps ORDER BY step",
                                  "reading table steps"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      training::TrainingStep s;
      MI_ASSIGN_OR_RETURN(s.step, IntAt(q, 0, "steps", "step", {}));
      MI_ASSIGN_OR_RETURN(s.loss, RealAt(q, 1, "steps", "loss"));
      MI_ASSIGN_OR_RETURN(int64_t nonfinite,
                          IntAt(q, 2, "steps", "loss_nonfinite", 0));
      s.loss_nonfinite = nonfinite != 0;
      MI_ASSIGN_OR_RETURN(s.grad_norm, RealAt(q, 3, "steps", "grad_norm"));
      MI_ASSIGN_OR_RETURN(s.grad_nonfinite,
                          IntAt(q, 4, "steps", "grad_nonfinite", 0));
      MI_ASSIGN_OR_RETURN(s.lr, RealAt(q, 5, "steps", "lr"));
      MI_ASSIGN_OR_RETURN(s.loss_scale, RealAt(q, 6, "steps", "loss_scale"));
      MI_ASSIGN_OR_RETURN(int64_t clipped, IntAt(q, 7, "steps", "clipped", -1));
      s.clipped = q.IsNull(7) ? int8_t{-1} : int8_t{clipped != 0};
      MI_ASSIGN_OR_RETURN(s.elapsed_ns, IntAt(q, 8, "steps", "elapsed_ns", 0));
      MI_ASSIGN_OR_RETURN(int64_t captured,
                          IntAt(q, 9, "steps", "captured", 0));
      s.captured = captured != 0;
      rec_.steps.push_back(s);
      if (rec_.steps.size() % 65536 == 0) {
        MI_RETURN_IF_ERROR(Charge("table steps"));
      }
    }
    return Status::Ok();
  }

  Status ReadLayerSteps() {
    MI_RETURN_IF_ERROR(RequireColumns("layer_steps", kLayerStepColumns));
    // The columns are steps x layers; a file cannot make them larger than
    // the memory limit allows.
    const uint64_t cells =
        static_cast<uint64_t>(rec_.steps.size()) * rec_.layers.size();
    if (!rec_.layers.empty() &&
        cells / rec_.layers.size() != rec_.steps.size()) {
      return Malformed("table layer_steps: too many steps x layers");
    }
    constexpr uint64_t kBytesPerCell = 20 * 8 + 6 * 8 + sizeof(std::string);
    MI_RETURN_IF_ERROR(Charge(
        "table layer_steps (" + std::to_string(rec_.steps.size()) +
            " steps x " + std::to_string(rec_.layers.size()) + " layers)",
        cells * kBytesPerCell));
    training::LayerStepColumns& m = rec_.metrics;
    const double nan = training::kNotMeasured;
    for (std::vector<double>* c :
         {&m.weight_norm, &m.grad_norm, &m.update_norm, &m.update_ratio,
          &m.grad_zero_fraction, &m.dead_fraction, &m.act_abs_max, &m.act_rms,
          &m.act_mean, &m.act_std, &m.act_zero_fraction, &m.in_abs_max,
          &m.in_rms, &m.gout_norm, &m.gout_abs_max}) {
      c->assign(cells, nan);
    }
    for (std::vector<int64_t>* c :
         {&m.grad_nan, &m.grad_inf, &m.act_nan, &m.act_inf, &m.in_nan,
          &m.in_inf, &m.gout_nan, &m.gout_inf}) {
      c->assign(cells, 0);
    }
    m.act_dtype.assign(cells, std::string());

    std::map<int64_t, size_t> step_index;
    for (size_t i = 0; i < rec_.steps.size(); ++i) {
      if (!step_index.emplace(rec_.steps[i].step, i).second) {
        return Malformed("table steps: step " +
                         std::to_string(rec_.steps[i].step) +
                         " appears twice; expected one row per step");
      }
    }
    MI_ASSIGN_OR_RETURN(SqliteQuery q,
                        db_.Query("SELECT " + SelectList(kLayerStepColumns) +
                                      " FROM layer_steps",
                                  "reading table layer_steps"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_ASSIGN_OR_RETURN(int64_t step, IntAt(q, 0, "layer_steps", "step", {}));
      auto found = step_index.find(step);
      if (found == step_index.end()) {
        return Malformed(Row("layer_steps", q.rows()) + ": step " +
                         std::to_string(step) +
                         " is not in table steps; expected a step of it");
      }
      MI_ASSIGN_OR_RETURN(int32_t layer,
                          LayerAt(q, 1, "layer_steps", "layer", false));
      const size_t at = rec_.at(found->second, static_cast<size_t>(layer));
      int column = 2;
      for (std::vector<double>* c :
           {&m.weight_norm, &m.grad_norm, &m.update_norm, &m.update_ratio,
            &m.grad_zero_fraction, &m.dead_fraction}) {
        MI_ASSIGN_OR_RETURN((*c)[at], RealAt(q, column, "layer_steps",
                                             kLayerStepColumns[column]));
        ++column;
      }
      for (std::vector<int64_t>* c : {&m.grad_nan, &m.grad_inf}) {
        MI_ASSIGN_OR_RETURN((*c)[at], IntAt(q, column, "layer_steps",
                                            kLayerStepColumns[column], 0));
        ++column;
      }
      for (std::vector<double>* c : {&m.act_abs_max, &m.act_rms, &m.act_mean,
                                     &m.act_std, &m.act_zero_fraction}) {
        MI_ASSIGN_OR_RETURN((*c)[at], RealAt(q, column, "layer_steps",
                                             kLayerStepColumns[column]));
        ++column;
      }
      for (std::vector<int64_t>* c : {&m.act_nan, &m.act_inf}) {
        MI_ASSIGN_OR_RETURN((*c)[at], IntAt(q, column, "layer_steps",
                                            kLayerStepColumns[column], 0));
        ++column;
      }
      m.act_dtype[at] = std::string(q.Text(column).substr(0, 32));
      ++column;
      for (std::vector<double>* c : {&m.in_abs_max, &m.in_rms}) {
        MI_ASSIGN_OR_RETURN((*c)[at], RealAt(q, column, "layer_steps",
                                             kLayerStepColumns[column]));
        ++column;
      }
      for (std::vector<int64_t>* c : {&m.in_nan, &m.in_inf}) {
        MI_ASSIGN_OR_RETURN((*c)[at], IntAt(q, column, "layer_steps",
                                            kLayerStepColumns[column], 0));
        ++column;
      }
      for (std::vector<double>* c : {&m.gout_norm, &m.gout_abs_max}) {
        MI_ASSIGN_OR_RETURN((*c)[at], RealAt(q, column, "layer_steps",
                                             kLayerStepColumns[column]));
        ++column;
      }
      for (std::vector<int64_t>* c : {&m.gout_nan, &m.gout_inf}) {
        MI_ASSIGN_OR_RETURN((*c)[at], IntAt(q, column, "layer_steps",
                                            kLayerStepColumns[column], 0));
        ++column;
      }
    }
    return Status::Ok();
  }

  Status ReadTriggers() {
    MI_RETURN_IF_ERROR(RequireColumns("triggers", kTriggerColumns));
    MI_ASSIGN_OR_RETURN(SqliteQuery q,
                        db_.Query("SELECT " + SelectList(kTriggerColumns) +
                                      " FROM triggers ORDER BY id",
                                  "reading table triggers"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      training::TriggerHit hit;
      MI_ASSIGN_OR_RETURN(hit.step, IntAt(q, 1, "triggers", "step", {}));
      hit.trigger = std::string(q.Text(2));
      if (hit.trigger.empty()) {
        return Malformed(Row("triggers", q.rows()) +
                         ": trigger is empty; expected its name");
      }
      MI_ASSIGN_OR_RETURN(hit.layer, LayerAt(q, 3, "triggers", "layer", true));
      MI_ASSIGN_OR_RETURN(hit.value, RealAt(q, 4, "triggers", "value"));
      MI_ASSIGN_OR_RETURN(hit.threshold, RealAt(q, 5, "triggers", "threshold"));
      hit.detail = std::string(q.Text(6));
      rec_.hits.push_back(std::move(hit));
    }
    return Status::Ok();
  }

  Status Charge(const std::string& place, uint64_t extra = 0) {
    uint64_t bytes = extra;
    for (const TrainingLayer& l : rec_.layers) {
      bytes +=
          sizeof(l) + l.name.size() + l.type.size() + 64 * l.attributes.size();
    }
    bytes += rec_.steps.size() * sizeof(training::TrainingStep);
    return ChargeBuilt(ctx_, ctx_.path + ": " + place,
                       static_cast<size_t>(std::min<uint64_t>(
                           bytes, std::numeric_limits<size_t>::max())));
  }

  ImportContext& ctx_;
  const SqliteDb& db_;
  TrainingRecord& rec_;
  nlohmann::json optimizer_config_;
};

// The framework graph of the layers (README.md "Graph").
void BuildGraph(ImportContext& ctx, TrainingRecord& rec) {
  Model& model = *ctx.model;
  const size_t n = rec.layers.size();
  std::string name =
      rec.model.empty() ? std::string("training snapshot") : rec.model;
  GraphId graph = model.AddGraph(LayerLevel::kFramework, name, ctx.path);
  GraphInfo& info = model.mutable_graph(graph);
  auto torch = rec.meta.find("torch");
  if (torch != rec.meta.end() && !torch->second.empty()) {
    info.producer = model.strings().Intern("pytorch " + torch->second);
  }
  for (const char* key : {"optimizer", "status", "anomaly_step", "created"}) {
    auto it = rec.meta.find(key);
    if (it == rec.meta.end()) continue;
    info.metadata.emplace_back(model.strings().Intern(key),
                               model.strings().Intern(it->second));
  }
  ctx.graphs_added.push_back(graph);

  // Nodes in forward order, then the layers never called, by id.
  const std::vector<bool> has_node = LayersWithNodes(rec);
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    if (has_node[i]) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&rec](size_t a, size_t b) {
    int64_t fa = rec.layers[a].forward_order, fb = rec.layers[b].forward_order;
    if ((fa < 0) != (fb < 0)) return fa >= 0;
    return fa < fb;
  });
  std::vector<int64_t> rank(n, -1);  // position in `order`
  for (size_t i = 0; i < order.size(); ++i) {
    rank[order[i]] = static_cast<int64_t>(i);
  }

  // A layer without a node stands for its descendants with nodes: as the
  // source of an edge, the last of them in forward order; as the
  // destination, the first. Merged from the deepest layers up (the
  // parents form a tree: Reader checked it).
  std::vector<int64_t> depth(n, -1);
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> chain;
    int64_t l = static_cast<int64_t>(i);
    while (l >= 0 && depth[l] < 0) {
      chain.push_back(static_cast<size_t>(l));
      l = rec.layers[l].parent;
    }
    int64_t d = l >= 0 ? depth[l] : -1;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) depth[*it] = ++d;
  }
  std::vector<size_t> by_depth(n);
  for (size_t i = 0; i < n; ++i) by_depth[i] = i;
  std::stable_sort(
      by_depth.begin(), by_depth.end(),
      [&depth](size_t a, size_t b) { return depth[a] > depth[b]; });
  std::vector<int64_t> first(n, -1), last(n, -1);
  std::vector<bool> is_node(n, false);
  for (size_t i : order) {
    first[i] = last[i] = static_cast<int64_t>(i);
    is_node[i] = true;
  }
  for (size_t l : by_depth) {
    const int64_t p = rec.layers[l].parent;
    // A layer with a node of its own (a MultiheadAttention holding its
    // out_proj) stands for itself, not for its children.
    if (p < 0 || first[l] < 0 || is_node[p]) continue;
    if (first[p] < 0 || rank[first[l]] < rank[first[p]]) first[p] = first[l];
    if (last[p] < 0 || rank[last[l]] > rank[last[p]]) last[p] = last[l];
  }
  // Inputs of each node; an edge that does not go forward (a module called
  // twice) would make a cycle and is left out.
  std::vector<std::vector<size_t>> inputs(n);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (auto [src, dst] : rec.edges) {
    int64_t s = last[src], d = first[dst];
    if (s < 0 || d < 0 || rank[s] >= rank[d]) continue;
    if (seen.emplace(s, d).second) inputs[d].push_back(static_cast<size_t>(s));
  }
  auto node_name = [&rec](size_t layer) {
    const TrainingLayer& l = rec.layers[layer];
    return l.name.empty() ? l.type : l.name;
  };
  StringPool& strings = model.strings();
  for (size_t i : order) {
    const TrainingLayer& layer = rec.layers[i];
    std::string name = node_name(i);
    NodeId node = model.AddNode(graph, layer.type, "", name);
    for (size_t src : inputs[i]) {
      model.AddNodeInput(node,
                         model.GetOrAddValue(graph, node_name(src) + ":out"));
    }
    model.AddNodeOutput(node, model.GetOrAddValue(graph, name + ":out"));
    auto int_attr = [&](std::string_view key, int64_t v) {
      Attribute a;
      a.name = strings.Intern(key);
      a.kind = AttributeKind::kInt;
      a.int_value = v;
      a.text = strings.Intern(std::to_string(v));
      model.AddNodeAttribute(node, a);
    };
    int_attr("layer", static_cast<int64_t>(i));
    int_attr("param_count", layer.param_count);
    if (layer.forward_order >= 0)
      int_attr("forward_order", layer.forward_order);
    for (const auto& [key, value] : layer.attributes) {
      Attribute a;
      a.name = strings.Intern(key);
      a.kind = AttributeKind::kString;
      a.text = strings.Intern(value);
      model.AddNodeAttribute(node, a);
    }
    rec.layers[i].node = static_cast<int64_t>(node.value());
  }
  // Scopes from the module path's parents ("encoder.layers.0").
  model.AssignScopesFromNames(graph, '.');
}

}  // namespace

std::vector<bool> LayersWithNodes(const TrainingRecord& record) {
  const size_t n = record.layers.size();
  std::vector<bool> has_child(n, false);
  for (const TrainingLayer& l : record.layers) {
    if (l.parent >= 0 && static_cast<size_t>(l.parent) < n) {
      has_child[l.parent] = true;
    }
  }
  std::vector<bool> out(n, false);
  for (size_t i = 0; i < n; ++i) {
    const TrainingLayer& l = record.layers[i];
    out[i] = l.param_count > 0 || (l.forward_order >= 0 && !has_child[i]);
  }
  return out;
}

StatusOr<std::unique_ptr<SqliteDb>> OpenSnapshot(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return NotFoundError(path + ": cannot open the file");
  char head[16];
  const size_t got = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  if (got == 0) {
    return MalformedInputError(path + ": empty file; expected " +
                               std::string(kWhat));
  }
  if (std::string_view(head, got) != kSqliteMagic) {
    return MalformedInputError(
        path +
        ": not an SQLite database (it does not start with 'SQLite format "
        "3'); expected " +
        std::string(kWhat));
  }
  return SqliteDb::Open(path, kWhat);
}

Status ImportTrainingSnapshot(ImportContext& ctx,
                              training::TrainingRecord* record) {
  TrainingRecord own;
  if (record == nullptr) record = ctx.training;
  if (record == nullptr) record = &own;
  MI_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenSnapshot(ctx.path));
  Reader reader(ctx, *db, record);
  MI_RETURN_IF_ERROR(reader.Read());
  if (ctx.model != nullptr) BuildGraph(ctx, *record);
  return ChargeBuilt(ctx, ctx.path);
}

namespace {

class TrainingSnapshotImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor d{
        "training_snapshot",
        {".db", ".sqlite"},
        10,
        ContentKind::kGraph,
        "a training snapshot of model_inspector.train (SQLite)"};
    return d;
  }

  // The SQLite header, then the file itself: a meta table whose format is
  // ours (100), or the tables of a snapshot without it (80: the import says
  // what is wrong). Reading the schema is needed: a snapshot's schema does
  // not fit the first 4 KiB the registry sniffs. An SQLite file whose
  // schema cannot be read (truncated, corrupt) scores 1: when no importer
  // knows it by name, the import says what SQLite found wrong.
  int Sniff(std::string_view head, std::string_view path) const override {
    if (!head.starts_with(kSqliteMagic) || path.empty()) return 0;
    StatusOr<std::unique_ptr<SqliteDb>> db =
        SqliteDb::Open(std::string(path), kWhat);
    if (!db.ok()) return 1;
    if (!(*db)->HasTable("meta") || !(*db)->HasTable("layer_steps")) return 0;
    StatusOr<SqliteQuery> q =
        (*db)->Query("SELECT value FROM meta WHERE key = 'format'", "sniffing");
    if (!q.ok()) return 80;
    StatusOr<bool> row = q->Next();
    if (row.ok() && *row && q->Text(0) == kFormat) return 100;
    return 80;
  }

  Status Import(ImportContext& ctx) const override {
    return ImportTrainingSnapshot(ctx, nullptr);
  }
};

}  // namespace
}  // namespace training_snapshot

std::unique_ptr<Importer> CreateTrainingSnapshotImporter() {
  return std::make_unique<training_snapshot::TrainingSnapshotImporter>();
}

}  // namespace mi::importers
