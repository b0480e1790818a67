#!/usr/bin/env python3
"""Kina's benchmark: one command, every figure side by side.

    /usr/bin/python3 bench/run.py [--quick] [--repeats N] [--only 4,5]

1. the toy StoryLM-0 forward per call: Kina through the Python API and the
   raw C ABI, against the same algebra in NumPy and PyTorch;
2. the realistic forward (T=128, H=12, Dh=64, D=768, V=32000; 6.95 GFLOP)
   on 1 and 2 threads: Kina, NumPy, PyTorch, with the BLAS they ran;
3. sgemm GFLOP/s at 256^3 ... 2048^3, 128x768x768, and the model's
   lm_head shape 128x768x32000 and decode steps 1x768x32000 and
   8x768x32000 (1 and 2 threads), as a share of the machine's peak;
4. N devices: the realistic forward with lm_head split 2 ways on the
   threaded simulator (2 devices) and under `mpirun -n 2`, one thread per
   device, against one device on one thread, with the bytes moved and the
   time spent in collectives;
5. the GPT forward (scripts/generate/gen_gpt.py, ~110M parameters): compile time
   and peak memory, forward on 1 and 2 threads against PyTorch eager, and
   the Megatron annotation under `mpirun -n 2`;
6. compile time of each example and of the realistic model (unsharded and
   with lm_head split 2 ways);
7. the GPT training step (gpt.train_source: loss, gradients and AdamW in
   one function) of the ~110M GPT at B=4, T=64 and of train_gpt.py's
   byte-level model, on 1 and 2 threads against PyTorch eager (autograd
   and torch.optim.AdamW(foreach=True)), with compile time and peak
   memory; and the data-parallel, ZeRO-1, ZeRO-3 and Megatron steps on
   `mpirun -n 2` (kina.training.RankTrainer, one thread per rank) against
   one device on one thread, in turns, with each plan's bytes and memory
   ledger per device (m.cost) and each rank's measured peak memory.
8. the Python frontend (kina.jit) against the generated source;
9. automatic sharding: `kina-opt --kina-differentiate --kina-auto-shard`
   on the test-width GPT's training program with every placement @auto
   (its four functions: forward, loss, gradients, step), 2, 12 and 48
   blocks on [2], and the forward alone on [2, 2], each with the decisions
   left once repeated layers are tied.

Figures for a CPU come from that CPU: on an AVX-512 machine this measures
the AVX-512 code, on an AVX2 one the AVX2 code (docs/performance.md).

Every figure is the median of --repeats runs, with their range; ratios
are taken within one run. The runs compared in a ratio are measured in
turns (a process of each, 3 calls, --repeats rounds; for two ranks, an
`mpirun` of 2 warm-up runs and 3 timed ones), so that a shared host whose
speed drifts slows them alike. Each measurement runs in its
own process, so that thread counts are fixed before NumPy or PyTorch
load. The baselines' processes run without OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE (which the machine may set for older OpenBLAS builds), so
that OpenBLAS picks its best kernel for this CPU; the kernel each ran is
printed. The peak is measured
on the widest FMAs the CPU has, and a share of it above 100% stops the
benchmark: it would mean the probe is wrong.
Needs a build (bash scripts/setup.sh). Not a test: it asserts nothing.
"""

import argparse
import ctypes
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# fp32 FMA peak per core (1 and 2 threads), measured on this CPU by
# bench/fma_peak.c at the start of a run.
PEAK_GFLOPS = {}
REALISTIC = dict(T=128, H=12, DH=64, D=768, V=32000)
REALISTIC_GFLOP = 6.95
# --quick leaves out the sgemms above this many multiply-adds (2048^3).
QUICK_SGEMM_LIMIT = 4 * 1024 ** 3
SGEMM = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024),
         (2048, 2048, 2048), (128, 768, 768), (128, 768, 32000),
         (1, 768, 32000), (8, 768, 32000)]
# The GPT's MLP product, whose backward multiplies by A^T and B^T.
BACKWARD_SHAPE = (128, 768, 3072)
# The clang of the pinned LLVM (LLVM_VERSION), for the C drivers.
CLANG = "clang-" + (ROOT / "LLVM_VERSION").read_text().strip()
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "KINA_NUM_THREADS")
# Set on some machines for older OpenBLAS builds; they pin a slower kernel.
# Unset in the baselines' own processes only.
OPENBLAS_PINS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
BASELINES = ("numpy", "torch")
# Calls timed per process when runs are measured in turns (interleaved).
CALLS_PER_ROUND = 3
# Untimed runs on each rank first: the first two fault in the temporaries
# and the result arrays (measured: with none, the median of 3 runs was 2.2x
# the steady state).
MPI_WARMUP = 2


# --------------------------------------------------------------- workers --
# Each runs in a fresh process (see spawn) and prints one JSON object.

def timing(fn, repeats, inner=1, **extra):
    """The median seconds per call of `fn` over `repeats` runs, and their
    range, with `extra` fields."""
    fn()  # warm up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return dict(seconds=statistics.median(samples), low=min(samples),
                high=max(samples), samples=samples, **extra)


def realistic_arguments():
    import numpy as np
    rng = np.random.default_rng(0)
    t, d, v, hd = (REALISTIC[k] for k in ("T", "D", "V", "H"))
    hd = REALISTIC["H"] * REALISTIC["DH"]
    weight = lambda *shape: (rng.standard_normal(shape) * 0.02).astype(
        np.float32)
    return [rng.integers(0, v, (1, t)).astype(np.int64), weight(v, d),
            weight(d, hd), weight(d, hd), weight(d, hd), weight(hd, d),
            weight(d, v), np.array(1 / np.sqrt(REALISTIC["DH"]), np.float32),
            np.triu(np.full((t, t), -1e9, np.float32), 1)]


def blas_info():
    try:
        from threadpoolctl import threadpool_info
        return ["%s %s (%s, %d threads)" % (i.get("internal_api"),
                                            i.get("version"),
                                            i.get("architecture"),
                                            i.get("num_threads"))
                for i in threadpool_info()]
    except ImportError:
        return ["threadpoolctl not installed"]


