summary --quiet test/fixtures/resnet18/model.onnx test/fixtures/resnet18/torch_profile.pt.trace.json.gz --top 8
