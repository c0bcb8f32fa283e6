summary --quiet test/fixtures/multirank/rank0.pt.trace.json test/fixtures/multirank/rank1.pt.trace.json --top 5
