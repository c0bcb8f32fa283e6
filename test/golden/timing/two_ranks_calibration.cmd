analyze calibration --quiet test/fixtures/timing_truth/rank0.pt.trace.json test/fixtures/timing_truth/rank1.pt.trace.json
