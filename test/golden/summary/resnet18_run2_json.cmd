summary --quiet test/fixtures/resnet18/ort_all --run 2 --format json --top 2