def worker(spec):
    import numpy as np
    from kina.models import storylm0
    what, repeats = spec["what"], spec["repeats"]
    if what == "toy-kina":
        import kina
        module = kina.compile_file(ROOT / "examples/storylm0_forward.kina")
        args, fn = storylm0.arguments(), module.storylm0_forward
        return timing(lambda: fn(*args), repeats, 20000)
    if what == "toy-numpy":
        args = storylm0.arguments()
        return timing(lambda: storylm0.forward(*args), repeats, 2000)
    if what == "toy-torch":
        import torch
        torch.set_num_threads(1)
        args = storylm0.arguments()
        from kina_reference import storylm0_forward
        return timing(lambda: storylm0_forward(*args), repeats, 2000)
    if what == "realistic-kina":
        import kina
        module = kina.compile(spec["source"], "realistic.kina")
        args = realistic_arguments()
        logits = module.storylm0_forward(*args)
        expected = storylm0.forward(*args, heads=REALISTIC["H"])["logits"]
        error = float(np.abs(logits - expected).max() /
                      np.abs(expected).max())
        return timing(lambda: module.storylm0_forward(*args), repeats,
                      relative_error=error)
    if what == "realistic-numpy":
        args = realistic_arguments()
        return timing(lambda: storylm0.forward(*args, heads=REALISTIC["H"]),
                      repeats, blas=blas_info())
    if what == "realistic-torch":
        import torch
        torch.set_num_threads(spec["threads"])
        from kina_reference import storylm0_forward
        args = realistic_arguments()
        return timing(
            lambda: storylm0_forward(*args, heads=REALISTIC["H"]),
            repeats, blas=blas_info())
    if what in ("sgemm-kina", "sgemm-numpy"):
        m, k, n = spec["shape"]
        layout = spec.get("layout", "A B")
        rng = np.random.default_rng(1)
        a = rng.standard_normal((k, m) if layout == "A^T B" else (m, k))
        b = rng.standard_normal((n, k) if layout == "A B^T" else (k, n))
        a, b = a.astype(np.float32), b.astype(np.float32)
        if what == "sgemm-numpy":
            fn = {"A B": lambda: a @ b, "A^T B": lambda: a.T @ b,
                  "A B^T": lambda: a @ b.T}[layout]
        else:
            import kina
            module = kina.compile(layout_source(layout, m, k, n))
            fn = lambda: module.mm(a, b)
        return timing(fn, repeats,
                      blas=blas_info() if what == "sgemm-numpy" else [])
    if what == "sharded-simulator":
        import kina
        module = kina.compile(spec["source"], "realistic_vocab.kina")
        args = realistic_arguments()
        # Each device holds its blocks of the weights, as devices do.
        distributed = module.distribute("storylm0_forward", *args)
        run = lambda: module.simulate("storylm0_forward", distributed,
                                      report=False)
        run()
        last = run()  # the first run also faults in the temporaries
        expected = module.storylm0_forward(*args)
        return timing(run, repeats, bytes_moved=last.bytes_moved,
                      collective_seconds=last.collective_seconds,
                      bit_identical=bool(np.array_equal(last.value,
                                                        expected)))
    if what in ("train-compile", "train-kina", "train-ranks", "train-torch",
                "train-autocast-torch"):
        return training_worker(what, spec, repeats)
    if what.startswith("jit-"):
        return jit_worker(what, spec, repeats)
    if what == "pipe-one":
        return pipeline_worker(what, spec, repeats)
    if what in ("gpt-grad-compile", "gpt-grad-kina", "gpt-grad-torch"):
        return gpt_gradient_worker(what, spec, repeats)
    if what in ("gpt-kina", "gpt-torch", "gpt-compile"):
        import resource
        from kina.models import gpt
        cfg = gpt.Config.small()
        if what == "gpt-compile":
            import kina
            source = gpt.source(cfg, mesh=spec.get("mesh"))
            result = timing(lambda: kina.compile(source, "gpt.kina"), repeats)
            result["peak_mib"] = resource.getrusage(
                resource.RUSAGE_SELF).ru_maxrss / 1024
            return result
        weights = gpt.weights(cfg, seed=0)
        ids = np.random.default_rng(1).integers(0, cfg.v, (1, cfg.t))
        if what == "gpt-torch":
            import torch
            from kina_reference import TorchGPT
            torch.set_num_threads(spec["threads"])
            model = TorchGPT(cfg, weights)
            return timing(lambda: model(ids), repeats, blas=blas_info())
        import kina
        module = kina.compile(gpt.source(cfg), "gpt.kina")
        args = gpt.arguments(cfg, weights, ids)
        logits = module.gpt_forward(*args)
        from kina_reference import TorchGPT
        reference = TorchGPT(cfg, weights)(ids).numpy()
        error = float(np.abs(logits - reference).max() /
                      np.abs(reference).max())
        return timing(lambda: module.gpt_forward(*args), repeats,
                      relative_error=error)
    if what == "compile":
        import kina
        return timing(
            lambda: kina.compile(spec["source"], spec["name"]), repeats)
    raise ValueError(what)


def resident_mib():
    """This process's resident memory now (VmRSS), in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def compiled_once(source, path, function=None):
    """Compiles `source` once, saves it to `path`: the seconds it took and
    the process's peak memory; with `function`, its static cost (bytes
    sent per device, and the memory ledger at rest and at its peak)."""
    import resource
    import kina
    start = time.perf_counter()
    module = kina.compile(source, pathlib.Path(path).stem + ".kina")
    seconds = time.perf_counter() - start
    module.save(path)
    result = dict(seconds=seconds, low=seconds, high=seconds,
                  samples=[seconds], peak_mib=resource.getrusage(
                      resource.RUSAGE_SELF).ru_maxrss / 1024)
    if function:
        cost = module.cost(function)
        result.update(bytes_sent=cost.bytes_sent, peak_bytes=cost.peak_bytes,
                      at_rest=cost.at_rest._asdict(),
                      at_peak=cost.at_peak._asdict())
    return result


def auto_sharded_once(cfg, mesh, path):
    """The training step with every placement @auto, placed by
    kina.auto_shard under the machine's calibration and its mpirun
    collectives, compiled once and saved to `path`: compiled_once's
    figures, and the plan's predicted seconds and bytes."""
    import resource
    import kina
    from kina.models import gpt
    source = with_auto_placements(gpt.train_source(cfg, mesh=mesh,
                                                   parallel="data"))
    start = time.perf_counter()
    plan = kina.auto_shard(source, gpt.TRAIN_STEP, backend="mpi",
                           alternatives=0, filename="auto.kina")
    seconds = time.perf_counter() - start
    plan.module.save(path)
    cost = plan.cost
    return dict(seconds=seconds, low=seconds, high=seconds,
                samples=[seconds], peak_mib=resource.getrusage(
                    resource.RUSAGE_SELF).ru_maxrss / 1024,
                bytes_sent=cost.bytes_sent, peak_bytes=cost.peak_bytes,
                at_rest=cost.at_rest._asdict(), at_peak=cost.at_peak._asdict(),
                predicted_seconds=plan.predicted_seconds,
                placements=plan.placements)


def gpt_gradient_worker(what, spec, repeats):
    """The GPT's loss and its gradients with respect to every weight
    (gpt.loss_source): compiled once to spec["path"], then timed in a
    process of its own, whose peak memory above the loaded inputs is the
    gradient function's; PyTorch eager forward + backward in float32."""
    import resource
    import numpy as np
    from kina.models import gpt
    cfg = gpt.Config.small()
    if what == "gpt-grad-compile":
        return compiled_once(gpt.loss_source(cfg), spec["path"])
    weights = gpt.weights(cfg, seed=0)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, cfg.v, (1, cfg.t))
    targets = rng.integers(0, cfg.v, (1, cfg.t)).astype(np.int64)
    if what == "gpt-grad-torch":
        import torch
        from kina_reference import TrainableGPT
        torch.set_num_threads(spec["threads"])
        model = TrainableGPT(cfg, weights)
        target = torch.tensor(targets).reshape(cfg.t)

        def step():
            model.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(
                model(ids).reshape(cfg.t, cfg.v), target)
            loss.backward()
            return loss.item()
        return timing(step, repeats, blas=blas_info())
    import kina
    module = kina.load(spec["path"])
    args = gpt.arguments(cfg, weights, ids) + [targets]
    inputs = resident_mib()
    loss, *_ = getattr(module, gpt.LOSS_GRAD)(*args)
    result = timing(lambda: getattr(module, gpt.LOSS_GRAD)(*args), repeats,
                    loss=float(loss))
    result["peak_mib"] = resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss / 1024
    result["inputs_mib"] = inputs
    return result


# The training step's models: the ~110M GPT at llm.c's CPU reference
# shape, and examples/train_gpt.py's default byte-level model.
TRAINING_MODELS = {
    "gpt-110M": dict(layers=12, d=768, heads=12, t=64, v=32000, b=4),
    "train_gpt": dict(layers=4, d=256, heads=4, t=64, v=256, b=16)}


