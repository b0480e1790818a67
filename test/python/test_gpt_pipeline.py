"""The GPT's blocks as pipeline stages (kina.models.gpt.pipeline_source,
run by kina.pipelining): 8 layers over 2 and 4 ranks, interleaved over 4
ranks with a block per virtual stage, and 2 stages x 2 data-parallel
copies; the loss and every weight's gradient against torch.autograd in
float64 on the whole batch and against Kina's unpipelined step, within
1e-5."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

import kina
from kina import pipelining
from kina.models import gpt
from kina_reference import TrainableGPT, named_gradients
from test_pipelining import needs_mpi, run_ranks

ROOT = pathlib.Path(__file__).resolve().parents[2]

CFG = gpt.Config(layers=8, d=32, heads=2, t=8, v=64, b=1)
MICROBATCHES = 4
WHOLE = gpt.Config(layers=8, d=32, heads=2, t=8, v=64, b=MICROBATCHES)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    ids = rng.integers(0, CFG.v, (MICROBATCHES, CFG.t)).astype(np.int64)
    targets = rng.integers(0, CFG.v, (MICROBATCHES, CFG.t)).astype(np.int64)
    return gpt.weights(CFG, seed=2), ids, targets


@pytest.fixture(scope="module")
def references(data):
    weights, ids, targets = data
    model = TrainableGPT(WHOLE, weights).double()
    logits = model(ids)
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, CFG.v), torch.tensor(targets).reshape(-1))
    loss.backward()
    unpipelined = kina.compile(gpt.loss_source(WHOLE), "gpt_loss.kina")
    value, *grads = unpipelined.gpt_loss_grad(
        *gpt.arguments(WHOLE, weights, ids), targets)
    return ((loss.item(), named_gradients(model)),
            (float(value), dict(zip(gpt.weight_names(WHOLE), grads))))


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One compile per program for the module's tests."""
    return str(tmp_path_factory.mktemp("cache"))


def run(data, cache, schedule, stages, replicas=1):
    weights, ids, targets = data
    pipe = pipelining.Pipeline(
        gpt.pipeline_source(CFG, stages),
        [gpt.PIPELINE_STAGE % k for k in range(stages)],
        batch=["token_ids", "targets"], constants=["mask"],
        schedule=schedule, microbatches=MICROBATCHES // replicas,
        replicas=replicas, cache_dir=cache)
    return pipe.step(dict(weights, mask=gpt.causal_mask(CFG)),
                     {"token_ids": ids, "targets": targets})


# Three 8-layer programs with their backward: out of the sanitizer build
# (test_pipelining.py runs the same machinery there on a small MLP).
@pytest.mark.skipif(os.environ.get("KINA_UNDER_ASAN") == "1",
                    reason="8-layer compiles stay out of the sanitizer build")
@pytest.mark.parametrize("schedule, stages, ranks, replicas", [
    ("1f1b", 2, 2, 1), ("zb-h1", 4, 4, 1), ("interleaved", 8, 4, 1),
    ("1f1b", 2, 2, 2)])
def test_pipelined_gradients_equal_the_unpipelined_step(data, references,
                                                        cache, schedule,
                                                        stages, ranks,
                                                        replicas):
    # The last: pipeline x data parallel, 2 stages x 2 copies on a 2 x 2
    # mesh of ranks.
    result = run(data, cache, schedule, stages, replicas)
    assert result.trace.schedule.stages == ranks
    assert len(result.traces) == replicas
    (torch_loss, torch_grads), (kina_loss, kina_grads) = references
    assert result.loss == pytest.approx(torch_loss, rel=1e-5)
    assert result.loss == pytest.approx(kina_loss, rel=1e-5)
    assert set(result.gradients) == set(kina_grads)
    for name, value in result.gradients.items():
        for want in (torch_grads[name], kina_grads[name]):
            scale = max(float(np.abs(want).max()), 1e-3)
            assert float(np.abs(value - want).max()) <= 1e-5 * scale, name


