"""The thread pool in every .so: parallel matmuls give the same bits on any
thread count; the count is settable per module, from the environment, and
survives concurrent callers and fork."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import kina

# 64 x 256 x 1024 multiply-adds (2^24) is past the parallel threshold (2^22)
# and has four 256-column panels to share out.
SOURCE = """
fn proj(x: Tensor[F32, [64, 256], @host], w: Tensor[F32, [256, 1024], @host]) -> Tensor[F32, [64, 1024], @host] {
  return x @ w
}
"""


@pytest.fixture(scope="module")
def proj():
    return kina.compile(SOURCE)


@pytest.fixture(scope="module")
def operands():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((64, 256)).astype(np.float32),
            rng.standard_normal((256, 1024)).astype(np.float32))


def test_the_matmul_is_launched_on_the_pool(proj):
    assert "@proj_parallel_task" in proj.ir("llvm")


@pytest.mark.parametrize("threads", [2, 3, 4, 7])
def test_results_are_bit_identical_on_any_thread_count(proj, operands,
                                                       threads):
    proj.num_threads = 1
    serial = proj.proj(*operands)
    proj.num_threads = threads
    assert proj.num_threads == threads
    parallel = proj.proj(*operands)
    proj.num_threads = None
    np.testing.assert_array_equal(parallel, serial)
    x, w = operands
    np.testing.assert_allclose(serial, x.astype(np.float64) @ w,
                               rtol=1e-4, atol=1e-4)


# Decode-step shapes (rows up to one register tile): B is read in place,
# not packed, in column panels shared out to the threads like the others.
DECODE = """
fn one_row(x: Tensor[F32, [1, 2048], @host], w: Tensor[F32, [2048, 4096], @host]) -> Tensor[F32, [1, 4096], @host] {
  return x @ w
}
fn five_rows(x: Tensor[F32, [5, 768], @host], w: Tensor[F32, [768, 2080], @host]) -> Tensor[F32, [5, 2080], @host] {
  return x @ w
}
"""


@pytest.mark.parametrize("name,m,k,n", [("one_row", 1, 2048, 4096),
                                        ("five_rows", 5, 768, 2080)])
def test_decode_step_matmuls_on_any_thread_count(name, m, k, n):
    module = kina.compile(DECODE)
    assert "@%s_parallel_task" % name in module.ir("llvm")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    module.num_threads = 1
    serial = getattr(module, name)(x, w)
    np.testing.assert_allclose(serial, x.astype(np.float64) @ w,
                               rtol=1e-4, atol=1e-3)
    for threads in (2, 3):
        module.num_threads = threads
        np.testing.assert_array_equal(getattr(module, name)(x, w), serial)


def test_num_threads_validation(proj):
    with pytest.raises(TypeError, match="num_threads"):
        proj.num_threads = 2.5
    with pytest.raises(ValueError, match="num_threads"):
        proj.num_threads = -1
    with pytest.raises(TypeError):
        kina.compile(SOURCE, num_threads="two")


def test_num_threads_option_of_compile_and_load(tmp_path):
    module = kina.compile(SOURCE, num_threads=3)
    assert module.num_threads == 3
    module.save(tmp_path / "proj.so")
    assert kina.load(tmp_path / "proj.so", num_threads=1).num_threads == 1


def run_python(code, **env):
    environment = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], env=environment,
                          check=True, capture_output=True,
                          text=True).stdout.strip()


def test_default_comes_from_the_environment():
    code = ("import kina; print(kina.compile(%r).num_threads)" % SOURCE)
    assert run_python(code, KINA_NUM_THREADS="5") == "5"
    cores = len(os.sched_getaffinity(0))
    assert run_python(code, KINA_NUM_THREADS="zero") == str(cores)
    assert run_python(code, KINA_NUM_THREADS="") == str(cores)


def test_concurrent_callers_each_get_their_result(proj, operands):
    x, w = operands
    expected = {i: proj.proj(x * (i + 1), w) for i in range(6)}
    failures = []

    def call(i):
        for _ in range(20):
            if not np.array_equal(proj.proj(x * (i + 1), w), expected[i]):
                failures.append(i)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_parallel_code(proj, operands):
    proj.num_threads = 2
    expected = proj.proj(*operands)  # the pool's workers exist now
    pid = os.fork()
    if pid == 0:  # the child has no workers; it must not wait for them
        ok = np.array_equal(proj.proj(*operands), expected)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    proj.num_threads = None
    assert os.waitstatus_to_exitcode(status) == 0
