summary --quiet test/fixtures/resnet18/ort_all
