"""The step loop of `python3 -m kina.mpi --steps N` (kina/steps.py): a
user's training step on real ranks, its state carried in place, its other
arguments from a feed function, checkpointed atomically and resumed under
another stage. Every rank's bits are the simulator's."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kina
from test_mpi import TIMEOUT, mpi_environment
from test_zero import STEPS, WEIGHTS, feed, initial, mlp_source, \
    torch_reference

pytestmark = pytest.mark.skipif(
    os.environ.get("KINA_SKIP_MPI") == "1",
    reason="KINA_SKIP_MPI=1 (the sanitizer build: MPI is not instrumented)")

# The feed module the ranks import (test/python is on their path).
FEED = '''
import os
import signal

from test_zero import feed


def broken(step):
    if step == 2:
        raise RuntimeError("no batch for step 2")
    return feed(step)


def rank_dependent(step):
    # An unseeded loader: each rank draws its own batch.
    arrays = feed(step)
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    arrays["x"] = arrays["x"] + rank
    return arrays


def killing(step):
    # Rank 1 dies at step 3, as a machine that fails mid-run.
    if step == 3 and os.environ.get("OMPI_COMM_WORLD_RANK") == "1":
        os.kill(os.getpid(), signal.SIGKILL)
    return feed(step)
'''


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """The ZeRO-1 and ZeRO-3 MLP steps on 2 and 4 devices, saved; the
    feed module; the initial state."""
    directory = tmp_path_factory.mktemp("steps")
    (directory / "feeds.py").write_text(FEED)
    modules = {}
    for stage, devices in (("zero1", 2), ("zero3", 2), ("data", 4),
                           ("zero1", 4), ("zero3", 4)):
        module = kina.compile(mlp_source(stage, devices))
        path = directory / ("%s_%d.so" % (stage, devices))
        module.save(path)
        modules[stage, devices] = (module, path)
    w = initial()
    state = dict(w)
    state.update({"%s_%s" % (k, name): np.zeros_like(a)
                  for k in "mv" for name, a in w.items()})
    np.savez(directory / "state.npz", **state)
    return directory, modules, state


def run_steps(directory, ranks, program, output, *options):
    command = ["mpirun", "-n", str(ranks), sys.executable, "-m", "kina.mpi",
               str(program), "step", str(directory / "state.npz"),
               str(output), *options]
    return subprocess.run(command, env=mpi_environment(), cwd=directory,
                          capture_output=True, text=True, timeout=TIMEOUT)


def simulated(module, state, first, last):
    """The simulator's state after steps first..last from `state`, and the
    losses."""
    state, losses = dict(state), []
    params = [p.name for p in module.functions["step"].params]
    for step in range(first, last + 1):
        given = dict(state)
        given.update(feed(step))
        out = module.simulate("step", *[given[p] for p in params],
                              report=False).value
        losses.append(np.asarray(out[0]))
        names = WEIGHTS + ["m_" + w for w in WEIGHTS] + \
            ["v_" + w for w in WEIGHTS]
        for name, value in zip(names, out[1:]):
            state[name] = np.asarray(value)
    return state, losses


@pytest.mark.parametrize("stage, ranks", [("zero1", 2), ("zero3", 4)])
def test_the_ranks_train_as_the_simulator(programs, stage, ranks, tmp_path):
    directory, modules, state = programs
    module, path = modules[stage, ranks]
    done = run_steps(directory, ranks, path, tmp_path / "out.npz",
                     "--steps", "4", "--feed", "feeds:feed")
    assert done.returncode == 0, done.stderr
    want, losses = simulated(module, state, 1, 4)
    with np.load(tmp_path / "out.npz") as out:
        assert int(out["steps"]) == 4
        np.testing.assert_array_equal(out["result_0"], np.array(losses))
        for name, value in want.items():
            assert out[name].tobytes() == value.tobytes(), name
        assert int(out["bytes_moved"]) == \
            ranks * module.cost("step").bytes_sent


def test_a_checkpoint_resumes_under_another_stage(programs, tmp_path):
    """Three ZeRO-1 steps checkpointed (every 2 and after the last), then
    ZeRO-3 resumes at step 4: on two devices both stages sum alike, so the
    weights are those of five ZeRO-1 steps, to the bit."""
    directory, modules, state = programs
    checkpoint = tmp_path / "checkpoint.npz"
    done = run_steps(directory, 2, modules["zero1", 2][1],
                     tmp_path / "first.npz", "--steps", "3", "--feed",
                     "feeds:feed", "--checkpoint", str(checkpoint),
                     "--every", "2")
    assert done.returncode == 0, done.stderr
    with np.load(checkpoint) as saved:
        assert int(saved["kina_step"]) == 3
    assert not list(tmp_path.glob(".checkpoint-*"))
    done = run_steps(directory, 2, modules["zero3", 2][1],
                     tmp_path / "resumed.npz", "--steps", "5", "--feed",
                     "feeds:feed", "--checkpoint", str(checkpoint),
                     "--resume")
    assert done.returncode == 0, done.stderr
    want, losses = simulated(modules["zero1", 2][0], state, 1, 5)
    with np.load(tmp_path / "resumed.npz") as out:
        np.testing.assert_array_equal(out["result_0"], np.array(losses[3:]))
        for name in WEIGHTS:
            assert out[name].tobytes() == want[name].tobytes(), name


def test_bad_steps_stop_every_rank(programs, tmp_path):
    directory, modules, _ = programs
    path = modules["zero1", 2][1]
    done = run_steps(directory, 2, path, tmp_path / "out.npz", "--steps",
                     "3", "--feed", "feeds:broken")
    assert done.returncode != 0
    assert "step 2: RuntimeError: no batch for step 2 (raised at " in \
        done.stderr
    assert "feeds.py:10 in broken)" in done.stderr
    assert not (tmp_path / "out.npz").exists()
    # A feed that gives the ranks different batches would train on a batch
    # nobody drew.
    done = run_steps(directory, 2, path, tmp_path / "out.npz", "--steps",
                     "2", "--feed", "feeds:rank_dependent")
    assert done.returncode != 0
    assert "step 1: the feed gave 'x' different values on different ranks" \
        in done.stderr
    assert not (tmp_path / "out.npz").exists()
    # No module of that name.
    done = run_steps(directory, 2, path, tmp_path / "out.npz", "--steps",
                     "2", "--feed", "nosuch:feed")
    assert done.returncode != 0
    assert "--feed nosuch:feed: no module 'nosuch' in the current " \
        "directory" in done.stderr
    # No feed: the batch is missing.
    done = run_steps(directory, 2, path, tmp_path / "out.npz", "--steps", "1")
    assert done.returncode != 0
    assert "step 1 has no value for x, y, lr" in done.stderr
    # A checkpoint of another function, and one of other shapes.
    other = tmp_path / "other.npz"
    np.savez(other, kina_step=np.int64(1), kina_function=np.array("train"))
    done = run_steps(directory, 2, path, tmp_path / "out.npz", "--steps",
                     "2", "--feed", "feeds:feed", "--checkpoint", str(other),
                     "--resume")
    assert done.returncode != 0
    assert "is a checkpoint of train, not of step" in done.stderr
    # A checkpoint already at (or past) the last step asked for.
    finished = tmp_path / "finished.npz"
    done = run_steps(directory, 2, path, tmp_path / "first.npz", "--steps",
                     "2", "--feed", "feeds:feed", "--checkpoint",
                     str(finished))
    assert done.returncode == 0, done.stderr
    done = run_steps(directory, 2, path, tmp_path / "out.npz", "--steps",
                     "2", "--feed", "feeds:feed", "--checkpoint",
                     str(finished), "--resume")
    assert done.returncode != 0
    assert "is at step 2: --steps 2 leaves nothing to run" in done.stderr
    assert not (tmp_path / "out.npz").exists()
    state = {"kina_step": np.int64(1), "kina_function": np.array("step")}
    state.update({name: np.zeros((3, 3), np.float32) for name in
                  WEIGHTS + ["m_" + w for w in WEIGHTS] +
                  ["v_" + w for w in WEIGHTS]})
    np.savez(other, **state)
    done = run_steps(directory, 2, path, tmp_path / "out.npz", "--steps",
                     "2", "--feed", "feeds:feed", "--checkpoint", str(other),
                     "--resume")
    assert done.returncode != 0
    assert "gives parameter 'w1' float32 of shape [3, 3]; it takes " \
        "float32 of shape [4, 16]" in done.stderr


def test_a_killed_rank_ends_the_job_and_keeps_the_last_checkpoint(
        programs, tmp_path):
    directory, modules, _ = programs
    checkpoint = tmp_path / "checkpoint.npz"
    done = run_steps(directory, 2, modules["zero1", 2][1],
                     tmp_path / "out.npz", "--steps", "5", "--feed",
                     "feeds:killing", "--checkpoint", str(checkpoint),
                     "--every", "1")
    assert done.returncode != 0
    assert not (tmp_path / "out.npz").exists()
    with np.load(checkpoint) as saved:
        assert int(saved["kina_step"]) == 2
        assert saved["w1"].shape == (4, 16)
    assert not list(tmp_path.glob(".checkpoint-*"))


def test_twenty_steps_on_four_ranks_match_each_other_and_torch(programs,
                                                               tmp_path):
    """Data parallel, ZeRO-1 and ZeRO-3 on four ranks: each within 1e-5 of
    torch.autograd with AdamW, and the same bits as each other: the
    runtime's all_reduce and reduce_scatter both add a block's summands in
    group order (lib/Runtime/Collectives.c), and the updates are
    elementwise."""
    directory, modules, _ = programs
    reference = torch_reference()
    trained = {}
    for stage in ("data", "zero1", "zero3"):
        output = tmp_path / (stage + ".npz")
        done = run_steps(directory, 4, modules[stage, 4][1], output,
                         "--steps", str(STEPS), "--feed", "feeds:feed")
        assert done.returncode == 0, done.stderr
        with np.load(output) as out:
            trained[stage] = {k: out[k] for k in WEIGHTS}
    for k in WEIGHTS:
        scale = np.abs(reference[k]).max()
        for stage, w in trained.items():
            assert np.abs(w[k] - reference[k]).max() <= 1e-5 * scale, (
                stage, k)
            assert w[k].tobytes() == trained["data"][k].tobytes(), (stage,
                                                                     k)
