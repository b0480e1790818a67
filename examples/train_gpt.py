#!/usr/bin/env python3
"""Trains a small byte-level GPT on English text with Kina's compiled
training step: the `fortunes` package's files (/usr/share/games/fortunes,
installed by setup), split into training and held-out fortunes.

Each step is one call of `gpt_train_step` (python/kina/models/gpt.py: forward,
cross-entropy, reverse-mode gradients and AdamW, compiled together);
`--devices N` runs it on N MPI ranks (data parallel, `--parallel
megatron`, or `data+megatron` on a 2 x N/2 mesh; `zero1` and `zero3`
split AdamW's moments, and `zero3` the weights too, over the ranks;
`fsdp` is `zero3` gathering the weights again in the backward; their
`+megatron` forms run on the 2 x N/2 mesh), the weights
staying on the ranks between steps. A checkpoint holds global arrays:
one written under any plan resumes under any other. It
shows a progress bar with the loss and tokens per second, evaluates the
held-out loss, writes the loss curve (loss.png), a checkpoint
(checkpoint.npz, written atomically; --resume continues from it with the
same next step as an uninterrupted run) and prints generated text.

    python3 examples/train_gpt.py                 # ~3M parameters
    python3 examples/train_gpt.py --tiny --steps 5  # seconds
    python3 examples/train_gpt.py --devices 2       # mpirun -n 2
    python3 examples/train_gpt.py --stages 2 --microbatches 4   # a pipeline
"""

import argparse
import math
import os
import pathlib
import re
import shlex
import sys
import time

import numpy as np

import fortunes  # beside this script
from kina.models import gpt
from kina.training import Trainer, TrainingError, generate

BYTES = fortunes.VOCABULARY


def learning_rate(step, args):
    """Linear warmup, then cosine decay to a tenth."""
    warmup = max(1, args.steps // 20)
    if step <= warmup:
        return args.lr * step / warmup
    done = (step - warmup) / max(1, args.steps - warmup)
    return args.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, done))))


def held_out_loss(trainer, held, batches, seed):
    rng = np.random.default_rng([seed, 1 << 20])
    return float(np.mean([trainer.loss(*fortunes.batch(held, trainer.cfg,
                                                        rng))
                          for _ in range(batches)]))


def progress(step, total, loss, tokens_per_second):
    width = 30
    done = int(width * step / total)
    sys.stderr.write("\rstep %*d/%d [%s%s] loss %.3f  %8.0f tokens/s" % (
        len(str(total)), step, total, "=" * done, " " * (width - done), loss,
        tokens_per_second))
    sys.stderr.flush()


def plot(path, train_curve, held_curve):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.plot(*zip(*train_curve), label="training batch", linewidth=0.8)
    if held_curve:
        ax.plot(*zip(*held_curve), "o-", label="held out")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per byte)")
    ax.set_title("Kina: byte-level GPT on fortunes")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# The model's sizes by default and with --tiny; a size given on the
# command line wins over either.
SIZES = dict(layers=4, d=256, heads=4, t=64, batch=16)
TINY_SIZES = dict(layers=2, d=64, heads=4, t=16, batch=2)


