"""Dead ReLUs: at the start of step INJECT fc2's bias is set to -100, far
below anything its weights can produce from fc1's activations (|W x| is a
few units), so every pre-activation of act2 is negative: act2 outputs only
zeros and no gradient reaches fc2 or anything before it."""

import torch

import common

a = common.args()
common.seed()
model = common.MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
data = common.Teacher()


def inject(step):
    if step == common.INJECT:
        with torch.no_grad():
            model.fc2.bias.fill_(-100.0)


common.train(model, opt, lambda step: data.batch(), a.output, a.plain, inject=inject)
common.report(fault="dead_relu", layer="fc2", inject_step=common.INJECT,
              trigger_step=common.INJECT, cause="dead_relu")
