#pragma once

// A failed Status raised as the package's exception for its code
// (python/model_inspector/errors.py: from_status), shared by the binding
// files. The GIL must be held.

#include <pybind11/pybind11.h>

#include <string>

#include "model_inspector/status.h"

namespace mi::python {

[[noreturn]] inline void Raise(const Status& status) {
  pybind11::object error =
      pybind11::module_::import("model_inspector.errors")
          .attr("from_status")(std::string(StatusCodeName(status.code())),
                               status.message());
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())),
                  error.ptr());
  throw pybind11::error_already_set();
}

}  // namespace mi::python
