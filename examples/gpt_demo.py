#!/usr/bin/env python3
"""The GPT demo end to end: writes the ~110M-parameter forward
(scripts/generate/gen_gpt.py), compiles it, checks its logits against the PyTorch
reference, greedy-generates a few tokens, then runs the Megatron
annotation on two devices: the host form, the threaded simulator (with its
per-op report) and `mpirun -n 2`. Exits non-zero if any result is off.

    /usr/bin/python3 examples/gpt_demo.py [--tiny] [--no-mpi]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import kina
from kina.models import gpt
from kina_reference import TorchGPT


def relative(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def step(text):
    print("==", text, flush=True)


def main():
    # --help says the whole docstring, its examples indented as written.
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true",
                        help="2 layers, D=64 (seconds, for tests)")
    parser.add_argument("--no-mpi", action="store_true")
    args = parser.parse_args()
    cfg = gpt.Config.tiny() if args.tiny else gpt.Config.small()
    print("%s: %.1fM parameters" % (cfg, cfg.parameter_count() / 1e6))
    weights = gpt.weights(cfg, seed=0)
    ids = np.random.default_rng(1).integers(0, cfg.v, (1, cfg.t))
    inputs = gpt.arguments(cfg, weights, ids)

    step("compile")
    start = time.perf_counter()
    model = kina.compile(gpt.source(cfg), "gpt.kina")
    print("compiled in %.1f s" % (time.perf_counter() - start))
    start = time.perf_counter()
    logits = model.gpt_forward(*inputs)
    print("forward in %.0f ms" % ((time.perf_counter() - start) * 1e3))

    step("PyTorch reference (torch.nn modules, same weights)")
    reference = TorchGPT(cfg, weights)(ids).numpy()
    error = relative(logits, reference)
    print("max relative difference %.1e (<= 1e-4)" % error)
    ok = error <= 1e-4

    step("greedy generation")
    tokens = [int(t) for t in ids[0, :4]]
    for _ in range(4):
        padded = np.zeros((1, cfg.t), np.int64)
        padded[0, :len(tokens)] = tokens
        out = model.gpt_forward(*gpt.arguments(cfg, weights, padded))
        tokens.append(int(out[0, len(tokens) - 1].argmax()))
    print("prompt %s -> %s" % (tokens[:4], tokens[4:]))

    step("Megatron on @mesh([2]): host form, simulator, mpirun -n 2")
    sharded = kina.compile(gpt.source(cfg, mesh=2), "gpt_megatron.kina")
    for name, value in [
            ("host form", sharded.gpt_forward(*inputs)),
            ("simulator", sharded.simulate("gpt_forward", *inputs,
                                           report=False).value)]:
        error = relative(value, logits)
        print("%-10s max relative difference to unsharded %.1e (<= 1e-5)"
              % (name, error))
        ok &= error <= 1e-5
    if args.tiny:
        report = sharded.simulate("gpt_forward", *inputs).report
        first = next(r for r in report if r.max_abs_diff > 0)
        print("per-op report: %d ops; the first that differs: %s %s at %s"
              % (len(report), first.op, first.placement, first.location))
    if not args.no_mpi and shutil.which("mpirun"):
        with tempfile.TemporaryDirectory() as directory:
            so, npz = (os.path.join(directory, n) for n in ("m.so", "in.npz"))
            sharded.save(so)
            np.savez(npz, **dict(zip(gpt.parameter_names(cfg), inputs)))
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                       OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            out = os.path.join(directory, "out.npz")
            subprocess.run(["mpirun", "-n", "2", sys.executable, "-m",
                            "kina.mpi", so, "gpt_forward", npz, out],
                           env=env, check=True, timeout=600)
            with np.load(out) as result:
                error = relative(result["result"], logits)
            print("%-10s max relative difference to unsharded %.1e (<= 1e-5)"
                  % ("mpirun -n 2", error))
            ok &= error <= 1e-5
    print("demo %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
