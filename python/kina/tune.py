"""The empirical refinement of Kina's matmul parameters on this CPU.

    python3 -m kina.tune 128x768x32000 128x768x768 [--threads 1]

For each M x K x N shape: compiles the matmul with the analytic model's
cache and register tiles and with their neighbours (each cache tile
halved and doubled, a register tile two rows shorter), checks each result
against NumPy, times them in turns, and records the fastest in a tuning
file for this CPU; the model's parameters stay unless another set is
faster by more than MARGIN (the spread of one host's timings). Compile
with the file to use it:

    kina.compile(text, matmul_tuning=kina.tune.default_path())
    kina-translate --kina-to-so --matmul-tuning=FILE prog.kina -o prog.so

The file names the CPU it was measured on; a compile for another CPU
rejects it. Entries of other shapes already in the file are kept.
"""

import argparse
import json
import os
import pathlib
import re
import statistics
import sys
import tempfile
import time

import numpy as np

from . import _kina
from .files import atomic_writer
from . import compile as _compile_kina

FORMAT = 1
# A candidate replaces the model's parameters only when its median is
# faster by more than this share: below it, this host's noise decides.
MARGIN = 0.03
# Each timed turn calls the matmul for at least this long.
TURN_SECONDS = 0.05
# How far from the model's choice the candidates go.
TUNED = ("cache-m", "cache-n", "cache-k")
SHORTER_TILE = 2
# The largest error against NumPy (relative to the largest magnitude)
# a candidate may have: float32 sums in another order.
TOLERANCE = 1e-5


def default_path():
    """This CPU's tuning file: $XDG_CACHE_HOME/kina (else ~/.cache/kina),
    named after the CPU."""
    key, _ = _kina.host_cpu()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    name = re.sub(r"[^A-Za-z0-9]+", "-", key).strip("-").lower()
    return pathlib.Path(cache) / "kina" / ("matmul-%s.json" % name)


def parse_shape(text):
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if not match or 0 in map(int, match.groups()):
        raise argparse.ArgumentTypeError(
            "%r is not MxKxN with positive sizes (e.g. 128x768x32000)" % text)
    return tuple(int(g) for g in match.groups())


def candidates():
    """The model's parameters first, then their neighbours."""
    _, model = _kina.host_cpu()
    model = {name: model[name] for name in ("tile-m",) + TUNED}
    found = [model]
    for name in TUNED:
        for factor in (0.5, 2):
            found.append(dict(model, **{name: max(1, int(model[name] *
                                                       factor))}))
    if model["tile-m"] > SHORTER_TILE:
        found.append(dict(model, **{"tile-m": model["tile-m"] - SHORTER_TILE}))
    return found


def _file_text(key, entries):
    return json.dumps({"format": FORMAT, "cpu": key, "matmuls": entries},
                      indent=1) + "\n"


def matmul_source(m, k, n):
    """The `.kina` program of one M x K x N matmul, `mm`."""
    return ("fn mm(a: Tensor[F32, [%d, %d], @host], b: Tensor[F32, [%d, %d], "
            "@host]) -> Tensor[F32, [%d, %d], @host] {\n  return a @ b\n}\n"
            % (m, k, k, n, m, n))


def _compile_with(key, shape, parameters, threads, directory):
    m, k, n = shape
    path = os.path.join(directory, "candidate.json")
    with open(path, "w") as f:
        f.write(_file_text(key, [dict(m=m, k=k, n=n, **parameters)]))
    return _compile_kina(matmul_source(m, k, n), "tune.kina",
                         num_threads=threads, matmul_tuning=path)


def _seconds_per_call(function, args):
    calls, start = 0, time.perf_counter()
    while True:
        function(*args)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= TURN_SECONDS:
            return elapsed / calls


def tune_shape(shape, threads=1, rounds=7, log=print):
    """The entry of `shape` for this CPU's tuning file."""
    key, _ = _kina.host_cpu()
    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    expected = a @ b
    scale = float(np.abs(expected).max()) or 1.0
    timed, seen = [], set()
    with tempfile.TemporaryDirectory() as directory:
        for parameters in candidates():
            module = _compile_with(key, shape, parameters, threads, directory)
            code = module.ir("llvm")
            if code in seen:  # the same tiles as an earlier candidate
                continue
            seen.add(code)
            error = float(np.abs(module.mm(a, b) - expected).max()) / scale
            if error > TOLERANCE:
                raise RuntimeError("%dx%dx%d with %s is %.1e from NumPy" % (
                    m, k, n, parameters, error))
            timed.append((parameters, module, []))
    for _ in range(rounds):
        for parameters, module, times in timed:
            times.append(_seconds_per_call(module.mm, (a, b)))
    medians = [statistics.median(times) for _, _, times in timed]
    model_median = medians[0]
    best = min(range(len(timed)), key=medians.__getitem__)
    if medians[best] > model_median * (1 - MARGIN):
        best = 0
    flops = 2.0 * m * k * n
    log("%dx%dx%d on %d thread(s), %s:" % (m, k, n, threads, key))
    for i, ((parameters, _, times), median) in enumerate(zip(timed, medians)):
        log("  %s %s  %9.1f us  %6.1f GFLOP/s%s" % (
            "model" if i == 0 else "     ",
            " ".join("%s=%d" % item for item in parameters.items()),
            median * 1e6, flops / median / 1e9,
            "  <- chosen" if i == best else ""))
    return dict(m=m, k=k, n=n, **timed[best][0], threads=threads,
                **{"median-us": round(medians[best] * 1e6, 1),
                   "model-median-us": round(model_median * 1e6, 1)})


def tune(shapes, threads=1, rounds=7, output=None, log=print):
    """Tunes `shapes` and writes their entries to `output` (default:
    default_path()), keeping the file's entries of other shapes; returns
    the path."""
    key, _ = _kina.host_cpu()
    path = pathlib.Path(output) if output is not None else default_path()
    entries = []
    if path.exists():
        with open(path) as f:
            existing = json.load(f)
        if existing.get("format") != FORMAT or existing.get("cpu") != key:
            raise ValueError("%s was measured on %r, not on this CPU (%r): "
                             "choose another output" % (
                                 path, existing.get("cpu"), key))
        entries = existing.get("matmuls", [])
    for shape in shapes:
        entry = tune_shape(shape, threads, rounds, log)
        entries = [e for e in entries
                   if (e.get("m"), e.get("k"), e.get("n")) != shape] + [entry]
    with atomic_writer(path, "w") as out:
        out.write(_file_text(key, entries))
    log("wrote %s" % path)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m kina.tune", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", nargs="+", type=parse_shape,
                        metavar="MxKxN", help="the matmul shapes to tune")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads each matmul runs on (default 1)")
    parser.add_argument("--rounds", type=int, default=7,
                        help="timed turns of each candidate (default 7)")
    parser.add_argument("--output", help="the tuning file (default: %s)" %
                        default_path())
    args = parser.parse_args(argv)
    if args.threads < 1 or args.rounds < 1:
        parser.error("--threads and --rounds must be at least 1")
    try:
        tune(args.shapes, args.threads, args.rounds, args.output)
    except (ValueError, OSError) as error:
        sys.exit("kina.tune: %s" % error)


if __name__ == "__main__":
    main()
