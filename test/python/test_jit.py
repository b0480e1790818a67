"""kina.jit, kina.grad and kina.numpy: traced Python against NumPy and
torch.autograd, the trace cache counted, pytrees named and rebuilt,
named shardings run on the simulator, and errors that name the user's
line and key path."""

import collections
import dataclasses
import functools
import inspect
import os
import re

import numpy as np
import pytest
import torch

import kina
import kina.numpy as knp
from kina.sharding import Mesh, NamedSharding, P

RNG = np.random.default_rng(7)


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def line_of(marker):
    """The line of this file that holds `marker` (a comment)."""
    for number, text in enumerate(inspect.getsource(
            inspect.getmodule(line_of)).splitlines(), 1):
        if marker in text and "line_of" not in text:
            return number
    raise AssertionError(marker)


# --- kina.numpy against NumPy, one compiled module -------------------------

def numpy_ops(xp, a, b, c, v, ids):
    """The same code on NumPy (xp=np) and traced (xp=knp)."""
    softmax = (lambda x, axis: np.exp(x - x.max(axis, keepdims=True)) /
               np.exp(x - x.max(axis, keepdims=True)).sum(axis, keepdims=True))
    out = {
        "broadcast_add": a + b,                       # [2,3,4] + [4]
        "scalar": 2.0 * a - 1.5,
        "batched_matmul": a @ c,                       # [2,3,4] @ [4,5]
        "vector_matmul": v @ c,                        # [4] @ [4,5]
        "sum_axes": xp.sum(a, axis=(0, 2)),
        "mean_keepdims": xp.mean(a, axis=-1, keepdims=True),
        "max_all": xp.max(a),
        "reshape": a.reshape(6, -1),
        "transpose": xp.transpose(a, (2, 0, 1)),
        "T": c.T,
        "concatenate": xp.concatenate([a, a * 2.0], axis=1),
        "stack": xp.stack([b, b * 3.0], axis=1),
        "where": xp.where(a > 0.0, a, -a),
        "maximum": xp.maximum(a, 0.25),
        "minimum": xp.minimum(a, b),
        "index": a[1, 1:3, None, ...],
        "square": a ** 2,
        "unary": xp.tanh(xp.exp(xp.abs(a) * 0.1) + xp.log(xp.abs(b) + 1.0) +
                         xp.sqrt(xp.abs(a))),
        "compare": (a <= b) * 1.0 + (a == a) * 2.0,
        "take_axis1": xp.take(a, ids, axis=1),
        "index_ids": a[:, ids],
        "min": xp.min(a, axis=(1, 2)),
        "var_std": xp.var(a, axis=0) + xp.std(a, axis=-1, keepdims=True),
        "clip": xp.clip(a, -0.5, 0.5),
        "squeeze": xp.squeeze(a[:, :1]),
        "broadcast_to": xp.broadcast_to(b, (3, 4)),
        "np_sum": np.sum(a, axis=2),  # NumPy's function on a traced value
    }
    if xp is np:
        out["softmax"] = softmax(a, 1)
        out["log_softmax"] = np.log(softmax(a, 2))
        out["one_hot"] = (ids[..., None] == np.arange(4)).astype(np.float32)
        out["rsqrt"] = 1.0 / np.sqrt(np.abs(c) + 1.0)
    else:
        out["softmax"] = knp.softmax(a, axis=1)
        out["log_softmax"] = knp.log_softmax(a, axis=2)
        out["one_hot"] = knp.one_hot(ids, 4)
        out["rsqrt"] = knp.rsqrt(knp.abs(c) + 1.0)
    return out


def test_numpy_ops_equal_numpy():
    a, b, c, v = normal(2, 3, 4), normal(4), normal(4, 5), normal(4)
    ids = np.array([[0, 2], [1, 1]], np.int64)
    got = kina.jit(lambda *args: numpy_ops(knp, *args))(a, b, c, v, ids)
    want = numpy_ops(np, a, b, c, v, ids)
    assert set(got) == set(want)
    for name, expected in want.items():
        np.testing.assert_allclose(got[name], expected, rtol=2e-6,
                                   atol=2e-6, err_msg=name)
        assert got[name].shape == expected.shape, name


# --- the cache: one trace and one compile per signature --------------------

