summary --quiet test/fixtures/resnet18/ort_all/onnxruntime_profile.json --top 3
