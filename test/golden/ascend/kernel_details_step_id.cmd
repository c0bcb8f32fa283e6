summary --format csv test/fixtures/ascend/kernel_details_step_id.csv
