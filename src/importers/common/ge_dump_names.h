#pragma once

// What a CANN GraphEngine graph dump's file name says, shared by the
// ge_proto text importer (importers/ge) and the ge_onnx text importer
// (importers/onnx): ge_proto_{idx}_[aclop_]graph_{id}_{Stage}.txt,
// ge_onnx_{idx}[_aclop]_graph_{id}_{Stage}.pbtxt and the older forms
// (shared/formats/ascend.md §3.2).

#include <cstdint>
#include <string>
#include <string_view>

namespace mi::importers::ge {

// index -1 / empty when absent.
struct DumpFileName {
  int64_t index = -1;
  std::string graph_id;
  std::string stage;
};
DumpFileName ParseDumpFileName(std::string_view path);

// Stages after which the graph is the compiled one (GE's Build exit graph
// and later); earlier stages are framework-level views.
bool IsCompiledStage(std::string_view stage);

}  // namespace mi::importers::ge
