"""examples/train_gpt.py at test width: it trains on the fortunes,
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
SCRIPT = ROOT / "examples" / "train_gpt.py"
FORTUNES = pathlib.Path("/usr/share/games/fortunes")

pytestmark = [
    pytest.mark.skipif(not FORTUNES.is_dir(),
                       reason="the Debian package fortunes"),
    # Each run compiles the step again; test_gpt_training.py runs the
    # trainer itself under the sanitizers.
    pytest.mark.skipif(os.environ.get("KINA_UNDER_ASAN") == "1",
                       reason="training runs stay out of the sanitizer build")]


@pytest.fixture(scope="module", autouse=True)
def shared_compile_cache(tmp_path_factory):
    """The runs here train the same few models: one compile cache for the
    module ($KINA_CACHE_DIR, which the script's kina.compile reads) compiles
    each once. test_compile_cache.py tests the cache itself."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KINA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


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


def test_an_explicit_size_wins_over_tiny(tmp_path):
    run = train(tmp_path, "--d", "32", "--steps", "1", "--sample", "0")
    assert run.returncode == 0, run.stderr
    assert "2 layers, D=32, H=4, T=16" in run.stdout


def test_resumed_run_takes_the_same_steps_and_keeps_the_history(tmp_path):
    from kina.training import load_checkpoint
    whole = train(tmp_path / "whole", "--steps", "4", "--sample", "0")
    assert whole.returncode == 0, whole.stderr
    first = train(tmp_path / "part", "--steps", "4", "--stop-after", "2",
                  "--sample", "0")
    assert first.returncode == 0, first.stderr
    rest = train(tmp_path / "rest", "--steps", "4", "--sample", "0",
                 "--resume", str(tmp_path / "part" / "checkpoint.npz"))
    assert rest.returncode == 0, rest.stderr
    assert "resuming from %s at step 2" % (tmp_path / "part" /
                                           "checkpoint.npz") in rest.stdout
    assert losses(rest.stdout)[4] == losses(whole.stdout)[4]
    # The loss history since step 1 is kept across the resume.
    resumed = load_checkpoint(tmp_path / "rest" / "checkpoint.npz").run
    uninterrupted = load_checkpoint(tmp_path / "whole" / "checkpoint.npz").run
    assert [s for s, _ in resumed["history"]["train"]] == [1, 2, 3, 4]
    assert resumed["history"] == uninterrupted["history"]


def test_pipelined_training_follows_one_device_and_shares_its_checkpoints(
        tmp_path):
    # --tiny's 2 layers as 2 stages, its batch of 2 as 2 microbatches.
    one = train(tmp_path / "one", "--steps", "4", "--sample", "0")
    assert one.returncode == 0, one.stderr
    piped = train(tmp_path / "piped", "--steps", "4", "--stop-after", "2",
                  "--sample", "0", "--stages", "2", "--microbatches", "2",
                  "--schedule", "1f1b")
    assert piped.returncode == 0, piped.stderr
    assert "2 pipeline stages, 1f1b, 2 microbatches" in piped.stdout
    for printed, expected in zip(losses(piped.stdout)[2], losses(one.stdout)[2]):
        assert float(printed) == pytest.approx(float(expected), abs=2e-4)
    # Its checkpoint resumes on one device (the same tied weights).
    rest = train(tmp_path / "rest", "--steps", "4", "--sample", "0",
                 "--resume", str(tmp_path / "piped" / "checkpoint.npz"))
    assert rest.returncode == 0, rest.stderr
    for printed, expected in zip(losses(rest.stdout)[4], losses(one.stdout)[4]):
        assert float(printed) == pytest.approx(float(expected), abs=2e-4)
    bad = train(tmp_path / "bad", "--steps", "1", "--stages", "2",
                "--microbatches", "3")
    assert bad.returncode != 0
    assert "2 sequences a step cannot be cut into 3 microbatches" in \
        bad.stderr


def test_resuming_with_another_schedule_is_refused(tmp_path):
    first = train(tmp_path / "a", "--steps", "2", "--sample", "0")
    assert first.returncode == 0, first.stderr
    saved = str(tmp_path / "a" / "checkpoint.npz")
    run = train(tmp_path / "b", "--steps", "3", "--sample", "0",
                "--resume", saved)
    assert run.returncode != 0
    assert "was trained with --steps 2" in run.stderr
    assert "--reschedule" in run.stderr
    run = train(tmp_path / "b", "--steps", "3", "--sample", "0",
                "--resume", saved, "--reschedule")
    assert run.returncode == 0, run.stderr


def test_a_version_1_checkpoint_still_loads(tmp_path):
    import json
    from kina.training import load_checkpoint
    run = train(tmp_path, "--steps", "2", "--sample", "0")
    assert run.returncode == 0, run.stderr
    with np.load(tmp_path / "checkpoint.npz") as data:
        arrays = {key: data[key] for key in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta["format"] = "kina-gpt-train-1"
    del meta["run"]
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "v1.npz", **arrays)
    old = load_checkpoint(tmp_path / "v1.npz")
    new = load_checkpoint(tmp_path / "checkpoint.npz")
    assert old.steps == new.steps == 2 and old.run == {}
    for name, value in new.weights.items():
        np.testing.assert_array_equal(old.weights[name], value)


@pytest.mark.parametrize("content", [
    b"PK\x03\x04 not really a zip", b"", b"\x93NUMPY garbage"])
def test_a_corrupt_checkpoint_is_a_named_error(tmp_path, content):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(content)
    run = train(tmp_path, "--steps", "2", "--resume", str(bad))
    assert run.returncode != 0
    assert "%s is not a Kina training checkpoint" % bad in run.stderr
    assert "pickle" not in run.stderr and "zip" not in run.stderr.lower()


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
    saved = load_checkpoint(tmp_path / "checkpoint.npz")
    reference = load_checkpoint(out / "checkpoint.npz")
    assert saved.steps == 10
    for name, value in reference.weights.items():
        scale = np.abs(value).max()
        assert np.abs(saved.weights[name] - value).max() <= 1e-5 * scale, \
            name


@needs_mpi
def test_a_zero1_checkpoint_resumes_under_zero3_and_on_one_device(
        tmp_path, one_device):
    """ZeRO-1 on two ranks to step 5, then from its checkpoint (global
    arrays) ZeRO-3 on two ranks, and one device, to step 10: each equals
    the uninterrupted one-device run."""
    from kina.training import load_checkpoint
    out, want = one_device
    first = train(tmp_path / "zero1", *EXACT, "--devices", "2",
                  "--parallel", "zero1", "--stop-after", "5")
    assert first.returncode == 0, first.stderr
    assert "2 ranks, zero1 parallel" in first.stdout
    got = losses(first.stdout)
    assert sorted(got) == [5]
    for mine, theirs in zip(got[5], want[5]):
        assert abs(float(mine) - float(theirs)) <= 1e-4, (got, want)
    saved = tmp_path / "zero1" / "checkpoint.npz"
    reference = load_checkpoint(out / "checkpoint.npz")
    for name, plan in (("zero3", ("--devices", "2", "--parallel", "zero3")),
                       ("one", ())):
        run = train(tmp_path / name, *EXACT, *plan, "--resume", str(saved))
        assert run.returncode == 0, run.stderr
        assert "resuming from %s at step 5" % saved in run.stdout
        got = losses(run.stdout)
        assert sorted(got) == [10], (name, got)
        for mine, theirs in zip(got[10], want[10]):
            assert abs(float(mine) - float(theirs)) <= 1e-4, (name, got,
                                                              want)
        resumed = load_checkpoint(tmp_path / name / "checkpoint.npz")
        assert resumed.steps == 10
        for weight, value in reference.weights.items():
            scale = np.abs(value).max()
            assert np.abs(resumed.weights[weight] - value).max() <= \
                1e-5 * scale, (name, weight)


@needs_mpi
def test_mpirun_training_with_a_bad_checkpoint_fails_on_every_rank(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a checkpoint")
    run = train(tmp_path, "--steps", "2", "--devices", "2", "--resume",
                str(bad))
    assert run.returncode != 0
    assert "is not a Kina training checkpoint" in run.stderr


@needs_mpi
def test_a_killed_rank_is_named_with_the_command_that_resumes(tmp_path):
    import signal
    import time
    job = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--tiny", "--eval-every", "1",
         "--eval-batches", "1", "--out", str(tmp_path), "--steps", "400",
         "--sample", "0", "--devices", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    checkpoint = tmp_path / "checkpoint.npz"
    try:
        deadline = time.monotonic() + 240
        while not checkpoint.exists() and time.monotonic() < deadline and \
                job.poll() is None:
            time.sleep(0.2)
        # The ranks: the Python processes mpirun started (not mpirun).
        ranks = [pid for pid in subprocess.run(
            ["pgrep", "-f", "--", "--rank-program " + str(tmp_path)],
            capture_output=True, text=True).stdout.split()
            if pathlib.Path("/proc/%s/cmdline" % pid).read_bytes()
            .split(b"\0")[0].endswith(b"python3")]
        assert checkpoint.exists() and len(ranks) == 2, ranks
        os.kill(int(ranks[-1]), signal.SIGKILL)
        _, stderr = job.communicate(timeout=120)
    finally:
        job.kill()
    assert job.returncode != 0
    assert re.search(r"train_gpt: rank [01] ended the 2-rank job", stderr), \
        stderr
    found = re.search(r"The last checkpoint, (\S+), is at step (\d+); "
                      r"resume with:\n +(.*)\n", stderr)
    assert found and int(found.group(2)) >= 1, stderr
    assert found.group(3).endswith("--resume " + str(checkpoint))
    assert "--devices 2" in found.group(3)
