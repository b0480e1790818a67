"""reverseMode against torch.autograd: for every op family, a function F
with a random cotangent seed (a result of rank > 0) or a rank-0 loss, and
G = reverseMode(F, wrt=[...]); G's value and gradients equal PyTorch's
float64 autograd on the same algebra within 1e-4 relative per tensor
(docs/design.md, "Reverse mode"), and within 1e-11 when the same program
is written in F64. One module per element type holds every case."""

import os
import re

import numpy as np
import pytest
import torch

import kina

# name: (kina source of F (and helpers) and G, torch function of the same
# parameters, parameter specs: (shape, kind) with kind "f" (normal), "p"
# (positive), "ids:N" (ids below N) or "ties" (values with ties), the
# result's shape (None: rank 0), wrt positions as G names them).
CASES = {
    "slice_concat": ("""
fn slice_concat(x: Tensor[F32, [3, 6], @host], y: Tensor[F32, [3, 2], @host]) -> Tensor[F32, [3, 5], @host] {
  return concat[axis=1] (slice[axis=1, start=2, stop=5] x) y
}""", lambda x, y: torch.cat([x[:, 2:5], y], dim=1),
        [((3, 6), "f"), ((3, 2), "f")], (3, 5), [0, 1]),
    # Repeated ids add their rows' cotangents.
    "gather": ("""
fn gather_rows(table: Tensor[F32, [5, 3], @host], ids: Tensor[I64, [2, 4], @host]) -> Tensor[F32, [2, 4, 3], @host] {
  return gather(table, ids)
}""", lambda t, ids: t[ids], [((5, 3), "f"), ((2, 4), "ids:5")],
        (2, 4, 3), [0]),
    "broadcast_reshape_transpose": ("""
fn shapes(x: Tensor[F32, [4, 3], @host], b: Tensor[F32, [3], @host], w: Tensor[F32, [3, 2], @host]) -> Tensor[F32, [2, 2, 4], @host] {
  h = x + broadcast(b)
  s = broadcast[shape=[2, 3, 2]] w
  y = (broadcast[shape=[2, 4, 3]] h) @ s
  return y.transpose([0, 2, 1]).reshape([2, 2, 4])
}""", lambda x, b, w: torch.matmul((x + b).expand(2, 4, 3),
                                   w.expand(2, 3, 2)).transpose(1, 2)
        .reshape(2, 2, 4),
        [((4, 3), "f"), ((3,), "f"), ((3, 2), "f")], (2, 2, 4), [0, 1, 2]),
    "softmax": ("""
fn soft(x: Tensor[F32, [2, 5], @host]) -> Tensor[F32, [2, 5], @host] {
  return softmax(x, axis=1) + log_softmax(x, axis=0)
}""", lambda x: torch.softmax(x, 1) + torch.log_softmax(x, 0),
        [((2, 5), "f")], (2, 5), [0]),
    "arithmetic": ("""
fn arith(a: Tensor[F32, [3, 4], @host], b: Tensor[F32, [3, 4], @host]) -> Tensor[F32, [3, 4], @host] {
  return (a * b - a / b) + -b
}""", lambda a, b: (a * b - a / b) + -b,
        [((3, 4), "f"), ((3, 4), "p")], (3, 4), [0, 1]),
    # Ties share the cotangent equally (max and maximum), as in PyTorch.
    "reductions": ("""
fn reduce(x: Tensor[F32, [3, 4], @host]) -> Tensor[F32, [3, 3], @host] {
  return concat[axis=1] (sum(x, axis=1)) (mean(x, axis=1)) (max(x, axis=1))
}""", lambda x: torch.cat([x.sum(1, keepdim=True), x.mean(1, keepdim=True),
                          x.amax(1, keepdim=True)], dim=1),
        [((3, 4), "ties")], (3, 3), [0]),
    "maximum": ("""
fn relu_max(a: Tensor[F32, [3, 4], @host], b: Tensor[F32, [3, 4], @host]) -> Tensor[F32, [3, 4], @host] {
  return maximum(a, b) + maximum(a, broadcast(0.0) * a)
}""", lambda a, b: torch.maximum(a, b) + torch.maximum(a, 0.0 * a),
        [((3, 4), "ties"), ((3, 4), "ties")], (3, 4), [0, 1]),
    # relu and abs have derivative 0 at 0, minimum halves ties, where sends
    # the cotangent to the chosen operand; masks pass none (PyTorch's).
    "masks": ("""
fn masked(a: Tensor[F32, [3, 4], @host], b: Tensor[F32, [3, 4], @host]) -> Tensor[F32, [3, 4], @host] {
  m = where(a <= broadcast(0.0), broadcast(1.0), a) * (a == b)
  return relu(a) + abs(b) + minimum(a, b) + where(a > b, a * b, b) + m + (a < b) - (a >= b)
}""", lambda a, b: torch.relu(a) + torch.abs(b) + torch.minimum(a, b)
        + torch.where(a > b, a * b, b)
        + torch.where(a <= 0, torch.ones_like(a), a) * (a == b).double()
        + (a < b).double() - (a >= b).double(),
        [((3, 4), "ties"), ((3, 4), "ties")], (3, 4), [0, 1]),
    "math": ("""
fn math(x: Tensor[F32, [2, 3], @host], y: Tensor[F32, [2, 3], @host]) -> Tensor[F32, [2, 3], @host] {
  return exp(y) + log(x) * sqrt(x) + rsqrt(x) - tanh(y)
}""", lambda x, y: torch.exp(y) + torch.log(x) * torch.sqrt(x)
        + torch.rsqrt(x) - torch.tanh(y),
        [((2, 3), "p"), ((2, 3), "f")], (2, 3), [0, 1]),
    # A mean cross-entropy through one_hot (F32 masks, cast to the F64
    # variant's type there) and log_softmax: rank 0, seed 1;
    # no gradient flows to the ids.
    "cross_entropy": ("""
fn xent(logits: Tensor[F32, [2, 3, 5], @host], targets: Tensor[I64, [2, 3], @host]) -> Tensor[F32, [], @host] {
  nll = -sum(one_hot(targets, classes=5).cast(to=F32) * log_softmax(logits, axis=2), axis=2)
  return reshape(mean(mean(nll, axis=1), axis=0), [])
}""", lambda logits, targets: torch.nn.functional.cross_entropy(
        logits.reshape(6, 5), targets.reshape(6)),
        [((2, 3, 5), "f"), ((2, 3), "ids:5")], None, [0]),
    # Calls are differentiated through; wrt out of parameter order.
    "calls": ("""
fn layer(x: Tensor[F32, [4, 3], @host], w: Tensor[F32, [3, 3], @host]) -> Tensor[F32, [4, 3], @host] {
  return tanh(x @ w)
}
fn two_layers(x: Tensor[F32, [4, 3], @host], w1: Tensor[F32, [3, 3], @host], w2: Tensor[F32, [3, 3], @host]) -> Tensor[F32, [], @host] {
  h = layer(layer(x, w1), w2)
  return reshape(sum(sum(h * h, axis=1), axis=0), [])
}""", lambda x, w1, w2: (torch.tanh(torch.tanh(x @ w1) @ w2) ** 2).sum(),
        [((4, 3), "f"), ((3, 3), "f"), ((3, 3), "f")], None, [2, 0]),
}

