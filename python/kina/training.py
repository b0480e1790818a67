"""Training the GPT of kina.models.gpt with its compiled training step
(`gpt.train_source`: loss, gradients and one AdamW update in one Kina
function), on one device.

    from kina.models import gpt
    from kina.training import Trainer
    trainer = Trainer(cfg, gpt.weights(cfg, tied=True), lr=3e-4)
    loss = trainer.step(token_ids, targets)      # [B, T] int arrays
    trainer.save("run.npz")                      # atomic
    trainer = Trainer.load("run.npz")            # the same next step

The trainer holds the weights and AdamW's moments between steps and
checks every batch before it runs (shapes, ids in the vocabulary) and
every step's result (a NaN or inf loss or weight is an error naming it,
never a silently diverged model).
"""

import dataclasses
import json
import os
import pathlib
import zipfile

import numpy as np

from .files import atomic_writer
from .models import gpt

__all__ = ["Checkpoint", "Trainer", "TrainingError"]

# The checkpoint's format, written into it and checked on load. Version 2
# adds `run`, the application's own record (its schedule, its loss
# history); version 1 files still load, with an empty one.
CHECKPOINT_FORMAT = "kina-gpt-train-2"
READABLE_FORMATS = ("kina-gpt-train-1", CHECKPOINT_FORMAT)


class TrainingError(ValueError):
    """A bad batch, checkpoint or training state, with what is wrong."""


@dataclasses.dataclass
class Checkpoint:
    """What a checkpoint holds: the model's shape, the steps taken, AdamW's
    settings, the weights and both moments ({name: global array}) and
    `run`, a JSON-serializable record the training application keeps with
    them (train_gpt.py: the schedule and the loss history)."""
    cfg: object
    steps: int
    hyper: object
    weights: dict
    m: dict
    v: dict
    run: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class _Hyper:
    lr: float = 1e-3
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.01


def checked_batch(cfg, what, ids):
    """`ids` as int64 [B, T], or a TrainingError naming what is wrong."""
    ids = np.asarray(ids)
    want = (cfg.b, cfg.t)
    if ids.shape != want:
        raise TrainingError("%s have shape %s, expected %s (batch, context)"
                            % (what, list(ids.shape), list(want)))
    if not np.issubdtype(ids.dtype, np.integer):
        raise TrainingError("%s must be integers, got %s" % (what, ids.dtype))
    bad = (ids < 0) | (ids >= cfg.v)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise TrainingError("%s hold %d outside the vocabulary [0, %d) at %s"
                            % (what, int(ids[where]), cfg.v, list(where)))
    return ids.astype(np.int64)


def checked_weight(cfg, name, value):
    """A copy of `value` as contiguous float32 of weight `name`'s shape,
    finite: the training step writes its weights in place, and the
    caller's arrays stay theirs."""
    shape = gpt.parameter_shapes(cfg)[name]
    value = np.array(value, dtype=np.float32, order="C")
    if list(value.shape) != list(shape):
        raise TrainingError("weight %s has shape %s, expected %s" % (
            name, list(value.shape), shape))
    if not np.isfinite(value).all():
        raise TrainingError("weight %s holds NaN or inf" % name)
    return value


def save_checkpoint(path, cfg, steps, hyper, weights, m, v, run=None):
    """Checks that every weight and moment ({name: global array}) is
    finite, then writes them, the step count, the model's shape, AdamW's
    settings and the application's `run` record to `path` (.npz)
    atomically: a temporary file in the same directory, flushed, renamed
    over `path` once complete."""
    for values in (weights, m, v):
        for name, value in values.items():
            checked_weight(cfg, name, value)
    path = pathlib.Path(path)
    meta = {"format": CHECKPOINT_FORMAT, "steps": steps,
            "config": dataclasses.asdict(cfg),
            "adamw": dataclasses.asdict(hyper), "run": run or {}}
    arrays = {"meta": np.array(json.dumps(meta))}
    for prefix, values in (("w", weights), ("m", m), ("v", v)):
        for name, value in values.items():
            arrays["%s/%s" % (prefix, name)] = value
    with atomic_writer(path) as out:
        np.savez(out, **arrays)


