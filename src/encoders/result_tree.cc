#include "encoders/result_tree.h"

namespace mi::encoders {

ResultValue::ResultValue() = default;
ResultValue::ResultValue(const ResultValue&) = default;
ResultValue::ResultValue(ResultValue&&) noexcept = default;
ResultValue& ResultValue::operator=(const ResultValue&) = default;
ResultValue& ResultValue::operator=(ResultValue&&) noexcept = default;
ResultValue::~ResultValue() = default;

const ResultValue* ResultValue::Find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

double ResultValue::AsDouble() const {
  switch (kind) {
    case Kind::kInt:
      return static_cast<double>(int_value);
    case Kind::kUInt:
      return static_cast<double>(uint_value);
    case Kind::kDouble:
      return double_value;
    default:
      return 0;
  }
}

ResultTreeWriter::ResultTreeWriter() = default;

ResultValue& ResultTreeWriter::Next() {
  if (open_.empty()) {
    root_written_ = true;
    return root_;
  }
  ResultValue* parent = open_.back();
  if (parent->kind == ResultValue::Kind::kObject) {
    parent->members.push_back(ResultMember{std::move(key_), ResultValue()});
    key_.clear();
    return parent->members.back().second;
  }
  parent->items.emplace_back();
  return parent->items.back();
}

void ResultTreeWriter::DoBeginObject() {
  ResultValue& v = Next();
  v.kind = ResultValue::Kind::kObject;
  open_.push_back(&v);
}
void ResultTreeWriter::DoEndObject() { open_.pop_back(); }
void ResultTreeWriter::DoBeginArray() {
  ResultValue& v = Next();
  v.kind = ResultValue::Kind::kArray;
  open_.push_back(&v);
}
void ResultTreeWriter::DoEndArray() { open_.pop_back(); }
void ResultTreeWriter::DoKey(std::string_view key) { key_ = std::string(key); }
void ResultTreeWriter::DoString(std::string_view s) {
  ResultValue& v = Next();
  v.kind = ResultValue::Kind::kString;
  v.string_value = std::string(s);
}
void ResultTreeWriter::DoInt(int64_t i) {
  ResultValue& v = Next();
  v.kind = ResultValue::Kind::kInt;
  v.int_value = i;
}
void ResultTreeWriter::DoUInt(uint64_t u) {
  ResultValue& v = Next();
  v.kind = ResultValue::Kind::kUInt;
  v.uint_value = u;
}
void ResultTreeWriter::DoDouble(double d) {
  ResultValue& v = Next();
  v.kind = ResultValue::Kind::kDouble;
  v.double_value = d;
}
void ResultTreeWriter::DoBool(bool b) {
  ResultValue& v = Next();
  v.kind = ResultValue::Kind::kBool;
  v.bool_value = b;
}
void ResultTreeWriter::DoNull() { Next().kind = ResultValue::Kind::kNull; }

ResultValue ToTree(const AnalysisResult& result) {
  ResultTreeWriter w;
  result.Write(w);
  return w.root();
}

}  // namespace mi::encoders
