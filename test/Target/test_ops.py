"""Every kina op, compiled to a .so and called through the C ABI, against
NumPy. One module holds all the functions: several functions of one .so."""

from pathlib import Path

import numpy as np
import pytest

import abi

OPS = """
fn slice_mid(x: Tensor[F32, [4, 8], @host]) -> Tensor[F32, [4, 3], @host] {
  return slice[axis=1, start=2, stop=5] x
}
fn concat3(a: Tensor[F32, [2, 3], @host], b: Tensor[F32, [1, 3], @host]) -> Tensor[F32, [5, 3], @host] {
  return concat[axis=0] a b (a)
}
fn gather64(t: Tensor[F32, [8, 3], @host], ids: Tensor[I64, [2, 2], @host]) -> Tensor[F32, [2, 2, 3], @host] {
  return gather t ids
}
fn gather32(t: Tensor[F32, [5, 2, 2], @host], ids: Tensor[I32, [3], @host]) -> Tensor[F32, [3, 2, 2], @host] {
  return gather(t, ids)
}
fn gather_scalar(t: Tensor[F32, [5, 2], @host], id: Tensor[I64, [], @host]) -> Tensor[F32, [2], @host] {
  return gather t id
}
fn mm2(a: Tensor[F32, [3, 5], @host], b: Tensor[F32, [5, 4], @host]) -> Tensor[F32, [3, 4], @host] {
  return a @ b
}
fn mm3(a: Tensor[F32, [2, 3, 5], @host], b: Tensor[F32, [2, 5, 4], @host]) -> Tensor[F32, [2, 3, 4], @host] {
  return matmul(a, b)
}
fn mm4(a: Tensor[F32, [2, 3, 4, 5], @host], b: Tensor[F32, [2, 3, 5, 2], @host]) -> Tensor[F32, [2, 3, 4, 2], @host] {
  return a @ b
}
fn mm_shared(a: Tensor[F32, [2, 3, 4, 5], @host], w: Tensor[F32, [5, 2], @host]) -> Tensor[F32, [2, 3, 4, 2], @host] {
  return a @ broadcast(w)
}
fn mm_tiled(a: Tensor[F32, [16, 40], @host], b: Tensor[F32, [40, 96], @host]) -> Tensor[F32, [16, 96], @host] {
  return a @ b
}
fn mm_tiled_shared(a: Tensor[F32, [2, 8, 24], @host], w: Tensor[F32, [24, 64], @host]) -> Tensor[F32, [2, 8, 64], @host] {
  return a @ broadcast(w)
}
fn mm_transposed_a(x: Tensor[F32, [24, 1024], @host], b: Tensor[F32, [24, 64], @host]) -> Tensor[F32, [1024, 64], @host] {
  return x.transpose([1, 0]) @ b
}
fn bcast_leading(x: Tensor[F32, [3, 4], @host]) -> Tensor[F32, [2, 3, 4], @host] {
  return broadcast[shape=[2, 3, 4]] x
}
fn bcast_stretch(x: Tensor[F32, [3, 1], @host]) -> Tensor[F32, [2, 3, 4], @host] {
  return broadcast[shape=[2, 3, 4]] x
}
fn bcast_scalar(s: Tensor[F32, [], @host], x: Tensor[F32, [2, 3], @host]) -> Tensor[F32, [2, 3], @host] {
  return broadcast(s) * x
}
fn reshape_split(x: Tensor[F32, [2, 6], @host]) -> Tensor[F32, [3, 2, 2], @host] {
  return x.reshape([3, 2, 2])
}
fn reshape_scalar(x: Tensor[F32, [1, 1], @host]) -> Tensor[F32, [], @host] {
  return reshape(x, [])
}
fn transpose3(x: Tensor[F32, [2, 3, 4], @host]) -> Tensor[F32, [4, 2, 3], @host] {
  return x.transpose([2, 0, 1])
}
fn softmax0(x: Tensor[F32, [3, 4, 5], @host]) -> Tensor[F32, [3, 4, 5], @host] {
  return softmax(x, axis=0)
}
fn softmax1(x: Tensor[F32, [3, 4, 5], @host]) -> Tensor[F32, [3, 4, 5], @host] {
  return softmax(x, axis=1)
}
fn softmax2(x: Tensor[F32, [3, 4, 5], @host]) -> Tensor[F32, [3, 4, 5], @host] {
  return softmax(x, axis=2)
}
fn arith(a: Tensor[F32, [2, 3], @host], b: Tensor[F32, [2, 3], @host]) -> Tensor[F32, [2, 3], @host] {
  return -(a + b) * (a - b) / b
}
fn int_arith(a: Tensor[I32, [6], @host], b: Tensor[I32, [6], @host]) -> Tensor[I32, [6], @host] {
  return (a + b) * a - a / b
}
fn int_div(a: Tensor[I64, [5], @host], b: Tensor[I64, [5], @host]) -> Tensor[I64, [5], @host] {
  return a / b
}
fn literals(x: Tensor[F32, [3], @host]) -> Tensor[F32, [3], @host] {
  return x * broadcast(0.5) + broadcast(-2) + broadcast(1e-3)
}
fn scalar_fn(a: Tensor[F32, [], @host], b: Tensor[F32, [], @host]) -> Tensor[F32, [], @host] {
  return a * b + a
}
fn calls(x: Tensor[F32, [4, 8], @host]) -> Tensor[F32, [4, 3], @host] {
  y = slice_mid(x)
  return y + slice_mid(x)
}
fn lt(a: Tensor[F32, [8], @host], b: Tensor[F32, [8], @host]) -> Tensor[F32, [8], @host] {
  return a < b
}
fn le(a: Tensor[F32, [8], @host], b: Tensor[F32, [8], @host]) -> Tensor[F32, [8], @host] {
  return a <= b
}
fn gt(a: Tensor[F32, [8], @host], b: Tensor[F32, [8], @host]) -> Tensor[F32, [8], @host] {
  return a > b
}
fn ge(a: Tensor[F32, [8], @host], b: Tensor[F32, [8], @host]) -> Tensor[F32, [8], @host] {
  return a >= b
}
fn eq(a: Tensor[F32, [8], @host], b: Tensor[F32, [8], @host]) -> Tensor[F32, [8], @host] {
  return a == b
}
fn select(m: Tensor[F32, [8], @host], a: Tensor[F32, [8], @host], b: Tensor[F32, [8], @host]) -> Tensor[F32, [8], @host] {
  return where(m, a, b)
}
fn clamp_low(a: Tensor[F32, [8], @host]) -> Tensor[F32, [8], @host] {
  return where(a < broadcast(-1.0), broadcast(-1.0), a)
}
fn relu_abs_min(a: Tensor[F32, [8], @host], b: Tensor[F32, [8], @host]) -> Tensor[F32, [3, 8], @host] {
  return concat[axis=0] (reshape(relu(a), [1, 8])) (reshape(abs(a), [1, 8])) (reshape(minimum(a, b), [1, 8]))
}
"""