def _not_a_checkpoint(path, why):
    return TrainingError("%s is not a Kina training checkpoint (%s)" % (
        path, why))


def load_checkpoint(path):
    """The Checkpoint at `path`, every array checked; a TrainingError
    naming the file when it is missing, truncated, foreign or incomplete."""
    if not os.path.isfile(path):
        raise TrainingError("%s: no such checkpoint file" % path)
    try:
        with np.load(path, allow_pickle=False) as data:
            if "meta" not in getattr(data, "files", ()):
                raise _not_a_checkpoint(path, "no Kina metadata in it")
            meta = json.loads(str(data["meta"]))
            if not isinstance(meta, dict) or \
                    meta.get("format") not in READABLE_FORMATS:
                raise _not_a_checkpoint(path, "format %r" % (
                    meta.get("format") if isinstance(meta, dict) else None))
            cfg = gpt.Config(**meta["config"])
            arrays = {key: data[key] for key in data.files if key != "meta"}
            hyper = meta["adamw"]
            hyper = _Hyper(hyper["lr"], tuple(hyper["betas"]), hyper["eps"],
                           hyper["weight_decay"])
            steps = int(meta["steps"])
    except TrainingError:
        raise
    except (OSError, KeyError, ValueError, TypeError, EOFError,
            zipfile.BadZipFile):
        raise _not_a_checkpoint(path, "unreadable or truncated") from None
    state = []
    for prefix in "wmv":
        values = {}
        for name in gpt.weight_names(cfg, tied=True):
            key = "%s/%s" % (prefix, name)
            if key not in arrays:
                raise TrainingError("%s: the checkpoint lacks %s" % (path,
                                                                     key))
            values[name] = checked_weight(cfg, name, arrays[key])
        state.append(values)
    return Checkpoint(cfg, steps, hyper, *state, run=meta.get("run") or {})


def step_results(names, results):
    """The training step's results after the loss, as ({name: new weight},
    {name: new m}, {name: new v})."""
    k = len(names)
    return tuple(dict(zip(names, results[1 + i * k:1 + (i + 1) * k]))
                 for i in range(3))


class _TrainingState:
    """What every trainer keeps: the model's shape, AdamW's settings, the
    tied GPT's weights and both moments (float32 copies, checked), the
    steps taken and the application's record (`run`), saved together."""

    def __init__(self, cfg, weights, lr, betas, eps, weight_decay):
        self.cfg = cfg
        self.hyper = _Hyper(lr, tuple(betas), eps, weight_decay)
        self.names = gpt.weight_names(cfg, tied=True)
        missing = [n for n in self.names if n not in weights]
        if missing:
            raise TrainingError("weights lack %s" % ", ".join(missing))
        self.weights = {n: checked_weight(cfg, n, weights[n])
                        for n in self.names}
        self.m = {n: np.zeros_like(w) for n, w in self.weights.items()}
        self.v = {n: np.zeros_like(w) for n, w in self.weights.items()}
        self.steps = 0
        # The application's record, saved with the checkpoint.
        self.run = {}

    def save(self, path):
        """Writes the trainer to `path` atomically (save_checkpoint)."""
        save_checkpoint(path, self.cfg, self.steps, self.hyper, self.weights,
                        self.m, self.v, self.run)


