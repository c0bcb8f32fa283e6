"""Huge learning rate: fc2 has an optimizer group of its own, and from step
INJECT its lr is multiplied by 1000. The update of step INJECT is the first
one made with it (the cause's step); the loss of step INJECT + 1 is the
first computed with the damaged weights (the trigger's step)."""

import torch

import common

a = common.args()
common.seed()
model = common.MLP()
others = [p for n, p in model.named_parameters() if not n.startswith("fc2.")]
opt = torch.optim.SGD([{"params": others}, {"params": model.fc2.parameters()}],
                      lr=0.02, momentum=0.9)
data = common.Teacher()


def inject(step):
    if step == common.INJECT:
        opt.param_groups[1]["lr"] *= 1000


common.train(model, opt, lambda step: data.batch(), a.output, a.plain, inject=inject)
common.report(fault="huge_lr", layer="fc2", inject_step=common.INJECT,
              trigger_step=common.INJECT + 1, cause="learning_rate_too_high")
