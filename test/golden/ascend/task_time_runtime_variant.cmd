summary --format csv test/fixtures/ascend/task_time_runtime_20230101120000.csv
