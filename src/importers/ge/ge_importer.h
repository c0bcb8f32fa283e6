#pragma once

// CANN GraphEngine graphs: GE graph dumps (ge_proto_*.txt, protobuf text of
// ge.proto.ModelDef) and ATC model JSON (`atc --mode=1` of an .om, `--mode=5`
// of a dump). A dump's stage (from its file name) decides its level: the
// Build exit graph and later are compiled, earlier stages framework-level;
// without a stage, fusion evidence (_datadump_original_op_names) decides.

#include <memory>
#include <string_view>

#include "importers/common/importer.h"

namespace mi::importers {

std::unique_ptr<Importer> CreateGeProtoTextImporter();
std::unique_ptr<Importer> CreateAtcJsonImporter();

// For tests and fuzzers.
Status ImportGeProtoTextFromBuffer(std::string_view text, ImportContext& ctx);
Status ImportAtcJsonFromBuffer(std::string_view text, ImportContext& ctx);

}  // namespace mi::importers