def training_worker(what, spec, repeats):
    """One AdamW step of a TRAINING_MODELS model on a fixed batch: Kina's
    compiled step (compiled once to spec["path"]) or PyTorch eager; the
    process's peak memory and what the weights and moments took before."""
    import resource
    import numpy as np
    from kina.models import gpt
    cfg = gpt.Config(**TRAINING_MODELS[spec["model"]])
    peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if what == "train-compile" and spec.get("parallel") == AUTO_PLAN:
        return auto_sharded_once(cfg, spec["mesh"], spec["path"])
    dtype = spec.get("dtype", "f32")
    if what == "train-compile":
        return compiled_once(gpt.train_source(
            cfg, mesh=spec.get("mesh"),
            parallel=spec.get("parallel", "megatron"), dtype=dtype),
            spec["path"], gpt.TRAIN_STEP if spec.get("mesh") else None)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, cfg.v, (cfg.b, cfg.t))
    targets = rng.integers(0, cfg.v, (cfg.b, cfg.t))
    weights = gpt.weights(cfg, seed=0, tied=True)
    if what == "train-ranks":
        # Every rank of the mpirun runs this; rank 0 reports.
        from kina.training import RankTrainer
        trainer = RankTrainer(cfg, spec["path"], weights, lr=1e-4, threads=1)
        del weights
        lib = trainer.backend.lib
        lib.kina_mpi_collective_seconds.restype = ctypes.c_double
        before = lib.kina_mpi_collective_seconds()
        result = timing(lambda: trainer.step(ids, targets), repeats)
        # Rank 0's seconds inside collectives per step (the warm-up step
        # of `timing` included in the average).
        result.update(peak_mib=peak(), collective_seconds=(
            lib.kina_mpi_collective_seconds() - before) / (repeats + 1))
        rank = trainer.rank
        trainer.close()
        # Each rank's peak resident memory, beside rank 0's timing.
        with open(os.path.join(spec["peaks"], "rank%d" % rank), "w") as f:
            f.write(str(peak()))
        return result if rank == 0 else None
    if what in ("train-torch", "train-autocast-torch"):
        import torch
        from kina_reference import TorchTrainer
        torch.set_num_threads(spec["threads"])
        trainer = TorchTrainer(cfg, weights, lr=1e-4)
        del weights
        state = resident_mib()
        step = trainer.step
        if what == "train-autocast-torch":
            # PyTorch's mixed precision: F32 weights, BF16 where autocast
            # chooses (its products among them).
            step = torch.autocast("cpu", dtype=torch.bfloat16)(trainer.step)
        result = timing(lambda: step(ids, targets), repeats,
                        blas=blas_info())
    else:
        import kina
        from kina.training import Trainer
        trainer = Trainer(cfg, weights, lr=1e-4,
                          module=kina.load(spec["path"]), dtype=dtype)
        del weights
        state = resident_mib()
        result = timing(lambda: trainer.step(ids, targets), repeats)
    result.update(peak_mib=peak(), state_mib=state)
    return result


