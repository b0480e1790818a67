"""Loss gradients of the GPT of scripts/generate/gen_gpt.py at test width:
a mean token cross-entropy over gpt_forward, differentiated with respect
to every weight. The unsharded gradients equal torch.autograd (float64)
on the same model; the Megatron annotation's equal the unsharded ones on
the host form, the simulator and mpirun -n 2, every device holding the
same bits of each replicated gradient."""

import os

import numpy as np
import pytest
import torch

import kina
from kina.models import gpt
from kina_reference import TrainableGPT, named_gradients
from test_mpi import mpirun, save_inputs

CFG = gpt.Config.tiny()
WEIGHTS = gpt.weight_names(CFG)


def program(mesh=None):
    return gpt.loss_source(CFG, mesh=mesh)


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(3)
    ids = rng.integers(0, CFG.v, (1, CFG.t))
    targets = rng.integers(0, CFG.v, (1, CFG.t)).astype(np.int64)
    weights = gpt.weights(CFG, seed=0)
    return gpt.arguments(CFG, weights, ids) + [targets], weights, ids, targets


def torch_gradients(weights, ids, targets):
    """float64 autograd through the reference modules, by parameter name."""
    model = TrainableGPT(CFG, weights).double()
    logits = model(ids)
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(CFG.t, CFG.v), torch.tensor(targets).reshape(CFG.t))
    loss.backward()
    return loss.item(), named_gradients(model)


def close(got, want, tol, floor):
    """max|got - want| <= tol * max|want|; `floor` bounds the scale of a
    gradient that is zero in exact arithmetic (the key biases': softmax
    does not see a shift shared by every key)."""
    want = np.asarray(want, np.float64)
    scale = max(float(np.abs(want).max()), floor)
    error = float(np.abs(np.asarray(got, np.float64) - want).max())
    assert error <= tol * scale, (error, scale)


@pytest.fixture(scope="module")
def unsharded(inputs):
    args = inputs[0]
    module = kina.compile(program(), "gpt_loss.kina")
    value, *grads = module.gpt_loss_grad(*args)
    return value, dict(zip(WEIGHTS, grads))


def test_unsharded_gradients_equal_torch(inputs, unsharded):
    _, weights, ids, targets = inputs
    ref_value, ref = torch_gradients(weights, ids, targets)
    value, grads = unsharded
    assert value == pytest.approx(ref_value, rel=1e-5)
    floor = 1e-3 * max(np.abs(g).max() for g in ref.values())
    for name in WEIGHTS:
        close(grads[name], ref[name], 1e-4, floor)


@pytest.fixture(scope="module")
def megatron():
    return kina.compile(program(mesh=2), "gpt_loss_megatron.kina")


def test_megatron_gradients_equal_the_unsharded(inputs, unsharded, megatron):
    args = inputs[0]
    floor = 1e-3 * max(np.abs(g).max() for g in unsharded[1].values())
    value, *grads = megatron.gpt_loss_grad(*args)
    assert value == pytest.approx(unsharded[0], rel=1e-5)
    for name, got in zip(WEIGHTS, grads):
        close(got, unsharded[1][name], 1e-5, floor)
    r = megatron.simulate("gpt_loss_grad", *args, report=False)
    for name, got in zip(WEIGHTS, r.value[1:]):
        close(got, unsharded[1][name], 1e-5, floor)
    function = megatron.per_device["gpt_loss_grad"]
    for i, placed in enumerate(function.results):
        if all(s < 0 for s in placed.split) and not placed.partial:
            np.testing.assert_array_equal(r.per_device[1][i],
                                          r.per_device[0][i])


@pytest.mark.skipif(os.environ.get("KINA_SKIP_MPI") == "1",
                    reason="KINA_SKIP_MPI=1 (the sanitizer build)")
def test_megatron_gradients_under_mpirun(inputs, megatron, tmp_path):
    args = inputs[0]
    megatron.save(tmp_path / "grad.so")
    save_inputs(tmp_path / "in.npz", megatron, "gpt_loss_grad", args)
    done = mpirun(2, tmp_path / "grad.so", "gpt_loss_grad",
                  tmp_path / "in.npz", tmp_path / "out.npz", timeout=300)
    assert done.returncode == 0, done.stderr
    simulated = megatron.simulate("gpt_loss_grad", *args, report=False)
    with np.load(tmp_path / "out.npz") as out:
        for i in range(1 + len(WEIGHTS)):
            np.testing.assert_array_equal(out["result_%d" % i],
                                          simulated.value[i])
            np.testing.assert_array_equal(out["local_0_%d" % i],
                                          simulated.per_device[0][i])
