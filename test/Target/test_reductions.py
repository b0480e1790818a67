"""sum, mean, max and the math ops, compiled to a .so and called through
the C ABI, against NumPy on every axis, on large (tiled, threaded) shapes,
and on NaN and Inf."""

import numpy as np
import pytest

import abi

SHAPE = [3, 4, 5]
OPS = "\n".join(
    "fn %s%d(x: Tensor[F32, [3, 4, 5], @host]) -> Tensor[F32, [%s], @host] "
    "{\n  return %s(x, axis=%d)\n}" % (
        op, axis, ", ".join(str(1 if d == axis else n)
                            for d, n in enumerate(SHAPE)), op, axis)
    for op in ("sum", "mean", "max") for axis in range(3)) + """
fn math(x: Tensor[F32, [6, 7], @host]) -> Tensor[F32, [5, 6, 7], @host] {
  e = exp(x).reshape([1, 6, 7])
  l = log(x).reshape([1, 6, 7])
  s = sqrt(x).reshape([1, 6, 7])
  r = rsqrt(x).reshape([1, 6, 7])
  t = tanh(x).reshape([1, 6, 7])
  return concat[axis=0] e l s r t
}
fn big_rows(x: Tensor[F32, [256, 1024], @host]) -> Tensor[F32, [256, 1], @host] {
  return mean(x, axis=1) + max(x, axis=1) + sum(x, axis=1)
}
fn big_tanh(x: Tensor[F32, [512, 768], @host]) -> Tensor[F32, [512, 768], @host] {
  return tanh(x)
}
fn scalar_sum(x: Tensor[F32, [7], @host]) -> Tensor[F32, [1], @host] {
  return sum(x, axis=0)
}
"""

NUMPY = {"sum": np.sum, "mean": np.mean, "max": np.max}


@pytest.fixture(scope="module")
def so(tmp_path_factory):
    return abi.compile_text(OPS, tmp_path_factory.mktemp("reductions"),
                            "reductions")


def run(so, name, *args):
    status, out = so.call(name, *args)
    assert status == 0, name
    return out


@pytest.mark.parametrize("op", sorted(NUMPY))
@pytest.mark.parametrize("axis", range(3))
def test_reduction_every_axis(so, op, axis):
    x = np.random.default_rng(axis).standard_normal(SHAPE).astype(np.float32)
    out = run(so, "%s%d" % (op, axis), x)
    expected = NUMPY[op](x, axis=axis, keepdims=True)
    assert out.shape == expected.shape
    if op == "max":
        np.testing.assert_array_equal(out, expected)
    else:
        np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


def test_math_ops(so):
    x = np.random.default_rng(3).uniform(0.01, 9, (6, 7)).astype(np.float32)
    out = run(so, "math", x)
    expected = [np.exp(x), np.log(x), np.sqrt(x), 1 / np.sqrt(x), np.tanh(x)]
    for got, want in zip(out, expected):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_large_shapes(so):
    x = np.random.default_rng(4).standard_normal((256, 1024)).astype(
        np.float32)
    np.testing.assert_allclose(
        run(so, "big_rows", x),
        x.mean(1, keepdims=True) + x.max(1, keepdims=True) +
        x.sum(1, keepdims=True), rtol=1e-5, atol=1e-4)
    y = np.random.default_rng(5).standard_normal((512, 768)).astype(
        np.float32) * 4
    np.testing.assert_allclose(run(so, "big_tanh", y), np.tanh(y),
                               rtol=2e-6, atol=1e-7)


def test_nan_and_inf(so):
    x = np.ones(SHAPE, np.float32)
    x[0, 1, 2] = np.nan
    x[1, 2, 3] = np.inf
    x[2, 3, 4] = -np.inf
    for op, numpy in NUMPY.items():
        with np.errstate(all="ignore"):
            expected = numpy(x, axis=2, keepdims=True)
        np.testing.assert_array_equal(run(so, op + "2", x), expected)
    special = np.array([[np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1e-30],
                        [88.0, 89.0, -104.0, 1e30, 3.0, 0.5, 2.0]] * 3,
                       np.float32)
    out = run(so, "math", special)
    with np.errstate(all="ignore"):
        expected = [np.exp(special), np.log(special), np.sqrt(special),
                    np.float32(1) / np.sqrt(special), np.tanh(special)]
    for got, want in zip(out, expected):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=0,
                                   equal_nan=True)


def test_rank1_to_one_element(so):
    x = np.arange(7, dtype=np.float32)
    np.testing.assert_array_equal(run(so, "scalar_sum", x), [21.0])
