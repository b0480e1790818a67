"""F64, F16 and BF16 tensors (docs/language.md, "Element types"): casts
round once to nearest even, against references written here from the
definition (not Kina's helpers); 16-bit ops round where the language says
(elementwise ops after each op, matmuls, reductions and softmax once, in
f32); the same across devices; the ledger counts each element's bytes;
bad input is named. F64 gradients are checked against torch.autograd in
test_reverse_mode.py."""

import fractions
import math

import numpy as np
import pytest

import kina

# Formats as (mantissa bits after the point, lowest normal exponent,
# largest finite value).
BF16 = (7, -126, float.fromhex("0x1.fep127"))
F16 = (10, -14, 65504.0)


def round_to_format(value, fmt):
    """`value` (a float) rounded to nearest even into format `fmt`, by exact
    rational arithmetic."""
    mantissa_bits, lowest_exponent, largest = fmt
    if math.isnan(value) or math.isinf(value) or value == 0:
        return value
    exact = fractions.Fraction(value)
    exponent = max(math.frexp(value)[1] - 1, lowest_exponent)
    ulp = fractions.Fraction(2) ** (exponent - mantissa_bits)
    steps, rest = divmod(abs(exact), ulp)
    if rest > ulp / 2 or (rest == ulp / 2 and steps % 2 == 1):
        steps += 1
    rounded = float(steps * ulp)
    top_ulp = fractions.Fraction(2) ** (math.frexp(largest)[1] - 1 -
                                        mantissa_bits)
    if steps * ulp >= fractions.Fraction(largest) + top_ulp / 2:
        rounded = math.inf
    return math.copysign(rounded, value)


def bf16_reference(values):
    """BF16 words of `values` rounded once from their exact value."""
    rounded = np.array([round_to_format(float(v), BF16) for v in
                        np.asarray(values, np.float64).ravel()], np.float32)
    return (rounded.view(np.uint32) >> 16).astype(np.uint16).reshape(
        np.shape(values))


def words(values):
    """BF16 words of values exact in BF16."""
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(
        np.uint16)


def bf16_values(words_):
    words_ = np.asarray(words_, np.uint16)
    return (words_.reshape(-1).astype(np.uint32) << 16).view(
        np.float32).astype(np.float64).reshape(words_.shape)


CASTS = """
fn to_bf16(x: Tensor[F32, [9], @host]) -> Tensor[BF16, [9], @host] {
  return cast(x, to=BF16)
}
fn wide_to_bf16(x: Tensor[F64, [9], @host]) -> Tensor[BF16, [9], @host] {
  return x.cast(to=BF16)
}
fn wide_to_f16(x: Tensor[F64, [9], @host]) -> Tensor[F16, [9], @host] {
  return cast[to=F16] x
}
fn ids_to_f16(x: Tensor[I64, [5], @host]) -> Tensor[F16, [5], @host] {
  return cast(x, to=F16)
}
fn from_bf16(x: Tensor[BF16, [9], @host]) -> Tensor[F64, [9], @host] {
  return cast(x, to=F64)
}
fn third() -> Tensor[F64, [], @host] {
  return cast(0.1, to=F64) + 1.0 / 3.0
}
"""

# Ties, near-ties on either side, an overflow, a NaN, a subnormal of f32.
NEAR_TIES = [1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, 1.0 + 2.0 ** -8 + 2.0 ** -40,
             -(1.0 + 2.0 ** -8 - 2.0 ** -40), 3.0e38 * 10, float("nan"),
             1.0e-40, -0.0, 1.0 + 2.0 ** -11 + 2.0 ** -30]


@pytest.fixture(scope="module")
def casts():
    return kina.compile(CASTS, "casts.kina")


