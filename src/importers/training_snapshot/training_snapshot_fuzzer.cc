// Fuzzes the training snapshot importer: SQLite reads a file, not a
// buffer, so the input is written to a temporary file and imported from
// there (record and graph), as the CLI would import it, under a 256 MiB
// memory budget (a file naming many steps and layers is stopped by it). A
// Status error is fine; a crash, a sanitizer report or kInternal is a bug.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/check.h"
#include "base/memory_budget.h"
#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/training_snapshot/training_snapshot_importer.h"
#include "model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 20)) return 0;
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                     "/training_snapshot_fuzz_XXXXXX";
  const int fd = mkstemp(path.data());
  MI_CHECK(fd >= 0);
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, data + written, size - written);
    MI_CHECK(n > 0);
    written += static_cast<size_t>(n);
  }
  close(fd);

  mi::MemoryBudget budget(uint64_t{256} << 20);
  mi::StringPool strings;
  mi::Model model(&strings);
  mi::DiagnosticSink diagnostics;
  mi::training::TrainingRecord record;
  mi::importers::ImportContext ctx;
  ctx.path = path;
  ctx.model = &model;
  ctx.training = &record;
  ctx.diagnostics = &diagnostics;
  ctx.budget = &budget;
  mi::Status status =
      mi::importers::training_snapshot::ImportTrainingSnapshot(ctx, nullptr);
  std::remove(path.c_str());
  MI_CHECK(status.code() != mi::StatusCode::kInternal);
  if (!status.ok()) return 0;
  model.BuildIndexes();
  const size_t cells = record.step_count() * record.layer_count();
  MI_CHECK(record.metrics.grad_norm.size() == cells);
  MI_CHECK(record.metrics.act_dtype.size() == cells);
  for (size_t i = 1; i < record.steps.size(); ++i) {
    MI_CHECK(record.steps[i - 1].step < record.steps[i].step);
  }
  for (const auto& layer : record.layers) {
    MI_CHECK(layer.parent < static_cast<int32_t>(record.layer_count()));
    MI_CHECK(layer.node < static_cast<int64_t>(model.node_count()));
    if (layer.node >= 0) {
      mi::NodeId node(static_cast<uint32_t>(layer.node));
      MI_CHECK(model.str(model.node_op_type(node)) == layer.type);
    }
  }
  for (const auto& hit : record.hits) {
    MI_CHECK(hit.layer < static_cast<int32_t>(record.layer_count()));
  }
  for (const auto& [src, dst] : record.edges) {
    MI_CHECK(src >= 0 && dst >= 0);
    MI_CHECK(static_cast<size_t>(src) < record.layer_count());
    MI_CHECK(static_cast<size_t>(dst) < record.layer_count());
  }
  return 0;
}
