"""Per-device execution on real processes: `mpirun -n N python3 -m
kina.mpi` (Debian's OpenMPI, loopback/shared memory). Every rank computes
the simulator's bits; a failing or killed rank ends the job with an error,
never a hang (each run is bounded by a timeout)."""

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import kina
from collective_programs import CASES, arguments, program
from kina.models import storylm0

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ["vocab", "vocab4", "proj", "heads", "row", "2d"]
TIMEOUT = 120  # seconds; a run takes about one

pytestmark = pytest.mark.skipif(
    os.environ.get("KINA_SKIP_MPI") == "1",
    reason="KINA_SKIP_MPI=1 (the sanitizer build: MPI is not instrumented)")


def mpi_environment():
    """What OpenMPI needs here, for the test's own processes only: running
    as root (CI containers), more ranks than cores, and the `kina` package
    under test."""
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               PYTHONPATH=os.pathsep.join(sys.path))
    return env


def mpirun(ranks, program, function, inputs, output, *options,
           timeout=TIMEOUT):
    assert shutil.which("mpirun"), "OpenMPI (scripts/install-deps.sh)"
    command = ["mpirun", "-n", str(ranks), sys.executable, "-m", "kina.mpi",
               str(program), function, str(inputs), str(output), *options]
    return subprocess.run(command, env=mpi_environment(), capture_output=True,
                          text=True, timeout=timeout)


def save_inputs(path, module, name, args):
    params = module.functions[name].params
    np.savez(path, **{p.name: a for p, a in zip(params, args)})


@pytest.mark.parametrize("example", EXAMPLES)
def test_examples_give_the_simulators_bits_on_every_rank(example, tmp_path):
    module = kina.compile_file(
        ROOT / "examples" / ("storylm0_sharded_%s.kina" % example))
    module.save(tmp_path / "model.so")
    args = storylm0.arguments()
    save_inputs(tmp_path / "in.npz", module, "storylm0_forward", args)
    ranks = module.mesh.num_devices
    done = mpirun(ranks, tmp_path / "model.so", "storylm0_forward",
                  tmp_path / "in.npz", tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    simulated = module.simulate("storylm0_forward", *args, report=False)
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["result"], simulated.value)
        for rank in range(ranks):
            np.testing.assert_array_equal(out["local_%d" % rank],
                                          simulated.per_device[rank])
        assert int(out["bytes_moved"]) == simulated.bytes_moved


@pytest.mark.parametrize("sizes, over, names", [
    ([1], None, sorted(CASES)), ([2], None, sorted(CASES)),
    ([3], None, sorted(CASES)), ([4], None, sorted(CASES)),
    ([2, 2], "cols", ["collect", "scatter"]),
    ([2, 2], "rows", ["add_up", "move"])])
def test_collectives_on_ranks(sizes, over, names, tmp_path):
    module = kina.compile(program(sizes, over))
    module.save(tmp_path / "collectives.so")
    for name in names:
        args = arguments(module, name, seed=len(name))
        save_inputs(tmp_path / "in.npz", module, name, args)
        done = mpirun(module.mesh.num_devices, tmp_path / "collectives.so",
                      name, tmp_path / "in.npz", tmp_path / "out.npz")
        assert done.returncode == 0, (name, done.stderr)
        simulated = module.simulate(name, *args, report=False)
        with np.load(tmp_path / "out.npz") as out:
            np.testing.assert_array_equal(out["result"], simulated.value)
            for rank, local in enumerate(simulated.per_device):
                np.testing.assert_array_equal(out["local_%d" % rank], local)


