#!/usr/bin/env python3
"""Ten AdamW steps of the tiny GPT in BF16 (gpt.train_source with
dtype="bf16") beside three references, from the same weights and batches:
the float64 reference that rounds where Kina rounds
(kina_reference.RoundingTrainer), the unrounded float64 model, and
PyTorch's autocast to BF16 (float32 weights; its rounding points are its
own). Prints each step's loss and distances, then each weight's distance
after the steps. docs/gpt.md ("Mixed precision") quotes a run.

    /usr/bin/python3 scripts/validate/compare_bf16_references.py [--steps N]
"""

import argparse
import dataclasses

import numpy as np
import torch

import kina
from kina.models import gpt
from kina.training import Trainer
from kina_reference import RoundingTrainer, TorchTrainer

CFG = dataclasses.replace(gpt.Config.tiny(), b=2)
LR = 1e-4  # test_gpt_training.py's: Adam amplifies noise less at small lr


class AutocastTrainer(TorchTrainer):
    """TorchTrainer in float32 with its loss under torch.autocast(BF16)."""

    def step(self, token_ids, targets):
        self.optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = self.loss(token_ids, targets)
        loss.backward()
        self.optimizer.step()
        return float(loss)


def relative(a, b):
    return abs(a - b) / abs(b)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10)
    steps = parser.parse_args().steps
    w = gpt.weights(CFG, seed=3, tied=True)
    module = kina.compile(gpt.train_source(CFG, dtype="bf16"),
                          "gpt_train_bf16.kina")
    trainers = {"kina": Trainer(CFG, w, lr=LR, module=module),
                "rounding": RoundingTrainer(CFG, w, lr=LR),
                "float64": TorchTrainer(CFG, w, lr=LR, dtype=torch.float64),
                "autocast": AutocastTrainer(CFG, w, lr=LR)}
    rng = np.random.default_rng(4)
    print("tiny GPT %s, BF16 step, lr %g; losses and their relative "
          "distances" % (CFG, LR))
    print("step  kina       rounding   float64    autocast   "
          "kina-rounding  kina-float64  autocast-float64  autocast-rounding")
    for step in range(1, steps + 1):
        ids, targets = (rng.integers(0, CFG.v, (CFG.b, CFG.t))
                        for _ in range(2))
        loss = {name: t.step(ids, targets) for name, t in trainers.items()}
        print("%4d  %.7f  %.7f  %.7f  %.7f  %.1e        %.1e       %.1e"
              "           %.1e" % (
                  step, loss["kina"], loss["rounding"], loss["float64"],
                  loss["autocast"],
                  relative(loss["kina"], loss["rounding"]),
                  relative(loss["kina"], loss["float64"]),
                  relative(loss["autocast"], loss["float64"]),
                  relative(loss["autocast"], loss["rounding"])))
    weights = {"kina": trainers["kina"].weights,
               **{name: trainers[name].weights()
                  for name in ("rounding", "float64", "autocast")}}
    print("\nafter %d steps: each weight's largest distance over how far "
          "the rounding reference moved it" % steps)
    print("weight     kina-rounding  kina-float64  autocast-float64")
    ratios = {pair: [] for pair in (("kina", "rounding"), ("kina", "float64"),
                                    ("autocast", "float64"))}
    for name in gpt.weight_names(CFG, tied=True):
        # (The float64 model leaves the key biases where they are: their
        # gradient is 0 but for rounding, which BF16's is not.)
        moved = np.abs(weights["rounding"][name] - w[name]).max()
        row = []
        for (a, b), values in ratios.items():
            values.append(np.abs(weights[a][name] - weights[b][name]).max() /
                          moved)
            row.append(values[-1])
        print("%-10s %.3f          %.3f         %.3f" % (name, *row))
    print("median     %.3f          %.3f         %.3f" % tuple(
        np.median(v) for v in ratios.values()))


if __name__ == "__main__":
    main()
