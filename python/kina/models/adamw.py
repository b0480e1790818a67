"""AdamW (PyTorch's: decoupled weight decay) as `.kina` statements, for a
training step that takes the scalars SCALARS as parameters (bc1 = 1 -
beta1^step and bc2 = 1 - beta2^step, the step's bias corrections): the
GPT's step and the tests' steps write the same update."""

import numpy as np

SCALARS = ("lr", "beta1", "beta2", "eps", "weight_decay", "bc1", "bc2")


def scalars(step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    """A step's scalar inputs for step `step` (from 1), as float32 0-d
    arrays in SCALARS order."""
    beta1, beta2 = betas
    values = (lr, beta1, beta2, eps, weight_decay, 1 - beta1 ** step,
              1 - beta2 ** step)
    return [np.array(v, dtype=np.float32) for v in values]


def scalar_lines():
    """The statements every update below reads, once per step."""
    return ["  decay = broadcast(1.0) - lr * weight_decay",
            "  step = lr / bc1",
            "  root2 = sqrt(bc2)",
            "  keep1 = broadcast(1.0) - beta1",
            "  keep2 = broadcast(1.0) - beta2"]


def update_lines(weight, m, v, gradient, new, decayed=True):
    """The statements binding `new` = (new m, new v, new weight) from
    `weight`, its moments `m` and `v` and its `gradient` (names in the
    step); `decayed`: the weight decays (PyTorch's recipe decays the 2-D
    weights only)."""
    new_m, new_v, new_weight = new
    shrunk = weight + " * broadcast(decay)" if decayed else weight
    return [
        "  %s = broadcast(beta1) * %s + broadcast(keep1) * %s"
        % (new_m, m, gradient),
        "  %s = broadcast(beta2) * %s + broadcast(keep2) * %s * %s"
        % (new_v, v, gradient, gradient),
        "  %s = %s - broadcast(step) * %s / (sqrt(%s) / broadcast(root2) + "
        "broadcast(eps))" % (new_weight, shrunk, new_m, new_v)]