def test_a_scalar_result_keeps_rank_0(tmp_path):
    """A rank-0 result is written with shape (), as the host call and the
    simulator give it, not (1,) (which assert_array_equal would let by)."""
    module = kina.compile(
        "@mesh([2])\n"
        "fn total(x: Tensor[F32, [4, 6], @sharded(axis=1)]) -> "
        "Tensor[F32, [], @replicated] {\n"
        "  return reshape(sum(sum(x, axis=1), axis=0), [])\n"
        "}\n")
    module.save(tmp_path / "total.so")
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    save_inputs(tmp_path / "in.npz", module, "total", [x])
    done = mpirun(2, tmp_path / "total.so", "total", tmp_path / "in.npz",
                  tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    simulated = module.simulate("total", x, report=False)
    assert simulated.value.shape == module.total(x).shape == ()
    with np.load(tmp_path / "out.npz") as out:
        assert out["result"].shape == ()
        assert out["result"] == simulated.value == x.sum()
        for rank in range(2):
            assert out["local_%d" % rank].shape == ()


def test_16_and_64_bit_floats_give_the_simulators_bits_on_ranks(tmp_path):
    """BF16 crosses as uint16 words, F16 and F64 as themselves; the ranks'
    all-reduce adds the 16-bit partial products in F32, as the simulator's
    does."""
    module = kina.compile(
        "@mesh([2])\n"
        "fn mixed(x: Tensor[BF16, [4, 8], @sharded(axis=1)], "
        "w: Tensor[BF16, [8, 6], @sharded(axis=0)], "
        "h: Tensor[F16, [4, 6], @sharded(axis=0)], "
        "d: Tensor[F64, [4, 6], @sharded(axis=0)]) -> "
        "(Tensor[BF16, [4, 6], @replicated], Tensor[F64, [4, 6], @replicated]) {\n"
        "  p = x @ w\n"
        "  return p, cast(p, to=F64) * cast(h, to=F64) + d\n"
        "}\n", "mixed.kina")
    module.save(tmp_path / "mixed.so")
    rng = np.random.default_rng(2)
    args = [kina.to_bf16(rng.standard_normal((4, 8))),
            kina.to_bf16(rng.standard_normal((8, 6))),
            rng.standard_normal((4, 6)).astype(np.float16),
            rng.standard_normal((4, 6))]
    save_inputs(tmp_path / "in.npz", module, "mixed", args)
    done = mpirun(2, tmp_path / "mixed.so", "mixed", tmp_path / "in.npz",
                  tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    simulated = module.simulate("mixed", *args, report=False).value
    with np.load(tmp_path / "out.npz") as out:
        assert out["result_0"].dtype == np.uint16
        assert out["result_1"].dtype == np.float64
        np.testing.assert_array_equal(out["result_0"], simulated[0])
        np.testing.assert_array_equal(out["result_1"], simulated[1])


def test_a_traced_program_runs_on_ranks(tmp_path):
    """kina.jit's program under mpirun: a data-parallel SGD step written
    in Python gives the simulator's bits on every rank."""
    import kina.numpy as knp
    from kina.sharding import Mesh, NamedSharding, P
    mesh = Mesh((2,), ("dp",))

    def sgd(params, x, y):
        grads = kina.grad(lambda p: knp.mean((x @ p["w"] - y) ** 2))(params)
        return params["w"] - 0.1 * grads["w"]

    rng = np.random.default_rng(3)
    args = ({"w": rng.standard_normal((4, 2), dtype=np.float32)},
            rng.standard_normal((8, 4), dtype=np.float32),
            rng.standard_normal((8, 2), dtype=np.float32))
    lowered = kina.jit(sgd, in_shardings=(
        NamedSharding(mesh, P()), NamedSharding(mesh, P("dp")),
        NamedSharding(mesh, P("dp")))).lower(*args)
    compiled = lowered.compile()
    compiled.module.save(tmp_path / "sgd.so")
    np.savez(tmp_path / "in.npz", **lowered.named_arguments(*args))
    done = mpirun(2, tmp_path / "sgd.so", lowered.name, tmp_path / "in.npz",
                  tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    simulated = compiled.simulate(*args, report=False)
    w, x, y = args[0]["w"], args[1], args[2]
    expected = w - 0.1 * 2 * x.T @ (x @ w - y) / y.size
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["result"], simulated.value)
        np.testing.assert_allclose(out["result"], expected, rtol=1e-5,
                                   atol=1e-6)


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    directory = tmp_path_factory.mktemp("vocab")
    module = kina.compile_file(ROOT / "examples" /
                               "storylm0_sharded_vocab.kina")
    module.save(directory / "model.so")
    save_inputs(directory / "in.npz", module, "storylm0_forward",
                storylm0.arguments())
    return module, directory


def test_kina_source_runs_too(vocab, tmp_path):
    module, directory = vocab
    done = mpirun(2, ROOT / "examples" / "storylm0_sharded_vocab.kina",
                  "storylm0_forward", directory / "in.npz",
                  tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(
            out["result"], module.storylm0_forward(*storylm0.arguments()))


def test_warmup_runs_are_not_counted(vocab, tmp_path):
    """--warmup W --repeat K: the figures are per measured run."""
    module, directory = vocab
    done = mpirun(2, directory / "model.so", "storylm0_forward",
                  directory / "in.npz", tmp_path / "out.npz",
                  "--warmup", "2", "--repeat", "3")
    assert done.returncode == 0, done.stderr
    simulated = module.simulate("storylm0_forward", *storylm0.arguments(),
                                report=False)
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["result"], simulated.value)
        assert int(out["bytes_moved"]) == simulated.bytes_moved
        assert out["compute_seconds"].shape == (2,)
    bad = mpirun(2, directory / "model.so", "storylm0_forward",
                 directory / "in.npz", tmp_path / "bad.npz", "--warmup", "-1")
    assert bad.returncode != 0
    assert "--warmup must be >= 0" in bad.stderr


def test_wrong_rank_count_fails_on_every_rank(vocab, tmp_path):
    _, directory = vocab
    done = mpirun(3, directory / "model.so", "storylm0_forward",
                  directory / "in.npz", tmp_path / "out.npz")
    assert done.returncode != 0
    assert "2 devices, but mpirun started 3 ranks" in done.stderr
    assert not (tmp_path / "out.npz").exists()


def test_missing_input_is_named(vocab, tmp_path):
    _, directory = vocab
    with np.load(directory / "in.npz") as data:
        kept = {k: data[k] for k in data.files if k != "wq"}
    np.savez(tmp_path / "in.npz", **kept)
    done = mpirun(2, directory / "model.so", "storylm0_forward",
                  tmp_path / "in.npz", tmp_path / "out.npz")
    assert done.returncode != 0
    assert "has no array named wq" in done.stderr


def test_gather_out_of_range_ends_the_job(vocab, tmp_path):
    _, directory = vocab
    with np.load(directory / "in.npz") as data:
        bad = {k: data[k] for k in data.files}
    bad["token_ids"] = bad["token_ids"].copy()
    bad["token_ids"][0, 3] = 99
    np.savez(tmp_path / "in.npz", **bad)
    done = mpirun(2, directory / "model.so", "storylm0_forward",
                  tmp_path / "in.npz", tmp_path / "out.npz")
    assert done.returncode != 0
    assert "a gather id is outside [0, rows) (status 1 on every rank)" in \
        done.stderr


def rank_processes(marker):
    """pid of each rank (by OMPI_COMM_WORLD_RANK) whose command line holds
    `marker`."""
    ranks = {}
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            if marker.encode() not in command or b"kina.mpi" not in command:
                continue
            for item in (entry / "environ").read_bytes().split(b"\0"):
                if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                    ranks[int(item.split(b"=")[1])] = int(entry.name)
        except OSError:
            continue
    return ranks


def test_a_killed_rank_ends_the_job(vocab, tmp_path):
    _, directory = vocab
    marker = str(tmp_path / "out.npz")
    command = ["mpirun", "-n", "2", sys.executable, "-m", "kina.mpi",
               str(directory / "model.so"), "storylm0_forward",
               str(directory / "in.npz"), marker, "--repeat", "100000000"]
    job = subprocess.Popen(command, env=mpi_environment(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        ranks = {}
        while len(ranks) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            ranks = rank_processes(marker)
        assert len(ranks) == 2, "the ranks did not start"
        time.sleep(1.0)  # well into the loop of runs
        os.kill(ranks[1], signal.SIGKILL)
        _, stderr = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            job.kill()
            job.communicate()
    assert job.returncode != 0
    assert b"exited on signal 9" in stderr
    assert rank_processes(marker) == {}
