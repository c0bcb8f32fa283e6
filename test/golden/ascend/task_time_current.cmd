summary --format csv test/fixtures/ascend/task_time_20250101120000.csv
