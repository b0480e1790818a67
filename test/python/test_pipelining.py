"""kina.pipelining: a training step's stages on their own ranks, run by
each schedule (GPipe, 1F1B, interleaved 1F1B, ZB-H1) on the simulator's
threads and on mpirun ranks: the loss and gradients against
torch.autograd in float64 on the whole batch, the same bits under every
schedule (each sums a weight's microbatch gradients in microbatch order),
the bytes that cross between ranks, the trace's order, and located errors
for pipelines that cannot run."""

import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

import kina
import kina.pipeline
from kina import pipelining
from kina.pipeline import ScheduleError
from test_mpi import mpi_environment

LAYERS = 4  # stage functions: three tanh layers and a squared-error head
MICROBATCHES = 8
ROWS, WIDTH = 4, 8  # one microbatch
STAGES = ["layer0", "layer1", "layer2", "head"]
# (schedule, ranks): interleaved holds two stage functions per rank.
SCHEDULES = [("gpipe", 4), ("1f1b", 4), ("zb-h1", 4), ("interleaved", 2)]


def source(rows, width, layers=LAYERS):
    lines = []
    for i in range(layers - 1):
        x = "x" if i == 0 else "h"
        lines.append(
            "fn layer%d(%s: Tensor[F32, [%d, %d], @host], w%d: Tensor[F32, "
            "[%d, %d], @host]) -> Tensor[F32, [%d, %d], @host] {\n"
            "  return tanh(%s @ w%d)\n}" % (i, x, rows, width, i, width, width,
                                            rows, width, x, i))
    lines.append(
        "fn head(h: Tensor[F32, [%d, %d], @host], w%d: Tensor[F32, [%d, 1], "
        "@host], y: Tensor[F32, [%d, 1], @host]) -> Tensor[F32, [], @host] {\n"
        "  d = h @ w%d - y\n"
        "  return reshape(mean(mean(d * d, axis=0), axis=1), [])\n}" % (
            rows, width, layers - 1, width, rows, layers - 1))
    return "\n".join(lines) + "\n"


def data(rows, width, microbatches, seed=0, layers=LAYERS):
    rng = np.random.default_rng(seed)
    weights = {"w%d" % i: (rng.standard_normal((width, width)) /
                           np.sqrt(width)).astype(np.float32)
               for i in range(layers - 1)}
    weights["w%d" % (layers - 1)] = (rng.standard_normal((width, 1)) /
                                     np.sqrt(width)).astype(np.float32)
    batch = {"x": rng.standard_normal((rows * microbatches, width))
             .astype(np.float32),
             "y": rng.standard_normal((rows * microbatches, 1))
             .astype(np.float32)}
    return weights, batch


def torch_loss(w, batch, layers=LAYERS):
    """The MLP's mean loss over the whole batch in float64 (equal
    microbatches: the mean of their means), from torch tensors `w`."""
    h = torch.tensor(batch["x"], dtype=torch.float64)
    for i in range(layers - 1):
        h = torch.tanh(h @ w["w%d" % i])
    d = h @ w["w%d" % (layers - 1)] - torch.tensor(batch["y"],
                                                   dtype=torch.float64)
    return (d * d).mean()


def torch_step(weights, batch, layers=LAYERS):
    """The unpipelined step in float64: the loss and its gradient."""
    w = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in weights.items()}
    loss = torch_loss(w, batch, layers)
    loss.backward()
    return float(loss), {k: v.grad.numpy() for k, v in w.items()}


