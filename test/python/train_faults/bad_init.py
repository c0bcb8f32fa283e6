"""Bad initialisation: fc2's weight is multiplied by 100 right after
construction (before the monitor attaches, as a bad init would be). The
fault is there from step 0, so step 0 is both the cause's and the
trigger's step."""

import torch

import common

a = common.args()
common.seed()
model = common.MLP()
with torch.no_grad():
    model.fc2.weight.mul_(100)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = common.Teacher()
common.train(model, opt, lambda step: data.batch(), a.output, a.plain)
common.report(fault="bad_init", layer="fc2", inject_step=0, trigger_step=0,
              cause="bad_initialization")