def jit_worker(what, spec, repeats):
    """The Python frontend: the traced training step (kina.models.
    gpt_traced) against the generated source's, and what a kina.jit call
    adds to the module's own call."""
    import numpy as np
    import kina
    from kina.models import gpt, gpt_traced
    if what == "jit-toy-call":
        # The toy StoryLM-0 forward (section 1's) written with kina.numpy.
        import kina.numpy as knp
        from kina.models import storylm0

        def forward(token_ids, embed, wq, wk, wv, wo, lm_head, scale, mask):
            x = knp.take(embed, token_ids, axis=0)
            b, t, d = x.shape

            def heads(w, perm):
                return (x @ w).reshape(b, t, storylm0.H, -1).transpose(perm)
            q, k_t = heads(wq, (0, 2, 1, 3)), heads(wk, (0, 2, 3, 1))
            v = heads(wv, (0, 2, 1, 3))
            probs = knp.softmax(q @ k_t * scale + mask, axis=3)
            attn = (probs @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
            return (x + attn @ wo) @ lm_head

        args = storylm0.arguments()
        f = kina.jit(forward)
        lowered = f.lower(*args)
        function = getattr(lowered.compile().module, lowered.name)
        expected = storylm0.forward(*args)["logits"]
        error = float(np.abs(f(*args) - expected).max() /
                      np.abs(expected).max())
        through = spec["through"] == "jit"
        return timing((lambda: f(*args)) if through else
                      (lambda: function(*args)), repeats, 20000,
                      relative_error=error)
    cfg = gpt.Config(**TRAINING_MODELS[spec["model"]])
    rng = np.random.default_rng(1)
    ids = rng.integers(0, cfg.v, (cfg.b, cfg.t))
    targets = rng.integers(0, cfg.v, (cfg.b, cfg.t))
    if what == "jit-compile-generated":
        start = time.perf_counter()
        kina.compile(gpt.train_source(cfg), "gpt_train.kina")
        seconds = time.perf_counter() - start
        return dict(seconds=seconds, low=seconds, high=seconds,
                    samples=[seconds])
    params = gpt_traced.init_params(cfg)
    state = gpt_traced.adamw_state(params)
    args = (params, state, ids, targets, gpt.causal_mask(cfg),
            gpt_traced.hyper(1, lr=1e-4), cfg.heads)
    step = gpt_traced.train_step()
    start = time.perf_counter()
    lowered = step.lower(*args)
    traced = time.perf_counter() - start
    compiled = lowered.compile()
    seconds = time.perf_counter() - start
    if what == "jit-compile-traced":
        return dict(seconds=seconds, low=seconds, high=seconds,
                    samples=[seconds], trace_seconds=traced)
    if what == "jit-step":
        result = timing(lambda: step(*args), repeats)
        # What the call adds: the same call with the module's function
        # replaced by one that returns the results at once.
        out = getattr(compiled.module, lowered.name)(*kina.tree_leaves(
            args[:6]))
        compiled.module.__dict__[lowered.name] = lambda *_: out
        result["overhead"] = timing(lambda: step(*args), repeats, 20)[
            "seconds"]
        return result
    if what == "jit-step-generated":
        from kina.training import Trainer
        trainer = Trainer(cfg, gpt.weights(cfg, seed=0, tied=True), lr=1e-4,
                          module=kina.compile(gpt.train_source(cfg),
                                              "gpt_train.kina"))
        return timing(lambda: trainer.step(ids, targets), repeats)
    raise ValueError(what)


# ----------------------------------------------------------- the driver --

def spawn(what, threads=1, repeats=5, **extra):
    """`what` measured in a process of its own."""
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = str(threads)
    if what.endswith(BASELINES):
        for var in OPENBLAS_PINS:
            env.pop(var, None)
    spec = dict(what=what, threads=threads, repeats=repeats, **extra)
    out = subprocess.run([sys.executable, __file__, "--worker",
                          json.dumps(spec)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def interleaved(runs, threads, repeats):
    """Each of `runs` measured in turns: `repeats` rounds, each starting one
    process per run that times 3 calls, so that a host whose speed drifts
    (a shared machine) slows every run alike and their ratios stay fair. A
    run is a (what, extra) pair for `spawn`, or a function of no arguments
    that measures one round itself (a `mpirun`). Per run: the median and
    range of all its calls, with the other fields of its last round."""
    merged = [None] * len(runs)
    for _ in range(repeats):
        for i, run in enumerate(runs):
            result = run() if callable(run) else spawn(
                run[0], threads, CALLS_PER_ROUND, **run[1])
            samples = (merged[i]["samples"] if merged[i] else []) + \
                result["samples"]
            merged[i] = dict(result, samples=samples,
                             seconds=statistics.median(samples),
                             low=min(samples), high=max(samples))
    return merged


def training_ranks(path, model):
    """One round of the mesh-placed training step compiled to `path` on
    `mpirun -n 2`, one thread per rank (kina.training.RankTrainer): rank
    0's timing, as `spawn` returns it."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for var in THREAD_VARS:
        env[var] = "1"
    with tempfile.TemporaryDirectory(prefix="kina-peaks-") as peaks:
        spec = dict(what="train-ranks", threads=1, repeats=CALLS_PER_ROUND,
                    path=path, model=model, peaks=peaks)
        out = subprocess.run(["mpirun", "-n", "2", sys.executable, __file__,
                              "--worker", json.dumps(spec)], env=env,
                             check=True, capture_output=True,
                             text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        result["rank_peaks_mib"] = [
            float(pathlib.Path(peaks, "rank%d" % r).read_text())
            for r in range(2)]
    return result


class TwoRanks:
    """`function` of a compiled module on `mpirun -n 2`, one thread per
    rank, on the global arrays (by parameter name): the module and its
    inputs saved once; each call is one `mpirun` (MPI_WARMUP runs, then
    CALLS_PER_ROUND timed) and returns its round like `spawn` does: rank
    0's median seconds per run as the sample, the bytes moved and seconds
    in collectives per run (summed over the ranks) and each rank's median
    time outside collectives."""

    def __init__(self, module, function, arrays):
        import numpy as np
        self.directory = tempfile.TemporaryDirectory()
        self.function = function
        module.save(self.path("model.so"))
        np.savez(self.path("in.npz"), **arrays)

    def path(self, name):
        return os.path.join(self.directory.name, name)

    def __call__(self):
        import numpy as np
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        for var in THREAD_VARS:
            env[var] = "1"
        subprocess.run(["mpirun", "-n", "2", sys.executable, "-m", "kina.mpi",
                        self.path("model.so"), self.function,
                        self.path("in.npz"), self.path("out.npz"),
                        "--threads", "1", "--warmup", str(MPI_WARMUP),
                        "--repeat", str(CALLS_PER_ROUND)],
                       env=env, check=True, capture_output=True)
        with np.load(self.path("out.npz")) as out:
            return dict(samples=[float(out["seconds"])],
                        bytes_moved=int(out["bytes_moved"]),
                        collective_seconds=float(out["collective_seconds"]),
                        compute_seconds=[float(s) for s in
                                         out["compute_seconds"]])


def sharded_mpi(source):
    """The realistic forward with lm_head split 2 ways on two ranks
    (TwoRanks), or None without OpenMPI."""
    import shutil
    if not shutil.which("mpirun"):
        return None
    import kina
    module = kina.compile(source, "realistic_vocab.kina")
    params = module.functions["storylm0_forward"].params
    return TwoRanks(module, "storylm0_forward",
                    {p.name: a for p, a in zip(params, realistic_arguments())})


def gpt_mpi():
    """The Megatron-annotated GPT on two ranks (TwoRanks), or None without
    OpenMPI."""
    import shutil
    if not shutil.which("mpirun"):
        return None
    import numpy as np
    import kina
    from kina.models import gpt
    cfg = gpt.Config.small()
    module = kina.compile(gpt.source(cfg, mesh=2), "gpt_megatron.kina")
    ids = np.random.default_rng(1).integers(0, cfg.v, (1, cfg.t))
    arrays = dict(zip(gpt.parameter_names(cfg),
                      gpt.arguments(cfg, gpt.weights(cfg, 0), ids)))
    return TwoRanks(module, "gpt_forward", arrays)


def c_abi_toy():
    """ns per call of kina_storylm0_forward from a C program."""
    with tempfile.TemporaryDirectory() as tmp:
        so = pathlib.Path(tmp) / "libtoy.so"
        subprocess.run([str(ROOT / "build/bin/kina-translate"), "--kina-to-so",
                        str(ROOT / "examples/storylm0_forward.kina"), "-o",
                        str(so)], check=True)
        exe = pathlib.Path(tmp) / "toy"
        subprocess.run([CLANG, "-O2", str(ROOT / "bench/toy_c_abi.c"),
                        str(so), "-Wl,-rpath," + tmp, "-o", str(exe)],
                       check=True)
        return float(subprocess.run([str(exe)], check=True, capture_output=True,
                                    text=True).stdout) * 1e-9


def measure_peak(*options):
    """GFLOP/s of one core's vector FMAs (bench/fma_peak.c), on the
    widest vectors this CPU has, and the ISA measured; `options` for the
    compiler (-DDOT_BF16: vdpbf16ps instead)."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = pathlib.Path(tmp) / "fma_peak"
        subprocess.run([CLANG, "-O2", "-march=native", "-ffp-contract=fast",
                        *options, str(ROOT / "bench/fma_peak.c"), "-o",
                        str(exe)], check=True)
        gflops, _, isa = subprocess.run([str(exe)], check=True,
                                        capture_output=True,
                                        text=True).stdout.split()
        return float(gflops), isa


def measure_bf16_peak():
    """GFLOP/s of one core's vdpbf16ps (bench/fma_peak.c -DDOT_BF16); None
    on a CPU without AVX512_BF16."""
    with open("/proc/cpuinfo") as cpuinfo:
        if "avx512_bf16" not in cpuinfo.read().split():
            return None
    return measure_peak("-DDOT_BF16")[0]


def share(gflops, peak):
    """`gflops` as a share of `peak`, which it can never exceed."""
    if gflops > peak:
        sys.exit("bench: %.1f GFLOP/s is above the measured peak of %.1f: "
                 "the peak probe (bench/fma_peak.c) is wrong on this CPU"
                 % (gflops, peak))
    return 100 * gflops / peak


def spread(result):
    """`median (low-high)` in ms."""
    return "%8.1f ms (%.1f-%.1f)" % (result["seconds"] * 1e3,
                                     result["low"] * 1e3,
                                     result["high"] * 1e3)


def us(seconds):
    return "%8.2f us" % (seconds * 1e6)


def ms(seconds):
    return "%8.1f ms" % (seconds * 1e3)


def on_two_ranks(mpi, one):
    """The line of a TwoRanks run's interleaved result (None without
    OpenMPI) against `one` device's."""
    if mpi is None:
        return "OpenMPI not installed"
    return ("%s  %5.2fx   %.1f MB moved, %.1f ms in collectives (both "
            "ranks); computing %s ms per rank" % (
                spread(mpi), one["seconds"] / mpi["seconds"],
                mpi["bytes_moved"] / 1e6, mpi["collective_seconds"] * 1e3,
                " / ".join("%.1f" % (c * 1e3)
                           for c in mpi["compute_seconds"])))


def gen_realistic(*options):
    return subprocess.run([sys.executable, str(ROOT / "scripts/generate/gen_storylm.py"),
                           "--realistic", *options], check=True,
                          capture_output=True, text=True).stdout


def toy_section(r, **_):
    print("== 1. toy StoryLM-0 forward, per call (1 thread)")
    toy = {"kina (Python API)": spawn("toy-kina", repeats=r)["seconds"],
           "kina (C ABI)": c_abi_toy(),
           "NumPy": spawn("toy-numpy", repeats=r)["seconds"],
           "PyTorch": spawn("toy-torch", repeats=r)["seconds"]}
    best = min(toy["NumPy"], toy["PyTorch"])
    for name, seconds in toy.items():
        print("  %-20s %s   %5.2fx the faster baseline" %
              (name, us(seconds), best / seconds))


def realistic_section(r, source, **_):
    print("== 2. realistic forward, T=128 H=12 Dh=64 D=768 V=32000 "
          "(%.2f GFLOP)" % REALISTIC_GFLOP)
    for threads in (1, 2):
        kina, numpy_, torch_ = interleaved(
            [("realistic-kina", dict(source=source)), ("realistic-numpy", {}),
             ("realistic-torch", {})], threads, r)
        best = min(numpy_["seconds"], torch_["seconds"])
        print("  %d thread(s):" % threads)
        for name, result in (("kina", kina), ("NumPy", numpy_),
                             ("PyTorch", torch_)):
            gflops = REALISTIC_GFLOP / result["seconds"]
            print("    %-8s %s  %7.1f GFLOP/s  %5.1f%% of peak  %6.3fx the "
                  "faster baseline" % (name, spread(result), gflops,
                                       share(gflops, PEAK_GFLOPS[threads]),
                                       best / result["seconds"]))
        print("    kina max relative error vs NumPy: %.1e" %
              kina["relative_error"])
        print("    NumPy BLAS: %s" % "; ".join(numpy_["blas"]))
        print("    PyTorch: %s" % "; ".join(torch_["blas"]))


def layout_source(layout, m, k, n):
    """`mm` of an M x K x N product with A, B or neither stored transposed
    (the backward's dW = X^T dY and dX = dY W^T)."""
    if layout == "A B":
        from kina.tune import matmul_source
        return matmul_source(m, k, n)
    a, b = ([k, m], [k, n]) if layout == "A^T B" else ([m, k], [n, k])
    product = ("a.transpose([1, 0]) @ b" if layout == "A^T B"
               else "a @ b.transpose([1, 0])")
    return ("fn mm(a: Tensor[F32, %s, @host], b: Tensor[F32, %s, @host]) -> "
            "Tensor[F32, [%d, %d], @host] {\n  return %s\n}\n"
            % (a, b, m, n, product))


def sgemm_section(r, quick, **_):
    print("== 3. sgemm (peak %.0f GFLOP/s per core)" % PEAK_GFLOPS[1])
    for m, k, n in SGEMM:
        if quick and m * k * n > QUICK_SGEMM_LIMIT:
            continue
        # The model's shapes (lm_head, decode steps) on both thread counts.
        for threads in (1, 2) if n == REALISTIC["V"] else (1,):
            gflop = 2 * m * k * n / 1e9
            kina, numpy_ = interleaved(
                [("sgemm-kina", dict(shape=[m, k, n])),
                 ("sgemm-numpy", dict(shape=[m, k, n]))], threads, r)
            peak = PEAK_GFLOPS[threads]
            print("  %5dx%-5dx%-6d %d thread%s  kina %7.1f GFLOP/s (%4.1f%%)"
                  "   NumPy %7.1f GFLOP/s (%4.1f%%)   %.2fx" % (
                      m, k, n, threads, "s" if threads > 1 else " ",
                      gflop / kina["seconds"],
                      share(gflop / kina["seconds"], peak),
                      gflop / numpy_["seconds"],
                      share(gflop / numpy_["seconds"], peak),
                      numpy_["seconds"] / kina["seconds"]))
    # The backward of the GPT's MLP product (128 x 768 x 3072): each
    # layout beside the forward's, one thread.
    m, k, n = BACKWARD_SHAPE
    for layout in ("A B", "A^T B", "A B^T"):
        gflop = 2 * m * k * n / 1e9
        kina, numpy_ = interleaved(
            [("sgemm-kina", dict(shape=[m, k, n], layout=layout)),
             ("sgemm-numpy", dict(shape=[m, k, n], layout=layout))], 1, r)
        print("  %5dx%-5dx%-6d %-6s    kina %7.1f GFLOP/s (%4.1f%%)   NumPy "
              "%7.1f GFLOP/s (%4.1f%%)   %.2fx" % (
                  m, k, n, layout, gflop / kina["seconds"],
                  share(gflop / kina["seconds"], PEAK_GFLOPS[1]),
                  gflop / numpy_["seconds"],
                  share(gflop / numpy_["seconds"], PEAK_GFLOPS[1]),
                  numpy_["seconds"] / kina["seconds"]))
    print("  NumPy BLAS: %s" % "; ".join(numpy_["blas"]))


def devices_section(r, source, vocab_source, **_):
    print("== 4. N devices: the realistic forward with lm_head split 2 ways "
          "(--shard vocab), one thread per device")
    two_ranks = sharded_mpi(vocab_source)
    results = interleaved(
        [("realistic-kina", dict(source=source)),
         ("sharded-simulator", dict(source=vocab_source))] +
        ([two_ranks] if two_ranks else []), 1, r)
    one, simulated = results[:2]
    mpi = results[2] if two_ranks else None
    print("    1 device, 1 thread       %s" % spread(one))
    print("    simulator, 2 devices     %s  %5.2fx   %.1f MB moved, %.1f ms "
          "in collectives (both devices), bit-identical: %s" % (
              spread(simulated), one["seconds"] / simulated["seconds"],
              simulated["bytes_moved"] / 1e6,
              simulated["collective_seconds"] * 1e3,
              simulated["bit_identical"]))
    print("    mpirun -n 2              %s" % on_two_ranks(mpi, one))


def gpt_section(r, **_):
    print("== 5. GPT forward (scripts/generate/gen_gpt.py: 12 layers, D=768, H=12, "
          "T=128, V=32000)")
    from kina.models import gpt as gpt_config  # the model's shape and FLOPs
    SMALL_GFLOP = gpt_config.Config.small().flops() / 1e9
    for mesh in (None, 2):
        compiled = spawn("gpt-compile", 1, 1, mesh=mesh)
        print("    compile%s: %s, peak memory %.0f MiB" % (
            " (Megatron on @mesh([2]))" if mesh else "", spread(compiled),
            compiled["peak_mib"]))
    two_ranks = gpt_mpi()
    for threads in (1, 2):
        # The Megatron form on two ranks takes its turns beside one rank.
        with_ranks = two_ranks and threads == 1
        results = interleaved(
            [("gpt-kina", {}), ("gpt-torch", {})] +
            ([two_ranks] if with_ranks else []), threads, r)
        kina_, torch_ = results[:2]
        if threads == 1:
            one_rank, megatron = kina_, results[2] if with_ranks else None
        gflops = SMALL_GFLOP / kina_["seconds"]
        print("  %d thread(s): kina %s (%.1f GFLOP/s, %.1f%% of peak)   "
              "PyTorch %s   %.2fx PyTorch; kina vs PyTorch max relative "
              "error %.1e" % (threads, spread(kina_), gflops,
                              share(gflops, PEAK_GFLOPS[threads]),
                              spread(torch_), torch_["seconds"] /
                              kina_["seconds"], kina_["relative_error"]))
    print("    PyTorch: %s" % "; ".join(torch_["blas"]))
    print("    Megatron, mpirun -n 2 (1 thread per rank, against one rank "
          "on 1 thread): %s" % on_two_ranks(megatron, one_rank))
    # The loss and every weight's gradient (reverseMode), one call.
    with tempfile.TemporaryDirectory(prefix="kina-bench-") as directory:
        path = os.path.join(directory, "gpt_loss.so")
        compiled = spawn("gpt-grad-compile", 1, 1, path=path)
        print("    loss + gradients (gpt.loss_source): compile %s, peak "
              "memory %.0f MiB" % (spread(compiled), compiled["peak_mib"]))
        for threads in (1, 2):
            kina_, torch_ = interleaved(
                [("gpt-grad-kina", dict(path=path)), ("gpt-grad-torch", {})],
                threads, r)
            print("  %d thread(s): loss + gradients kina %s, peak %.0f MiB "
                  "(%.0f MiB of it the loaded inputs and weights)   PyTorch "
                  "forward + backward %s   %.2fx PyTorch" % (
                      threads, spread(kina_), kina_["peak_mib"],
                      kina_["inputs_mib"], spread(torch_),
                      torch_["seconds"] / kina_["seconds"]))


def compile_section(r, source, vocab_source, **_):
    print("== 6. compile time (.kina to a loaded .so)")
    sources = [(p.name, p.read_text()) for p in
               sorted((ROOT / "examples").glob("*.kina"))]
    sources.append(("realistic (gen_storylm.py --realistic)", source))
    sources.append(("realistic, lm_head split 2 ways (--shard vocab)",
                    vocab_source))
    for name, text in sources:
        seconds = spawn("compile", 1, r, source=text, name=name)["seconds"]
        print("  %-40s %s" % (name, ms(seconds)))


# The training step's plans on two ranks (gpt.PARALLEL of one mesh axis),
# and the one automatic sharding finds (not run unless asked for: its
# compile takes minutes).
TRAINING_PLANS = ("data", "zero1", "zero3", "fsdp", "megatron")
AUTO_PLAN = "auto"


def ledger(plan):
    """The memory ledger of a compiled plan, in MB per device."""
    def row(memory):
        return ", ".join("%s %.1f" % (name.replace("_", " "), bytes_ / 1e6)
                         for name, bytes_ in memory.items())
    return "at rest: %s; at peak (%.1f MB): %s" % (
        row(plan["at_rest"]), plan["peak_bytes"] / 1e6, row(plan["at_peak"]))


def two_rank_plans(r, model, one_device_path, directory, plans):
    """Each plan on `mpirun -n 2` and one device on one thread, all in
    turns (every round runs each once); each plan's bytes and memory
    ledger per device, from m.cost; the automatic plan against the fastest
    hand plan measured beside it."""
    compiled = {}
    for parallel in plans:
        compiled[parallel] = spawn(
            "train-compile", 1, 1, path=os.path.join(
                directory, parallel + ".so"),
            model=model, mesh=2, parallel=parallel)
    runs = [("train-kina", dict(path=one_device_path, model=model))] + [
        (lambda p=os.path.join(directory, parallel + ".so"):
         training_ranks(p, model)) for parallel in plans]
    one, *two = interleaved(runs, 1, r)
    print("  one device, 1 thread: %s (in turns with every plan below)" %
          spread(one))
    for parallel, timed in zip(plans, two):
        plan = compiled[parallel]
        print("  mpirun -n 2, %s, 1 thread per rank: %s (%.0f ms of it in "
              "collectives on rank 0), peak %s MiB per rank   %.2fx one "
              "device" % (parallel, spread(timed),
                          1e3 * timed["collective_seconds"], " / ".join(
                              "%.0f" % p for p in timed["rank_peaks_mib"]),
                          one["seconds"] / timed["seconds"]))
        print("    m.cost per device: %.1f MB sent; %s" % (
            plan["bytes_sent"] / 1e6, ledger(plan)))
    if AUTO_PLAN not in plans:
        return
    plan, timed = compiled[AUTO_PLAN], two[plans.index(AUTO_PLAN)]
    print("    %s: solved and compiled in %.0f s; predicted step %.0f ms "
          "(%.2fx the measured median); placements: %s" % (
              AUTO_PLAN, plan["seconds"], 1e3 * plan["predicted_seconds"],
              plan["predicted_seconds"] / timed["seconds"], ", ".join(
                  "%s %s" % item for item in plan["placements"].items())))
    hand = [(t["seconds"], p) for p, t in zip(plans, two) if p != AUTO_PLAN]
    if hand:
        seconds, best = min(hand)
        print("    %s against the fastest hand plan in turns (%s): %.2fx "
              "its median step time" % (AUTO_PLAN, best,
                                         timed["seconds"] / seconds))


def training_section(r, models=None, plans=None, **_):
    print("== 7. GPT training step (gpt.train_source: forward, loss, "
          "gradients, AdamW)")
    from kina.models import gpt as gpt_config  # the model's shape and FLOPs
    for model, shape in TRAINING_MODELS.items():
        if models and model not in models:
            continue
        cfg = gpt_config.Config(**shape)
        # Forward, and the backward's two products per forward product.
        gflop = 3 * cfg.flops() / 1e9
        print("  %s: %d layers, D=%d, H=%d, T=%d, V=%d, B=%d (%.1fM "
              "parameters, %.1f GFLOP of matmuls per step)" % (
                  model, cfg.layers, cfg.d, cfg.heads, cfg.t, cfg.v, cfg.b,
                  cfg.parameter_count() / 1e6, gflop))
        with tempfile.TemporaryDirectory(prefix="kina-bench-") as directory:
            path = os.path.join(directory, "train.so")
            compiled = spawn("train-compile", 1, 1, path=path, model=model)
            print("    compile %s, peak memory %.0f MiB" % (
                spread(compiled), compiled["peak_mib"]))
            for threads in (1, 2) if not plans else ():
                kina_, torch_ = interleaved(
                    [("train-kina", dict(path=path, model=model)),
                     ("train-torch", dict(model=model))], threads, r)
                gflops = gflop / kina_["seconds"]
                print("  %d thread(s): kina %s (%.1f GFLOP/s, %.1f%% of "
                      "peak), peak %.0f MiB (%.0f before the first step)   "
                      "PyTorch %s, peak %.0f MiB (%.0f before)   %.2fx "
                      "PyTorch" % (
                          threads, spread(kina_), gflops,
                          share(gflops, PEAK_GFLOPS[threads]),
                          kina_["peak_mib"], kina_["state_mib"],
                          spread(torch_), torch_["peak_mib"],
                          torch_["state_mib"],
                          torch_["seconds"] / kina_["seconds"]))
            if shutil.which("mpirun"):
                two_rank_plans(r, model, path, directory,
                               plans or TRAINING_PLANS)
    if not plans:
        print("    PyTorch: %s" % "; ".join(torch_["blas"]))


# Rounds of the traced against the generated step (one process each).
JIT_ROUNDS = 9


def jit_section(r, models=None, **_):
    print("== 8. Python frontend (kina.jit): the traced training step "
          "(kina.models.gpt_traced) against the generated source's, 1 "
          "thread")
    toy = interleaved([("jit-toy-call", dict(through="module")),
                       ("jit-toy-call", dict(through="jit"))], 1, r)
    print("  toy StoryLM-0 forward in kina.numpy (error %.1e against "
          "NumPy's), per call: module %s, kina.jit %s: the jit adds %s" % (
              toy[1]["relative_error"], us(toy[0]["seconds"]),
              us(toy[1]["seconds"]), us(toy[1]["seconds"] -
                                        toy[0]["seconds"])))
    for model in models or TRAINING_MODELS:
        first = interleaved([("jit-compile-generated", dict(model=model)),
                             ("jit-compile-traced", dict(model=model))], 1,
                            r)
        print("  %-10s compile: generated source %s; traced (trace %.2f s "
              "+ compile) %s: %.2fx" % (
                  model, spread(first[0]), first[1]["trace_seconds"],
                  spread(first[1]),
                  first[1]["seconds"] / first[0]["seconds"]))
        steps = interleaved([("jit-step-generated", dict(model=model)),
                             ("jit-step", dict(model=model))], 1,
                            JIT_ROUNDS)
        print("  %-10s step: generated %s, traced %s (%+.1f%%, %d rounds "
              "in turns); a kina.jit call adds %s (%.3f%% of the step)" % (
                  model, spread(steps[0]), spread(steps[1]),
                  100 * (steps[1]["seconds"] / steps[0]["seconds"] - 1),
                  JIT_ROUNDS, us(steps[1]["overhead"]),
                  100 * steps[1]["overhead"] / steps[1]["seconds"]))


def with_auto_placements(source):
    """`source` with every tensor placement but the scalars' @auto."""
    return re.sub(r"(Tensor\[(?:F32|I64), \[[0-9][0-9, ]*\]), "
                  r"@(replicated|sharded\([^)]*\))\]", r"\1, @auto]", source)


def auto_shard_program(layers, mesh, train):
    """The test-width GPT (kina.models.gpt, B=4) with every placement but
    the scalars' written @auto: the training program or the forward."""
    import dataclasses
    from kina.models import gpt
    cfg = dataclasses.replace(gpt.Config.tiny(), layers=layers, b=4)
    two_axes = len(mesh) == 2
    placed = mesh if two_axes else mesh[0]
    parallel = "data+megatron" if two_axes else "data"
    return with_auto_placements((gpt.train_source if train else gpt.source)(
        cfg, mesh=placed, parallel=parallel))


def auto_shard_section(r, **_):
    print("== 9. automatic sharding: building and solving (kina-opt "
          "--kina-differentiate --kina-auto-shard, the test-width GPT, every "
          "placement @auto)")
    tools = ROOT / "build" / "bin"
    runs = [(layers, [2], True) for layers in (2, 12, 48)] + \
        [(layers, [2, 2], False) for layers in (2, 12)]
    for layers, mesh, train in runs:
        with tempfile.TemporaryDirectory() as tmp:
            kina_file = pathlib.Path(tmp) / "auto.kina"
            kina_file.write_text(auto_shard_program(layers, mesh, train))
            mlir = subprocess.run(
                [str(tools / "kina-translate"), "--import-kina",
                 str(kina_file)], check=True, capture_output=True,
                text=True).stdout
            times, remarks = [], ""
            for _ in range(min(r, 3)):
                start = time.perf_counter()
                done = subprocess.run(
                    [str(tools / "kina-opt"), "--kina-differentiate",
                     "--kina-auto-shard", "-o", os.devnull], input=mlir,
                    check=True, capture_output=True, text=True)
                times.append(time.perf_counter() - start)
                remarks = done.stderr
        decisions = re.findall(r"auto-shard of '(\w+)'.*?; (\d+) decisions"
                               r"(?: \((\d+) once)?", remarks)
        print("  %-8s %2d blocks on %-6s %s; %s" % (
            "training" if train else "forward", layers, mesh,
            "%.1f s (%.1f-%.1f)" % (statistics.median(times), min(times),
                                    max(times)),
            ", ".join("%s %s decisions (%s tied)" % (name, total, tied or total)
                      for name, total, tied in decisions)))


# Section 10: train_gpt's byte-level model (3.2M parameters) as two
# pipeline stages of two blocks, one global batch of 16 sequences cut
# into 8 microbatches, 1F1B.
PIPELINE_MODEL = dict(layers=4, d=256, heads=4, t=64, v=256)
PIPELINE_BATCH, PIPELINE_MICROBATCHES, PIPELINE_STAGES = 16, 8, 2


def pipeline_data(cfg):
    """The weights (untied lm_head) and one global batch."""
    import numpy as np
    from kina.models import gpt
    rng = np.random.default_rng(1)
    ids = rng.integers(0, cfg.v, (PIPELINE_BATCH, cfg.t)).astype(np.int64)
    targets = rng.integers(0, cfg.v, (PIPELINE_BATCH, cfg.t)).astype(
        np.int64)
    return gpt.weights(cfg, seed=0), ids, targets


def pipeline_worker(what, spec, repeats):
    """The unpipelined step (gpt_loss_grad of the whole batch) in a
    process of its own, on spec["threads"] threads."""
    import kina
    from kina.models import gpt
    cfg = gpt.Config(**PIPELINE_MODEL, b=PIPELINE_BATCH)
    weights, ids, targets = pipeline_data(cfg)
    module = kina.compile(gpt.loss_source(cfg), "pipeline_whole.kina",
                          cache_dir=spec["cache"])
    args = gpt.arguments(cfg, weights, ids) + [targets]
    fn = getattr(module, gpt.LOSS_GRAD)
    loss = float(fn(*args)[0])
    return timing(lambda: fn(*args), repeats, loss=loss)


class PipelineRanks:
    """One round of the pipelined step on `mpirun -n 2` (kina.mpi_pipeline):
    rank 0's median step as the sample, with both ranks' traces."""

    def __init__(self, cache):
        import numpy as np
        from kina import pipelining
        from kina.models import gpt
        self.directory = tempfile.TemporaryDirectory()
        self.cache = cache
        cfg = gpt.Config(**PIPELINE_MODEL, b=PIPELINE_BATCH //
                         PIPELINE_MICROBATCHES)
        self.program = self.path("gpt_pp.kina")
        with open(self.program, "w") as f:
            f.write(gpt.pipeline_source(cfg, PIPELINE_STAGES))
        self.stages = [gpt.PIPELINE_STAGE % k for k in range(PIPELINE_STAGES)]
        weights, ids, targets = pipeline_data(cfg)
        arrays = dict(weights, mask=gpt.causal_mask(cfg))
        np.savez(self.path("in.npz"), token_ids=ids, targets=targets,
                 **arrays)
        # Compiled here once, into the cache the ranks read.
        self.pipe = pipelining.Pipeline(
            open(self.program).read(), self.stages, ["token_ids", "targets"],
            constants=["mask"], schedule="1f1b",
            microbatches=PIPELINE_MICROBATCHES, filename=self.program,
            cache_dir=cache)

    def path(self, name):
        return os.path.join(self.directory.name, name)

    def __call__(self):
        import numpy as np
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   KINA_CACHE_DIR=self.cache)
        for var in THREAD_VARS:
            env[var] = "1"
        subprocess.run(["mpirun", "-n", str(PIPELINE_STAGES), sys.executable,
                        "-m", "kina.mpi_pipeline", self.program,
                        self.path("in.npz"), self.path("out.npz"),
                        "--stages", ",".join(self.stages),
                        "--batch", "token_ids,targets", "--constants", "mask",
                        "--schedule", "1f1b", "--microbatches",
                        str(PIPELINE_MICROBATCHES), "--warmup",
                        str(MPI_WARMUP), "--repeat", str(CALLS_PER_ROUND)],
                       env=env, check=True, capture_output=True)
        with np.load(self.path("out.npz")) as out:
            return dict(samples=[float(out["seconds"])],
                        loss=float(out["loss"]),
                        bytes_moved=int(out["bytes_moved"]),
                        traces=[out["trace_%d" % r].tolist()
                                for r in range(PIPELINE_STAGES)])


def pipeline_prediction(pipe, traces):
    """The schedule's makespan on the logical clock with each stage's
    forward and backward costs measured on its rank (medians of the
    trace's F and BW durations; transfers free), and those costs."""
    import statistics as stats
    costs = []
    for rank, trace in enumerate(traces):
        durations = {"F": [], "BW": []}
        for action, (start, end) in zip(pipe.schedule.ranks[rank], trace):
            durations[action.phase].append(end - start)
        costs.append((stats.median(durations["F"]),
                      stats.median(durations["BW"]), 0.0))
    return pipe.schedule.clock(stages=costs).makespan, costs


def pipeline_section(r, **_):
    import shutil
    print("10. train_gpt's model (%d layers, D=%d, T=%d, V=%d; 3.2M "
          "parameters) as %d pipeline stages, 1F1B, %d microbatches of %d "
          "sequences (the same global batch of %d in every run)" % (
              PIPELINE_MODEL["layers"], PIPELINE_MODEL["d"],
              PIPELINE_MODEL["t"], PIPELINE_MODEL["v"], PIPELINE_STAGES,
              PIPELINE_MICROBATCHES, PIPELINE_BATCH // PIPELINE_MICROBATCHES,
              PIPELINE_BATCH))
    if not shutil.which("mpirun"):
        print("  OpenMPI not installed")
        return
    with tempfile.TemporaryDirectory() as cache:
        ranks = PipelineRanks(cache)
        # In turns: one process on 1 and on 2 threads, then the ranks.
        one, two, piped = interleaved(
            [lambda: spawn("pipe-one", 1, CALLS_PER_ROUND, cache=cache),
             lambda: spawn("pipe-one", 2, CALLS_PER_ROUND, cache=cache),
             ranks], 1, r)
        predicted, costs = pipeline_prediction(ranks.pipe, piped["traces"])
    bound = 2 * PIPELINE_MICROBATCHES / (PIPELINE_MICROBATCHES + 1)
    print("  one process, 1 thread, unpipelined:  %s" % spread(one))
    print("  one process, 2 threads, unpipelined: %s" % spread(two))
    print("  mpirun -n 2, pipelined:              %s  %.2fx one thread "
          "(bound 2M/(M+1) = %.2fx), %.2fx two threads; %.1f MB between the "
          "ranks" % (spread(piped), one["seconds"] / piped["seconds"], bound,
                     two["seconds"] / piped["seconds"],
                     piped["bytes_moved"] / 1e6))
    print("  the schedule's model: stage F %s ms, BW %s ms (medians on each "
          "rank, last round); 1F1B on the logical clock: %.1f ms; measured "
          "/ predicted %.2f" % (
              " / ".join("%.1f" % (c[0] * 1e3) for c in costs),
              " / ".join("%.1f" % (c[1] * 1e3) for c in costs),
              predicted * 1e3, piped["seconds"] / predicted))
    print("  loss: pipelined %.6f, unpipelined %.6f" % (piped["loss"],
                                                       one["loss"]))


def mixed_precision_section(r, models=None, **_):
    print("== 11. Mixed precision: the BF16 training step (gen_gpt.py "
          "--dtype bf16: BF16 forward and backward, F32 master weights and "
          "AdamW) against the F32 one and PyTorch's F32 and autocast BF16")
    from kina.models import gpt as gpt_config
    bf16_peak = measure_bf16_peak()
    print("  BF16 dot peak: %s" % (
        "no AVX512_BF16 on this CPU" if bf16_peak is None else
        "%.1f GFLOP/s per core with vdpbf16ps (bench/fma_peak.c -DDOT_BF16), "
        "%.2fx "
        "the FMA peak" % (bf16_peak, bf16_peak / PEAK_GFLOPS[1])))
    for model, shape in TRAINING_MODELS.items():
        if models and model not in models:
            continue
        cfg = gpt_config.Config(**shape)
        print("  %s (%.1fM parameters)" % (model,
                                           cfg.parameter_count() / 1e6))
        with tempfile.TemporaryDirectory(prefix="kina-bench-") as directory:
            paths = {}
            for dtype in ("bf16", "f32"):
                paths[dtype] = os.path.join(directory, dtype + ".so")
                compiled = spawn("train-compile", 1, 1, path=paths[dtype],
                                 model=model, dtype=dtype)
                print("    %s compile %s" % (dtype, spread(compiled)))
            for threads in (1, 2):
                bf16, f32, torch_, autocast = interleaved(
                    [("train-kina", dict(path=paths["bf16"], model=model,
                                         dtype="bf16")),
                     ("train-kina", dict(path=paths["f32"], model=model)),
                     ("train-torch", dict(model=model)),
                     ("train-autocast-torch", dict(model=model))],
                    threads, r)
                faster = min(torch_["seconds"], autocast["seconds"])
                print("    %d thread(s): kina BF16 %s, kina F32 %s, PyTorch "
                      "F32 %s, PyTorch autocast BF16 %s; BF16 %.2fx Kina's "
                      "F32, %.2fx the faster PyTorch" % (
                          threads, spread(bf16), spread(f32), spread(torch_),
                          spread(autocast), f32["seconds"] / bf16["seconds"],
                          faster / bf16["seconds"]))


def section_numbers(text):
    """--only's value: section numbers separated by commas."""
    try:
        return [int(n) for n in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            "expected section numbers separated by commas, got %r" % text)


SECTIONS = [toy_section, realistic_section, sgemm_section, devices_section,
            gpt_section, compile_section, training_section, jit_section,
            auto_shard_section, pipeline_section, mixed_precision_section]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true",
                        help="fewer repeats, skip the largest sgemm")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", type=section_numbers,
                        default=list(range(1, len(SECTIONS) + 1)),
                        help="the sections to run, e.g. 4,5 (default: all)")
    parser.add_argument("--models", type=lambda t: t.split(","),
                        help="sections 7 and 8: only these models (%s)" %
                        ", ".join(TRAINING_MODELS))
    parser.add_argument("--plans", type=lambda t: t.split(","),
                        help="section 7: only these plans on two ranks "
                        "(%s; %s: automatic sharding's), and not the "
                        "one-device runs against PyTorch" % (
                            ", ".join(TRAINING_PLANS), AUTO_PLAN))
    args = parser.parse_args()
    if args.worker:
        result = worker(json.loads(args.worker))
        if result is not None:  # the ranks of an mpirun but the first
            print(json.dumps(result))
        return
    unknown = [n for n in args.only if not 1 <= n <= len(SECTIONS)]
    if unknown:
        parser.error("--only: no section %s (sections are 1-%d)" % (
            ", ".join(map(str, unknown)), len(SECTIONS)))
    r = 3 if args.quick else args.repeats
    print("environment: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s (unset in "
          "the baselines' processes)" % tuple(
              os.environ.get(var, "unset") for var in OPENBLAS_PINS))
    with open("/proc/cpuinfo") as cpuinfo:
        info = cpuinfo.read()
    model = next((line.split(":", 1)[1].strip()
                  for line in info.splitlines()
                  if line.startswith("model name")), "unknown")
    # The family and model tell the core apart where the name does not
    # ("AMD EPYC" is Zen 3, 4 or 5), and a virtual machine may hide AVX-512
    # from a core that has it.
    family, number = (next((line.split(":", 1)[1].strip()
                            for line in info.splitlines()
                            if line.split(":")[0].strip() == field), "?")
                      for field in ("cpu family", "model"))
    avx512 = "avx512f" in info
    core, isa = measure_peak()
    PEAK_GFLOPS.update({1: core, 2: 2 * core})
    print("this CPU: %s (family %s, model %s), %s; fp32 FMA peak measured "
          "%.1f GFLOP/s per core with %s FMAs (bench/fma_peak.c), %.1f on "
          "two" % (model, family, number,
                   "AVX-512" if avx512 else "AVX2, no AVX-512", core, isa,
                   2 * core))
    context = dict(r=r, quick=args.quick, models=args.models,
                   plans=args.plans, source=gen_realistic(),
                   vocab_source=gen_realistic("--shard", "vocab"))
    for number in args.only:
        print()
        SECTIONS[number - 1](**context)
    # A shared host's speed drifts: the same probe again tells how much
    # over this run (figures of a run that drifted far compare poorly with
    # another run's).
    again, _ = measure_peak()
    print("\nfp32 FMA peak measured again at the end: %.1f GFLOP/s per core "
          "(%+.0f%% from the start)" % (again, 100 * (again / core - 1)))


if __name__ == "__main__":
    main()
