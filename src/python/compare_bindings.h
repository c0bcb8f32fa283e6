#pragma once

#include <pybind11/pybind11.h>

namespace mi::python {

// compare_tensors, compare_probe_sets_json, level_graphs
// (src/python/compare_bindings.cc).
void RegisterCompareBindings(pybind11::module_& m);

}  // namespace mi::python