rng = np.random.default_rng(7)
f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def so(tmp_path_factory):
    return abi.compile_text(OPS, tmp_path_factory.mktemp("ops"), "ops")


def run(so, name, *args):
    status, out = so.call(name, *args)
    assert status == 0, name
    return out


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_exports_every_function(so):
    names = {f["name"] for f in so.signature["functions"]}
    assert {"slice_mid", "concat3", "mm4", "softmax2", "calls"} <= names
    sig = so.functions["gather64"]
    assert sig["params"] == [
        {"name": "t", "dtype": "f32", "shape": [8, 3]},
        {"name": "ids", "dtype": "i64", "shape": [2, 2]}]
    assert sig["result"] == {"dtype": "f32", "shape": [2, 2, 3]}


def test_slice_concat(so):
    x = f32(4, 8)
    np.testing.assert_array_equal(run(so, "slice_mid", x), x[:, 2:5])
    a, b = f32(2, 3), f32(1, 3)
    np.testing.assert_array_equal(run(so, "concat3", a, b),
                                  np.concatenate([a, b, a], axis=0))


def test_gather(so):
    t = f32(8, 3)
    ids = np.array([[7, 0], [3, 3]], dtype=np.int64)
    np.testing.assert_array_equal(run(so, "gather64", t, ids), t[ids])
    t3 = f32(5, 2, 2)
    ids32 = np.array([4, 0, 2], dtype=np.int32)
    np.testing.assert_array_equal(run(so, "gather32", t3, ids32), t3[ids32])
    t2 = f32(5, 2)
    np.testing.assert_array_equal(
        run(so, "gather_scalar", t2, np.array(3, dtype=np.int64)), t2[3])


