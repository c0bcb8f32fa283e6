#pragma once

// A training snapshot (SQLite, written by model_inspector.train; schema
// python/model_inspector/train/snapshot_schema.sql, format
// docs/reference/training-snapshot.md): its meta, layers, edges, steps,
// layer_steps and triggers into a training::TrainingRecord, and a framework
// graph of its layers into the Model. See README.md.

#include <memory>
#include <string>
#include <string_view>

#include "importers/common/importer.h"
#include "importers/common/sqlite_db.h"

namespace mi::importers {

std::unique_ptr<Importer> CreateTrainingSnapshotImporter();

namespace training_snapshot {

inline constexpr std::string_view kFormat = "model-inspector/training-snapshot";
inline constexpr int64_t kVersion = 1;

// Opens a snapshot: says what is wrong with a file that is not SQLite
// before SQLite does, then checks the meta table's format and version.
// Errors name the file and what was expected.
StatusOr<std::unique_ptr<SqliteDb>> OpenSnapshot(const std::string& path);

// Reads ctx.path (the importer's Import): the record into `record` (when
// not null; else ctx.training, when not null) and the layers' graph into
// ctx.model (when not null), the graph's root in ctx.graphs_added.
Status ImportTrainingSnapshot(ImportContext& ctx,
                              training::TrainingRecord* record = nullptr);

// Whether a layer becomes a node of the graph: a leaf module that has
// parameters or was called in forward, or any module with parameters of
// its own.
bool LayerHasNode(const training::TrainingRecord& record, size_t layer);

}  // namespace training_snapshot
}  // namespace mi::importers
