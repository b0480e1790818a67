"""Functions with several results through every layer: the C ABI (one
output buffer per result), the signature JSON, the header, Python (a
tuple), the simulator (tuples per device) and `python3 -m kina.mpi`
(`result_<i>`, `local_<r>_<i>`), each against NumPy."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import kina

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] /
                       "Target"))
import abi  # noqa: E402
from test_mpi import mpirun  # noqa: E402

MOMENTS = """
fn moments(x: Tensor[F32, [4, 8], @host]) -> (Tensor[F32, [4, 1], @host], Tensor[F32, [4, 1], @host]) {
  mu = mean(x, axis=1)
  var = mean((x - broadcast(mu)) * (x - broadcast(mu)), axis=1)
  return mu, var
}

fn spread(x: Tensor[F32, [4, 8], @host]) -> Tensor[F32, [], @host] {
  _, var = moments(x)
  return reshape(sum(sqrt(var), axis=0), [])
}

fn ids_and_rows(ids: Tensor[I64, [3], @host], table: Tensor[F32, [5, 2], @host]) -> (Tensor[F32, [3, 2], @host], Tensor[I64, [3], @host]) {
  return gather(table, ids), ids
}

@main
fn entry() -> (Tensor[F32, [4, 1], @host], Tensor[F32, [4, 1], @host]) {
  x = placeholder : Tensor[F32, [4, 8], @host]
  mu, var = moments(x)
  return var, mu
}
"""

# Data parallel over the rows, with a replicated column sum and the
# row-sharded product as two results.
SHARDED = """
@mesh([2])
fn step(x: Tensor[F32, [4, 8], @sharded(axis=0)], w: Tensor[F32, [8, 6], @replicated]) -> (Tensor[F32, [4, 6], @sharded(axis=0)], Tensor[F32, [1, 6], @replicated]) {
  y = x @ w
  return y, sum(y, axis=0)
}
"""


def numpy_moments(x):
    mu = x.mean(axis=1, keepdims=True, dtype=np.float64)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return mu, var


@pytest.fixture(scope="module")
def moments():
    return kina.compile(MOMENTS, "moments.kina")


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)


def test_python_returns_a_tuple(moments, x):
    mu, var = moments.moments(x)
    ref_mu, ref_var = numpy_moments(x)
    np.testing.assert_allclose(mu, ref_mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, ref_var, rtol=1e-5, atol=1e-6)
    assert [p.name for p in moments.functions["moments"].result] == [
        "result_0", "result_1"]
    # `results` is a tuple for one result too (a Param is a tuple itself).
    assert moments.functions["moments"].results == \
        moments.functions["moments"].result
    one = moments.functions["spread"]
    assert one.results == (one.result,) and one.result.name == "result"
    # A single-result caller of a multiple binding, and reshape to [].
    spread = moments.spread(x)
    assert spread.shape == ()
    np.testing.assert_allclose(spread, np.sqrt(ref_var).sum(), rtol=1e-5)


def test_main_returns_its_results_in_order(moments, x):
    var, mu = moments.main(x)
    ref_mu, ref_var = numpy_moments(x)
    np.testing.assert_allclose(var, ref_var, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mu, ref_mu, rtol=1e-5, atol=1e-6)


def test_results_of_mixed_dtypes_and_a_failing_gather(moments):
    table = np.arange(10, dtype=np.float32).reshape(5, 2)
    ids = np.array([4, 0, 2], dtype=np.int64)
    rows, same = moments.ids_and_rows(ids, table)
    np.testing.assert_array_equal(rows, table[ids])
    np.testing.assert_array_equal(same, ids)
    assert same.dtype == np.int64
    with pytest.raises(IndexError):
        moments.ids_and_rows(np.array([0, 5, 1], dtype=np.int64), table)


def test_c_abi_signature_and_header(tmp_path, x):
    source = tmp_path / "moments.kina"
    source.write_text(MOMENTS)
    so = tmp_path / "moments.so"
    subprocess.run([str(abi.BIN / "kina-translate"), "--kina-to-so",
                    str(source), "-o", str(so), "--emit-header"], check=True)
    module = abi.SharedObject(so)
    entry = module.functions["moments"]
    assert len(entry["results"]) == 2 and "result" not in entry
    assert entry["results"][1]["shape"] == [4, 1]
    single = module.functions["spread"]
    assert single["results"] == [single["result"]]
    status, (mu, var) = module.call("moments", x)
    assert status == 0
    ref_mu, ref_var = numpy_moments(x)
    np.testing.assert_allclose(mu, ref_mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, ref_var, rtol=1e-5, atol=1e-6)
    header = (tmp_path / "moments.h").read_text()
    assert ("int32_t kina_moments(const float *x, float *out0, "
            "float *out1);") in header
    assert "int32_t kina_spread(const float *x, float *out);" in header
    assert "-> (f32[4, 1], f32[4, 1])" in header


@pytest.fixture(scope="module")
def sharded():
    return kina.compile(SHARDED, "sharded.kina")


def sharded_args():
    rng = np.random.default_rng(1)
    return (rng.standard_normal((4, 8)).astype(np.float32),
            rng.standard_normal((8, 6)).astype(np.float32))


def test_simulate_gives_tuples(sharded):
    x, w = sharded_args()
    y_ref = x.astype(np.float64) @ w
    y, total = sharded.step(x, w)
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(total, y_ref.sum(axis=0, keepdims=True),
                               rtol=1e-5, atol=1e-5)
    r = sharded.simulate("step", x, w)
    assert isinstance(r.value, tuple) and len(r.value) == 2
    np.testing.assert_allclose(r.value[0], y_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r.value[1], y_ref.sum(axis=0, keepdims=True),
                               rtol=1e-5, atol=1e-5)
    assert len(r.per_device) == 2
    for device, (block, summed) in enumerate(r.per_device):
        np.testing.assert_array_equal(block, r.value[0][2 * device:
                                                        2 * device + 2])
        # The replicated result: the same bits on every device.
        np.testing.assert_array_equal(summed, r.per_device[0][1])
    assert max(row.max_abs_diff for row in r.report) < 1e-5


@pytest.mark.skipif(os.environ.get("KINA_SKIP_MPI") == "1",
                    reason="KINA_SKIP_MPI=1 (the sanitizer build)")
def test_mpi_writes_each_result(sharded, tmp_path):
    x, w = sharded_args()
    sharded.save(tmp_path / "step.so")
    np.savez(tmp_path / "in.npz", x=x, w=w)
    done = mpirun(2, tmp_path / "step.so", "step", tmp_path / "in.npz",
                  tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    simulated = sharded.simulate("step", x, w, report=False)
    with np.load(tmp_path / "out.npz") as out:
        assert "result" not in out.files
        for i in range(2):
            np.testing.assert_array_equal(out["result_%d" % i],
                                          simulated.value[i])
            for rank in range(2):
                np.testing.assert_array_equal(out["local_%d_%d" % (rank, i)],
                                              simulated.per_device[rank][i])