@pytest.mark.parametrize("bad", [-1, 8, 2**62, -2**63])
def test_gather_out_of_range_is_status_1(so, bad):
    t = f32(8, 3)
    ids = np.array([[1, 2], [bad, 0]], dtype=np.int64)
    status, _ = so.call("gather64", t, ids)
    assert status == 1


def test_gather_out_of_range_i32_and_scalar(so):
    status, _ = so.call("gather32", f32(5, 2, 2),
                        np.array([0, 5, 1], dtype=np.int32))
    assert status == 1
    status, _ = so.call("gather_scalar", f32(5, 2), np.array(-7, np.int64))
    assert status == 1


def test_matmul_every_rank(so):
    a, b = f32(3, 5), f32(5, 4)
    close(run(so, "mm2", a, b), a @ b)
    a, b = f32(2, 3, 5), f32(2, 5, 4)
    close(run(so, "mm3", a, b), a @ b)
    a, b = f32(2, 3, 4, 5), f32(2, 3, 5, 2)
    close(run(so, "mm4", a, b), a @ b)
    w = f32(5, 2)
    close(run(so, "mm_shared", a, w), a @ w)


def test_matmul_on_the_tiled_vectorized_path(so):
    """M a multiple of 8 and N of 32: cache and register tiles, FMAs."""
    a, b = f32(16, 40), f32(40, 96)
    close(run(so, "mm_tiled", a, b), a @ b)
    a, w = f32(2, 8, 24), f32(24, 64)
    close(run(so, "mm_tiled_shared", a, w), a @ w)


def test_matmul_of_a_transpose_whose_rows_share_an_l1_set(so):
    """dW = X^T dY with X's rows 4 KiB apart (M = 1024): read through a
    copy of X in longer rows."""
    x, b = f32(24, 1024), f32(24, 64)
    want = x.T.astype(np.float64) @ b
    got = run(so, "mm_transposed_a", x, b)
    assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()


def test_broadcast(so):
    x = f32(3, 4)
    np.testing.assert_array_equal(run(so, "bcast_leading", x),
                                  np.broadcast_to(x, (2, 3, 4)))
    x = f32(3, 1)
    np.testing.assert_array_equal(run(so, "bcast_stretch", x),
                                  np.broadcast_to(x, (2, 3, 4)))
    s, x = np.array(1.5, np.float32), f32(2, 3)
    np.testing.assert_array_equal(run(so, "bcast_scalar", s, x), s * x)


def test_reshape_transpose(so):
    x = f32(2, 6)
    np.testing.assert_array_equal(run(so, "reshape_split", x),
                                  x.reshape(3, 2, 2))
    one = np.array([[4.25]], np.float32)
    assert run(so, "reshape_scalar", one) == np.float32(4.25)
    x = f32(2, 3, 4)
    np.testing.assert_array_equal(run(so, "transpose3", x),
                                  x.transpose(2, 0, 1))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax_every_axis(so, axis):
    x = f32(3, 4, 5) * 10
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    close(run(so, "softmax%d" % axis, x), e / e.sum(axis=axis, keepdims=True))


def test_softmax_is_stable_for_large_inputs(so):
    x = np.full((3, 4, 5), 1e30, np.float32)
    x[0, 0, 0] = 1e30 + 1e24
    out = run(so, "softmax2", x)
    assert np.all(np.isfinite(out))
    close(out.sum(axis=2), np.ones((3, 4), np.float32))


def test_float_arith(so):
    a, b = f32(2, 3), f32(2, 3)
    close(run(so, "arith", a, b), -(a + b) * (a - b) / b)


def test_int_arith(so):
    a = np.array([7, -7, 9, 0, 100, -3], np.int32)
    b = np.array([2, 2, -4, 5, 0, 1], np.int32)
    # kina's integer division truncates toward zero and x / 0 = 0
    quotient = np.where(b == 0, 0, np.trunc(a / np.where(b == 0, 1, b)))
    np.testing.assert_array_equal(run(so, "int_arith", a, b),
                                  (a + b) * a - quotient.astype(np.int32))


