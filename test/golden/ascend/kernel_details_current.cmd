summary --format csv test/fixtures/ascend/kernel_details_current.csv