def arguments():
    # --help says the whole docstring, its examples indented as written.
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, what in (("layers", "blocks"), ("d", "model width"),
                       ("heads", "attention heads"), ("t", "context (bytes)"),
                       ("batch", "sequences per step")):
        parser.add_argument("--" + name, type=int,
                            help="%s (default %d; --tiny: %d)" % (
                                what, SIZES[name], TINY_SIZES[name]))
    parser.add_argument("--tiny", action="store_true",
                        help="the test sizes: 2 layers, D=64, H=4, T=16, "
                        "batch 2 (sizes given explicitly still win)")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--adam-eps", type=float, default=1e-8)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--eval-batches", type=int, default=8)
    parser.add_argument("--sample", type=int, default=200,
                        help="bytes to generate at the end (0: none)")
    parser.add_argument("--prompt", default="The ")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--devices", type=int, default=1,
                        help="train on N MPI ranks (mpirun), one device each")
    parser.add_argument("--parallel", choices=gpt.PARALLEL,
                        default="data",
                        help="how N devices split the step (docs/gpt.md): "
                        "data parallel; Megatron; both on a 2 x N/2 mesh; "
                        "ZeRO-1 (moments split over the data axis) or "
                        "ZeRO-3 (weights too), alone or with Megatron")
    parser.add_argument("--stages", type=int,
                        help="cut the model into S pipeline stages, run on "
                        "S threads by --schedule (kina.pipelining; the "
                        "blocks shared out equally)")
    parser.add_argument("--microbatches", type=int, default=4,
                        help="with --stages: microbatches a step's batch is "
                        "cut into (default 4)")
    parser.add_argument("--schedule", default="1f1b",
                        choices=["gpipe", "1f1b", "interleaved", "zb-h1"],
                        help="with --stages: the pipeline schedule (default "
                        "1f1b)")
    parser.add_argument("--dtype", choices=gpt.DTYPES, default="f32",
                        help="bf16: mixed precision (the forward and "
                        "backward in BF16, the F32 master weights and AdamW "
                        "in F32)")
    parser.add_argument("--data", type=pathlib.Path,
                        default=fortunes.DIRECTORY)
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path("train_gpt_out"))
    parser.add_argument("--resume", type=pathlib.Path,
                        help="a checkpoint.npz to continue from")
    parser.add_argument("--stop-after", type=int,
                        help="end after this step, as an interrupted run "
                        "would (the schedule is still --steps long)")
    parser.add_argument("--reschedule", action="store_true",
                        help="with --resume: accept a --steps or --lr other "
                        "than the checkpoint's (the learning-rate schedule "
                        "changes from the next step on)")
    # Set by the launching process on the ranks it starts under mpirun.
    parser.add_argument("--rank-program", help=argparse.SUPPRESS)
    args = parser.parse_args()
    preset = TINY_SIZES if args.tiny else SIZES
    size = {name: preset[name] if getattr(args, name) is None
            else getattr(args, name) for name in SIZES}
    cfg = gpt.Config(layers=size["layers"], d=size["d"], heads=size["heads"],
                     t=size["t"], v=BYTES, b=size["batch"])
    if cfg.d % cfg.heads or min(cfg.layers, cfg.d, cfg.t, cfg.b) < 1:
        parser.error("need layers, d, t, batch >= 1 and heads dividing d")
    if args.steps < 1 or args.eval_every < 1 or args.devices < 1:
        parser.error("--steps, --eval-every and --devices must be at least 1")
    if args.devices > 1:
        try:
            gpt.check_split(cfg, args.devices, args.parallel)
        except ValueError as error:
            parser.error(str(error))
    if args.stages is not None and (args.devices > 1 or
                                    args.dtype != "f32"):
        parser.error("--stages runs the pipeline's ranks as threads of "
                     "this process, in F32: not with --devices or --dtype")
    return args, cfg


# How much of the job's stderr is searched for the rank that ended it.
STDERR_TAIL_BYTES = 1 << 16


def launch_ranks(args, cfg):
    """Compiles the step for the mesh once, then runs this script on
    --devices ranks under mpirun; returns its exit status."""
    import shutil
    import subprocess
    import kina
    if not shutil.which("mpirun"):
        sys.exit("train_gpt: --devices needs OpenMPI's mpirun "
                 "(scripts/install-deps.sh installs it)")
    args.out.mkdir(parents=True, exist_ok=True)
    program = args.out / ("train_step_%s_%d.so" % (
        args.parallel.replace("+", "_"), args.devices))
    started = time.perf_counter()
    kina.compile(gpt.train_source(cfg, mesh=args.devices,
                                  parallel=args.parallel, dtype=args.dtype),
                 "gpt_train.kina").save(program)
    print("compiled the %s-parallel step for %d devices in %.1f s" % (
        args.parallel, args.devices, time.perf_counter() - started))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = ["mpirun", "-n", str(args.devices)]
    if args.devices > (os.cpu_count() or 1):
        command.append("--oversubscribe")
    command += [sys.executable, __file__] + sys.argv[1:] + [
        "--rank-program", str(program)]
    # Everything the ranks and mpirun write to stderr passes through as it
    # comes (the progress bar included); its end is kept to name the rank
    # that ended the job.
    job = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    tail = b""
    while chunk := os.read(job.stderr.fileno(), 4096):
        sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()
        tail = (tail + chunk)[-STDERR_TAIL_BYTES:]
    found = re.search(r"process rank (\d+)|^rank (\d+): ",
                      tail.decode(errors="replace"), re.MULTILINE)
    failed_rank = int(found.group(1) or found.group(2)) if found else None
    status = job.wait()
    if status != 0:
        explain_failed_job(args, status, failed_rank)
    return status


