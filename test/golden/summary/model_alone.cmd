summary --quiet test/fixtures/resnet18/model.onnx
