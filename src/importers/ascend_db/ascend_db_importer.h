#pragma once

// torch_npu's DB export (export_type "db"): ascend_pytorch_profiler_<rank>.db
// and analysis.db in a `*_ascend_pt` folder's ASCEND_PROFILER_OUTPUT/, both
// SQLite, read with libsqlite3 (shared/formats/cluster.md 1.3, 1.4;
// shared/formats/ascend.md §1.5). See README.md.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "importers/common/importer.h"
#include "importers/common/run_files.h"

namespace mi::importers {

std::unique_ptr<Importer> CreateAscendDbImporter();

// What one database gave.
struct AscendDbStats {
  bool profiler_tables = false;  // TASK / STRING_IDS ... were read
  bool analysis_tables = false;  // StepTraceTime / CommAnalyzer* were read
  uint64_t device_tasks = 0;     // TASK rows
  // ... of which an HCCL op itself (read as the op, not as a kernel too)
  uint64_t op_rows = 0;
  uint64_t host_api_calls = 0;     // CANN_API rows
  uint64_t communication_ops = 0;  // COMMUNICATION_OP rows
  uint64_t launches = 0;           // device tasks given their host launch
  uint64_t steps = 0;              // STEP_TIME rows
  uint64_t rows_skipped = 0;       // rows without a required value
  uint64_t step_trace_rows = 0;
  uint64_t comm_time_matched = 0;  // CommAnalyzerTime rows filling a record
  uint64_t comm_time_added = 0;    // ... and those only the table names
  uint64_t bandwidth_rows = 0;     // after merging packet sizes
  uint64_t link_rows = 0;
};

// Reads the database ctx.path into ctx.trace (the importer's Import):
// every table it knows that the file holds, the profiler's before the
// analysis ones. `stats` may be null.
Status ImportAscendDb(ImportContext& ctx, AscendDbStats* stats = nullptr);

// The (rank, device) of torch_npu's RANK_DEVICE_MAP in a profiler DB,
// without importing it (rank discovery: where a folder has no
// profiler_info_<rank>.json, or to confirm it); {-1, -1} when the table is
// absent or empty. Errors as ImportAscendDb's.
struct DbRankDevice {
  int32_t rank = -1;
  int32_t device = -1;
};
StatusOr<DbRankDevice> ReadAscendDbRankDevice(const std::string& path);

namespace ascend_db {

// ascend_pytorch_profiler.db / ascend_pytorch_profiler_<rank>.db.
bool IsProfilerDbFileName(std::string_view file_name);
// analysis.db.
bool IsAnalysisDbFileName(std::string_view file_name);

// The Importer::ClaimRunFiles of the ascend_db importer: the DB files in a
// torch_npu folder's ASCEND_PROFILER_OUTPUT/ form the folder's source (the
// same key and rank the ascend_timeline importer gives the folder's text
// files), the profiler DB at stage 1, analysis.db after it (stage 2: it
// fills the collectives the profiler DB made). A folder that also holds a
// text timeline (trace_view.json: an export with both types) has the same
// tasks twice: its DB files are left out and the text export is read.
void ClaimDbFiles(RunFiles& files);

}  // namespace ascend_db
}  // namespace mi::importers
