#include "importers/common/ge_dump_names.h"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <string>
#include <string_view>

namespace mi::importers::ge {

DumpFileName ParseDumpFileName(std::string_view path) {
  DumpFileName out;
  std::string name =
      std::filesystem::path(std::string(path)).filename().string();
  std::string_view n = name;
  for (std::string_view prefix : {"ge_proto_", "ge_onnx_"}) {
    if (n.substr(0, prefix.size()) == prefix) {
      n.remove_prefix(prefix.size());
      break;
    }
  }
  size_t dot = n.find('.');
  if (dot != std::string_view::npos) n = n.substr(0, dot);
  // Leading index.
  size_t digits = 0;
  while (digits < n.size() &&
         std::isdigit(static_cast<unsigned char>(n[digits]))) {
    ++digits;
  }
  if (digits == 0) return out;
  std::from_chars(n.data(), n.data() + digits, out.index);
  n.remove_prefix(digits);
  if (!n.empty() && n[0] == '_') n.remove_prefix(1);
  if (n.substr(0, 6) == "aclop_") n.remove_prefix(6);
  if (n.substr(0, 6) == "graph_") {
    n.remove_prefix(6);
    size_t end = n.find('_');
    out.graph_id = std::string(n.substr(0, end));
    n = end == std::string_view::npos ? std::string_view() : n.substr(end + 1);
  }
  out.stage = std::string(n);
  return out;
}

bool IsCompiledStage(std::string_view stage) {
  // The compile exit graph and what follows it (resources assigned, tasks
  // generated, lowered execution graphs).
  for (std::string_view s :
       {"Build", "PreRunAfterBuild", "AfterAssignResource",
        "ComputeGraphBeforeLowering", "ExeGraphBeforeOptimize",
        "ExecuteGraphAfterSplit", "AfterAttrsCompress", "BeforeAttrsCompress",
        "afterUBMatch", "MergedComputeGraphAfterAtomicEnginePartition"}) {
    if (stage == s) return true;
  }
  return stage.find("AfterBuild") != std::string_view::npos ||
         stage.find("AssignLogicStream") != std::string_view::npos;
}

}  // namespace mi::importers::ge
