#include "importers/common/ascend_task_type.h"

#include <algorithm>

#include "base/strings.h"

namespace mi::importers {
namespace {

constexpr std::string_view kLayoutConversionOps[] = {
    "TransData", "TransDataRNN", "FormatTransfer"};

}  // namespace

bool IsAscendCommunicationType(std::string_view t) {
  return EqualsIgnoringCase(t, "HCCL") ||
         EqualsIgnoringCase(t, "COMMUNICATION");
}

TaskKind AscendTaskKind(std::string_view t) {
  static constexpr std::string_view kCompute[] = {
      "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV",
      "AI_CPU",  "DSA_SQE",        "FFTS",    "FFTS_PLUS"};
  for (std::string_view c : kCompute) {
    if (EqualsIgnoringCase(t, c)) return TaskKind::kCompute;
  }
  if ((t.size() > 7 && StartsWithIgnoringCase(t, "KERNEL_")) ||
      IsAscendCommunicationType(t)) {
    return TaskKind::kCompute;
  }
  if (ContainsIgnoringCase(t, "memcpy") || ContainsIgnoringCase(t, "sdma") ||
      ContainsIgnoringCase(t, "dma") || ContainsIgnoringCase(t, "memset")) {
    return TaskKind::kDataMovement;
  }
  if (ContainsIgnoringCase(t, "notify") || ContainsIgnoringCase(t, "event") ||
      ContainsIgnoringCase(t, "write value") ||
      ContainsIgnoringCase(t, "wait") || ContainsIgnoringCase(t, "record") ||
      ContainsIgnoringCase(t, "barrier")) {
    return TaskKind::kSync;
  }
  return TaskKind::kOther;
}

std::string_view AscendTaskClass(std::string_view task_type,
                                 std::string_view op_type,
                                 std::string_view name, TaskKind kind) {
  if (std::find(std::begin(kLayoutConversionOps),
                std::end(kLayoutConversionOps),
                op_type) != std::end(kLayoutConversionOps) ||
      name.find("TransData") != std::string_view::npos) {
    return kTaskClassLayoutConversion;
  }
  if (kind == TaskKind::kDataMovement) return kTaskClassDataMovement;
  if (task_type == "AI_CORE" || task_type == "MIX_AIC") return "ai_core";
  if (task_type == "AI_VECTOR_CORE" || task_type == "MIX_AIV") {
    return "ai_vector";
  }
  if (task_type == "AI_CPU") return "ai_cpu";
  // HCCL names its collectives hcom_<op>_ (hcom_allReduce_...).
  if (IsAscendCommunicationType(task_type) || name.starts_with("hcom_")) {
    return kTaskClassCommunication;
  }
  if (kind == TaskKind::kSync) return "sync";
  if (task_type == "DSA_SQE") return "dsa";
  return TaskKindName(kind);
}

void AddAscendOpTypeClasses(Trace& trace, SourceId source) {
  SourceInfo& info = trace.mutable_source(source);
  if (!info.op_type_classes.empty()) return;
  const StringId layout = trace.strings().Intern(kTaskClassLayoutConversion);
  for (std::string_view op : kLayoutConversionOps) {
    info.op_type_classes.emplace_back(trace.strings().Intern(op), layout);
  }
}

}  // namespace mi::importers