def test_int_division_edge_cases(so):
    lo = np.iinfo(np.int64).min
    a = np.array([lo, lo, 5, -5, 0], np.int64)
    b = np.array([-1, 0, 0, 2, -3], np.int64)
    np.testing.assert_array_equal(run(so, "int_div", a, b),
                                  np.array([lo, 0, 0, -2, 0], np.int64))


def test_literals_and_rank0(so):
    x = f32(3)
    close(run(so, "literals", x),
          x * np.float32(0.5) + np.float32(-2) + np.float32(1e-3))
    a, b = np.array(3.0, np.float32), np.array(-0.5, np.float32)
    assert run(so, "scalar_fn", a, b) == a * b + a


def test_calls_between_functions(so):
    x = f32(4, 8)
    np.testing.assert_array_equal(run(so, "calls", x), 2 * x[:, 2:5])


# Values with NaN, infinities, signed zeros and ties.
SPECIAL_A = np.array([np.nan, 1.0, -0.0, 0.0, -np.inf, 2.0, -3.0, 5.0],
                     np.float32)
SPECIAL_B = np.array([1.0, np.nan, 0.0, -0.0, -np.inf, 2.0, 4.0, -1.0],
                     np.float32)


@pytest.mark.parametrize("name,numpy_fn", [
    ("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
    ("ge", np.greater_equal), ("eq", np.equal)])
def test_comparisons_are_f32_masks_and_nan_compares_false(so, name, numpy_fn):
    want = numpy_fn(SPECIAL_A, SPECIAL_B).astype(np.float32)
    np.testing.assert_array_equal(run(so, name, SPECIAL_A, SPECIAL_B), want)


def test_where_reads_only_the_chosen_operand(so):
    # An inf or NaN in the operand not chosen does not leak (as it would
    # through m * a + (1 - m) * b); a NaN mask chooses on_true (NumPy).
    mask = np.array([1, 0, 0.5, np.nan, -0.0, 0, 1, 0], np.float32)
    a = np.array([1, np.inf, 3, 4, 5, np.nan, 7, 8], np.float32)
    b = np.array([np.inf, 2, np.nan, 6, 7, 8, np.nan, 10], np.float32)
    np.testing.assert_array_equal(run(so, "select", mask, a, b),
                                  np.where(mask != 0, a, b))
    x = f32(8) * 2
    np.testing.assert_array_equal(run(so, "clamp_low", x),
                                  np.where(x < -1, np.float32(-1), x))


def test_relu_abs_minimum(so):
    out = run(so, "relu_abs_min", SPECIAL_A, SPECIAL_B)
    np.testing.assert_array_equal(out[0], np.maximum(SPECIAL_A, 0))
    np.testing.assert_array_equal(out[1], np.abs(SPECIAL_A))
    assert np.signbit(out[1]).sum() == 0  # abs clears the sign of -0.0
    np.testing.assert_array_equal(out[2], np.minimum(SPECIAL_A, SPECIAL_B))


def test_inputs_are_not_modified(so):
    x = f32(2, 3, 4)
    before = x.copy()
    run(so, "transpose3", x)
    run(so, "softmax0", f32(3, 4, 5))
    np.testing.assert_array_equal(x, before)


def test_nan_and_inf_propagate(so):
    a = np.array([[np.nan, np.inf, -np.inf], [1, 0, -0.0]], np.float32)
    b = np.ones((2, 3), np.float32)
    with np.errstate(all="ignore"):
        expected = -(a + b) * (a - b) / b
    np.testing.assert_array_equal(run(so, "arith", a, b), expected)
    x = np.zeros((3, 4, 5), np.float32)
    x[1, 2, 3] = np.nan
    out = run(so, "softmax2", x)
    assert np.all(np.isnan(out[1, 2])) and not np.any(np.isnan(out[0]))


def test_long_function_split_into_loop_functions(tmp_path):
    """Inputs/long-function.kina: 27 top-level loops, each moved into a
    function of its own before LLVM optimizes (outline-loops.test)."""
    text = (Path(__file__).parent / "Inputs" / "long-function.kina").read_text()
    so = abi.compile_text(text, tmp_path, "long")
    x, w = f32(3, 5), f32(5, 5)
    y = x
    for _ in range(9):
        z = y @ w
        e = np.exp(z - z.max(axis=1, keepdims=True))
        y = e / e.sum(axis=1, keepdims=True)
    close(run(so, "long_chain", x, w), y)
    close(run(so, "short", x, w), x @ w)