def explain_failed_job(args, status, failed_rank):
    """Says which rank ended the job, where the last checkpoint is and
    the command that resumes from it."""
    from kina.training import load_checkpoint
    who = "rank %d" % failed_rank if failed_rank is not None else "a rank"
    sys.stderr.write("train_gpt: %s ended the %d-rank job (exit status %d)"
                     % (who, args.devices, status))
    checkpoint = args.out / "checkpoint.npz"
    try:
        steps = load_checkpoint(checkpoint).steps
    except TrainingError:
        sys.stderr.write("; no checkpoint was written to %s\n" % checkpoint)
        return
    resume = list(sys.argv[1:])  # this run's arguments, less its --resume
    if "--resume" in resume:
        del resume[resume.index("--resume"):resume.index("--resume") + 2]
    resume = [a for a in resume if not a.startswith("--resume=")]
    sys.stderr.write(
        ".\nThe last checkpoint, %s, is at step %d; resume with:\n"
        "    %s %s %s --resume %s\n" % (
            checkpoint, steps, sys.executable, sys.argv[0],
            " ".join(shlex.quote(a) for a in resume),
            shlex.quote(str(checkpoint))))


def make_trainer(args, cfg):
    """A Trainer (one device) or a RankTrainer (this MPI rank), new or
    resumed."""
    from kina.training import (Checkpoint, PipelineTrainer, RankTrainer,
                               load_checkpoint)
    if args.resume:
        saved = load_checkpoint(args.resume)
        if saved.cfg != cfg:
            raise TrainingError("%s holds a model of %s, not %s" % (
                args.resume, saved.cfg, cfg))
        check_schedule(args, saved.run.get("schedule"))
    else:
        saved = Checkpoint(cfg, 0, None,
                           gpt.weights(cfg, seed=args.seed, tied=True),
                           None, None)
    settings = dict(lr=args.lr, eps=args.adam_eps,
                    weight_decay=args.weight_decay)
    if args.rank_program:
        trainer = RankTrainer(cfg, args.rank_program, saved.weights, saved.m,
                              saved.v, saved.steps,
                              threads=args.threads or 1, **settings)
    elif args.stages is not None:
        trainer = PipelineTrainer(cfg, saved.weights, args.stages,
                                  args.microbatches, args.schedule,
                                  num_threads=args.threads, **settings)
        if args.resume:
            trainer.m, trainer.v, trainer.steps = saved.m, saved.v, saved.steps
    else:
        trainer = Trainer(cfg, saved.weights, num_threads=args.threads,
                          dtype=args.dtype, **settings)
        if args.resume:
            trainer.m, trainer.v, trainer.steps = saved.m, saved.v, saved.steps
    trainer.run = {"schedule": schedule(args),
                   "history": saved.run.get("history",
                                            {"train": [], "held": []})}
    return trainer


def schedule(args):
    """What the learning rate of each step depends on (learning_rate)."""
    return {"steps": args.steps, "lr": args.lr}


def check_schedule(args, saved):
    """A resumed run keeps the checkpoint's schedule unless --reschedule."""
    if saved is None or saved == schedule(args) or args.reschedule:
        return
    raise TrainingError(
        "%s was trained with --steps %d --lr %g; resuming with --steps %d "
        "--lr %g would change the learning-rate schedule: pass the "
        "checkpoint's values, or --reschedule to accept the change" % (
            args.resume, saved["steps"], saved["lr"], args.steps, args.lr))


