"""Pipeline x tensor parallel: two stages, each a Megatron MLP (a column-
then a row-parallel product) on `@mesh([2], axes=[tp])`, so that the step
runs on a 2 x 2 mesh of devices (a pipeline rank is a group of two).
Checked against torch.autograd (and torch.optim.AdamW) in float64 on the
whole batch; the bytes moved against the transfers each device makes and
the ledger (`m.cost`) of each call; located errors for what cannot run."""

import numpy as np
import pytest
import torch

from kina import pipelining
from test_pipelining import (adamw_against_torch, assert_ranks_give,
                             needs_mpi, run_ranks)

ROWS, WIDTH, HIDDEN = 4, 8, 16  # one microbatch; the MLPs' hidden width
MICROBATCHES = 4
TENSOR = 2
STAGES = ["mlp0", "mlp1_loss"]

SOURCE = """@mesh([%(t)d], axes=[tp])

fn mlp0(x: Tensor[F32, [%(r)d, %(w)d], @replicated],
        w0: Tensor[F32, [%(w)d, %(h)d], @sharded(axis=1, over=tp)],
        w1: Tensor[F32, [%(h)d, %(w)d], @sharded(axis=0, over=tp)])
    -> Tensor[F32, [%(r)d, %(w)d], @replicated] {
  return x + tanh(x @ w0) @ w1
}

fn mlp1_loss(h: Tensor[F32, [%(r)d, %(w)d], @replicated],
             w2: Tensor[F32, [%(w)d, %(h)d], @sharded(axis=1, over=tp)],
             w3: Tensor[F32, [%(h)d, %(w)d], @sharded(axis=0, over=tp)],
             y: Tensor[F32, [%(r)d, %(w)d], @replicated])
    -> Tensor[F32, [], @replicated] {
  d = h + tanh(h @ w2) @ w3 - y
  return reshape(mean(mean(d * d, axis=1), axis=0), [])
}
""" % {"t": TENSOR, "r": ROWS, "w": WIDTH, "h": HIDDEN}


def data(seed=0):
    rng = np.random.default_rng(seed)
    shapes = {"w0": (WIDTH, HIDDEN), "w1": (HIDDEN, WIDTH),
              "w2": (WIDTH, HIDDEN), "w3": (HIDDEN, WIDTH)}
    weights = {k: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
               for k, s in shapes.items()}
    batch = {k: rng.standard_normal((ROWS * MICROBATCHES, WIDTH))
             .astype(np.float32) for k in ("x", "y")}
    return weights, batch


def torch_loss(w, batch):
    x, y = (torch.tensor(batch[k], dtype=torch.float64) for k in "xy")
    h = x + torch.tanh(x @ w["w0"]) @ w["w1"]
    d = h + torch.tanh(h @ w["w2"]) @ w["w3"] - y
    return (d * d).mean()


def torch_step(weights, batch):
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in weights.items()}
    loss = torch_loss(w, batch)
    loss.backward()
    return float(loss), {k: v.grad.numpy() for k, v in w.items()}


@pytest.fixture(scope="module")
def pipes():
    """A pipeline per schedule: GPipe and 1F1B call each stage's whole
    backward, ZB-H1 its input and weight gradients apart."""
    return {kind: pipelining.Pipeline(SOURCE, STAGES, ["x", "y"],
                                      schedule=kind,
                                      microbatches=MICROBATCHES,
                                      filename="mlp_tp.kina",
                                      optimizer="adamw")
            for kind in ("gpipe", "1f1b", "zb-h1")}


@pytest.mark.parametrize("kind", ["gpipe", "1f1b", "zb-h1"])
def test_stages_on_the_mesh_give_the_unpipelined_gradient(pipes, kind):
    weights, batch = data()
    loss, gradients = torch_step(weights, batch)
    pipe = pipes[kind]
    assert pipe.tensor == TENSOR and pipe.placed == STAGES
    result = pipe.step(weights, batch)
    assert result.loss == pytest.approx(loss, rel=1e-6)
    for name, expected in gradients.items():
        np.testing.assert_allclose(result.gradients[name], expected,
                                   rtol=1e-5, atol=1e-6, err_msg=name)


