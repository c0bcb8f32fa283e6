#pragma once

#include <memory>
#include <vector>

#include "importers/common/importer.h"

namespace mi::importers {

// Every importer model-inspector ships, in one explicit list.
std::vector<std::unique_ptr<Importer>> CreateBuiltinImporters();

}  // namespace mi::importers