def test_float32_to_bf16_rounds_to_nearest_even_where_truncation_would_not(
        casts):
    with np.errstate(over="ignore"):
        x = np.array(NEAR_TIES, np.float64).astype(np.float32)
    want = bf16_reference(x)
    got = casts.to_bf16(x)
    assert got.dtype == np.uint16
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert np.isnan(bf16_values(got[nan])).all()
    # The helper rounds as the compiled cast does, the NaN's bits too (sign
    # and leading payload kept, made quiet, as vcvtneps2bf16); truncating
    # the float32's bits (what a plain `>> 16` gives) differs on these.
    np.testing.assert_array_equal(kina.to_bf16(x), got)
    assert got[nan][0] == (x[nan].view(np.uint32)[0] >> 16) | 0x40
    truncated = (x.view(np.uint32) >> 16).astype(np.uint16)
    assert (truncated[~nan] != want[~nan]).any()
    np.testing.assert_array_equal(kina.from_bf16(got)[~nan],
                                  bf16_values(want[~nan]))


def test_float64_casts_round_once(casts):
    x = np.array(NEAR_TIES, np.float64)
    nan = np.isnan(x)
    got = casts.wide_to_bf16(x)
    # 1 + 2^-8 + 2^-40 rounds up: through float32 to nearest it would tie
    # and round down.
    np.testing.assert_array_equal(got[~nan], bf16_reference(x)[~nan])
    np.testing.assert_array_equal(kina.to_bf16(x)[~nan], got[~nan])
    assert bf16_values(got[2]) == 1.0 + 2.0 ** -7
    half = casts.wide_to_f16(x)
    assert half.dtype == np.float16
    want = np.array([round_to_format(v, F16) for v in x], np.float64)
    np.testing.assert_array_equal(half[~nan].astype(np.float64), want[~nan])
    assert np.isnan(half[nan]).all() and np.isinf(half[4])
    assert half[8] == np.float16(1.0 + 2.0 ** -10)  # not the tie's even 1.0
    ids = np.array([1, 2049, 2051, 65519, 70000], np.int64)
    np.testing.assert_array_equal(casts.ids_to_f16(ids),
                                  [1.0, 2048.0, 2052.0, 65504.0, np.inf])
    back = casts.from_bf16(words([1.5, -2.0, 3.0e38, 1e-38, 0.0, -0.0, 7.0,
                                  0.25, 1.0e10]))
    np.testing.assert_array_equal(back, bf16_values(words(
        [1.5, -2.0, 3.0e38, 1e-38, 0.0, -0.0, 7.0, 0.25, 1.0e10])))


def test_literals_take_the_type_of_what_they_meet(casts):
    # 0.1 and 1/3 as float64 literals, not float32 ones widened.
    assert casts.third() == 0.1 + 1.0 / 3.0


HALF = """
fn half(x: Tensor[F16, [3, 5], @host], w: Tensor[F16, [5, 4], @host], b: Tensor[F16, [4], @host]) -> (Tensor[F16, [3, 4], @host], Tensor[F16, [3, 1], @host], Tensor[F16, [3, 4], @host]) {
  h = x @ w
  y = h * broadcast(b) + exp(h) * broadcast(0.5)
  return y, sum(h, axis=1), softmax(h, axis=1)
}
"""


def test_f16_ops_round_where_the_language_says():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5)).astype(np.float16)
    w = rng.standard_normal((5, 4)).astype(np.float16)
    b = rng.standard_normal(4).astype(np.float16)
    y, s, p = kina.compile(HALF, "half.kina").half(x, w, b)
    # The product and the reductions in float64 here (exact for these
    # sizes), rounded once; each elementwise op rounds to float16.
    h = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float16)
    e = np.exp(h.astype(np.float64))
    np.testing.assert_array_equal(
        y, h * b + e.astype(np.float16) * np.float16(0.5))
    np.testing.assert_array_equal(
        s, h.astype(np.float64).sum(1, keepdims=True).astype(np.float16))
    shifted = np.exp(h.astype(np.float64) - h.max(1, keepdims=True))
    want = (shifted / shifted.sum(1, keepdims=True)).astype(np.float16)
    # exp in float32 is within a few float32 ulp: at most one float16 ulp
    # apart where a value sits at a float16 tie.
    assert np.abs(p.astype(np.float64) - want).max() <= 2.0 ** -11


