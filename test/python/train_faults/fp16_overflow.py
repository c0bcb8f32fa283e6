"""float16 overflow: a sequence model embeds each token (proj: Linear
8 -> 8, float32, its bias 4: every embedded token has a component of
about 4 per channel), mean-pools the sequence in float16 (pool: the sum of
the tokens in float16, divided by their count, as a half-precision model
does), normalises (norm) and regresses (head). Sequences are 16 tokens long
until step INJECT - 1; from step INJECT they are 32768 tokens long, so
pool's float16 sum (about 4 x 32768 = 131072 per channel) passes 65504,
float16's largest value, and turns into inf before the division: the
tokens themselves (pool's input) are as large as ever.

--plain: the independent check of the step. The same seeded run without
the monitor (and with pool's sum in float32) prints the first step at
which a float32 sum of the tokens exceeds 65504."""

import torch
from torch import nn

import common

SHORT, LONG, BATCH = 16, 1 << 15, 8


class HalfMeanPool(nn.Module):
    """The mean over dim 1, computed and stored in float16."""

    def forward(self, x):
        h = x.half()
        return h.sum(dim=1) / h.shape[1]


class ToFloat(nn.Module):
    def forward(self, x):
        return x.float()


class Pooled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(common.FEATURES, 8)
        self.pool = HalfMeanPool()
        self.up = ToFloat()
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 1)
        with torch.no_grad():
            self.proj.bias.fill_(4.0)

    def forward(self, x):
        return self.head(self.norm(self.up(self.pool(self.proj(x)))))


a = common.args()
common.seed()
model = Pooled()
opt = torch.optim.SGD(model.parameters(), lr=0.02)
gen = torch.Generator().manual_seed(2)
w = torch.randn(common.FEATURES, 1, generator=torch.Generator().manual_seed(1))


def batch(step):
    tokens = LONG if step >= common.INJECT else SHORT
    x = torch.randn(BATCH, tokens, common.FEATURES, generator=gen)
    y = torch.tanh(x.mean(dim=1) @ w)
    return x, y


def observe(step, x):
    # pool's sum in float32: how far the float16 sum would have to go.
    return float(model.proj(x).sum(dim=1).abs().max())


# The snapshot is written K steps after the anomaly: no need to go on.
seen = common.train(model, opt, batch, a.output, a.plain, observe=observe,
                    steps=common.INJECT + common.WINDOW + 1, sample_limit=4096)
facts = dict(fault="fp16_overflow", layer="pool", inject_step=common.INJECT,
             trigger_step=common.INJECT, cause="fp16_overflow")
if a.plain:
    facts["first_over_65504"] = next((s for s, v in enumerate(seen) if v > 65504), None)
    facts["float32_sum_abs_max"] = seen
common.report(**facts)
