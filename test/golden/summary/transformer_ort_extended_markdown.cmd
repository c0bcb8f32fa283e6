summary --quiet test/fixtures/transformer/ort_extended --format markdown --top 10
