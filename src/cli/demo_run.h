#pragma once

// The demo run `model-inspector open` serves when given no PATH (ResNet-18
// under ONNX Runtime: test/fixtures/resnet18), built into the binary by
// tools/embed_demo.py so that an installed binary needs no source tree.
// open_command.cc unpacks it into a private temporary folder to open it.

#include <string_view>
#include <vector>

namespace mi::cli {

struct DemoFile {
  std::string_view path;  // relative to the demo's root, e.g. "model.onnx"
  std::string_view data;
};

// The demo's files (generated).
const std::vector<DemoFile>& DemoRunFiles();
// The path, relative to the demo's root, opened as the run ("ort_all").
std::string_view DemoRunEntry();

}  // namespace mi::cli
