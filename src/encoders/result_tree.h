#pragma once

// A result as a tree of values: what a ResultWriter received, kept for
// encoders that need to see a whole result before formatting it (tables
// size their columns from every row) and for tests.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"
#include "model_inspector/result_writer.h"

namespace mi::encoders {

struct ResultMember;

struct ResultValue {
  enum class Kind : uint8_t {
    kNull,
    kBool,
    kInt,
    kUInt,
    kDouble,
    kString,
    kObject,
    kArray
  };
  Kind kind = Kind::kNull;
  bool bool_value = false;
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double double_value = 0;
  std::string string_value;
  std::vector<ResultMember> members;  // objects, in written order
  std::vector<ResultValue> items;     // arrays

  // Out of line: a value holds values (members are complete only there).
  ResultValue();
  ResultValue(const ResultValue&);
  ResultValue(ResultValue&&) noexcept;
  ResultValue& operator=(const ResultValue&);
  ResultValue& operator=(ResultValue&&) noexcept;
  ~ResultValue();

  bool is_scalar() const {
    return kind != Kind::kObject && kind != Kind::kArray;
  }
  bool is_number() const {
    return kind == Kind::kInt || kind == Kind::kUInt || kind == Kind::kDouble;
  }
  // A member of an object, or null when absent.
  const ResultValue* Find(std::string_view key) const;
  // Numbers as double (0 for other kinds).
  double AsDouble() const;
};

// A key and its value in an object.
struct ResultMember {
  std::string first;   // the key
  ResultValue second;  // the value
};

class ResultTreeWriter : public ResultWriter {
 public:
  ResultTreeWriter();
  // The value written (complete once every object / array was closed).
  const ResultValue& root() const { return root_; }

 protected:
  void DoBeginObject() override;
  void DoEndObject() override;
  void DoBeginArray() override;
  void DoEndArray() override;
  void DoKey(std::string_view key) override;
  void DoString(std::string_view s) override;
  void DoInt(int64_t v) override;
  void DoUInt(uint64_t v) override;
  void DoDouble(double v) override;
  void DoBool(bool v) override;
  void DoNull() override;

 private:
  ResultValue& Next();  // where the next value goes
  ResultValue root_;
  std::vector<ResultValue*> open_;
  std::string key_;
  bool root_written_ = false;
};

ResultValue ToTree(const AnalysisResult& result);

}  // namespace mi::encoders
