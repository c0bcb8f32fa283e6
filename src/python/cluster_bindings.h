#pragma once

#include <pybind11/pybind11.h>

namespace mi::python {

// discover_cluster_ranks, reduce_cluster_rank, analyze_cluster_json
// (src/python/cluster_bindings.cc).
void RegisterClusterBindings(pybind11::module_& m);

}  // namespace mi::python
