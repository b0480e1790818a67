"""The GPT's blocks as pipeline stages (kina.models.gpt.pipeline_source,
run by kina.pipelining): 8 layers over 2 and 4 ranks, interleaved over 4
ranks with a block per virtual stage, 2 stages x 2 data-parallel copies,
and (2 layers) 2 stages x 2 tensor-parallel devices; the loss and every
weight's gradient against torch.autograd in float64 on the whole batch
(the unpipelined step), within 1e-5. The 2-stage programs are the
generator's file: one compile serves the threads and the MPI ranks."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

from kina import pipelining
from kina.models import gpt
from kina_reference import TrainableGPT, named_gradients
from test_pipelining import assert_ranks_give, needs_mpi, run_ranks

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


def torch_step(cfg, weights, ids, targets):
    """The unpipelined step's loss and gradients in float64."""
    model = TrainableGPT(cfg, weights).double()
    loss = torch.nn.functional.cross_entropy(
        model(ids).reshape(-1, cfg.v), torch.tensor(targets).reshape(-1))
    loss.backward()
    return loss.item(), named_gradients(model)


def assert_matches(result, reference, cfg):
    """The step's loss and every weight's gradient within 1e-5 of the
    float64 reference (relative to the gradient's largest element)."""
    torch_loss, torch_grads = reference
    assert result.loss == pytest.approx(torch_loss, rel=1e-5)
    assert set(result.gradients) == set(gpt.weight_names(cfg))
    for name, value in result.gradients.items():
        want = torch_grads[name]
        scale = max(float(np.abs(want).max()), 1e-3)
        assert float(np.abs(value - want).max()) <= 1e-5 * scale, name


@pytest.fixture(scope="module")
def reference(data):
    return torch_step(WHOLE, *data)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One compile per program for the module's tests (and the ranks')."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def generated(cache):
    """gen_gpt.py's 2-stage file: (path, text)."""
    program = cache / "gpt_pp.kina"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate" / "gen_gpt.py"),
         "--form", "pipeline", "--layers", "8", "--d", "32", "--heads", "2",
         "--t", "8", "--v", "64", "--stages", "2", "--schedule", "gpipe",
         "--microbatches", str(MICROBATCHES), "-o", str(program)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return program, program.read_text()


def run(data, cache, generated, schedule, stages, replicas=1):
    weights, ids, targets = data
    program, text = generated if stages == 2 else \
        ("<pipeline>", gpt.pipeline_source(CFG, stages))
    pipe = pipelining.Pipeline(
        text, [gpt.PIPELINE_STAGE % k for k in range(stages)],
        batch=["token_ids", "targets"], constants=["mask"],
        schedule=schedule, microbatches=MICROBATCHES // replicas,
        replicas=replicas, filename=str(program), cache_dir=str(cache))
    return pipe.step(dict(weights, mask=gpt.causal_mask(CFG)),
                     {"token_ids": ids, "targets": targets})


# Three 8-layer programs with their backward: out of the sanitizer build
# (test_pipelining.py runs the same machinery there on a small MLP).
@pytest.mark.skipif(os.environ.get("KINA_UNDER_ASAN") == "1",
                    reason="8-layer compiles stay out of the sanitizer build")
@pytest.mark.parametrize("schedule, stages, ranks, replicas", [
    ("1f1b", 2, 2, 1), ("zb-h1", 4, 4, 1), ("interleaved", 8, 4, 1),
    ("1f1b", 2, 2, 2)])
def test_pipelined_gradients_equal_the_unpipelined_step(data, reference,
                                                        cache, generated,
                                                        schedule, stages,
                                                        ranks, replicas):
    # The last: pipeline x data parallel, 2 stages x 2 copies on a 2 x 2
    # mesh of ranks.
    result = run(data, cache, generated, schedule, stages, replicas)
    assert result.trace.schedule.stages == ranks
    assert len(result.traces) == replicas
    assert_matches(result, reference, WHOLE)


@pytest.mark.skipif(os.environ.get("KINA_UNDER_ASAN") == "1",
                    reason="a GPT on the mesh stays out of the sanitizer "
                    "build (test_pipeline_tensor_parallel.py runs there)")
