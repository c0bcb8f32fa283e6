summary --format csv test/fixtures/ascend/op_summary_block_dim.csv
