"""Results that reuse a parameter's buffer (`@reuses(p)`, donated
arguments as JAX's `donate_argnums`): written into the array the caller
passed, which the call returns; a copy where that array cannot be written
in place; buffers that overlap where the call writes refused. Each
against NumPy."""

import os

import numpy as np
import pytest

import kina

STEP = """
@mesh([2])

fn step(w: Tensor[F32, [4, 8], @host], m: Tensor[F32, [4, 8], @host], g: Tensor[F32, [4, 8], @host], lr: Tensor[F32, [], @host]) -> (Tensor[F32, [], @host], Tensor[F32, [4, 8], @host] @reuses(w), Tensor[F32, [4, 8], @host] @reuses(m)) {
  m2 = m * broadcast(0.5) + g
  loss = reshape(sum(sum(g * g, axis=1), axis=0), [])
  return loss, w - broadcast(lr) * m2, m2
}

# The weight is read after its update: the update is copied in at the end.
fn late(w: Tensor[F32, [4, 8], @host], g: Tensor[F32, [4, 8], @host]) -> (Tensor[F32, [4, 8], @host] @reuses(w), Tensor[F32, [], @host]) {
  w2 = w - g
  return w2, reshape(sum(sum(w * w2, axis=1), axis=0), [])
}

# A caller of a donating function keeps its own argument.
fn twice(w: Tensor[F32, [4, 8], @host], g: Tensor[F32, [4, 8], @host]) -> Tensor[F32, [4, 8], @host] {
  a, _ = late(w, g)
  b, _ = late(a, g)
  return b
}

fn sharded(w: Tensor[F32, [4, 8], @sharded(axis=1)], g: Tensor[F32, [4, 8], @sharded(axis=1)]) -> Tensor[F32, [4, 8], @sharded(axis=1)] @reuses(w) {
  return w - g * broadcast(0.5)
}
"""


@pytest.fixture(scope="module")
def m():
    return kina.compile(STEP, "step.kina")


def arrays(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(3)]


def test_results_are_written_into_the_donated_arrays(m):
    w, mo, g = arrays()
    w0, m0 = w.copy(), mo.copy()
    lr = np.float32(0.25)
    loss, w1, m1 = m.step(w, mo, g, lr)
    m_expected = m0 * np.float32(0.5) + g
    assert w1 is w and m1 is mo
    np.testing.assert_array_equal(mo, m_expected)
    np.testing.assert_array_equal(w, w0 - lr * m_expected)
    np.testing.assert_allclose(loss, (g.astype(np.float64) ** 2).sum(),
                               rtol=1e-6)
    assert g.flags.writeable  # the gradient was only read


def test_an_array_that_cannot_be_written_is_copied(m):
    w, mo, g = arrays(1)
    readonly = w.copy()
    readonly.flags.writeable = False
    wide = np.zeros((4, 16), np.float32)
    wide[:, ::2] = mo
    strided = wide[:, ::2]
    _, w1, m1 = m.step(readonly, strided, g, np.float32(1))
    m_expected = mo * np.float32(0.5) + g
    assert w1 is not readonly and m1 is not strided
    np.testing.assert_array_equal(readonly, w)
    np.testing.assert_array_equal(strided, mo)
    np.testing.assert_array_equal(m1, m_expected)
    np.testing.assert_array_equal(w1, w - m_expected)


@pytest.mark.parametrize("pair", ["w and m", "w and g", "views of w and g"])
def test_overlapping_buffers_are_refused_and_untouched(m, pair):
    # The error names both parameters, not only that some buffers overlap.
    w, mo, g = arrays(2)
    donated = "parameter 'w' (a result reuses it)"
    if pair == "w and m":
        args = [w, w, g]
        named = donated + " and parameter 'm' (a result reuses it)"
    elif pair == "w and g":
        args, named = [w, mo, w], donated + " and parameter 'g'"
    else:
        rows = np.concatenate([w, g[:2]])  # g's first rows are w's last
        w = rows[:4]
        args, named = [w, mo, rows[2:]], donated + " and parameter 'g'"
    before = w.copy()
    with pytest.raises(ValueError) as raised:
        m.step(*args, np.float32(1))
    message = str(raised.value)
    assert "overlaps another of its buffers" in message
    assert named + " share memory" in message, message
    np.testing.assert_array_equal(w, before)


def test_a_result_read_after_its_update_is_copied_in(m):
    w, g, _ = arrays(3)
    w0 = w.copy()
    w1, dot = m.late(w, g)
    assert w1 is w
    np.testing.assert_array_equal(w, w0 - g)
    np.testing.assert_allclose(dot, (w0.astype(np.float64) * (w0 - g)).sum(),
                               rtol=1e-5)


def test_a_caller_of_a_donating_function_keeps_its_argument(m):
    w, g, _ = arrays(4)
    w0 = w.copy()
    out = m.twice(w, g)
    np.testing.assert_array_equal(w, w0)
    np.testing.assert_array_equal(out, w0 - g - g)


def test_signature_and_repr_name_the_reused_parameter(m):
    assert [r.reuses for r in m.functions["step"].result] == [None, "w", "m"]
    assert m.functions["late"].params[0].reuses is None
    assert "@reuses(w)" in repr(m.step) and "@reuses(m)" in repr(m.step)


def test_the_host_form_donates_and_the_simulator_does_not(m):
    w, g, _ = arrays(5)
    w0 = w.copy()
    simulated = m.simulate("sharded", w, g, report=False)
    np.testing.assert_array_equal(w, w0)
    np.testing.assert_array_equal(simulated.value, w0 - g * np.float32(0.5))
    out = m.sharded(w, g)
    assert out is w
    np.testing.assert_array_equal(w, w0 - g * np.float32(0.5))


def test_the_per_device_form_donates_too(m, tmp_path):
    # Each device writes its block of the result into its block of w (an
    # MPI rank's weights stay put); `python3 -m kina.mpi` gives every timed
    # run the inputs as read, so its result is one application.
    device = next(f for f in m._described["devices"] if f["name"] == "sharded")
    assert [r.get("reuses") for r in device["results"]] == ["w"]
    if os.environ.get("KINA_SKIP_MPI") == "1":
        pytest.skip("KINA_SKIP_MPI=1 (the sanitizer build)")
    import test_mpi
    w, g, _ = arrays(6)
    m.save(tmp_path / "step.so")
    np.savez(tmp_path / "in.npz", w=w, g=g)
    done = test_mpi.mpirun(2, tmp_path / "step.so", "sharded",
                           tmp_path / "in.npz", tmp_path / "out.npz",
                           "--warmup", "1", "--repeat", "2")
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["result"], w - g * np.float32(0.5))
