#pragma once

// Links the three levels of one run: compiled nodes to the framework nodes
// they replaced (fusion_matcher.h), tasks to graph nodes, launched device
// work to the host ops that launched it, and every node's status.

#include "diag/diagnostics.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::linker {

struct LinkInputs {
  GraphId framework;  // may be Invalid
  GraphId compiled;   // may be Invalid
};

// Mutates `trace` only to record links (task node, parent, op type, run).
Links Link(const Model& model, Trace* trace, const LinkInputs& inputs,
           DiagnosticSink* diagnostics);

}  // namespace mi::linker
