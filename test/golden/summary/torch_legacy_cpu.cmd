summary --quiet test/fixtures/resnet18/torch_profile.pt.trace.json.gz --top 5
