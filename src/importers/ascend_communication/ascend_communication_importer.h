#pragma once

// torch_npu's and msprof-analyze's communication text files (format facts:
// docs/reference/cluster-formats.md "torch_npu text export" and
// "msprof-analyze cluster outputs"), read into trace/collectives.h:
//  - communication.json: HCCL's split of each op's time (joined onto the
//    op's collective record) and its bandwidth per transport;
//  - communication_matrix.json: per-link statistics;
//  - cluster_communication.json: the same per-op split for every rank;
//  - profiler_metadata.json: world size and parallel groups;
//  - step_trace_time.csv and cluster_step_trace_time.csv: the profiler's
//    per-step time split.
// See README.md.

#include <cstddef>
#include <memory>
#include <string_view>

#include "importers/common/importer.h"
#include "importers/common/run_files.h"

namespace mi::importers {

std::unique_ptr<Importer> CreateAscendCommunicationImporter();
std::unique_ptr<Importer> CreateAscendStepTraceImporter();

// Tests and fuzzers: the same readers over text in memory (ctx.path names
// the file in messages; ctx.trace must be set).
Status ImportAscendCommunicationFromBuffer(std::string_view text,
                                           ImportContext& ctx);
Status ImportAscendStepTraceFromBuffer(std::string_view text,
                                       ImportContext& ctx);

namespace ascend_communication {
// msprof-analyze's cluster_analysis_output folder: its tables form one
// source keyed by the folder; the outputs nothing reads are left out.
void ClaimClusterAnalysisOutput(RunFiles& files);
}  // namespace ascend_communication

}  // namespace mi::importers
