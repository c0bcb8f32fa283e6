#pragma once

// Registers the tensor probe bindings (probe_bindings.cc) on `_core`.

#include <pybind11/pybind11.h>

namespace mi::python {

void RegisterProbeBindings(pybind11::module_& m);

}  // namespace mi::python