def adamw_against_torch(pipe, weights, batch, loss_of, steps=3):
    """`steps` AdamW steps of `pipe` (lr 1e-2, betas (0.9, 0.99), weight
    decay 0.1 on every weight, all matrices) beside torch.optim.AdamW on
    float64 copies, whose loss is `loss_of(tensors, batch)`; checks each
    step's loss and the weights at the end (updated in place). Returns
    the optimizer state."""
    reference = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
                 for k, v in weights.items()}
    optimizer = torch.optim.AdamW(list(reference.values()), lr=1e-2,
                                  betas=(0.9, 0.99), eps=1e-8,
                                  weight_decay=0.1)
    state = pipe.optimizer_state(weights)
    arrays = dict(weights)
    for step in range(1, steps + 1):
        result = pipe.train_step(arrays, state, batch, step, lr=1e-2,
                                 betas=(0.9, 0.99), weight_decay=0.1)
        optimizer.zero_grad()
        loss = loss_of(reference, batch)
        loss.backward()
        optimizer.step()
        assert result.loss == pytest.approx(float(loss), rel=1e-5)
    for name, value in reference.items():
        assert arrays[name] is weights[name]  # updated in place
        np.testing.assert_allclose(arrays[name], value.detach().numpy(),
                                   rtol=0, atol=2e-5, err_msg=name)
    return state


def assert_ranks_give(tmp_path, simulated, what=""):
    """kina.mpi_pipeline's OUTPUT.npz (tmp_path/out.npz) holds the
    simulator's losses, gradients (bits) and bytes moved."""
    with np.load(tmp_path / "out.npz") as out:
        assert list(out["losses"]) == simulated.losses, what
        assert float(out["loss"]) == simulated.loss, what
        for name, value in simulated.gradients.items():
            np.testing.assert_array_equal(out["grad_" + name], value,
                                          err_msg=what + " " + name)
        assert int(out["bytes_moved"]) == simulated.bytes_moved, what


@pytest.fixture(scope="module")
def steps():
    """Each schedule's step on the simulator, and the float64 reference."""
    weights, batch = data(ROWS, WIDTH, MICROBATCHES)
    out = {}
    for kind, ranks in SCHEDULES:
        pipe = pipelining.Pipeline(source(ROWS, WIDTH), STAGES, ["x", "y"],
                                   schedule=kind, microbatches=MICROBATCHES)
        assert pipe.schedule.stages == ranks
        out[kind] = (pipe, pipe.step(weights, batch))
    return out, torch_step(weights, batch)


@pytest.mark.parametrize("kind", [k for k, _ in SCHEDULES])
def test_each_schedule_gives_the_unpipelined_gradient(steps, kind):
    results, (loss, gradients) = steps
    _, result = results[kind]
    assert abs(result.loss - loss) < 1e-6
    for name, expected in gradients.items():
        np.testing.assert_allclose(result.gradients[name], expected,
                                   rtol=1e-5, atol=1e-6)
    assert len(result.losses) == MICROBATCHES


def test_every_schedule_gives_the_same_bits(steps):
    results, _ = steps
    _, first = results["gpipe"]
    for kind, (_, result) in results.items():
        assert result.losses == first.losses, kind
        for name, value in first.gradients.items():
            np.testing.assert_array_equal(result.gradients[name], value,
                                          err_msg=kind)


def test_bytes_moved_are_each_boundary_both_ways(steps):
    # Every stage boundary joins two ranks (interleaved: 0,1,0,1), and
    # each microbatch crosses it forward (an activation) and back (its
    # cotangent), ROWS x WIDTH floats each.
    results, _ = steps
    for kind, (_, result) in results.items():
        assert result.bytes_moved == \
            MICROBATCHES * (LAYERS - 1) * 2 * ROWS * WIDTH * 4, kind


