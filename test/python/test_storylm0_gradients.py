"""Gradients of a StoryLM-0 cross-entropy loss through the forward of
every example: the unsharded program and each annotated one
(storylm0_sharded_*), differentiated in the global view before the
propagation, on the host form and on the simulator. Each equals
torch.autograd in float64 on the same algebra (1e-4 relative per
tensor); the sharded gradients equal the unsharded ones within 1e-5, and
every device holds the same bits of each replicated gradient. Each
annotated example is also propagated first and then differentiated,
through the explicit collectives' transposes, with the same gradients."""

import os
import pathlib
import re
import subprocess

import numpy as np
import pytest
import torch

import kina
from kina.models import storylm0

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("KINA_BIN", ROOT / "build" / "bin"))
EXAMPLES = ["forward", "sharded_vocab", "sharded_vocab4", "sharded_proj",
            "sharded_heads", "sharded_row", "sharded_2d"]
WRT = ["embed", "wq", "wk", "wv", "wo", "lm_head"]
TARGETS = np.array([[4, 2, 6, 1]], dtype=np.int64)


def program(example):
    """The example with a loss over its forward and the loss's reverseMode."""
    text = (ROOT / "examples" / ("storylm0_%s.kina" % example)).read_text()
    params = re.search(r"fn storylm0_forward\((.*?)\) ->", text,
                       re.S).group(1)
    placed = "@replicated" if "@mesh" in text else "@host"
    names = re.findall(r"(\w+):", params)
    return text + """
fn loss(%s, targets: Tensor[I64, [1, 4], %s]) -> Tensor[F32, [], %s] {
  logits = storylm0_forward(%s)
  nll = -sum(one_hot(targets, classes=8) * log_softmax(logits, axis=2), axis=2)
  return reshape(mean(mean(nll, axis=1), axis=0), [])
}
fn loss_grad = reverseMode(loss, wrt=[%s])
""" % (params.strip().rstrip(","), placed, placed, ", ".join(names),
       ", ".join(WRT))


def torch_reference(args):
    """The loss and the gradients of WRT, float64 autograd."""
    token_ids, embed, wq, wk, wv, wo, lm_head, scale, mask = [
        torch.tensor(np.asarray(a)) for a in args]
    weights = {name: torch.tensor(np.asarray(a), dtype=torch.float64,
                                  requires_grad=True)
               for name, a in zip(["embed", "wq", "wk", "wv", "wo",
                                   "lm_head"], args[1:7])}
    w = weights
    heads, dh = storylm0.H, 4 // storylm0.H
    x = w["embed"][token_ids]
    split = lambda flat: flat.reshape(1, 4, heads, dh)
    q = split(x @ w["wq"]).permute(0, 2, 1, 3)
    k_t = split(x @ w["wk"]).permute(0, 2, 3, 1)
    v = split(x @ w["wv"]).permute(0, 2, 1, 3)
    probs = torch.softmax(q @ k_t * scale.double() + mask.double(), dim=3)
    attn = (probs @ v).permute(0, 2, 1, 3).reshape(1, 4, 4)
    logits = (x + attn @ w["wo"]) @ w["lm_head"]
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(4, 8), torch.tensor(TARGETS).reshape(4))
    loss.backward()
    return loss.item(), [w[name].grad.numpy() for name in WRT]


def close(got, want, tol):
    want = np.asarray(want, np.float64)
    assert np.abs(np.asarray(got, np.float64) - want).max() <= \
        tol * np.abs(want).max(), (got, want)


@pytest.fixture(scope="module")
def reference():
    return torch_reference(storylm0.arguments())


@pytest.fixture(scope="module")
def unsharded():
    module = kina.compile(program("forward"), "forward_loss.kina")
    return module.loss_grad(*storylm0.arguments(), TARGETS)


@pytest.mark.parametrize("example", EXAMPLES)
def test_loss_gradients_equal_torch(example, reference, unsharded):
    module = kina.compile(program(example), example + "_loss.kina")
    args = storylm0.arguments() + [TARGETS]
    value, *gradients = module.loss_grad(*args)
    ref_value, ref_gradients = reference
    assert value == pytest.approx(ref_value, rel=1e-5)
    for got, want in zip(gradients, ref_gradients):
        close(got, want, 1e-4)
    # Sharded gradients are the unsharded program's.
    for got, want in zip(gradients, unsharded[1:]):
        close(got, want, 1e-5)
    if module.mesh is None:
        return
    r = module.simulate("loss_grad", *args)
    sim_value, *sim_gradients = r.value
    assert sim_value == pytest.approx(ref_value, rel=1e-5)
    for got, want in zip(sim_gradients, unsharded[1:]):
        close(got, want, 1e-5)
    function = module.per_device["loss_grad"]
    for i, placed in enumerate(function.results):
        if all(s < 0 for s in placed.split) and not placed.partial:
            for device in range(1, module.mesh.num_devices):
                np.testing.assert_array_equal(r.per_device[device][i],
                                              r.per_device[0][i])
    # The report covers the backward ops, at their forward ops' lines.
    backward = [row for row in r.report if row.location.endswith(
        " (adjoint)")]
    assert backward and all(row.location.startswith(example + "_loss.kina:")
                            for row in backward)
    assert max(row.max_abs_diff for row in r.report) < 1e-4


@pytest.mark.parametrize("example", EXAMPLES[1:])
def test_collectives_differentiated_after_propagation(example, tmp_path,
                                                      unsharded):
    """--kina-differentiate on the propagated program (its all_gathers,
    all_reduces and all_slices in place) gives the gradients of the
    unsharded one, and moves no more bytes than the
    differentiate-then-propagate order."""
    source = tmp_path / (example + "_loss.kina")
    source.write_text(program(example))

    def opt(*passes):
        imported = subprocess.run(
            [str(BIN / "kina-translate"), "--import-kina", str(source)],
            check=True, capture_output=True, text=True).stdout
        return subprocess.run(
            [str(BIN / "kina-opt"), *passes, "--kina-cost"],
            input=imported, check=True, capture_output=True, text=True)

    after = opt("--kina-propagate-sharding", "--cse", "--kina-differentiate",
                "--kina-propagate-sharding", "--cse")
    before = opt("--kina-differentiate", "--kina-propagate-sharding", "--cse")
    moved = lambda run: int(re.search(
        r"cost of 'loss_grad', per device: .*; (\d+) bytes sent in all",
        run.stderr).group(1))
    assert moved(after) <= moved(before)
    mlir = tmp_path / "propagated_then_differentiated.mlir"
    mlir.write_text(after.stdout)
    subprocess.run([str(BIN / "kina-translate"), "--kina-to-so", str(mlir),
                    "-o", str(tmp_path / "grad.so")], check=True)
    module = kina.load(tmp_path / "grad.so")
    value, *gradients = module.loss_grad(*storylm0.arguments(), TARGETS)
    assert value == pytest.approx(unsharded[0], rel=1e-5)
    for got, want in zip(gradients, unsharded[1:]):
        close(got, want, 1e-5)