def main():
    args, cfg = arguments()
    if args.devices > 1 and not args.rank_program:
        sys.exit(launch_ranks(args, cfg))
    try:
        train, held = fortunes.split(fortunes.load(args.data), args.seed)
    except fortunes.MissingText as error:
        sys.exit("train_gpt: %s" % error)
    if min(len(train), len(held)) <= cfg.t + 1:
        sys.exit("train_gpt: too little text for a context of %d" % cfg.t)
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "checkpoint.npz"
    started = time.perf_counter()
    try:
        trainer = make_trainer(args, cfg)
    except TrainingError as error:
        sys.exit("train_gpt: %s" % error)
    try:
        run(trainer, args, cfg, train, held, checkpoint, started)
    except TrainingError as error:
        if args.rank_program:
            trainer.abort("train_gpt: %s" % error)
        sys.exit("\ntrain_gpt: %s" % error)
    except BaseException as error:  # never leave the other ranks waiting
        if args.rank_program:
            trainer.abort("train_gpt: %s: %s" % (type(error).__name__, error))
        raise
    if args.rank_program:
        trainer.close()


def run(trainer, args, cfg, train, held, checkpoint, started):
    """The training loop; on several ranks only rank 0 reports."""
    lead = getattr(trainer, "rank", 0) == 0
    say = print if lead else (lambda *a: None)
    say("model: %d layers, D=%d, H=%d, T=%d, byte vocabulary: %.2fM "
        "parameters; %d training bytes, %d held out; %s; ready in %.1f s"
        % (cfg.layers, cfg.d, cfg.heads, cfg.t, cfg.parameter_count() / 1e6,
           len(train), len(held),
           "%d ranks, %s parallel" % (args.devices, args.parallel)
           if args.rank_program else
           "%d pipeline stages, %s, %d microbatches" % (
               args.stages, args.schedule, args.microbatches)
           if args.stages is not None else "one device",
           time.perf_counter() - started))
    # The curves since step 1, resumed runs included: kept in the
    # checkpoint.
    history = trainer.run["history"]
    train_curve, held_curve = history["train"], history["held"]
    tokens = cfg.b * cfg.t
    if args.resume:
        say("resuming from %s at step %d" % (args.resume, trainer.steps))
    if trainer.steps >= args.steps:
        say("the checkpoint is at step %d already" % trainer.steps)
    last = min(args.steps, args.stop_after or args.steps)
    while trainer.steps < last:
        step = trainer.steps + 1
        rng = np.random.default_rng([args.seed, step])
        trainer.hyper.lr = learning_rate(step, args)
        began = time.perf_counter()
        loss = trainer.step(*fortunes.batch(train, cfg, rng))
        train_curve.append((step, float(loss)))
        if lead:
            progress(step, args.steps, loss,
                     tokens / (time.perf_counter() - began))
        if step % args.eval_every == 0 or step == last:
            held_loss = held_out_loss(trainer, held, args.eval_batches,
                                      args.seed)
            held_curve.append((step, float(held_loss)))
            if lead:
                sys.stderr.write("\n")
            say("step %d: training loss %.4f, held-out loss %.4f" % (
                step, loss, held_loss))
            trainer.save(checkpoint)
    # Gathering the weights is collective: every rank takes part.
    final = trainer.gathered() if args.rank_program and args.sample else None
    if not lead:
        return
    if train_curve:
        plot(args.out / "loss.png", train_curve, held_curve)
        print("wrote %s and %s" % (args.out / "loss.png", checkpoint))
    if args.sample:
        sampler = trainer
        if args.rank_program:  # the mesh program's host form, on rank 0
            sampler = Trainer(cfg, final[0], module=trainer.module)
        prompt = args.prompt.encode()[-cfg.t:] or b"\n"
        for text in generate(sampler, prompt, args.sample, 0.8,
                             args.seed)[:2]:
            print("---\n" + text)


if __name__ == "__main__":
    main()
