"""kina.check_grads: compiled gradients against central finite
differences. It passes on correct gradients and, where finite differences
cross a kink that the derivative does not see, raises naming the
parameter."""

import numpy as np
import pytest

import kina

SOURCE = """
fn loss(x: Tensor[F32, [4, 3], @host], w: Tensor[F32, [3, 2], @host]) -> Tensor[F32, [], @host] {
  h = tanh(x @ w)
  return reshape(sum(sum(h * h, axis=1), axis=0), [])
}
fn rows(x: Tensor[F32, [4, 3], @host], w: Tensor[F32, [3, 2], @host]) -> Tensor[F32, [4, 2], @host] {
  return log_softmax(x @ w, axis=1)
}
fn relu_sum(x: Tensor[F32, [8], @host], w: Tensor[F32, [8], @host]) -> Tensor[F32, [], @host] {
  return reshape(sum(maximum(x, broadcast(0.0) * x) * w, axis=0), [])
}
"""


@pytest.fixture(scope="module")
def module():
    return kina.compile(SOURCE, "check_grads.kina")


def test_correct_gradients_pass(module):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    errors = kina.check_grads(module, "loss", x, w, wrt=["w", "x"])
    assert set(errors) == {"w", "x"} and max(errors.values()) < 2e-2
    # A result of rank > 0: a random cotangent projects it.
    errors = kina.check_grads(module, "rows", x, w, wrt=["x"])
    assert errors["x"] < 2e-2
    # By name, as a call binds them.
    assert kina.check_grads(module, "loss", x, w=w, wrt=["w"]) == \
        kina.check_grads(module, "loss", x, w, wrt=["w"])


def test_f64_programs_check_far_tighter():
    # In float64 the central difference's error is the step's square
    # (1e-8 here), not float32's rounding over the step.
    f64 = kina.compile(SOURCE.replace("F32", "F64"), "check_grads64.kina")
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    errors = kina.check_grads(f64, "rows", x, w, wrt=["x", "w"], eps=1e-4,
                              rtol=1e-6)
    assert max(errors.values()) < 1e-6
    with pytest.raises(ValueError, match="returns F16; the check takes a "
                       "function of one F32 or F64 result"):
        half = kina.compile(SOURCE.replace("F32", "F16"), "half.kina")
        kina.check_grads(half, "loss", x.astype(np.float16),
                         w.astype(np.float16), wrt=["w"])


def test_a_kink_inside_the_step_is_reported(module):
    # x sits 1e-5 above ReLU's kink; the step (1e-3) crosses it, so the
    # differences see half a slope where the derivative sees a whole one.
    x = np.full(8, 1e-5, dtype=np.float32)
    w = np.linspace(0.5, 1.5, 8, dtype=np.float32)
    with pytest.raises(kina.GradientCheckError) as raised:
        kina.check_grads(module, "relu_sum", x, w, wrt=["w", "x"])
    assert raised.value.parameter == "x"
    assert "parameter 'x'" in str(raised.value)
    # With a step that stays on one side, it passes.
    assert kina.check_grads(module, "relu_sum", x, w, wrt=["x"],
                            eps=1e-7)["x"] < 2e-2


def test_bad_requests_are_clear(module):
    x = np.zeros((4, 3), np.float32)
    w = np.zeros((3, 2), np.float32)
    with pytest.raises(ValueError, match="wrt must name parameters"):
        kina.check_grads(module, "loss", x, w, wrt=["nope"])
    with pytest.raises(ValueError, match="no function"):
        kina.check_grads(module, "missing", x, w, wrt=["x"])


TYPED = """
fn lookup(ids: Tensor[I64, [4], @host], w: Tensor[F32, [8, 2], @host]) -> Tensor[F32, [], @host] {
  return reshape(sum(sum(gather(w, ids), axis=1), axis=0), [])
}
fn pair(w: Tensor[F32, [8, 2], @host]) -> (Tensor[F32, [8, 2], @host], Tensor[F32, [8, 2], @host]) {
  return w, w
}
"""


def test_what_cannot_be_differentiated_is_said_of_the_users_function():
    typed = kina.compile(TYPED, "typed.kina")
    ids = np.arange(4, dtype=np.int64)
    w = np.ones((8, 2), np.float32)
    with pytest.raises(ValueError,
                       match="parameter 'ids' of 'lookup' is I64; the check "
                       "takes F32 and F64 parameters"):
        kina.check_grads(typed, "lookup", ids, w, wrt=["ids", "w"])
    with pytest.raises(ValueError, match="'pair' returns 2 results"):
        kina.check_grads(typed, "pair", w, wrt=["w"])
    # No error names the line the check adds after the program.
    last_line = len(TYPED.split("\n")) + 1
    for call in (lambda: kina.check_grads(typed, "pair", w, wrt=["w"]),
                 lambda: kina.check_grads(typed, "lookup", ids, w,
                                          wrt=["ids"])):
        with pytest.raises(ValueError) as raised:
            call()
        assert "typed.kina:%d" % last_line not in str(raised.value)

