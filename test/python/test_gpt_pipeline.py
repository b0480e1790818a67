"""The GPT's blocks as pipeline stages (kina.models.gpt.pipeline_source,
run by kina.pipelining): 8 layers over 2 and 4 ranks, and interleaved
over 4 ranks with a block per virtual stage; the loss and every weight's
gradient against torch.autograd in float64 on the whole batch and
against Kina's unpipelined step, within 1e-5."""

import os

import numpy as np
import pytest
import torch

import kina
from kina import pipelining
from kina.models import gpt
from kina_reference import TrainableGPT, named_gradients

CFG = gpt.Config(layers=8, d=32, heads=2, t=8, v=64, b=1)
MICROBATCHES = 4
WHOLE = gpt.Config(layers=8, d=32, heads=2, t=8, v=64, b=MICROBATCHES)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    ids = rng.integers(0, CFG.v, (MICROBATCHES, CFG.t)).astype(np.int64)
    targets = rng.integers(0, CFG.v, (MICROBATCHES, CFG.t)).astype(np.int64)
    return gpt.weights(CFG, seed=2), ids, targets


@pytest.fixture(scope="module")
def references(data):
    weights, ids, targets = data
    model = TrainableGPT(WHOLE, weights).double()
    logits = model(ids)
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, CFG.v), torch.tensor(targets).reshape(-1))
    loss.backward()
    unpipelined = kina.compile(gpt.loss_source(WHOLE), "gpt_loss.kina")
    value, *grads = unpipelined.gpt_loss_grad(
        *gpt.arguments(WHOLE, weights, ids), targets)
    return ((loss.item(), named_gradients(model)),
            (float(value), dict(zip(gpt.weight_names(WHOLE), grads))))


def run(data, schedule, stages):
    weights, ids, targets = data
    pipe = pipelining.Pipeline(
        gpt.pipeline_source(CFG, stages),
        [gpt.PIPELINE_STAGE % k for k in range(stages)],
        batch=["token_ids", "targets"], constants=["mask"],
        schedule=schedule, microbatches=MICROBATCHES)
    return pipe.step(dict(weights, mask=gpt.causal_mask(CFG)),
                     {"token_ids": ids, "targets": targets})


# Three 8-layer programs with their backward: out of the sanitizer build
# (test_pipelining.py runs the same machinery there on a small MLP).
@pytest.mark.skipif(os.environ.get("KINA_UNDER_ASAN") == "1",
                    reason="8-layer compiles stay out of the sanitizer build")
@pytest.mark.parametrize("schedule, stages, ranks", [
    ("1f1b", 2, 2), ("zb-h1", 4, 4), ("interleaved", 8, 4)])
def test_pipelined_gradients_equal_the_unpipelined_step(data, references,
                                                        schedule, stages,
                                                        ranks):
    result = run(data, schedule, stages)
    assert result.trace.schedule.stages == ranks
    (torch_loss, torch_grads), (kina_loss, kina_grads) = references
    assert result.loss == pytest.approx(torch_loss, rel=1e-5)
    assert result.loss == pytest.approx(kina_loss, rel=1e-5)
    assert set(result.gradients) == set(kina_grads)
    for name, value in result.gradients.items():
        for want in (torch_grads[name], kina_grads[name]):
            scale = max(float(np.abs(want).max()), 1e-3)
            assert float(np.abs(value - want).max()) <= 1e-5 * scale, name


def test_more_stages_than_layers_is_refused():
    with pytest.raises(ValueError, match=r"8 layers cannot be cut into 16 "
                       r"pipeline stages"):
        gpt.pipeline_source(CFG, 16)
    with pytest.raises(ValueError, match=r"cannot be cut into 3"):
        gpt.pipeline_source(CFG, 3)
