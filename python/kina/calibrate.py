"""The machine's parameters for the cost model of automatic sharding,
measured once: `python3 -m kina.calibrate [--output PATH] [--mpi]
[--quick]` (docs/interfaces.md, "Calibration").

Each parameter is measured on Kina's own compiled code, as the plans
will run:

- `matmul_gflops`: one thread's GFLOP/s on a float32 product (the rate an
  op's FLOPs are divided by; the kernel's, not the FMA units' peak);
- `memory_gbytes_per_s`: one thread's bytes read and written per second
  by an elementwise op over arrays far larger than the caches (what a
  memory-bound op, AdamW, is divided by);
- `collectives[backend][kind]`: `latency_s` and `gbytes_per_s` of each
  collective kind over two devices, fitted to the seconds one device
  spends in it at several sizes (seconds = latency + bytes sent per
  device / bandwidth), on the threaded simulator and, with `--mpi`, on
  `mpirun -n 2`.

`load(path=None)` reads the file ($KINA_CALIBRATION, else
~/.cache/kina/calibration.json); without one it returns DEFAULTS, derived
from the CPU's vector width, and warns with the command that measures
them.
"""

import argparse
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

from .files import atomic_writer

VERSION = 1
KINDS = ("all_gather", "all_reduce", "reduce_scatter")
DEVICES = 2

# Without a calibration file: an FMA pipe pair's rate at an assumed 2.5
# GHz, at half the peak (the kernel's share), and a shared host's memory
# and collectives, of the magnitude measured on the development machines.
ASSUMED_GHZ = 2.5
ASSUMED_SHARE_OF_PEAK = 0.5
ASSUMED_MEMORY_GBYTES_PER_S = 10.0
ASSUMED_COLLECTIVE = {"latency_s": 2e-5, "gbytes_per_s": 2.0}


def default_path():
    """$KINA_CALIBRATION, else ~/.cache/kina/calibration.json."""
    return pathlib.Path(os.environ.get("KINA_CALIBRATION") or
                        pathlib.Path.home() / ".cache" / "kina" /
                        "calibration.json")


def _vector_lanes():
    """float32 lanes of this CPU's widest vectors (16 with AVX-512)."""
    try:
        flags = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return 8
    return 16 if " avx512f" in flags else 8


def defaults():
    """The parameters assumed without a calibration file."""
    lanes = _vector_lanes()
    # Two FMA pipes, two FLOPs an FMA.
    peak = 2 * 2 * lanes * ASSUMED_GHZ
    return {
        "version": VERSION, "measured": False,
        "cpu": platform.processor() or platform.machine(),
        "matmul_gflops": peak * ASSUMED_SHARE_OF_PEAK,
        "memory_gbytes_per_s": ASSUMED_MEMORY_GBYTES_PER_S,
        "collectives": {backend: {kind: dict(ASSUMED_COLLECTIVE)
                                  for kind in KINDS}
                        for backend in ("simulator", "mpi")},
    }


def load(path=None):
    """The calibration at `path` (default_path()); DEFAULTS, with a
    warning naming the command that measures them, when there is none.
    ValueError naming the file when it is not one."""
    path = pathlib.Path(path) if path else default_path()
    if not path.exists():
        warnings.warn("no calibration at %s: assuming the defaults of "
                      "kina.calibrate (run `python3 -m kina.calibrate` to "
                      "measure this machine)" % path, stacklevel=2)
        return defaults()
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ValueError("%s is not a kina calibration: %s" % (path, error))
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise ValueError("%s is not a kina calibration of version %d "
                         "(measure again: python3 -m kina.calibrate)" % (
                             path, VERSION))
    return data


def _best_seconds(call, repeats):
    """The fastest of `repeats` timed calls (after one warm-up): the
    machine's rate, less the host's noise."""
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def _binary_rate(kina, expression, shape, work, repeats):
    """`work` / the best seconds of one thread's `fn f(a, b) { return
    expression }` on float32 arrays of `shape` (the result of that shape
    too), in units of 1e9."""
    tensor = "Tensor[F32, [%s], @host]" % ", ".join(map(str, shape))
    m = kina.compile("fn f(a: %s, b: %s) -> %s {\n  return %s\n}\n" % (
        tensor, tensor, tensor, expression), "calibrate.kina")
    m.num_threads = 1
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    return work / _best_seconds(lambda: m.f(a, b), repeats) / 1e9


def matmul_gflops(kina, size, repeats):
    """One thread's GFLOP/s on a square float32 product."""
    return _binary_rate(kina, "a @ b", [size, size], 2 * size ** 3, repeats)


def memory_gbytes_per_s(kina, elements, repeats):
    """One thread's GB/s of an elementwise add: two arrays read, one
    written."""
    return _binary_rate(kina, "a + b", [elements], 3 * 4 * elements, repeats)


def collective_source(kind, elements):
    """A two-device function whose only communication is one `kind` of a
    float32 tensor of `elements` elements per device block."""
    n = elements * DEVICES
    if kind == "all_gather":
        return ("@mesh([%d], axes=[dp])\nfn c(x: Tensor[F32, [%d], "
                "@sharded(axis=0, over=dp)]) -> Tensor[F32, [%d], "
                "@replicated] {\n  return x\n}\n" % (DEVICES, n, n))
    # A partial sum (a product over a split contracting dim), reduced to
    # the result's placement.
    out = "@replicated" if kind == "all_reduce" else \
        "@sharded(axis=1, over=dp)"
    return ("@mesh([%d], axes=[dp])\nfn c(x: Tensor[F32, [1, %d], "
            "@sharded(axis=1, over=dp)], y: Tensor[F32, [%d, %d], "
            "@sharded(axis=0, over=dp)]) -> Tensor[F32, [1, %d], %s] {\n"
            "  return x @ y\n}\n" % (DEVICES, DEVICES, DEVICES, elements,
                                     elements, out))


