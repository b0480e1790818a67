"""Reductions over a split axis computed from per-device statistics
(lib/Sharding/SplitReductions.cpp): softmax, log_softmax, max and mean
along the split axis equal NumPy's (float32 rounding), on the host form
and the simulator, and the gradients of a vocab-parallel cross-entropy
equal the unsharded program's."""

import numpy as np
import pytest

import kina

REDUCTIONS = """
@mesh([2])
fn reductions(x: Tensor[F32, [3, 8], @sharded(axis=1)]) -> (Tensor[F32, [3, 8], @sharded(axis=1)], Tensor[F32, [3, 8], @sharded(axis=1)], Tensor[F32, [3, 1], @replicated], Tensor[F32, [3, 1], @replicated]) {
  return softmax(x, axis=1), log_softmax(x, axis=1), max(x, axis=1), mean(x, axis=1)
}
"""

CROSS_ENTROPY = """
@mesh([2])
fn ce(h: Tensor[F32, [8, 16], @replicated],
      w: Tensor[F32, [16, 64], @sharded(axis=1)],
      targets: Tensor[I64, [8], @replicated]) -> Tensor[F32, [], @replicated] {
  logits = h @ w                                                    : [8, 64]
  nll    = -sum(one_hot(targets, classes=64) * log_softmax(logits, axis=1), axis=1) : [8, 1]
  return reshape(mean(nll, axis=0), [])
}
fn ce_grad = reverseMode(ce, wrt=[h, w])
"""


def unsharded(source):
    return (source.replace("@mesh([2])\n", "")
            .replace("@sharded(axis=1)", "@host")
            .replace("@replicated", "@host"))


def test_reductions_over_a_split_axis_equal_numpy():
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    x[1, 5] = 30.0  # a row whose max is on the second device
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    want = [np.exp(log_p), log_p, x64.max(1, keepdims=True),
            x64.mean(1, keepdims=True)]
    module = kina.compile(REDUCTIONS, "reductions.kina")
    r = module.simulate("reductions", x)
    for got in (module.reductions(x), r.value):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=2e-6)
    # The max is exact, and every device holds its bits.
    assert np.array_equal(module.reductions(x)[2], x.max(1, keepdims=True))
    for device in r.per_device[1:]:
        np.testing.assert_array_equal(device[2], r.per_device[0][2])


def test_vocab_parallel_cross_entropy_gradients():
    rng = np.random.default_rng(0)
    h = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 64)).astype(np.float32)
    t = rng.integers(0, 64, 8).astype(np.int64)
    sharded = kina.compile(CROSS_ENTROPY, "ce.kina")
    plain = kina.compile(unsharded(CROSS_ENTROPY), "ce_plain.kina")
    want = plain.ce_grad(h, w, t)
    z = h.astype(np.float64) @ w
    log_p = z - z.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    assert float(want[0]) == pytest.approx(-log_p[np.arange(8), t].mean(),
                                           rel=1e-6)
    for got in (sharded.ce_grad(h, w, t),
                sharded.simulate("ce_grad", h, w, t).value):
        assert float(got[0]) == pytest.approx(float(want[0]), rel=1e-6)
        for g, ref in zip(got[1:], want[1:]):
            np.testing.assert_allclose(g, ref, rtol=1e-5,
                                       atol=1e-6 * np.abs(ref).max())