def test_cache_counts_traces_and_compiles():
    def affine(w, x, scale):
        return (x @ w) * scale

    f = kina.jit(affine, static_argnums=2)
    w = normal(3, 2)
    f.lower(w, normal(4, 3), 2.0)  # traced here; the first call reuses it
    assert (f.trace_count, f.compile_count) == (1, 0)
    for batch, scale, traces in [(4, 2.0, 1), (4, 2.0, 1), (5, 2.0, 2),
                                 (4, 2.0, 2), (4, 3.0, 3)]:
        x = normal(batch, 3)
        np.testing.assert_allclose(f(w, x, scale), x @ w * scale, rtol=1e-6)
        assert (f.trace_count, f.compile_count) == (traces, traces)


# --- pytrees ----------------------------------------------------------------

Layer = collections.namedtuple("Layer", "w b")


@dataclasses.dataclass
class Model:
    layers: list
    head: np.ndarray


def test_pytrees_flatten_to_named_parameters_and_rebuild():
    model = Model([Layer(normal(3, 3), normal(3)),
                   Layer(normal(3, 3), normal(3))], normal(3, 2))
    extra = {"a": {"b": normal(2)}, "a_b": normal(2), "a__b": normal(2)}

    def forward(model, extra, x):
        for layer in model.layers:
            x = knp.tanh(x @ layer.w + layer.b)
        return {"out": x @ model.head,
                "sums": (extra["a"]["b"] + extra["a_b"], extra["a__b"])}

    f = kina.jit(forward)
    x = normal(4, 3)
    source = f.lower(model, extra, x).source()
    for name in ["model__layers__0__w", "model__layers__1__b", "model__head",
                 "extra__a__b", "extra__a_b", "extra___615f5f62"]:
        assert re.search(r"^\s*%s: Tensor" % name, source, re.M), name
    got = f(model, extra, x)
    h = x
    for layer in model.layers:
        h = np.tanh(h @ layer.w + layer.b)
    assert sorted(got) == ["out", "sums"] and isinstance(got["sums"], tuple)
    np.testing.assert_allclose(got["out"], h @ model.head, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(got["sums"][0],
                                  extra["a"]["b"] + extra["a_b"])
    np.testing.assert_array_equal(got["sums"][1], extra["a__b"])


def test_reserved_names_are_escaped():
    def f(sum, max):  # both are op names in the language
        return sum * max

    x, y = normal(3), normal(3)
    np.testing.assert_array_equal(kina.jit(f)(x, y), x * y)


def test_keyword_arguments_and_defaults():
    def scale(x, factor=2.0, mode="double"):
        return x * factor if mode == "double" else x

    f = kina.jit(scale, static_argnums=2)
    x = normal(3)
    np.testing.assert_array_equal(f(x), x * 2.0)
    np.testing.assert_array_equal(f(x=x), x * 2.0)
    np.testing.assert_array_equal(f(x, factor=np.float32(3)), x * 3.0)
    assert f.trace_count == 2  # (x) and (x, factor): two signatures
    with pytest.raises(ValueError, match="static_argnums: 5, but scale "
                       "takes 3"):
        kina.jit(scale, static_argnums=5)
    with pytest.raises(ValueError, match="both static and donated"):
        kina.jit(scale, static_argnums=0, donate_argnums=-3)


@dataclasses.dataclass
class WithCache:
    w: np.ndarray
    cache: np.ndarray = dataclasses.field(init=False)

    def __post_init__(self):
        self.cache = self.w * 2


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def __hash__(self):
        return hash(self.factor)

    def __eq__(self, other):
        return isinstance(other, Scaler) and other.factor == self.factor

    @kina.jit
    def plain(self, x):  # `self` traced: not an array
        return x

    @functools.partial(kina.jit, static_argnums=0)
    def scale(self, x):
        return x * self.factor


def test_operators_work_without_importing_kina_numpy():
    """`import kina` alone gives traced values their operators."""
    import subprocess
    import sys
    done = subprocess.run(
        [sys.executable, "-c", "import numpy as np, kina; "
         "print(kina.jit(lambda a: a * 2.0 + 1.0)(np.ones(2, np.float32)))"],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=
                                                 os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[3. 3.]"


def test_jax_habits():
    x = normal(3)
    # A method: `self` is argument 0, static here.
    np.testing.assert_allclose(Scaler(2.0).scale(x), 2 * x, rtol=1e-6)
    with pytest.raises(TypeError, match="the argument self is a Scaler"):
        Scaler(2.0).plain(x)
    # A dataclass with a field(init=False) rebuilds.
    out = kina.jit(lambda d: d)(WithCache(x))
    assert isinstance(out, WithCache)
    np.testing.assert_array_equal(out.cache, 2 * x)
    # Python floats as results; abs(); argnums from the end.
    value, absolute = kina.jit(lambda a: (0.5, abs(a)))(x)
    assert value == np.float32(0.5) and value.shape == ()
    np.testing.assert_array_equal(absolute, np.abs(x))
    grads = kina.grad(lambda a, b: knp.sum(a * b), argnums=-1)(x, 3 * x)
    np.testing.assert_allclose(grads, x, rtol=1e-6)
    # A kina.jit function called inside another is traced into it.
    inner = kina.jit(lambda a: a * 2.0)
    outer = kina.jit(lambda a: inner(a) + 1.0)
    np.testing.assert_allclose(outer(x), 2 * x + 1, rtol=1e-6)
    assert inner.trace_count == 0 and outer.trace_count == 1
    # Arrays alone: the second call finds the program by shapes and dtypes;
    # another dtype still gets the argument's error.
    product = kina.jit(lambda a, b: a * b)
    for _ in range(2):
        np.testing.assert_array_equal(product(x, x), x * x)
    assert product.trace_count == 1
    with pytest.raises(TypeError, match="the argument b has dtype int8"):
        product(x, x.astype(np.int8))
    # Arrays are immutable; a value kept from a finished trace is named.
    with pytest.raises(kina.TraceError, match="immutable.*knp.where"):
        kina.jit(lambda a: a.__setitem__(0, 1.0))(x)
    kept = []
    kina.jit(lambda a: kept.append(a) or a)(x)
    with pytest.raises(kina.TraceError, match="after its trace ended"):
        kina.jit(lambda a: a + kept[0])(x)


def test_tree_map_checks_structure():
    a = {"x": np.float32(1), "y": [np.float32(2)]}
    assert kina.tree_map(lambda p, q: p + q, a, a) == {"x": 2, "y": [4]}
    with pytest.raises(ValueError, match=r"\['y'\]"):
        kina.tree_map(lambda p, q: p, a, {"x": 1, "y": [1, 2]})


# --- gradients against torch.autograd ---------------------------------------

def mlp_loss(params, x, y):
    h = knp.tanh(x @ params["layers"][0]["w"] + params["layers"][0]["b"])
    logits = h @ params["layers"][1]["w"]
    return -knp.mean(knp.sum(knp.log_softmax(logits, axis=-1) * y, axis=-1))


def torch_mlp_loss(params, x, y):
    h = torch.tanh(x @ params["layers"][0]["w"] + params["layers"][0]["b"])
    logits = h @ params["layers"][1]["w"]
    return -(torch.log_softmax(logits, -1) * y).sum(-1).mean()


def mlp_params():
    return {"layers": [{"w": normal(4, 8), "b": normal(8)},
                       {"w": normal(8, 3)}]}


def test_value_and_grad_equals_torch():
    params, x = mlp_params(), normal(5, 4)
    y = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]
    value, grads = kina.value_and_grad(mlp_loss)(params, x, y)
    torch_params = kina.tree_map(
        lambda p: torch.tensor(p, dtype=torch.float64, requires_grad=True),
        params)
    loss = torch_mlp_loss(torch_params, torch.tensor(x, dtype=torch.float64),
                          torch.tensor(y, dtype=torch.float64))
    loss.backward()
    np.testing.assert_allclose(value, loss.item(), rtol=1e-5)
    kina.tree_map(lambda g, t: np.testing.assert_allclose(
        g, t.grad.numpy(), rtol=1e-4, atol=1e-6), grads, torch_params)


def test_grad_inside_jit_with_argnums_tuple_and_donation():
    def step(params, x, y, lr):
        dp, dx = kina.grad(mlp_loss, argnums=(0, 1))(params, x, y)
        new = kina.tree_map(lambda p, g: p - lr * g, params, dp)
        return new, knp.sum(dx * dx)

    params, x = mlp_params(), normal(5, 4)
    y = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]
    before = kina.tree_map(np.copy, params)
    f = kina.jit(step, donate_argnums=0, static_argnums=3)
    assert "reverseMode(mlp_loss, wrt=[" in f.lower(params, x, y, 0.5).source()
    new, dx_norm = f(params, x, y, 0.5)
    torch_params = kina.tree_map(
        lambda p: torch.tensor(p, dtype=torch.float64, requires_grad=True),
        before)
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    torch_mlp_loss(torch_params, tx, torch.tensor(y, dtype=torch.float64)
                   ).backward()
    kina.tree_map(lambda n, p, t: np.testing.assert_allclose(
        n, p - 0.5 * t.grad.numpy(), rtol=1e-5, atol=1e-6),
        new, before, torch_params)
    np.testing.assert_allclose(dx_norm, (tx.grad.numpy() ** 2).sum(),
                               rtol=1e-4)
    # Donated: each result was written into the argument's own array.
    assert new["layers"][0]["w"] is params["layers"][0]["w"]
    assert new["layers"][1]["w"] is params["layers"][1]["w"]


