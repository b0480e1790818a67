"""scripts/generate/train_gpt.py at test width: it trains on the fortunes,
evaluates held-out loss, writes the loss curve and a checkpoint, samples
text, and a resumed run takes the same steps as an uninterrupted one."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "generate" / "train_gpt.py"
FORTUNES = pathlib.Path("/usr/share/games/fortunes")

pytestmark = [
    pytest.mark.skipif(not FORTUNES.is_dir(),
                       reason="the Debian package fortunes"),
    # Each run compiles the step again; test_gpt_training.py runs the
    # trainer itself under the sanitizers.
    pytest.mark.skipif(os.environ.get("KINA_UNDER_ASAN") == "1",
                       reason="training runs stay out of the sanitizer build")]


def train(out, *extra):
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--tiny", "--eval-every", "2",
         "--eval-batches", "2", "--out", str(out), *extra],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", "")))
    return run


def losses(stdout):
    return {int(step): (train_loss, held) for step, train_loss, held in
            re.findall(r"step (\d+): training loss (\S+), held-out loss (\S+)",
                       stdout)}


def test_trains_evaluates_plots_checkpoints_and_samples(tmp_path):
    run = train(tmp_path, "--steps", "4", "--sample", "24")
    assert run.returncode == 0, run.stderr
    seen = losses(run.stdout)
    assert sorted(seen) == [2, 4]
    assert "tokens/s" in run.stderr
    assert (tmp_path / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "checkpoint.npz").stat().st_size > 0
    assert run.stdout.count("---\nThe ") == 2
    # A byte-level model starts near log(256) = 5.55 nats per byte.
    assert 4.0 < float(seen[2][1]) < 6.5


def test_resumed_run_takes_the_same_steps(tmp_path):
    whole = train(tmp_path / "whole", "--steps", "4", "--sample", "0")
    assert whole.returncode == 0, whole.stderr
    first = train(tmp_path / "part", "--steps", "4", "--stop-after", "2",
                  "--sample", "0")
    assert first.returncode == 0, first.stderr
    rest = train(tmp_path / "rest", "--steps", "4", "--sample", "0",
                 "--resume", str(tmp_path / "part" / "checkpoint.npz"))
    assert rest.returncode == 0, rest.stderr
    assert losses(rest.stdout)[4] == losses(whole.stdout)[4]


def test_a_corrupt_checkpoint_is_a_named_error(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    run = train(tmp_path, "--steps", "2", "--resume", str(bad))
    assert run.returncode != 0
    assert "cannot read the checkpoint" in run.stderr


needs_mpi = pytest.mark.skipif(
    os.environ.get("KINA_SKIP_MPI") == "1" or not shutil.which("mpirun"),
    reason="OpenMPI's mpirun (KINA_SKIP_MPI=1: the sanitizer build)")
# Small steps and a large epsilon: Adam turns a gradient's rounding into
# up to lr * noise / eps of its weight (test_gpt_training.py says more).
EXACT = ("--lr", "1e-4", "--adam-eps", "1e-6", "--steps", "10",
         "--eval-every", "5", "--sample", "0")


@pytest.fixture(scope="module")
def one_device(tmp_path_factory):
    out = tmp_path_factory.mktemp("one")
    run = train(out, *EXACT)
    assert run.returncode == 0, run.stderr
    return out, losses(run.stdout)


@needs_mpi
@pytest.mark.parametrize("parallel,devices", [
    ("data", 2), ("megatron", 2), ("data+megatron", 4)])
def test_mpirun_training_equals_one_device(tmp_path, one_device, parallel,
                                           devices):
    from kina.training import load_checkpoint
    out, want = one_device
    run = train(tmp_path, *EXACT, "--devices", str(devices), "--parallel",
                parallel)
    assert run.returncode == 0, run.stderr
    assert "%d ranks, %s parallel" % (devices, parallel) in run.stdout
    got = losses(run.stdout)
    assert sorted(got) == [5, 10]
    for step in got:
        for mine, theirs in zip(got[step], want[step]):
            assert abs(float(mine) - float(theirs)) <= 1e-4, (step, got, want)
    _, steps, _, weights, m, _ = load_checkpoint(tmp_path / "checkpoint.npz")
    _, _, _, reference, m_reference, _ = load_checkpoint(
        out / "checkpoint.npz")
    assert steps == 10
    for name, value in reference.items():
        scale = np.abs(value).max()
        assert np.abs(weights[name] - value).max() <= 1e-5 * scale, name


@needs_mpi
def test_mpirun_training_with_a_bad_checkpoint_fails_on_every_rank(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a checkpoint")
    run = train(tmp_path, "--steps", "2", "--devices", "2", "--resume",
                str(bad))
    assert run.returncode != 0
    assert "cannot read the checkpoint" in run.stderr
