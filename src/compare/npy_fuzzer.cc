// Fuzzes the .npy reader: kept tensors and msprobe's tensor dumps come from
// other machines, so a crafted file must give a clear error or an array
// whose data is exactly what its shape and type need, never a crash. A
// Status error is fine; a crash, a sanitizer report or kInternal is a bug.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/check.h"
#include "model_inspector/compare.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  mi::StatusOr<mi::NpyArray> array = mi::ParseNpy(bytes, "fuzz.npy");
  if (!array.ok()) {
    MI_CHECK(array.status().code() != mi::StatusCode::kInternal);
    return 0;
  }
  uint64_t elements = 1;
  for (int64_t dim : array->shape) {
    MI_CHECK(dim >= 0);
    elements *= static_cast<uint64_t>(dim);
  }
  MI_CHECK(array->count() == elements);
  // The metrics kernel reads every element it is given.
  mi::TensorSpan view = array->view();
  mi::StatusOr<mi::TensorMetrics> metrics = mi::CompareTensors(view, view);
  if (metrics.ok()) MI_CHECK(metrics->count == elements);
  return 0;
}
