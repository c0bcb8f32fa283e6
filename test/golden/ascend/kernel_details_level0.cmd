summary --format csv test/fixtures/ascend/kernel_details_level0.csv