def test_grad_of_a_closure_over_traced_values():
    """A function differentiated inside kina.jit may close over the
    caller's traced values (JAX's idiom): they become parameters of the
    traced function that the reverseMode does not differentiate."""
    def fit(w, x, y):
        scale = knp.sum(x) * 0.01
        return kina.grad(lambda v: knp.mean((x @ v * scale - y) ** 2))(w)

    w, x, y = normal(3, 2), normal(5, 3), normal(5, 2)
    got = kina.jit(fit)(w, x, y)
    tw = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    tx, ty = (torch.tensor(a, dtype=torch.float64) for a in (x, y))
    (((tx @ tw) * (tx.sum() * 0.01) - ty) ** 2).mean().backward()
    np.testing.assert_allclose(got, tw.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert "wrt=[v]" in kina.jit(fit).lower(w, x, y).source()


# --- named shardings ---------------------------------------------------------

MESH = Mesh((2,), ("dp",))


def regression_loss(w, x, y):
    d = x @ w - y
    return knp.mean(d * d)


def sgd_momentum(w, m, x, y):
    loss, g = kina.value_and_grad(regression_loss)(w, x, y)
    m = 0.9 * m + g
    return loss, w - 0.1 * m, m  # the new weight


def test_zero1_by_named_sharding_on_the_simulator():
    replicated, batch = NamedSharding(MESH, P()), NamedSharding(MESH, P("dp"))
    split = NamedSharding(MESH, P("dp", None))
    f = kina.jit(sgd_momentum, in_shardings=(replicated, split, batch, batch),
                 out_shardings=(replicated, replicated, split))
    w, m, x, y = normal(4, 2), normal(4, 2), normal(8, 4), normal(8, 2)
    compiled = f.lower(w, m, x, y).compile()
    cost = compiled.cost()
    kinds = {(t.collective, t.over) for t in cost.traffic}
    assert ("reduce_scatter", "dp") in kinds and ("all_gather", "dp") in kinds
    assert ("all_reduce", "dp") in kinds  # the loss
    g = 2 * x.T @ (x @ w - y) / y.size
    m_new = 0.9 * m + g
    run = compiled.simulate(w, m, x, y)
    np.testing.assert_allclose(run.value[1], w - 0.1 * m_new, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(run.value[2], m_new, rtol=1e-5, atol=1e-6)
    assert run.bytes_moved == MESH.devices * cost.bytes_sent
    # The all-gather of the new weight is located at its Python line.
    gathers = [r for r in compiled.module.remarks
               if r.collective == "all_gather"]
    assert gathers and all(
        r.location.startswith("%s:%d:" % (__file__,
                                          line_of("# the new weight")))
        for r in gathers)


def test_a_gradient_returned_as_its_call_gave_it_is_reduced():
    """The traced function returns kina.grad's result directly, declared
    replicated: every device holds the whole gradient, not its summand."""
    replicated, batch = NamedSharding(MESH, P()), NamedSharding(MESH, P("dp"))

    def only(w, x):
        return kina.grad(lambda v: knp.sum(x * v))(w)

    w, x = normal(2), normal(4, 2)
    compiled = kina.jit(only, in_shardings=(replicated, batch),
                        out_shardings=replicated).lower(w, x).compile()
    run = compiled.simulate(w, x, report=False)
    for block in run.per_device:
        np.testing.assert_allclose(block, x.sum(axis=0), rtol=1e-6)
    np.testing.assert_allclose(compiled(w, x), x.sum(axis=0), rtol=1e-6)


def test_with_sharding_constraint_and_stages():
    def f(x, w):
        h = kina.with_sharding_constraint(
            x @ w, NamedSharding(MESH, P(None, "dp")))
        return knp.tanh(h)

    lowered = kina.jit(f).lower(normal(4, 6), normal(6, 8))
    assert "@mesh([2], axes=[dp])" in lowered.source()
    assert ": Tensor[F32, [4, 8], @sharded(axis=1, over=dp)]" in \
        lowered.source()
    spmd = lowered.as_text("spmd")
    assert "kina.tanh" in spmd and "4x4xf32" in spmd
    # The source is the program: compiled by kina.compile, the same values.
    x, w = normal(4, 6), normal(6, 8)
    again = kina.compile(lowered.source())
    np.testing.assert_array_equal(again.f(x, w), lowered.compile()(x, w))
    np.testing.assert_allclose(again.f(x, w), np.tanh(x @ w), rtol=1e-5,
                               atol=1e-6)


def test_located_ir_names_the_python_line():
    def f(x):
        return knp.exp(x)  # the exp

    ir = kina.jit(f).lower(normal(3)).as_text("kina", locations=True)
    assert re.search(r'kina\.exp .*loc\("%s":%d:' % (
        re.escape(__file__), line_of("# the exp")), ir) or \
        '"%s":%d:' % (__file__, line_of("# the exp")) in ir


# --- errors -----------------------------------------------------------------

CAPTURED = normal(3, 3)


def test_captured_array_is_named():
    def f(x):
        return x @ CAPTURED

    with pytest.raises(kina.TraceError, match=r"'CAPTURED'.*shape \[3, 3\]"
                       r".*pass it as an argument"):
        kina.jit(f)(normal(2, 3))


def test_python_control_flow_on_a_traced_value():
    def f(x):
        if knp.sum(x) > 0.0:  # the if
            return x
        return -x

    with pytest.raises(kina.TraceError) as error:
        kina.jit(f)(normal(3))
    message = str(error.value)
    assert message.startswith("%s:%d:" % (__file__, line_of("# the if")))
    assert "knp.where" in message and "static_argnums" in message


def test_sharding_errors_name_the_key_path():
    def f(params):
        return params["w"] * 2.0

    odd = {"w": normal(3, 4)}
    with pytest.raises(ValueError, match=r"params\['w'\].*dim 0.*size 3.*dp"):
        kina.jit(f, in_shardings=NamedSharding(MESH, P("dp")))(odd)
    with pytest.raises(ValueError, match=r"unknown mesh axis 'tp'"):
        kina.jit(f, in_shardings=NamedSharding(MESH, P("tp")))(
            {"w": normal(4, 4)})


def test_two_axes_on_one_dim_get_the_language_error():
    mesh = Mesh((2, 2), ("dp", "tp"))

    def f(x):  # the def
        return x * 2.0

    with pytest.raises(kina.CompileError,
                       match=r"%s:%d:.*two mesh axes|%s:%d:.*split over" % (
                           (re.escape(__file__), line_of("# the def")) * 2)):
        kina.jit(f, in_shardings=NamedSharding(mesh, P(("dp", "tp"))))(
            normal(8, 2))


def test_argument_errors():
    f = kina.jit(lambda p: p["x"] * 2.0)
    with pytest.raises(TypeError, match=r"p\['x'\] has dtype int8"):
        f({"x": np.zeros(3, np.int8)})
    compiled = f.lower({"x": normal(3)}).compile()
    with pytest.raises(ValueError, match=r"structure differs"):
        compiled({"x": normal(3), "y": normal(3)})
    with pytest.raises(ValueError, match=r"p\['x'\] is float32 \[4\], "
                       r"compiled for float32 \[3\]"):
        compiled({"x": normal(4)})


def test_unsupported_requests_are_located_errors():
    def grad_of_grad(x):
        return knp.sum(kina.grad(lambda y: knp.sum(y * y))(x))

    with pytest.raises(kina.TraceError, match="gradient of a gradient"):
        kina.grad(grad_of_grad)(normal(3))
    with pytest.raises(kina.TraceError, match="has_aux"):
        kina.grad(regression_loss, has_aux=True)
    with pytest.raises(kina.TraceError, match="casts to float types only"):
        kina.jit(lambda x: x.astype(np.int32))(normal(3))
    with pytest.raises(kina.TraceError, match=r"shapes \[3\] and \[4\]"):
        kina.jit(lambda x, y: x + y)(normal(3), normal(4))
    with pytest.raises(kina.TraceError, match="one float scalar"):
        kina.grad(lambda x: x * x)(normal(3))