class Trainer(_TrainingState):
    """One device's training loop state: weights, moments, step count."""

    def __init__(self, cfg, weights, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, module=None, num_threads=None,
                 simulate=False, dtype="f32"):
        """`module`: a compiled gpt.train_source (compiled here for one
        device when None, computing in `dtype`: gpt.DTYPES; the weights and
        moments stay float32); `simulate`: run each step on the module's mesh
        with m.simulate (one thread per device) instead of its host form,
        keeping the run in `last_simulation`."""
        super().__init__(cfg, weights, lr, betas, eps, weight_decay)
        self.simulate = simulate
        self.last_simulation = None
        if module is None:
            from . import compile
            module = compile(gpt.train_source(cfg, dtype=dtype),
                             "gpt_train.kina",
                             num_threads=num_threads)
        self.module = module

    def _checked_batch(self, what, ids):
        return checked_batch(self.cfg, what, ids)

    def step(self, token_ids, targets):
        """One AdamW step on the batch; returns the loss before it."""
        token_ids = self._checked_batch("token ids", token_ids)
        targets = self._checked_batch("targets", targets)
        h = self.hyper
        scalars = gpt.adamw_scalars(self.steps + 1, h.lr, h.betas, h.eps,
                                    h.weight_decay)
        args = gpt.train_arguments(self.cfg, self.weights, self.m, self.v,
                                   token_ids, targets, scalars)
        if self.simulate:
            self.last_simulation = self.module.simulate(
                gpt.TRAIN_STEP, *args, report=False)
            out = self.last_simulation.value
        else:
            out = getattr(self.module, gpt.TRAIN_STEP)(*args)
        loss = float(out[0])
        if not np.isfinite(loss):
            raise TrainingError("step %d: the loss is %s" % (self.steps + 1,
                                                             loss))
        # Every weight enters the next forward, so a NaN or inf weight
        # shows in the next step's loss (checked above) or in save; a
        # scan of every weight here would cost a pass over the model.
        self.weights, self.m, self.v = step_results(self.names, out)
        self.steps += 1
        return loss

    def loss(self, token_ids, targets):
        """The loss of a batch without a step (held-out evaluation)."""
        args = gpt.arguments(self.cfg, self.weights,
                             self._checked_batch("token ids", token_ids),
                             tied=True)
        return float(getattr(self.module, gpt.LOSS)(
            *args, self._checked_batch("targets", targets)))

    def logits(self, token_ids):
        """The forward's logits, [B, T, V]."""
        return getattr(self.module, gpt.ENTRY)(*gpt.arguments(
            self.cfg, self.weights, self._checked_batch("token ids",
                                                        token_ids),
            tied=True))


    @classmethod
    def load(cls, path, module=None, num_threads=None, simulate=False):
        """The trainer saved at `path`; its next step is the one the saved
        trainer would have taken."""
        saved = load_checkpoint(path)
        hyper = saved.hyper
        trainer = cls(saved.cfg, saved.weights, lr=hyper.lr,
                      betas=hyper.betas, eps=hyper.eps,
                      weight_decay=hyper.weight_decay, module=module,
                      num_threads=num_threads, simulate=simulate)
        trainer.m, trainer.v, trainer.steps = saved.m, saved.v, saved.steps
        trainer.run = saved.run
        return trainer


