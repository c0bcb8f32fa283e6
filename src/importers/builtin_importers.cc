#include "importers/builtin_importers.h"

#include "importers/ascend_communication/ascend_communication_importer.h"
#include "importers/ascend_csv/ascend_csv_importer.h"
#include "importers/ascend_db/ascend_db_importer.h"
#include "importers/ascend_timeline/ascend_timeline_importer.h"
#include "importers/chrome_trace/chrome_trace_importer.h"
#include "importers/ge/ge_importer.h"
#include "importers/om/om_importer.h"
#include "importers/onnx/onnx_importer.h"
#include "importers/training_snapshot/training_snapshot_importer.h"

namespace mi::importers {

std::vector<std::unique_ptr<Importer>> CreateBuiltinImporters() {
  std::vector<std::unique_ptr<Importer>> list;
  list.push_back(CreateOnnxImporter());
  list.push_back(CreateOnnxTextImporter());
  list.push_back(CreateGeOnnxTextImporter());
  list.push_back(CreateChromeTraceImporter());
  list.push_back(CreateTraceEventCsvImporter());
  // Before ascend_timeline: its claims leave out what else it finds in a
  // torch_npu output folder, the DB files among it.
  list.push_back(CreateAscendDbImporter());
  list.push_back(CreateAscendTimelineImporter());
  list.push_back(CreateAscendCsvImporter());
  list.push_back(CreateAscendCommunicationImporter());
  list.push_back(CreateAscendStepTraceImporter());
  list.push_back(CreateGeProtoTextImporter());
  list.push_back(CreateAtcJsonImporter());
  list.push_back(CreateOmImporter());
  list.push_back(CreateTrainingSnapshotImporter());
  return list;
}

}  // namespace mi::importers