def test_more_stages_than_layers_is_refused():
    with pytest.raises(ValueError, match=r"8 layers cannot be cut into 16 "
                       r"pipeline stages"):
        gpt.pipeline_source(CFG, 16)
    with pytest.raises(ValueError, match=r"cannot be cut into 3"):
        gpt.pipeline_source(CFG, 3)


@needs_mpi
def test_the_generators_pipeline_runs_on_ranks_with_the_simulators_bits(
        data, tmp_path):
    program = tmp_path / "gpt_pp.kina"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate" / "gen_gpt.py"),
         "--form", "pipeline", "--layers", "8", "--d", "32", "--heads", "2",
         "--t", "8", "--v", "64", "--stages", "2", "--schedule", "gpipe",
         "--microbatches", str(MICROBATCHES), "-o", str(program)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = program.read_text()
    command = text.splitlines()[1]
    assert "mpirun -n 2 python3 -m kina.mpi_pipeline" in command
    assert "--stages gpt_stage_0,gpt_stage_1 --batch token_ids,targets " \
        "--constants mask --schedule gpipe --microbatches 4" in command
    weights, ids, targets = data
    constants = dict(weights, mask=gpt.causal_mask(CFG))
    pipe = pipelining.Pipeline(text, ["gpt_stage_0", "gpt_stage_1"],
                               ["token_ids", "targets"], constants=["mask"],
                               schedule="gpipe", microbatches=MICROBATCHES,
                               filename=str(program),
                               cache_dir=str(tmp_path / "cache"))
    simulated = pipe.step(constants, {"token_ids": ids, "targets": targets})
    np.savez(tmp_path / "in.npz", token_ids=ids, targets=targets,
             **constants)
    done = run_ranks(tmp_path, 2, program, tmp_path / "in.npz",
                     *command.split("OUTPUT.npz")[1].split())
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "out.npz") as out:
        assert float(out["loss"]) == simulated.loss
        for name, value in simulated.gradients.items():
            np.testing.assert_array_equal(out["grad_" + name], value,
                                          err_msg=name)


@needs_mpi
def test_a_tied_embedding_across_stages_on_ranks(data, tmp_path):
    # wte read by the first and the last of 2 stages on 2 copies: its
    # gradient summed over the stages, then the copies (4 ranks).
    weights, ids, targets = data
    weights = {k: v for k, v in weights.items() if k != "lm_head"}
    text = gpt.pipeline_source(CFG, 2, tied=True)
    program = tmp_path / "tied.kina"
    program.write_text(text)
    pipe = pipelining.Pipeline(text, ["gpt_stage_0", "gpt_stage_1"],
                               ["token_ids", "targets"], constants=["mask"],
                               shared=["wte"], schedule="1f1b",
                               microbatches=MICROBATCHES // 2, replicas=2,
                               filename=str(program),
                               cache_dir=str(tmp_path / "cache"))
    constants = dict(weights, mask=gpt.causal_mask(CFG))
    simulated = pipe.step(constants, {"token_ids": ids, "targets": targets})
    model = TrainableGPT(WHOLE, weights).double()  # tied: no lm_head
    loss = torch.nn.functional.cross_entropy(
        model(ids).reshape(-1, CFG.v), torch.tensor(targets).reshape(-1))
    loss.backward()
    expected = named_gradients(model)["wte"]
    assert float(np.abs(simulated.gradients["wte"] - expected).max()) <= \
        1e-5 * float(np.abs(expected).max())
    np.savez(tmp_path / "in.npz", token_ids=ids, targets=targets, **constants)
    done = run_ranks(tmp_path, 4, program, tmp_path / "in.npz", "--stages",
                     "gpt_stage_0,gpt_stage_1", "--batch", "token_ids,targets",
                     "--constants", "mask", "--shared", "wte",
                     "--microbatches", str(MICROBATCHES // 2),
                     "--replicas", "2")
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "out.npz") as out:
        for name, value in simulated.gradients.items():
            np.testing.assert_array_equal(out["grad_" + name], value,
                                          err_msg=name)
        assert int(out["bytes_moved"]) == simulated.bytes_moved
