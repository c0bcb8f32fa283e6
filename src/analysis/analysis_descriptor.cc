#include "analysis/analysis_descriptor.h"

#include <string>
#include <utility>

#include "base/check.h"

namespace mi::analysis {

std::string_view ParameterTypeName(ParameterType type) {
  switch (type) {
    case ParameterType::kInt:
      return "int";
    case ParameterType::kDouble:
      return "double";
    case ParameterType::kString:
      return "string";
    case ParameterType::kBool:
      return "bool";
  }
  return "string";
}

const ParameterValue& ParsedParams::Get(std::string_view name,
                                        ParameterType type) const {
  auto it = values_.find(name);
  MI_CHECK(it != values_.end() && it->second.first.type == type);
  return it->second.first;
}
int64_t ParsedParams::Int(std::string_view name) const {
  return Get(name, ParameterType::kInt).int_value;
}
double ParsedParams::Double(std::string_view name) const {
  return Get(name, ParameterType::kDouble).double_value;
}
const std::string& ParsedParams::String(std::string_view name) const {
  return Get(name, ParameterType::kString).string_value;
}
bool ParsedParams::Bool(std::string_view name) const {
  return Get(name, ParameterType::kBool).bool_value;
}
bool ParsedParams::Given(std::string_view name) const {
  auto it = values_.find(name);
  return it != values_.end() && it->second.second;
}
void ParsedParams::Set(std::string_view name, ParameterValue value,
                       bool given) {
  values_[std::string(name)] = {std::move(value), given};
}

}  // namespace mi::analysis
