summary --quiet test/fixtures/samples/traces/kineto/tb_plugin/samples__resnet50_num_workers_0__worker0.1623143566756.pt.trace.json.gz --top 5 --format markdown
