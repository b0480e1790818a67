"""Training the GPT of kina.gpt with its compiled training step
(`gpt.train_source`: loss, gradients and one AdamW update in one Kina
function), on one device.

    from kina import gpt
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
import tempfile
import zipfile

import numpy as np

from . import gpt

__all__ = ["Trainer", "TrainingError"]

# The checkpoint's format, written into it and checked on load.
CHECKPOINT_FORMAT = "kina-gpt-train-1"


class TrainingError(ValueError):
    """A bad batch, checkpoint or training state, with what is wrong."""


@dataclasses.dataclass
class _Hyper:
    lr: float = 1e-3
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.01


class Trainer:
    """One device's training loop state: weights, moments, step count."""

    def __init__(self, cfg, weights, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, module=None, num_threads=None,
                 simulate=False):
        """`module`: a compiled gpt.train_source (compiled here for one
        device when None); `simulate`: run each step on the module's mesh
        with m.simulate (one thread per device) instead of its host form,
        keeping the run in `last_simulation`."""
        self.cfg = cfg
        self.simulate = simulate
        self.last_simulation = None
        self.hyper = _Hyper(lr, tuple(betas), eps, weight_decay)
        self.names = gpt.weight_names(cfg, tied=True)
        missing = [n for n in self.names if n not in weights]
        if missing:
            raise TrainingError("weights lack %s" % ", ".join(missing))
        self.weights = {n: self._checked_weight(n, weights[n])
                        for n in self.names}
        self.m = {n: np.zeros_like(w) for n, w in self.weights.items()}
        self.v = {n: np.zeros_like(w) for n, w in self.weights.items()}
        self.steps = 0
        if module is None:
            from . import compile
            module = compile(gpt.train_source(cfg), "gpt_train.kina",
                             num_threads=num_threads)
        self.module = module

    def _checked_weight(self, name, value):
        shape = gpt.parameter_shapes(self.cfg)[name]
        value = np.ascontiguousarray(value, dtype=np.float32)
        if list(value.shape) != list(shape):
            raise TrainingError("weight %s has shape %s, expected %s" % (
                name, list(value.shape), shape))
        if not np.isfinite(value).all():
            raise TrainingError("weight %s holds NaN or inf" % name)
        return value

    def _checked_batch(self, what, ids):
        ids = np.asarray(ids)
        want = (self.cfg.b, self.cfg.t)
        if ids.shape != want:
            raise TrainingError("%s have shape %s, expected %s (batch, "
                                "context)" % (what, list(ids.shape),
                                              list(want)))
        if not np.issubdtype(ids.dtype, np.integer):
            raise TrainingError("%s must be integers, got %s" % (what,
                                                                 ids.dtype))
        bad = (ids < 0) | (ids >= self.cfg.v)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise TrainingError(
                "%s hold %d outside the vocabulary [0, %d) at %s" % (
                    what, int(ids[where]), self.cfg.v, list(where)))
        return ids.astype(np.int64)

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
        k = len(self.names)
        weights = dict(zip(self.names, out[1:1 + k]))
        for name, value in weights.items():
            if not np.isfinite(value).all():
                raise TrainingError("step %d: weight %s became NaN or inf" % (
                    self.steps + 1, name))
        self.weights = weights
        self.m = dict(zip(self.names, out[1 + k:1 + 2 * k]))
        self.v = dict(zip(self.names, out[1 + 2 * k:]))
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

    def save(self, path):
        """Writes weights, moments, step count, model shape and AdamW's
        settings to `path` (.npz) atomically: a temporary file in the same
        directory, renamed over `path` once complete."""
        path = pathlib.Path(path)
        meta = {"format": CHECKPOINT_FORMAT, "steps": self.steps,
                "config": dataclasses.asdict(self.cfg),
                "adamw": dataclasses.asdict(self.hyper)}
        arrays = {"meta": np.array(json.dumps(meta))}
        for prefix, values in (("w", self.weights), ("m", self.m),
                               ("v", self.v)):
            for name, value in values.items():
                arrays["%s/%s" % (prefix, name)] = value
        fd, tmp = tempfile.mkstemp(dir=path.parent or ".",
                                   prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **arrays)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path, module=None, num_threads=None):
        """The trainer saved at `path`; its next step is the one the saved
        trainer would have taken."""
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                if meta.get("format") != CHECKPOINT_FORMAT:
                    raise TrainingError("%s: not a Kina training checkpoint "
                                        "(format %r)" % (path,
                                                         meta.get("format")))
                cfg = gpt.Config(**meta["config"])
                arrays = {key: data[key] for key in data.files
                          if key != "meta"}
        except (OSError, KeyError, ValueError, TypeError, EOFError,
                zipfile.BadZipFile) as error:
            if isinstance(error, TrainingError):
                raise
            raise TrainingError("%s: cannot read the checkpoint: %s" % (
                path, error)) from None
        hyper = meta["adamw"]
        weights = {key[2:]: value for key, value in arrays.items()
                   if key.startswith("w/")}
        trainer = cls(cfg, weights, lr=hyper["lr"], betas=hyper["betas"],
                      eps=hyper["eps"], weight_decay=hyper["weight_decay"],
                      module=module, num_threads=num_threads)
        for prefix, target in (("m", trainer.m), ("v", trainer.v)):
            for name in trainer.names:
                key = "%s/%s" % (prefix, name)
                if key not in arrays:
                    raise TrainingError("%s: the checkpoint lacks %s" % (
                        path, key))
                target[name] = trainer._checked_weight(name, arrays[key])
        trainer.steps = int(meta["steps"])
        return trainer
