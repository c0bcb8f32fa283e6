#pragma once

// The list of recoverable problems importers and linkers count instead of
// aborting (Perfetto's stats.h pattern). docs/reference/errors.md is
// generated from this list by `model-inspector help-diagnostics`.
//
// X(name, severity, description)
#define MI_DIAGNOSTIC_CODES(X)                                                \
  X(kUnknownPhase, kInfo, "trace event with an unknown 'ph' was skipped")     \
  X(kEventMissingField, kDataLoss,                                            \
    "trace event lacks a required field (ts, dur, name) and was skipped")     \
  X(kUnmatchedEnd, kDataLoss, "an 'E' event had no open 'B' on its thread")   \
  X(kUnclosedBegin, kDataLoss,                                                \
    "a 'B' event was never closed; it ends at the last timestamp seen")       \
  X(kNegativeDuration, kDataLoss,                                             \
    "event with negative duration, clamped to 0")                             \
  X(kUnescapedString, kInfo,                                                  \
    "a string with raw control characters (ONNX Runtime writes names "        \
    "unescaped) was repaired")                                                \
  X(kUnterminatedArray, kInfo,                                                \
    "JSON array trace without closing ']' (allowed by the format)")           \
  X(kTrailingGarbage, kDataLoss, "bytes after the end of the trace ignored")  \
  X(kOverlappingSlices, kInfo,                                                \
    "tasks overlap on one stream (e.g. programmatic dependent launch); kept") \
  X(kDanglingInput, kError,                                                   \
    "a node input names a tensor no node, input or initializer produces")     \
  X(kGraphCycle, kError, "the graph has a cycle")                             \
  X(kShapeInferenceFailed, kDataLoss,                                         \
    "ONNX shape inference failed, crashed (in its own process) or left out "  \
    "a node whose attributes would crash it; shapes the file lacks stay "     \
    "unknown")                                                                \
  X(kExternalDataMissing, kInfo,                                              \
    "an initializer's external data file is missing (weights are never read " \
    "but the reference is reported)")                                         \
  X(kUnknownFieldSkipped, kInfo, "an unknown protobuf field was skipped")     \
  X(kCompiledNodeUnexplained, kDataLoss,                                      \
    "a compiled node could not be traced to framework nodes nor recognised "  \
    "as inserted")                                                            \
  X(kTaskUnlinked, kInfo,                                                     \
    "a task has no graph node (e.g. inserted by the "                         \
    "runtime)")                                                               \
  X(kTaskNodeNameUnknown, kInfo,                                              \
    "a task names a node absent from the loaded graphs")                      \
  X(kFileSkipped, kInfo, "a file in a run directory was not recognised")      \
  X(kRunFileLeftOut, kInfo,                                                   \
    "files of a run directory left out by the importer that knows their "     \
    "folder (a copy of data read elsewhere, raw data, configuration)")        \
  X(kOriginNameUnresolved, kInfo,                                             \
    "a compiled node's declared original op (GE "                             \
    "_datadump_original_op_names) names no node of the framework graph")      \
  X(kEventsNotModelled, kInfo,                                                \
    "trace events deliberately not modelled (Ascend Overlap Analysis "        \
    "slices, counter tracks) were counted and skipped")                       \
  X(kFlowUnresolved, kInfo,                                                   \
    "a flow event's start or end matched no task at the same (pid, tid, ts)") \
  X(kCsvRowSkipped, kDataLoss,                                                \
    "a profiler CSV row lacked a required value and was skipped")             \
  X(kDuplicateNodeName, kDataLoss,                                            \
    "several nodes of one graph share a name; a task or declared origin "     \
    "naming it is linked by op type when that decides, else left unlinked")   \
  X(kModelUnplaced, kDataLoss,                                                \
    "a model could be placed neither as the framework nor as the compiled "   \
    "graph (a third model, a graph of another model, ...); it is loaded but " \
    "not linked")                                                             \
  X(kModelRoleGuessed, kInfo,                                                 \
    "which of two framework-looking models ran was guessed from a file name " \
    "('optim', '.opt.'); name it with --compiled or a run manifest")          \
  X(kTableRowSkipped, kDataLoss,                                              \
    "a profiler database row lacked a required value and was skipped")        \
  X(kRankMismatch, kDataLoss,                                                 \
    "a profiler output folder names one rank and its data another "           \
    "(torch_npu profiler_info_<rank>.json vs RANK_DEVICE_MAP); the "          \
    "folder's is kept")

namespace mi {

enum class Severity : uint8_t { kInfo, kDataLoss, kError };

enum class DiagnosticCode : uint16_t {
#define MI_DIAG_ENUM(name, severity, description) name,
  MI_DIAGNOSTIC_CODES(MI_DIAG_ENUM)
#undef MI_DIAG_ENUM
      kCount
};

}  // namespace mi
