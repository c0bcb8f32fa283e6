summary --format csv test/fixtures/ascend/op_summary_current.csv