def test_trace_follows_the_schedule_and_the_dataflow(steps, tmp_path):
    results, _ = steps
    pipe, result = results["1f1b"]
    trace = result.trace
    end_of = {}
    for rank, intervals in enumerate(trace.ranks):
        assert [a for a, _, _ in intervals] == pipe.schedule.ranks[rank]
        for (_, _, end), (_, start, _) in zip(intervals, intervals[1:]):
            assert start >= end  # one action at a time per rank
        for action, start, end in intervals:
            assert start <= end
            end_of[(action.phase, action.microbatch, rank)] = (start, end)
    for mb in range(MICROBATCHES):
        for rank in range(1, 4):
            # A stage's forward starts after the previous one's ended; a
            # backward after the next stage's backward.
            assert end_of[("F", mb, rank)][0] >= end_of[("F", mb, rank - 1)][1]
            assert end_of[("BW", mb, rank - 1)][0] >= \
                end_of[("BW", mb, rank)][1]
    assert trace.unit == "seconds"
    assert repr(trace).startswith("<kina.pipeline.Clock: makespan ")
    assert all(0 <= f < 1 for f in trace.idle_fractions)
    trace.gantt(tmp_path / "trace.png")
    assert (tmp_path / "trace.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_programs_name_each_ranks_calls_and_transfers(steps):
    results, _ = steps
    text = results["zb-h1"][0].programs()
    rank1 = text.split("rank 1:")[1].split("rank 2:")[0]
    # ZB-H1's B and W: the split backward split again (inputs=[...]).
    assert "F0: call @kina_pipeline_backward_1_forward on microbatch 0" \
        in rank1
    assert "B0: call @kina_pipeline_backward_1_input on microbatch 0" in rank1
    assert "W0: call @kina_pipeline_backward_1_weight on microbatch 0" \
        in rank1
    assert "send F0's activation from rank 1 to rank 2" in rank1
    assert "wait for B0's cotangent from rank 2 to rank 1" in rank1
    # Stage 0 has no input to differentiate: its B's are named, not called.
    rank0 = text.split("rank 1:")[0]
    assert "B0: nothing to compute (stage 0 has no input)" in rank0
    assert "W0: call @kina_pipeline_backward_0_backward on microbatch 0" \
        in rank0
    assert "input_gradient" not in text and "_0_input" not in text
    # The interleaved schedule's rank 0 runs stages 0 and 2, each forward
    # returning what its backward reads (split=true): nothing recomputed.
    rank0 = results["interleaved"][0].programs().split("rank 1:")[0]
    assert "F0/0: call @kina_pipeline_backward_0_forward on microbatch 0" \
        in rank0
    assert "BW0/1: call @kina_pipeline_backward_2_backward on " \
        "microbatch 0" in rank0
    assert "_1_forward" not in rank0


def test_adamw_per_stage_trains_as_torch_does():
    weights, batch = data(ROWS, WIDTH, MICROBATCHES, seed=4)
    pipe = pipelining.Pipeline(source(ROWS, WIDTH), STAGES, ["x", "y"],
                               schedule="1f1b", microbatches=MICROBATCHES,
                               optimizer="adamw")
    # Every weight is a matrix ([WIDTH, 1] counts): all decay.
    state = adamw_against_torch(pipe, weights, batch, torch_loss)
    assert any(state["m_w0"].ravel()) and (state["v_w0"] >= 0).all()
    with pytest.raises(pipelining.PipelineError, match=r"step counts from "
                       r"1, not 0"):
        pipe.train_step(weights, state, batch, 0)
    with pytest.raises(pipelining.PipelineError, match=r"the optimizer state "
                       r"has no m_w3"):
        pipe.train_step(weights, {k: v for k, v in state.items()
                                 if k != "m_w3"}, batch, 4)


def test_replicas_are_data_parallel_copies_of_the_pipeline():
    # 2 copies of a 4-rank pipeline (8 threads), each on half of the batch
    # (4 microbatches each), the gradients summed over the copies.
    weights, batch = data(ROWS, WIDTH, MICROBATCHES)
    loss, gradients = torch_step(weights, batch)
    pipe = pipelining.Pipeline(source(ROWS, WIDTH), STAGES, ["x", "y"],
                               schedule="1f1b", microbatches=MICROBATCHES // 2,
                               replicas=2)
    result = pipe.step(weights, batch)
    assert result.loss == pytest.approx(loss, rel=1e-6)
    for name, expected in gradients.items():
        np.testing.assert_allclose(result.gradients[name], expected,
                                   rtol=1e-5, atol=1e-6)
    assert len(result.losses) == MICROBATCHES and len(result.traces) == 2
    gradient_bytes = sum(w.nbytes for w in weights.values())
    assert result.bytes_moved == \
        MICROBATCHES * (LAYERS - 1) * 2 * ROWS * WIDTH * 4 + gradient_bytes
    with pytest.raises(pipelining.PipelineError, match=r"replicas counts "
                       r"the pipeline's data-parallel copies, at least 1, "
                       r"not 0"):
        pipelining.Pipeline(source(ROWS, WIDTH), STAGES, ["x", "y"],
                            replicas=0)


def test_kept_and_recomputed_forwards_give_the_same_bits(steps):
    results, _ = steps
    kept_pipe, kept = results["1f1b"]
    assert kept_pipe.keeps
    weights, batch = data(ROWS, WIDTH, MICROBATCHES)
    pipe = pipelining.Pipeline(source(ROWS, WIDTH), STAGES, ["x", "y"],
                               schedule="1f1b", microbatches=MICROBATCHES,
                               recompute=True)
    assert not pipe.keeps
    assert "BW0: call @kina_pipeline_backward_1 on" in pipe.ir("pipeline")
    assert "F0: call @layer1 on" in pipe.ir("pipeline")
    recomputed = pipe.step(weights, batch)
    assert recomputed.losses == kept.losses
    for name, value in kept.gradients.items():
        np.testing.assert_array_equal(recomputed.gradients[name], value)
    # The kept backward does less: no forward inside it.
    flops = lambda m, f: m.cost(f).flops
    assert flops(kept_pipe.module, "kina_pipeline_backward_1_backward") + \
        flops(kept_pipe.module, "layer1") == \
        flops(pipe.module, "kina_pipeline_backward_1")
    # ZB-H1's B and W together are the one backward: nothing in both.
    zb = results["zb-h1"][0].module
    assert flops(zb, "kina_pipeline_backward_1_input") + \
        flops(zb, "kina_pipeline_backward_1_weight") == \
        flops(kept_pipe.module, "kina_pipeline_backward_1_backward")
    # and recomputing them gives the same bits.
    pipe = pipelining.Pipeline(source(ROWS, WIDTH), STAGES, ["x", "y"],
                               schedule="zb-h1", microbatches=MICROBATCHES,
                               recompute=True)
    assert "B0: call @kina_pipeline_input_gradient_1 on" in pipe.programs()
    recomputed = pipe.step(weights, batch)
    assert recomputed.losses == kept.losses
    for name, value in kept.gradients.items():
        np.testing.assert_array_equal(recomputed.gradients[name], value)


def pipeline_error(match, stages=STAGES, batch=("x", "y"), text=None,
                   **options):
    with pytest.raises((pipelining.PipelineError, ScheduleError),
                       match=match):
        pipelining.Pipeline(text or source(ROWS, WIDTH), list(stages),
                            list(batch), **options)


def test_pipelines_that_cannot_run_are_refused_before_running():
    pipeline_error(r"the gpipe schedule has 4 stages x 1 chunks = 4 virtual "
                   r"stages, but 3 stage functions", stages=STAGES[1:],
                   schedule=kina.pipeline.schedule("gpipe", 4, 8))
    pipeline_error(r"interleaved with 2 chunks per rank needs a multiple of "
                   r"2 stage functions; 3 are named", stages=STAGES[1:],
                   schedule="interleaved")
    pipeline_error(r"stage 1: no function 'layer9'",
                   stages=["layer0", "layer9", "layer2", "head"])
    pipeline_error(r"a function is named as two stages",
                   stages=["layer0", "layer1", "layer1", "head"])
    pipeline_error(r"stage 2 \('layer2'\): is the last stage, which returns "
                   r"the microbatch's loss, a rank-0 F32 or F64; it returns "
                   r"F32 \[4, 8\]",
                   stages=["layer0", "layer1", "layer2"], batch=["x"],
                   schedule="gpipe")
    pipeline_error(r"stage 1 \('head'\): must take stage 0's result as its "
                   r"first parameter; it takes 'y', named as batch",
                   stages=["layer0", "head"], schedule="gpipe",
                   text=source(ROWS, WIDTH).replace(
                       "fn head(h: Tensor[F32, [4, 8], @host], w3: Tensor[F32, "
                       "[8, 1], @host], y: Tensor[F32, [4, 1], @host])",
                       "fn head(y: Tensor[F32, [4, 1], @host], h: Tensor[F32, "
                       "[4, 8], @host], w3: Tensor[F32, [8, 1], @host])"))
    pipeline_error(r"stage 1 \('head'\): must take stage 0's result "
                   r"\(F32 \[4, 8\]\) as its first parameter; 'h' is "
                   r"F32 \[4, 7\]",
                   stages=["layer0", "head"], schedule="gpipe",
                   text=source(ROWS, WIDTH).replace(
                       "fn head(h: Tensor[F32, [4, 8]",
                       "fn head(h: Tensor[F32, [4, 7]").replace(
                       "w3: Tensor[F32, [8, 1]", "w3: Tensor[F32, [7, 1]"))
    pipeline_error(r"batch names 'z', which no stage takes",
                   batch=("x", "y", "z"))
    pipeline_error(r"stage 1 \('head'\): 'n' is I32 \[4\], "
                   r"which has no gradient; an integer parameter is data: "
                   r"name it in batch or constants", stages=["embed", "head"],
                   batch=("ids",), text=GATHERING.replace(
                       "fn head(h: Tensor[F32, [4, 8], @host], ",
                       "fn head(h: Tensor[F32, [4, 8], @host], n: Tensor[I32, "
                       "[4], @host], "))
    pipeline_error(r"a pipeline needs batch=\[...\]: the parameters cut into "
                   r"microbatches", stages=["embed", "head"], batch=(),
                   text=GATHERING)
    pipeline_error(r"divisible|multiple", schedule="interleaved",
                   microbatches=3)
    shared = source(ROWS, WIDTH).replace("w1", "w0")
    pipeline_error(r"weight 'w0' is a parameter of stages 0 and 1",
                   text=shared)


def test_steps_with_bad_arrays_are_refused(steps):
    results, _ = steps
    pipe = results["1f1b"][0]
    weights, batch = data(ROWS, WIDTH, MICROBATCHES)
    with pytest.raises(pipelining.PipelineError,
                       match=r"batch 'x' has shape \[30, 8\]; 8 "
                       r"microbatches of \[4, 8\] need \[32, 8\]"):
        pipe.step(weights, dict(batch, x=batch["x"][:30]))
    with pytest.raises(pipelining.PipelineError,
                       match=r"weight 'w2' of stage 2 \(layer2\) is float64"):
        pipe.step(dict(weights, w2=weights["w2"].astype(np.float64)), batch)
    with pytest.raises(pipelining.PipelineError, match=r"batch 'x' is "
                       r"float64; it is declared float32"):
        pipe.step(weights, dict(batch, x=batch["x"].astype(np.float64)))
    with pytest.raises(pipelining.PipelineError, match=r"no value for "
                       r"weight 'w1'"):
        pipe.step({k: v for k, v in weights.items() if k != "w1"}, batch)


GATHERING = """
fn embed(ids: Tensor[I32, [4], @host], table: Tensor[F32, [6, 8], @host]) -> Tensor[F32, [4, 8], @host] {
  return gather table ids
}
fn head(h: Tensor[F32, [4, 8], @host], w: Tensor[F32, [8, 1], @host]) -> Tensor[F32, [], @host] {
  return reshape(sum(sum(h @ w, axis=0), axis=1), [])
}
"""


def test_a_failing_rank_ends_the_step_on_every_rank():
    pipe = pipelining.Pipeline(GATHERING, ["embed", "head"], ["ids"],
                               schedule="1f1b", microbatches=2, timeout=30)
    ids = np.array([0, 1, 2, 3, 4, 5, 6, 1], dtype=np.int32)  # 6: no row
    weights = {"table": np.ones((6, 8), np.float32),
               "w": np.ones((8, 1), np.float32)}
    start = time.monotonic()
    with pytest.raises(pipelining.PipelineError, match=r"rank 0: F1 \(embed on microbatch 1\): "
                       r"kina_pipeline_backward_0_forward\(\): a gather id "
                       r"is outside"):
        pipe.step(weights, {"ids": ids})
    assert time.monotonic() - start < 10  # rank 1 was woken, not timed out
    ok = pipe.step(weights, {"ids": ids % 6})
    assert ok.loss == pytest.approx(8 * 4 * 1.0)


# On ranks: activations of 1 MiB (past OpenMPI's eager limits, so every
# send waits for its receive), each schedule, the simulator's bits.
BIG_ROWS, BIG_WIDTH, BIG_MICROBATCHES = 1024, 256, 4
needs_mpi = pytest.mark.skipif(
    os.environ.get("KINA_SKIP_MPI") == "1" or not shutil.which("mpirun"),
    reason="OpenMPI's mpirun (KINA_SKIP_MPI=1: the sanitizer build)")


def run_ranks(tmp_path, ranks, program, inputs, *options, timeout=300,
              cache=None):
    """mpirun of kina.mpi_pipeline, the ranks sharing a compile cache
    (tmp_path/cache unless given)."""
    env = dict(mpi_environment(),
               KINA_CACHE_DIR=str(cache or tmp_path / "cache"))
    return subprocess.run(
        ["mpirun", "-n", str(ranks), sys.executable, "-m",
         "kina.mpi_pipeline", str(program), str(inputs),
         str(tmp_path / "out.npz"), *options],
        env=env, capture_output=True, text=True, timeout=timeout)


@needs_mpi
def test_each_schedule_on_ranks_gives_the_simulators_bits(tmp_path):
    text = source(BIG_ROWS, BIG_WIDTH)
    program = tmp_path / "mlp.kina"
    program.write_text(text)
    weights, batch = data(BIG_ROWS, BIG_WIDTH, BIG_MICROBATCHES, seed=1)
    np.savez(tmp_path / "in.npz", **weights, **batch)
    activation = BIG_ROWS * BIG_WIDTH * 4
    assert activation >= 1 << 20
    for kind, ranks in SCHEDULES:
        # Compiled here first into the ranks' cache: one compile for all.
        pipe = pipelining.Pipeline(text, STAGES, ["x", "y"], schedule=kind,
                                   microbatches=BIG_MICROBATCHES,
                                   filename=str(program),
                                   cache_dir=str(tmp_path / "cache"))
        simulated = pipe.step(weights, batch)
        done = run_ranks(tmp_path, ranks, program, tmp_path / "in.npz",
                         "--stages", ",".join(STAGES), "--batch", "x,y",
                         "--schedule", kind, "--microbatches",
                         str(BIG_MICROBATCHES))
        assert done.returncode == 0, kind + ": " + done.stderr
        assert_ranks_give(tmp_path, simulated, kind)
        assert simulated.bytes_moved == \
            BIG_MICROBATCHES * (LAYERS - 1) * 2 * activation
        with np.load(tmp_path / "out.npz") as out:
            for r in range(ranks):
                trace = out["trace_%d" % r]
                assert trace.shape == (len(pipe.schedule.ranks[r]), 2)
                assert (trace[:, 1] >= trace[:, 0]).all()


@needs_mpi
def test_a_failing_rank_ends_the_job(tmp_path):
    program = tmp_path / "gather.kina"
    program.write_text(GATHERING)
    np.savez(tmp_path / "in.npz", ids=np.array([0, 1, 2, 3, 4, 5, 6, 1],
                                               dtype=np.int32),
             table=np.ones((6, 8), np.float32), w=np.ones((8, 1), np.float32))
    done = run_ranks(tmp_path, 2, program, tmp_path / "in.npz", "--stages",
                     "embed,head", "--batch", "ids", "--microbatches", "2",
                     timeout=120)
    assert done.returncode != 0
    assert "kina.mpi_pipeline rank 0: " in done.stderr, done.stderr
    assert "F1 (embed on microbatch 1)" in done.stderr, done.stderr
    assert not (tmp_path / "out.npz").exists()


@needs_mpi
def test_pipeline_times_data_parallel_on_a_two_by_two_mesh(tmp_path):
    # 2 stages x 2 copies on 4 ranks: the simulator's bits and bytes.
    text = source(ROWS, WIDTH, layers=2)
    program = tmp_path / "two.kina"
    program.write_text(text)
    weights, batch = data(ROWS, WIDTH, MICROBATCHES, seed=6, layers=2)
    np.savez(tmp_path / "in.npz", **weights, **batch)
    pipe = pipelining.Pipeline(text, ["layer0", "head"], ["x", "y"],
                               schedule="1f1b", microbatches=MICROBATCHES // 2,
                               replicas=2, filename=str(program),
                               cache_dir=str(tmp_path / "cache"))
    simulated = pipe.step(weights, batch)
    loss, gradients = torch_step(weights, batch, layers=2)
    assert simulated.loss == pytest.approx(loss, rel=1e-6)
    done = run_ranks(tmp_path, 4, program, tmp_path / "in.npz", "--stages",
                     "layer0,head", "--batch", "x,y", "--microbatches",
                     str(MICROBATCHES // 2), "--replicas", "2")
    assert done.returncode == 0, done.stderr
    assert_ranks_give(tmp_path, simulated)
    done = run_ranks(tmp_path, 2, program, tmp_path / "in.npz", "--stages",
                     "layer0,head", "--batch", "x,y", "--microbatches",
                     str(MICROBATCHES // 2), "--replicas", "2")
    assert done.returncode != 0
    assert "has 4 ranks (2 stages x 2 replicas), but mpirun started 2" in \
        done.stderr


def test_a_declared_pipeline_is_the_listed_one(steps):
    # `fn mlp = pipeline(...)` in the program: its stages and roles, the
    # listed pipeline's bits.
    results, _ = steps
    text = source(ROWS, WIDTH) + \
        "fn mlp = pipeline(layer0, layer1, layer2, head, batch=[x, y])\n"
    pipe = pipelining.Pipeline(text, "mlp", schedule="1f1b",
                               microbatches=MICROBATCHES)
    assert [stage.name for stage in pipe._stages] == STAGES
    weights, batch = data(ROWS, WIDTH, MICROBATCHES)
    result = pipe.step(weights, batch)
    listed = results["1f1b"][1]
    assert result.losses == listed.losses
    for name, value in listed.gradients.items():
        np.testing.assert_array_equal(result.gradients[name], value)
    with pytest.raises(pipelining.PipelineError, match=r"pipeline 'mlp' "
                       r"declares its batch, constants and shared weights; "
                       r"give them there, not here"):
        pipelining.Pipeline(text, "mlp", ["x", "y"])
    with pytest.raises(pipelining.PipelineError, match=r"no pipeline 'net' "
                       r"in the program \(it declares: mlp\)"):
        pipelining.Pipeline(text, "net")
    with pytest.raises(pipelining.PipelineError, match=r"batch=\[...\] "
                       r"names the parameters cut into microbatches"):
        pipelining.Pipeline(text, STAGES)


def test_a_function_left_out_of_the_stages_is_named():
    # layer1 takes layer0's result and returns what layer2 takes, and
    # nothing calls it: listing the others leaves it out.
    text = source(ROWS, WIDTH)
    with pytest.raises(pipelining.PipelineError, match=r"'layer1' is no "
                       r"stage, yet it takes stage 0's result and returns "
                       r"what stage 1 takes, and nothing calls it: a stage "
                       r"left out\? \(list it between 'layer0' and 'layer2'"):
        pipelining.Pipeline(text, ["layer0", "layer2", "head"], ["x", "y"])