MIXED = """
fn loss(x: Tensor[F32, [4, 8], @host], w: Tensor[F32, [8, 6], @host]) -> Tensor[F32, [], @host] {
  h = cast(x, to=BF16) @ cast(w, to=BF16)
  y = cast(h * h, to=F32)
  return reshape(sum(sum(y, axis=1), axis=0), [])
}
fn loss_grad = reverseMode(loss, wrt=[w])
"""


def test_bf16_matmul_gradients_round_where_the_language_says():
    # Multiples of 1/8 in [-2, 2] and such weights: every product and sum
    # below is exact in float64, so each rounding is the language's alone.
    rng = np.random.default_rng(5)
    x = (rng.integers(-16, 17, (4, 8)) / 8.0).astype(np.float32)
    w = (rng.integers(-16, 17, (8, 6)) / 8.0 + 1.0 / 64).astype(np.float32)
    value, gradient = kina.compile(MIXED, "mixed.kina").loss_grad(x, w)

    def bf16(a):
        return bf16_values(bf16_reference(a))

    xb, wb = bf16(x), bf16(w)
    h = bf16(xb @ wb)                       # f32 accumulation, one rounding
    y = bf16(h * h)                         # an elementwise op in bf16
    assert value == np.float32(y.sum())
    dy = np.ones_like(y)                    # cast's adjoint: back to bf16
    dh = bf16(bf16(dy * h) + bf16(dy * h))  # d(h * h) = c h + c h, each in bf16
    dw = bf16(xb.T @ dh)                    # the adjoint matmul, in bf16
    np.testing.assert_array_equal(gradient, dw.astype(np.float32))
    assert gradient.dtype == np.float32


PAIRS = """
fn product(a: Tensor[BF16, [3, 5], @host], b: Tensor[BF16, [5, 4], @host]) -> Tensor[BF16, [3, 4], @host] {
  return a @ b
}
fn batched(a: Tensor[BF16, [2, 3, 8], @host], b: Tensor[BF16, [2, 8, 4], @host]) -> Tensor[BF16, [2, 3, 4], @host] {
  return a @ b
}
"""