def test_every_schedule_gives_the_same_bits(pipes):
    weights, batch = data(1)
    first = pipes["gpipe"].step(weights, batch)
    for kind in ("1f1b", "zb-h1"):
        result = pipes[kind].step(weights, batch)
        assert result.losses == first.losses, kind
        for name, value in first.gradients.items():
            np.testing.assert_array_equal(result.gradients[name], value,
                                          err_msg=kind)


def test_bytes_moved_are_the_transfers_and_each_calls_collectives(pipes):
    # Each device of a stage's group sends its copy of the replicated
    # activation (forward) and cotangent (backward) to its counterpart;
    # every call on the mesh sends what the ledger says per device, on
    # each of the TENSOR devices.
    weights, batch = data()
    activation = ROWS * WIDTH * 4
    transfers = MICROBATCHES * 2 * TENSOR * activation
    for kind, calls in (("1f1b", ["mlp0", "kina_pipeline_backward_0",
                                  "mlp1_loss", "kina_pipeline_backward_1"]),
                        ("zb-h1", ["mlp0", "kina_pipeline_weight_gradient_0",
                                   "mlp1_loss",
                                   "kina_pipeline_input_gradient_1",
                                   "kina_pipeline_weight_gradient_1"])):
        pipe = pipes[kind]
        collectives = sum(pipe.module.cost(name).bytes_sent for name in calls)
        assert collectives > 0
        result = pipe.step(weights, batch)
        assert result.bytes_moved == \
            transfers + MICROBATCHES * TENSOR * collectives, kind


def test_programs_say_which_calls_run_on_the_mesh(pipes):
    text = pipes["1f1b"].programs()
    assert "F0: call @mlp0 on microbatch 0 (on the mesh's 2 devices)" in text
    assert "BW3: call @kina_pipeline_backward_1 on microbatch 3 (on the " \
        "mesh's 2 devices)" in text


def test_adamw_on_the_mesh_trains_as_torch_does(pipes):
    # The update runs on the mesh too; its blocks are written back.
    weights, batch = data(2)
    adamw_against_torch(pipes["1f1b"], weights, batch, torch_loss)


def test_keeping_forward_values_on_the_mesh_is_refused():
    with pytest.raises(pipelining.PipelineError,
                       match=r"recompute=False keeps each forward's values "
                       r"for its backward, which split=true does for host "
                       r"functions only; stage 0 \(mlp0\) is placed on the "
                       r"mesh"):
        pipelining.Pipeline(SOURCE, STAGES, ["x", "y"], schedule="1f1b",
                            microbatches=MICROBATCHES, recompute=False)


@needs_mpi
@pytest.mark.parametrize("kind", ["1f1b", "zb-h1"])
def test_mpi_ranks_in_groups_give_the_simulators_bits(pipes, kind, tmp_path):
    # 4 ranks: each stage's group of 2 splits its collectives off the
    # world; each device sends its block to its counterpart.
    program = tmp_path / "mlp_tp.kina"
    program.write_text(SOURCE)
    weights, batch = data(3)
    simulated = pipes[kind].step(weights, batch)
    np.savez(tmp_path / "in.npz", **weights, **batch)
    done = run_ranks(tmp_path, 2 * TENSOR, program, tmp_path / "in.npz",
                     "--stages", ",".join(STAGES), "--batch", "x,y",
                     "--schedule", kind, "--microbatches", str(MICROBATCHES))
    assert done.returncode == 0, done.stderr
    assert_ranks_give(tmp_path, simulated, kind)


@needs_mpi
def test_mpi_ranks_must_fill_every_group(tmp_path):
    program = tmp_path / "mlp_tp.kina"
    program.write_text(SOURCE)
    weights, batch = data()
    np.savez(tmp_path / "in.npz", **weights, **batch)
    done = run_ranks(tmp_path, 2, program, tmp_path / "in.npz", "--stages",
                     ",".join(STAGES), "--batch", "x,y", "--microbatches",
                     str(MICROBATCHES))
    assert done.returncode != 0
    assert "the 1f1b schedule has 4 ranks (2 stages x 2 devices a stage on " \
        "the mesh), but mpirun started 2" in done.stderr