def _arguments(kind, elements):
    if kind == "all_gather":
        return [np.ones(elements * DEVICES, np.float32)]
    return [np.ones((1, DEVICES), np.float32),
            np.ones((DEVICES, elements), np.float32)]


def fit(points):
    """(latency_s, gbytes_per_s) of seconds = latency + bytes / bandwidth,
    least squares over (bytes, seconds) points; the latency at least 0."""
    sent = np.array([p[0] for p in points], np.float64)
    seconds = np.array([p[1] for p in points], np.float64)
    slope, intercept = np.polyfit(sent, seconds, 1)
    slope = max(slope, 1e-15)
    return {"latency_s": max(float(intercept), 0.0),
            "gbytes_per_s": float(1 / slope / 1e9)}


def simulator_collectives(kina, sizes, repeats):
    """Per kind: the fit of one device's seconds inside the collective
    (the simulator's own count) against the bytes it sends."""
    out = {}
    for kind in KINDS:
        points = []
        for elements in sizes:
            m = kina.compile(collective_source(kind, elements),
                             "calibrate_%s.kina" % kind)
            args = _arguments(kind, elements)
            sent = m.cost("c").bytes_sent
            runs = [m.simulate("c", *args, report=False)
                    for _ in range(repeats + 1)][1:]
            seconds = min(r.collective_seconds for r in runs) / DEVICES
            points.append((sent, seconds))
        out[kind] = fit(points)
    return out


def mpi_collectives(kina, sizes, repeats):
    """As simulator_collectives, each size one `mpirun -n 2 python3 -m
    kina.mpi` run (its `collective_seconds`, summed over ranks)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = {}
    with tempfile.TemporaryDirectory(prefix="kina-calibrate-") as tmp:
        for kind in KINDS:
            points = []
            for elements in sizes:
                source = pathlib.Path(tmp, "c.kina")
                source.write_text(collective_source(kind, elements))
                m = kina.compile_file(str(source))
                library = pathlib.Path(tmp, "c.so")
                m.save(str(library))
                names = [p.name for p in m.functions["c"].params]
                np.savez(pathlib.Path(tmp, "in.npz"),
                         **dict(zip(names, _arguments(kind, elements))))
                done = subprocess.run(
                    ["mpirun", "-n", str(DEVICES), sys.executable, "-m",
                     "kina.mpi", str(library), "c",
                     str(pathlib.Path(tmp, "in.npz")),
                     str(pathlib.Path(tmp, "out.npz")), "--warmup", "2",
                     "--repeat", str(repeats)], env=env,
                    capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    raise RuntimeError("mpirun failed: %s" % done.stderr)
                with np.load(pathlib.Path(tmp, "out.npz")) as result:
                    seconds = float(result["collective_seconds"]) / DEVICES
                points.append((m.cost("c").bytes_sent, seconds))
            out[kind] = fit(points)
    return out


def measure(quick=False, mpi=False):
    """Every parameter, measured here (`quick`: small sizes, for tests)."""
    import kina
    repeats = 3 if quick else 7
    sizes = [1 << 10, 1 << 14, 1 << 16] if quick else \
        [1 << 12, 1 << 16, 1 << 20, 1 << 22]
    data = {
        "version": VERSION, "measured": True,
        "cpu": platform.processor() or platform.machine(),
        "vector_lanes": _vector_lanes(),
        "matmul_gflops": matmul_gflops(kina, 256 if quick else 1024,
                                       repeats),
        "memory_gbytes_per_s": memory_gbytes_per_s(
            kina, (1 << 20) if quick else (1 << 25), repeats),
        "collectives": {"simulator": simulator_collectives(kina, sizes,
                                                           repeats)},
    }
    if mpi:
        data["collectives"]["mpi"] = mpi_collectives(kina, sizes, repeats)
    return data


def save(data, path):
    """Writes `data` to `path` atomically (a temporary file renamed)."""
    with atomic_writer(path, "w") as out:
        json.dump(data, out, indent=2, sort_keys=True)
        out.write("\n")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m kina.calibrate",
        description="Measures this machine's parameters for the cost "
        "model of automatic sharding and writes them as JSON.")
    parser.add_argument("--output", default=None,
                        help="where to write (default: $KINA_CALIBRATION, "
                        "else ~/.cache/kina/calibration.json)")
    parser.add_argument("--mpi", action="store_true",
                        help="also measure the collectives on mpirun -n 2")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and few repeats (seconds; for "
                        "tests, not for planning)")
    args = parser.parse_args(argv)
    if args.mpi and not shutil.which("mpirun"):
        parser.error("--mpi: no mpirun on PATH (Debian's openmpi-bin)")
    data = measure(quick=args.quick, mpi=args.mpi)
    path = args.output or default_path()
    save(data, path)
    print("wrote %s: matmul %.1f GFLOP/s, memory %.1f GB/s per thread" % (
        path, data["matmul_gflops"], data["memory_gbytes_per_s"]))
    for backend, kinds in data["collectives"].items():
        for kind, fitted in kinds.items():
            print("  %s %s: %.1f us + bytes / %.2f GB/s" % (
                backend, kind, fitted["latency_s"] * 1e6,
                fitted["gbytes_per_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