def pairwise_product(a, b):
    """vdpbf16ps's sum (Intel SDM): per pair of K, the odd element's
    product added to the f32 accumulator, then the even one's, each sum
    rounded to nearest even; an odd K's last paired with zero. Products of
    BF16 values are exact in float32."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    k = a.shape[-1]
    if k % 2:
        a = np.concatenate([a, np.zeros(a.shape[:-1] + (1,), np.float32)], -1)
        b = np.concatenate([b, np.zeros(b.shape[:-2] + (1,) + b.shape[-1:],
                                        np.float32)], -2)
    acc = np.zeros(a.shape[:-1] + b.shape[-1:], np.float32)
    for i in range(0, a.shape[-1], 2):
        for j in (i + 1, i):
            acc = acc + a[..., :, j, None] * b[..., None, j, :]
    return acc


def test_bf16_matmul_adds_pairs_in_vdpbf16ps_order():
    module = kina.compile(PAIRS, "pairs.kina")
    rng = np.random.default_rng(11)
    a = bf16_values(bf16_reference(rng.standard_normal((3, 5))))
    b = bf16_values(bf16_reference(rng.standard_normal((5, 4))))
    # Row 0 against column 0 (all ones): 1, 0, 2^-30, -1, 0. In pairs,
    # (0 + 1) - 1 + 2^-30 = 2^-30; in K's order 1 + 2^-30 rounds to 1
    # in float32, and the result is 0.
    a[0] = [1, 0, 2.0 ** -30, -1, 0]
    b[:, 0] = 1
    want = bf16_reference(pairwise_product(a, b).astype(np.float64))
    got = module.product(words(a), words(b))
    np.testing.assert_array_equal(got, want)
    assert bf16_values(got)[0, 0] == 2.0 ** -30
    in_order = (a[0].astype(np.float32).cumsum(dtype=np.float32))[-1]
    assert in_order == 0  # the order the test tells apart
    a3 = bf16_values(bf16_reference(rng.standard_normal((2, 3, 8))))
    b3 = bf16_values(bf16_reference(rng.standard_normal((2, 8, 4))))
    a3[1, 2] = [0, 0, 0, 0, 1, 0, 2.0 ** -30, -1]  # the same, later in K
    b3[1, :, 3] = 1
    got3 = module.batched(words(a3), words(b3))
    np.testing.assert_array_equal(
        got3, bf16_reference(pairwise_product(a3, b3).astype(np.float64)))
    assert bf16_values(got3)[1, 2, 3] == 2.0 ** -30


KERNEL_SHAPES = """
fn product(a: Tensor[BF16, [40, 96], @host], b: Tensor[BF16, [96, 64], @host]) -> Tensor[BF16, [40, 64], @host] {
  return a @ b
}
"""


@pytest.mark.avx512_bf16
def test_the_vdpbf16ps_kernel_adds_in_the_languages_pair_order(zen4_module):
    """The BF16 kernel (compiled for a Zen 4, which gets it; this host runs
    it if it has AVX512_BF16) against the NumPy model of the instruction:
    register tiles of pairs over a K of 48 pairs, and a row whose sum K's
    order would round differently."""
    module = zen4_module(KERNEL_SHAPES)
    rng = np.random.default_rng(5)
    a = bf16_values(bf16_reference(rng.standard_normal((40, 96))))
    b = bf16_values(bf16_reference(rng.standard_normal((96, 64))))
    a[17, 40:46] = [1, 0, 2.0 ** -30, -1, 0, 0]  # pairs (1, 0), (2^-30, -1)
    b[40:46, 33] = 1
    a[17, :40] = 0
    a[17, 46:] = 0
    want = bf16_reference(pairwise_product(a, b).astype(np.float64))
    got = module.product(words(a), words(b))
    np.testing.assert_array_equal(got, want)
    assert bf16_values(got)[17, 33] == 2.0 ** -30


SPLIT = """
@mesh([2])
fn product(x: Tensor[BF16, [4, 8], @sharded(axis=1)], w: Tensor[BF16, [8, 6], @sharded(axis=0)]) -> Tensor[BF16, [4, 6], @replicated] {
  return x @ w
}
fn column_sums(x: Tensor[F16, [4, 8], @sharded(axis=0)]) -> Tensor[F16, [1, 8], @replicated] {
  return sum(x, axis=0)
}
"""


def test_16_bit_partial_sums_add_in_f32_across_devices():
    module = kina.compile(SPLIT, "split.kina")
    rng = np.random.default_rng(7)
    x = bf16_reference(rng.standard_normal((4, 8)))
    w = bf16_reference(rng.standard_normal((8, 6)))
    xv, wv = bf16_values(x), bf16_values(w)
    # Each device rounds its partial product to bf16; the all-reduce adds
    # them in f32 and rounds once.
    parts = [bf16_values(bf16_reference(xv[:, k:k + 4] @ wv[k:k + 4]))
             for k in (0, 4)]
    want = bf16_reference(parts[0] + parts[1])
    run = module.simulate("product", x, w)
    np.testing.assert_array_equal(run.value, want)
    np.testing.assert_array_equal(module.product(x, w), want)
    h = rng.standard_normal((4, 8)).astype(np.float16)
    sums = [h[r:r + 2].astype(np.float64).sum(0).astype(np.float16)
            for r in (0, 2)]
    np.testing.assert_array_equal(
        module.simulate("column_sums", h).value,
        (sums[0].astype(np.float64) + sums[1]).astype(np.float16)[None])


def test_the_ledger_counts_each_element_type_in_its_bytes():
    f32 = kina.compile(SPLIT.replace("BF16", "F32"), "split32.kina")
    bf16 = kina.compile(SPLIT, "split16.kina")
    wide = f32.cost("product")
    narrow = bf16.cost("product")
    assert wide.bytes_sent == 2 * narrow.bytes_sent > 0
    run = bf16.simulate("product", np.zeros((4, 8), np.uint16),
                        np.zeros((8, 6), np.uint16))
    assert run.bytes_moved == 2 * narrow.bytes_sent


@pytest.mark.parametrize("source, message", [
    ("fn f(x: Tensor[F32, [4], @host]) -> Tensor[F32, [4], @host] {\n"
     "  return cast(x, to=F8)\n}\n",
     ":2:21: error: attribute 'to' takes an element type (F32, I32, I64, "
     "F64, F16, BF16), got 'F8'"),
    ("fn f(x: Tensor[F32, [4], @host], y: Tensor[BF16, [4], @host]) -> "
     "Tensor[F32, [4], @host] {\n  return x + y\n}\n",
     ":2:12: error: '+': lhs has element type 'f32' but rhs has 'bf16'"),
    ("fn f(x: Tensor[F16, [4], @host]) -> Tensor[F16, [4], @host] {\n"
     "  return x * broadcast(1e5)\n}\n",
     ":2:24: error: number 1.000000e+05 is out of range for F16"),
    ("fn f(x: Tensor[F32, [4], @host]) -> Tensor[I32, [4], @host] {\n"
     "  return cast(x, to=I32)\n}\n",
     ":2:10: error: cast: casts to a float element type (f32, f64, f16, "
     "bf16), got 'i32'"),
])
def test_bad_element_types_are_located(source, message):
    with pytest.raises(kina.CompileError) as error:
        kina.compile(source, "bad.kina")
    assert "bad.kina" + message in str(error.value)


def test_arguments_of_another_element_type_are_refused(casts):
    with pytest.raises(TypeError, match="uint16 \\(BF16 words: kina.to_bf16\\)"):
        casts.from_bf16(np.zeros(9, np.float32))
    with pytest.raises(TypeError, match="float32"):
        casts.to_bf16(np.zeros(9, np.uint16))
    with pytest.raises(TypeError, match="float array"):
        kina.to_bf16(np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="uint16"):
        kina.from_bf16(np.zeros(3, np.float32))


def test_f16_overflow_is_inf_as_ieee_says():
    m = kina.compile("fn f(x: Tensor[F16, [2], @host]) -> Tensor[F16, [2], "
                     "@host] {\n  return x * broadcast(1000.0)\n}\n", "overflow.kina")
    np.testing.assert_array_equal(m.f(np.array([100, -60], np.float16)),
                                  [np.inf, -60000])


def test_jit_traces_every_float_type_and_casts():
    import kina.numpy as knp
    import torch

    @kina.jit
    def mixed(w, x):
        h = (x.astype(knp.bfloat16) @ w.astype(knp.bfloat16)).astype(
            knp.float32)
        return knp.sum(h * h) * 0.5

    @kina.jit
    def wide(w, x):
        return knp.mean(knp.tanh(x @ w) ** 2) + 1.0 / 3.0

    rng = np.random.default_rng(11)
    x = (rng.integers(-16, 17, (4, 8)) / 8.0).astype(np.float32)
    w = (rng.integers(-16, 17, (8, 3)) / 8.0).astype(np.float32)
    h = bf16_values(bf16_reference(x.astype(np.float64) @ w))
    assert mixed(w, x) == np.float32((h * h).sum() * 0.5)
    assert mixed(w, x).dtype == np.float32

    x64, w64 = rng.standard_normal((4, 8)), rng.standard_normal((8, 3))
    value, grad = kina.value_and_grad(wide)(w64, x64)
    tw = torch.tensor(w64, requires_grad=True)
    reference = (torch.tanh(torch.tensor(x64) @ tw) ** 2).mean() + 1.0 / 3.0
    reference.backward()
    assert value.dtype == np.float64 and grad.dtype == np.float64
    assert abs(value - reference.item()) <= 1e-15
    np.testing.assert_allclose(grad, tw.grad.numpy(), rtol=1e-12, atol=1e-15)

    @kina.jit
    def halves(x):
        return knp.where(x > 0.0, x, knp.zeros_like(x)) + knp.full(
            x.shape, 0.1, knp.float16)

    y = np.array([-1.0, 0.5, 2.0], np.float16)
    np.testing.assert_array_equal(halves(y), np.maximum(y, 0) + np.float16(0.1))
