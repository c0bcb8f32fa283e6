summary --quiet test/fixtures/samples/traces/kineto/tracelens/h100__gaunernst_bert-small-uncased__1016001.json.gz --top 5
