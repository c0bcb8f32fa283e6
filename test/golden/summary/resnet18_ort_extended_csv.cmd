summary --quiet test/fixtures/resnet18/ort_extended --format csv --top 5