def test_pipeline_times_tensor_parallel_on_a_two_by_two_mesh():
    # 2 stages, each block's Megatron placements over tp = 2: a rank is a
    # group of two devices. Two layers keep the compile short.
    cfg = gpt.Config(layers=2, d=32, heads=2, t=8, v=64, b=1)
    whole = gpt.Config(layers=2, d=32, heads=2, t=8, v=64, b=MICROBATCHES)
    rng = np.random.default_rng(11)
    ids, targets = (rng.integers(0, cfg.v, (MICROBATCHES, cfg.t))
                    .astype(np.int64) for _ in range(2))
    weights = gpt.weights(cfg, seed=4)
    text = gpt.pipeline_source(cfg, 2, tensor=2)
    assert "@mesh([2], axes=[tp])" in text
    assert "wq_0: Tensor[F32, [32, 32], @sharded(axis=1, over=tp)]" in text
    pipe = pipelining.Pipeline(text, ["gpt_stage_0", "gpt_stage_1"],
                               ["token_ids", "targets"], constants=["mask"],
                               schedule="1f1b", microbatches=MICROBATCHES)
    assert pipe.tensor == 2
    result = pipe.step(dict(weights, mask=gpt.causal_mask(cfg)),
                       {"token_ids": ids, "targets": targets})
    assert_matches(result, torch_step(whole, weights, ids, targets), whole)


def test_more_stages_than_layers_is_refused():
    with pytest.raises(ValueError, match=r"8 layers cannot be cut into 16 "
                       r"pipeline stages"):
        gpt.pipeline_source(CFG, 16)
    with pytest.raises(ValueError, match=r"cannot be cut into 3"):
        gpt.pipeline_source(CFG, 3)


@needs_mpi
def test_the_generators_pipeline_runs_on_ranks_with_the_simulators_bits(
        data, cache, generated, tmp_path):
    program, text = generated
    command = text.splitlines()[1]
    assert "mpirun -n 2 python3 -m kina.mpi_pipeline" in command
    assert "--pipeline gpt_pipeline --schedule gpipe --microbatches 4" \
        in command
    assert "fn gpt_pipeline = pipeline(gpt_stage_0, gpt_stage_1, " \
        "batch=[token_ids, targets], constants=[mask])" in text
    weights, ids, targets = data
    constants = dict(weights, mask=gpt.causal_mask(CFG))
    pipe = pipelining.Pipeline(text, ["gpt_stage_0", "gpt_stage_1"],
                               ["token_ids", "targets"], constants=["mask"],
                               schedule="gpipe", microbatches=MICROBATCHES,
                               filename=str(program),
                               cache_dir=str(cache))
    simulated = pipe.step(constants, {"token_ids": ids, "targets": targets})
    np.savez(tmp_path / "in.npz", token_ids=ids, targets=targets,
             **constants)
    done = run_ranks(tmp_path, 2, program, tmp_path / "in.npz",
                     *command.split("OUTPUT.npz")[1].split(), cache=cache)
    assert done.returncode == 0, done.stderr
    assert_ranks_give(tmp_path, simulated)


@needs_mpi
def test_a_tied_embedding_across_stages_on_ranks(tmp_path):
    # wte read by the first and the last of 2 stages on 2 copies: its
    # gradient summed over the stages, then the copies (4 ranks). Two
    # layers are enough for the sharing.
    cfg = gpt.Config(layers=2, d=32, heads=2, t=8, v=64, b=1)
    whole = gpt.Config(layers=2, d=32, heads=2, t=8, v=64, b=MICROBATCHES)
    rng = np.random.default_rng(7)
    ids, targets = (rng.integers(0, cfg.v, (MICROBATCHES, cfg.t))
                    .astype(np.int64) for _ in range(2))
    weights = {k: v for k, v in gpt.weights(cfg, seed=3).items()
               if k != "lm_head"}
    text = gpt.pipeline_source(cfg, 2, tied=True)
    program = tmp_path / "tied.kina"
    program.write_text(text)
    pipe = pipelining.Pipeline(text, ["gpt_stage_0", "gpt_stage_1"],
                               ["token_ids", "targets"], constants=["mask"],
                               shared=["wte"], schedule="1f1b",
                               microbatches=MICROBATCHES // 2, replicas=2,
                               filename=str(program),
                               cache_dir=str(tmp_path / "cache"))
    constants = dict(weights, mask=gpt.causal_mask(cfg))
    simulated = pipe.step(constants, {"token_ids": ids, "targets": targets})
    _, gradients = torch_step(whole, weights, ids, targets)  # tied: no lm_head
    expected = gradients["wte"]
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
