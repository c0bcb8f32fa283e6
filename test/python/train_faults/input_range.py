"""Un-normalised input to an embedding followed by LayerNorm: the model
embeds 8 continuous features (embed: Linear 8 -> 16), normalises them
(norm: LayerNorm) and regresses. Up to step INJECT - 1 the features are
standardised; from step INJECT the pipeline passes them raw, in their
original units (mean 20000, std 5000, like prices or counts)."""

import torch
from torch import nn

import common


class Embedded(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(common.FEATURES, 16)
        self.norm = nn.LayerNorm(16)
        self.fc = nn.Linear(16, 16)
        self.act = nn.ReLU()
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.act(self.fc(self.norm(self.embed(x)))))


a = common.args()
common.seed()
model = Embedded()
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
data = common.Teacher()


def batch(step):
    x, y = data.batch()
    if step >= common.INJECT:
        x = 20000 + 5000 * x  # the raw features: not standardised
    return x, y


common.train(model, opt, batch, a.output, a.plain)
common.report(fault="input_range", layer="embed", inject_step=common.INJECT,
              trigger_step=common.INJECT, cause="input_out_of_range")
