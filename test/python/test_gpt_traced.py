"""The GPT written in Python (kina.models.gpt_traced, traced by kina.jit)
against the generated program's training step (gen_gpt's, through
kina.training.Trainer) and torch.optim.AdamW; its data-parallel and
Megatron plans, given by NamedShardings alone, on the simulator."""

import dataclasses
import os

import numpy as np
import pytest

import kina
from kina.models import gpt
from kina.models import gpt_traced as gt
from kina.sharding import Mesh
from kina.training import Trainer

torch = pytest.importorskip("torch")
from kina_reference import TorchTrainer  # noqa: E402

CFG = dataclasses.replace(gpt.Config.tiny(), b=2)
LR = 1e-4  # as test_gpt_training.py, whose comment says why
STEPS = 10
SEED = 3


def batches(count):
    rng = np.random.default_rng(4)
    return [(rng.integers(0, CFG.v, (CFG.b, CFG.t)),
             rng.integers(0, CFG.v, (CFG.b, CFG.t))) for _ in range(count)]


def relative(got, want):
    want = np.asarray(want, np.float64)
    return float(np.abs(np.asarray(got, np.float64) - want).max() /
                 max(np.abs(want).max(), 1e-30))


heavy = pytest.mark.skipif(os.environ.get("KINA_UNDER_ASAN") == "1",
                           reason="GPT compiles: the plain suite runs them")


@heavy
def test_ten_steps_equal_the_generated_program_and_torch():
    params = gt.init_params(CFG, seed=SEED)
    state = gt.adamw_state(params)
    step = gt.train_step()
    mask = gpt.causal_mask(CFG)
    generated = Trainer(CFG, gpt.weights(CFG, seed=SEED, tied=True), lr=LR,
                        module=kina.compile(gpt.train_source(CFG)))
    reference = TorchTrainer(CFG, gpt.weights(CFG, seed=SEED, tied=True),
                             lr=LR, dtype=torch.float64)
    for number, (ids, targets) in enumerate(batches(STEPS), 1):
        loss, params, state = step(params, state, ids, targets, mask,
                                   gt.hyper(number, lr=LR), CFG.heads)
        want = generated.step(ids, targets)
        assert relative(loss, want) <= 1e-6, number
        assert relative(loss, reference.step(ids, targets)) <= 1e-4, number
    assert (step.trace_count, step.compile_count) == (1, 1)
    weights, m, v = (gt.by_name(CFG, tree) for tree in
                     (params, state["m"], state["v"]))
    moved = reference.weights()
    torch_m, torch_v = reference.moments()
    for name, value in weights.items():
        assert relative(value, generated.weights[name]) <= 1e-6, name
        assert relative(m[name], generated.m[name]) <= 1e-6, name
        assert relative(v[name], generated.v[name]) <= 1e-6, name
        assert relative(value, moved[name]) <= 1e-4, name
    # A moment is its gradient's rounding where the gradient is zero (the
    # key biases'): each kind compared against its largest moment.
    for ours, theirs in ((m, torch_m), (v, torch_v)):
        scale = max(np.abs(t).max() for t in theirs.values())
        for name in ours:
            assert np.abs(ours[name] - theirs[name]).max() <= 1e-4 * scale, \
                name


# A sharded step sums in another order than one device's, and Adam turns
# a gradient's rounding into up to lr * noise / eps of its weight:
# test_gpt_training.py's eps for sharded comparisons.
SHARDED_EPS = 1e-6


@pytest.fixture(scope="module")
def one_step():
    """The arguments of one step, and its results on one device."""
    params = gt.init_params(CFG, seed=SEED)
    (ids, targets), = batches(1)
    args = (params, gt.adamw_state(params), ids, targets,
            gpt.causal_mask(CFG), gt.hyper(1, lr=LR, eps=SHARDED_EPS),
            CFG.heads)
    copies = kina.tree_map(np.copy, args[:2])  # the step donates them
    return args, gt.train_step()(*copies, *args[2:])


@heavy
@pytest.mark.parametrize("plan, axis, collective", [
    ("data", "dp", "all_reduce"), ("megatron", "tp", "all_reduce")])
def test_plans_by_named_sharding_equal_one_device(one_step, plan, axis,
                                                  collective):
    args, host = one_step
    compiled = gt.train_step(CFG, Mesh((2,), (axis,)), plan).lower(
        *args).compile()
    cost = compiled.cost()
    assert collective in {t.collective for t in cost.traffic}
    run = compiled.simulate(*args, report=False)
    assert run.bytes_moved == 2 * cost.bytes_sent
    loss, params, state = run.value
    assert relative(loss, host[0]) <= 1e-5
    assert set(state) == {"m", "v"}
    for got, want in zip(kina.tree_leaves(params),
                         kina.tree_leaves(host[1])):
        assert got.shape == want.shape
        assert relative(got, want) <= 1e-5
    # A moment is its gradient's rounding where the gradient is zero (the
    # key biases'): compared against the largest moment of its kind.
    for kind in ("m", "v"):
        got, want = (kina.tree_leaves(t[kind]) for t in (state, host[2]))
        scale = max(np.abs(w).max() for w in want)
        assert max(np.abs(g - w).max() for g, w in zip(got, want)) <= \
            1e-4 * scale, kind
