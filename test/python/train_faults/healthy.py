"""No fault: the MLP fits the teacher with SGD (lr 0.02, momentum 0.9).
Nothing may trigger and the health score stays high."""

import torch

import common

a = common.args()
common.seed()
model = common.MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
data = common.Teacher()
common.train(model, opt, lambda step: data.batch(), a.output, a.plain)
common.report(fault="healthy", layer=None, inject_step=None, trigger_step=None, cause=None)