FUNCTION = {name: source.split("fn ")[-1].split("(")[0]
            for name, (source, *_) in CASES.items()}


def program():
    parts = []
    for name, (source, _, params, _, wrt) in CASES.items():
        fn = FUNCTION[name]
        names = re.findall(r"(\w+): Tensor",
                           source.split("fn " + fn + "(")[1].split(") ->")[0])
        parts.append(source)
        parts.append("fn %s_grad = reverseMode(%s, wrt=[%s])" % (
            fn, fn, ", ".join(names[i] for i in wrt)))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def module():
    return kina.compile(program(), "reverse_mode.kina")


# Each case's element type: its NumPy dtype and the tolerance against
# float64 autograd (F64 computes what torch does, in another order).
ELEMENT_TYPES = {"F32": (np.float32, 1e-4), "F64": (np.float64, 1e-11)}


@pytest.fixture(scope="module")
def f64_module():
    if os.environ.get("KINA_UNDER_ASAN") == "1":
        pytest.skip("a second compile of every case: the plain suite runs it")
    return kina.compile(program().replace("F32", "F64"), "reverse_mode_f64.kina")


def make(shape, kind, rng, dtype=np.float32):
    if kind.startswith("ids:"):
        # Every id at least twice where there is room: repeated rows add.
        n = int(kind.split(":")[1])
        return rng.integers(0, min(n, max(1, int(np.prod(shape)) // 2)),
                            shape).astype(np.int64)
    if kind == "ties":
        return rng.integers(-2, 3, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    return np.abs(x) + 0.5 if kind == "p" else x


def close(got, want, tol=1e-4):
    want = np.asarray(want, dtype=np.float64)
    scale = max(float(np.abs(want).max()), 1e-30)
    assert float(np.abs(np.asarray(got, np.float64) - want).max()) <= \
        tol * scale, (got, want)


@pytest.mark.parametrize("element", list(ELEMENT_TYPES))
@pytest.mark.parametrize("name", list(CASES))
def test_gradients_equal_torch_autograd(request, name, element):
    module = request.getfixturevalue(
        "module" if element == "F32" else "f64_module")
    dtype, tol = ELEMENT_TYPES[element]
    source, torch_fn, params, result_shape, wrt = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    args = [make(shape, kind, rng, dtype) for shape, kind in params]
    seed = (None if result_shape is None else
            rng.standard_normal(result_shape).astype(dtype))
    outputs = getattr(module, FUNCTION[name] + "_grad")(
        *(args + ([] if seed is None else [seed])))
    value, gradients = outputs[0], outputs[1:]
    assert len(gradients) == len(wrt)

    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True)
               if kind in ("f", "p", "ties") else torch.tensor(a)
               for a, (_, kind) in zip(args, params)]
    reference = torch_fn(*tensors)
    if seed is None:
        reference.backward()
    else:
        reference.backward(torch.tensor(seed, dtype=torch.float64))
    assert value.dtype == dtype
    close(value, reference.detach().numpy(), tol)
    for position, gradient in zip(wrt, gradients):
        assert gradient.shape == args[position].shape
        assert gradient.dtype == args[position].dtype
        close(gradient, tensors[position].grad.numpy(), tol)


def test_a_parameter_that_does_not_reach_the_result_gets_zeros():
    m = kina.compile("""
fn f(x: Tensor[F32, [3], @host], unused: Tensor[F32, [2], @host]) -> Tensor[F32, [], @host] {
  return reshape(sum(x * x, axis=0), [])
}
fn g = reverseMode(f, wrt=[unused, x])
""")
    x = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    value, d_unused, d_x = m.g(x, np.ones(2, np.float32))
    assert value == pytest.approx(14.0)
    np.testing.assert_array_equal(d_unused, np.zeros(2, np.float32))
    np.testing.assert_array_equal(d_x, 2 * x)


def test_equal_gradients_are_returned_as_two_results():
    # Both cotangents of a + b are one value: each result gets its own
    # buffer (MLIR 22's out-params would crash on the repeat).
    m = kina.compile("""
fn f(a: Tensor[F32, [3], @host], b: Tensor[F32, [3], @host]) -> Tensor[F32, [3], @host] {
  return a + b
}
fn g = reverseMode(f, wrt=[a, b])
""")
    a = np.arange(3, dtype=np.float32)
    seed = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    value, d_a, d_b = m.g(a, a, seed)
    np.testing.assert_array_equal(value, 2 * a)
    np.testing.assert_array_equal(d_a, seed)
    np.testing.assert_array_equal(d_b, seed)


def test_a_gather_id_out_of_range_fails_like_the_forward(module):
    table = np.ones((5, 3), np.float32)
    ids = np.array([[0, 1, 2, 3], [4, 5, 0, 1]], dtype=np.int64)
    seed = np.ones((2, 4, 3), np.float32)
    with pytest.raises(IndexError):
        module.gather_rows(table, ids)
    with pytest.raises(IndexError):
        module.gather_rows_grad(table, ids, seed)


def test_new_ops_compute_what_they_say():
    m = kina.compile("""
fn ops(x: Tensor[F32, [2, 3], @host], y: Tensor[F32, [2, 3], @host], ids: Tensor[I32, [4], @host]) -> (Tensor[F32, [2, 3], @host], Tensor[F32, [4, 3], @host], Tensor[F32, [2, 3], @host]) {
  return log_softmax(x, axis=1), one_hot(ids, classes=3), maximum(x, y)
}
""")
    x = np.array([[1, 2, 3], [-1e4, 0, 1e4]], dtype=np.float32)
    y = np.array([[3, 2, np.nan], [0, 0, 0]], dtype=np.float32)
    ids = np.array([0, 2, 3, -1], dtype=np.int32)
    log_sm, hot, larger = m.ops(x, y, ids)
    reference = torch.log_softmax(torch.tensor(x, dtype=torch.float64), 1)
    close(log_sm, reference.numpy(), 1e-6)
    np.testing.assert_array_equal(hot, [[1, 0, 0], [0, 0, 1], [0, 0, 0],
                                        [0, 0, 0]])
    np.testing.assert_array_equal(larger, np.maximum(x, y))
