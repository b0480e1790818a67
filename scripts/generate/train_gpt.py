#!/usr/bin/env python3
"""Trains a small byte-level GPT on English text with Kina's compiled
training step: the `fortunes` package's files (/usr/share/games/fortunes,
installed by setup), split into training and held-out fortunes.

Each step is one call of `gpt_train_step` (python/kina/gpt.py: forward,
cross-entropy, reverse-mode gradients and AdamW, compiled together);
`--devices N` runs it on N MPI ranks (data parallel, `--parallel
megatron`, or `data+megatron` on a 2 x N/2 mesh), the weights staying on
the ranks between steps. It
shows a progress bar with the loss and tokens per second, evaluates the
held-out loss, writes the loss curve (loss.png), a checkpoint
(checkpoint.npz, written atomically; --resume continues from it with the
same next step as an uninterrupted run) and prints generated text.

    python3 scripts/generate/train_gpt.py                 # ~3M parameters
    python3 scripts/generate/train_gpt.py --tiny --steps 5  # seconds
    python3 scripts/generate/train_gpt.py --devices 2       # mpirun -n 2
"""

import argparse
import math
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "build" / "python"))
from kina import gpt  # noqa: E402
from kina import fortunes  # noqa: E402
from kina.training import Trainer, TrainingError, generate  # noqa: E402

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
    fig, ax = plt.subplots(figsize=(7, 4))
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


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--t", type=int, default=64, help="context (bytes)")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--tiny", action="store_true",
                        help="2 layers, D=64, H=4, T=16, batch 2 (tests)")
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
                        default="data", help="how N devices split the step")
    parser.add_argument("--data", type=pathlib.Path,
                        default=fortunes.DIRECTORY)
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path("train_gpt_out"))
    parser.add_argument("--resume", type=pathlib.Path,
                        help="a checkpoint.npz to continue from")
    parser.add_argument("--stop-after", type=int,
                        help="end after this step, as an interrupted run "
                        "would (the schedule is still --steps long)")
    # Set by the launching process on the ranks it starts under mpirun.
    parser.add_argument("--rank-program", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tiny:
        cfg = gpt.Config(layers=2, d=64, heads=4, t=16, v=BYTES, b=2)
    else:
        cfg = gpt.Config(layers=args.layers, d=args.d, heads=args.heads,
                         t=args.t, v=BYTES, b=args.batch)
    if cfg.d % cfg.heads or min(cfg.layers, cfg.d, cfg.t, cfg.b) < 1:
        parser.error("need layers, d, t, batch >= 1 and heads dividing d")
    if args.steps < 1 or args.eval_every < 1 or args.devices < 1:
        parser.error("--steps, --eval-every and --devices must be at least 1")
    if args.devices > 1:
        try:
            shape = gpt.mesh_devices(args.devices, args.parallel)
        except ValueError as error:
            parser.error(str(error))
        if args.parallel == "data+megatron" and shape[0] * shape[1] != \
                args.devices:
            parser.error("data+megatron needs an even --devices (a 2 x N/2 "
                         "mesh), got %d" % args.devices)
        batch_split = {"data": args.devices, "data+megatron": shape[0]}.get(
            args.parallel, 1)
        if cfg.b % batch_split:
            parser.error("--batch %d does not split over %d devices" % (
                cfg.b, batch_split))
    return args, cfg


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
                                  parallel=args.parallel),
                 "gpt_train.kina").save(program)
    print("compiled the %s-parallel step for %d devices in %.1f s" % (
        args.parallel, args.devices, time.perf_counter() - started))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=str(ROOT / "build" / "python"))
    command = ["mpirun", "-n", str(args.devices)]
    if args.devices > (os.cpu_count() or 1):
        command.append("--oversubscribe")
    command += [sys.executable, __file__] + sys.argv[1:] + [
        "--rank-program", str(program)]
    return subprocess.run(command, env=env).returncode


def make_trainer(args, cfg):
    """A Trainer (one device) or a RankTrainer (this MPI rank), new or
    resumed."""
    from kina.training import RankTrainer, load_checkpoint
    steps, m, v = 0, None, None
    weights = None
    if args.resume:
        resumed, steps, _, weights, m, v = load_checkpoint(args.resume)
        if resumed != cfg:
            raise TrainingError("%s holds a model of %s, not %s" % (
                args.resume, resumed, cfg))
    else:
        weights = gpt.weights(cfg, seed=args.seed, tied=True)
    settings = dict(lr=args.lr, eps=args.adam_eps,
                    weight_decay=args.weight_decay)
    if args.rank_program:
        return RankTrainer(cfg, args.rank_program, weights, m, v, steps,
                           threads=args.threads or 1, **settings)
    trainer = Trainer(cfg, weights, num_threads=args.threads, **settings)
    if args.resume:
        trainer.m, trainer.v, trainer.steps = m, v, steps
    return trainer


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
           if args.rank_program else "one device",
           time.perf_counter() - started))
    train_curve, held_curve = [], []
    tokens = cfg.b * cfg.t
    if trainer.steps >= args.steps:
        say("the checkpoint is at step %d already" % trainer.steps)
    last = min(args.steps, args.stop_after or args.steps)
    while trainer.steps < last:
        step = trainer.steps + 1
        rng = np.random.default_rng([args.seed, step])
        trainer.hyper.lr = learning_rate(step, args)
        began = time.perf_counter()
        loss = trainer.step(*fortunes.batch(train, cfg, rng))
        train_curve.append((step, loss))
        if lead:
            progress(step, args.steps, loss,
                     tokens / (time.perf_counter() - began))
        if step % args.eval_every == 0 or step == last:
            held_loss = held_out_loss(trainer, held, args.eval_batches,
                                      args.seed)
            held_curve.append((step, held_loss))
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