class PipelineTrainer(_TrainingState):
    """The training loop with the tied GPT cut into pipeline stages
    (gpt.pipeline_source, kina.pipelining): `stages` ranks as threads, the
    batch as `microbatches` microbatches, AdamW per stage; the same
    weights, moments and checkpoints as Trainer's."""

    def __init__(self, cfg, weights, stages, microbatches, schedule="1f1b",
                 lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                 num_threads=None):
        from . import pipeline as _pipeline
        from .pipelining import Pipeline, PipelineError
        if microbatches < 1 or cfg.b % microbatches:
            raise TrainingError("%d sequences a step cannot be cut into %d "
                                "microbatches of equal size" % (
                                    cfg.b, microbatches))
        super().__init__(cfg, weights, lr, betas, eps, weight_decay)
        self.microbatch = dataclasses.replace(cfg, b=cfg.b // microbatches)
        try:
            plan = _pipeline.schedule(schedule, stages, microbatches)
            functions = plan.stages * plan.chunks
            self.pipe = Pipeline(
                gpt.pipeline_source(self.microbatch, functions, tied=True),
                [gpt.PIPELINE_STAGE % k for k in range(functions)],
                ["token_ids", "targets"], constants=["mask"],
                shared=["wte"], schedule=plan, optimizer="adamw",
                num_threads=num_threads or 1)
        except (ValueError, PipelineError) as error:
            raise TrainingError(str(error)) from None
        self.mask = gpt.causal_mask(cfg)
        self._forward = None
        self.last = None  # the last step's StepResult (its trace)

    def _batch(self, token_ids, targets):
        return {"token_ids": checked_batch(self.cfg, "token ids", token_ids),
                "targets": checked_batch(self.cfg, "targets", targets)}

    def step(self, token_ids, targets):
        """One pipelined AdamW step on the batch; returns the loss before
        it."""
        batch = self._batch(token_ids, targets)
        h = self.hyper
        state = {"m_" + n: a for n, a in self.m.items()}
        state.update({"v_" + n: a for n, a in self.v.items()})
        self.last = self.pipe.train_step(
            dict(self.weights, mask=self.mask), state, batch, self.steps + 1,
            lr=h.lr, betas=h.betas, eps=h.eps, weight_decay=h.weight_decay)
        if not np.isfinite(self.last.loss):
            raise TrainingError("step %d: the loss is %s" % (
                self.steps + 1, self.last.loss))
        self.steps += 1
        return float(self.last.loss)

    def loss(self, token_ids, targets):
        """The loss of a batch without a step (the pipeline's forward and
        backward, no update)."""
        return float(self.pipe.step(dict(self.weights, mask=self.mask),
                                    self._batch(token_ids, targets)).loss)

    def logits(self, token_ids):
        """The whole forward's logits (compiled on first use)."""
        if self._forward is None:
            from . import compile
            self._forward = compile(gpt.source(self.cfg, tied=True),
                                    "gpt_forward.kina")
        return getattr(self._forward, gpt.ENTRY)(*gpt.arguments(
            self.cfg, self.weights,
            checked_batch(self.cfg, "token ids", token_ids), tied=True))



def generate(trainer, prompt, length, temperature=0.8, seed=0):
    """`trainer.cfg.b` continuations of `prompt` (bytes or token ids),
    sampled one token per forward at `temperature`; the context is the
    last T tokens. Returns them as text (UTF-8, undecodable bytes
    replaced) when the vocabulary is bytes, else as lists of ids."""
    cfg = trainer.cfg
    rng = np.random.default_rng(seed)
    rows = [list(prompt) for _ in range(cfg.b)]
    for _ in range(length):
        window = [row[-cfg.t:] for row in rows]
        last = len(window[0]) - 1
        ids = np.zeros((cfg.b, cfg.t), np.int64)
        for i, w in enumerate(window):
            ids[i, :len(w)] = w
        logits = np.asarray(trainer.logits(ids), np.float64)[:, last]
        logits = logits / temperature
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        for i in range(cfg.b):
            rows[i].append(int(rng.choice(cfg.v, p=p[i])))
    if cfg.v == 256:
        return [bytes(row).decode("utf-8", "replace") for row in rows]
    return rows


class RankTrainer:
    """The training loop on one MPI rank, under mpirun: the per-device
    form of a mesh-placed `gpt.train_source` runs with this rank's blocks
    of the weights and moments, which stay on the rank between steps; each
    rank takes its own block of every batch. Every rank calls every method
    in the same order (they communicate); a failure on one rank raises on
    every rank, so none is left waiting."""

    def __init__(self, cfg, program, weights, m=None, v=None, steps=0,
                 lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                 threads=1):
        from . import load
        from .mpi import _Backend
        self.cfg = cfg
        self.hyper = _Hyper(lr, tuple(betas), eps, weight_decay)
        self.names = gpt.weight_names(cfg, tied=True)
        self.steps = steps
        self.run = {}  # the application's record, saved with the checkpoint
        self.backend = _Backend(threads)
        self.rank = self.backend.rank
        self._agree(lambda: None)
        self.module = self._agree(lambda: load(program))
        if self.module.mesh is None or \
                self.module.mesh.num_devices != self.backend.size:
            raise TrainingError(
                "%s runs on %s device(s), mpirun started %d ranks" % (
                    program, self.module.mesh and
                    self.module.mesh.num_devices, self.backend.size))
        self.step_function = self.module._device_function(gpt.TRAIN_STEP)
        self.loss_function = self.module._device_function(gpt.LOSS)
        zeros = {n: np.zeros_like(weights[n]) for n in self.names}
        self.local = {}
        for prefix, values in (("", weights), ("m_", m or zeros),
                               ("v_", v or zeros)):
            for name in self.names:
                self.local[prefix + name] = self._block(
                    self.step_function, prefix + name,
                    checked_weight(cfg, name, values[name]))

    def _agree(self, action):
        """`action()` on every rank; raises on all if it failed on one."""
        try:
            result, problem = action(), None
        except Exception as error:  # reported below, on every rank
            result, problem = None, error
        if not self.backend.agree(problem is not None):
            if problem is not None:
                raise problem
            raise TrainingError("another rank failed (it says why)")
        return result

    def _param(self, function, name):
        for param in function.params:
            if param.name == name:
                return param
        raise KeyError(name)

    def _block(self, function, name, value):
        param = self._param(function, name)
        return np.array(param.distribute(np.asarray(value, param.dtype))
                        [self.rank], dtype=param.dtype, order="C")

    def _run(self, function, values):
        """Runs `function` on this rank: each parameter from self.local
        (weights, moments) or `values` (global arrays, split here)."""
        local = [self.local[p.name] if p.name in self.local else
                 self._block(function, p.name, values[p.name])
                 for p in function.params]
        results, status = self.module._library.run_device(
            function.index, self.backend.device, local)
        if status != 0:
            from . import _kina
            raise TrainingError("%s: %s" % (function.name,
                                             _kina.describe_status(status)))
        return results

    def _batch_values(self, token_ids, targets):
        return {"token_ids": checked_batch(self.cfg, "token ids", token_ids),
                "targets": checked_batch(self.cfg, "targets", targets),
                "mask": gpt.causal_mask(self.cfg)}

    def step(self, token_ids, targets):
        """One AdamW step; returns the loss before it (the same on every
        rank)."""
        values = self._agree(lambda: self._batch_values(token_ids, targets))
        h = self.hyper
        values.update(zip(gpt.ADAMW_SCALARS, gpt.adamw_scalars(
            self.steps + 1, h.lr, h.betas, h.eps, h.weight_decay)))
        results = self._agree(lambda: self._run(self.step_function, values))
        loss = float(results[0])
        if not np.isfinite(loss):  # the same on every rank
            raise TrainingError("step %d: the loss is %s" % (self.steps + 1,
                                                             loss))
        for prefix, values in zip(("", "m_", "v_"),
                                  step_results(self.names, results)):
            for name, value in values.items():
                self.local[prefix + name] = value
        self.steps += 1
        return loss

    def loss(self, token_ids, targets):
        """The loss of a batch without a step."""
        values = self._agree(lambda: self._batch_values(token_ids, targets))
        return float(self._agree(
            lambda: self._run(self.loss_function, values))[0])

    def gathered(self):
        """The global weights and moments, ({name: array}, m, v), on every
        rank."""
        out = []
        for prefix in ("", "m_", "v_"):
            values = {}
            for name in self.names:
                param = self._param(self.step_function, prefix + name)
                blocks = self.backend.allgather(self.local[prefix + name])
                values[name] = np.ascontiguousarray(
                    param.assemble(list(blocks)))
            out.append(values)
        return tuple(out)

    def save(self, path):
        """Rank 0 writes the global checkpoint (save_checkpoint); every
        rank takes part in gathering it."""
        weights, m, v = self.gathered()
        self._agree(lambda: save_checkpoint(
            path, self.cfg, self.steps, self.hyper, weights, m, v, self.run)
            if self.rank == 0 else None)

    def close(self):
        self.backend.lib.kina_mpi_close()

    def abort(self, message):
        """Says why on stderr and ends every rank of the job."""
        import sys
        sys.stderr.write("rank %d: %s\n" % (self.rank, message))
        sys.stderr.flush()
        self.backend.lib.kina_mpi_abort(1)
