"""Runs the per-device form of a sharded function on N MPI ranks, one
device per rank:

    mpirun -n N python3 -m kina.mpi PROGRAM FUNCTION INPUTS.npz OUTPUT.npz

PROGRAM is a `.so` from `kina-translate --kina-to-so` (or `.kina` source,
which every rank compiles). INPUTS.npz holds the global arguments by
parameter name; every rank reads it and keeps its blocks. OUTPUT.npz
(written by rank 0) holds `result`, the global result, `local_<r>`, rank
r's local result, `bytes_moved` / `collective_seconds` (per run, summed
over ranks), `seconds` (rank 0's median run) and `compute_seconds` (each
rank's median time outside collectives). N must be the mesh's device count.

Options: --threads T (threads per rank, default 1), --repeat K (run K
times, report the median time of a run in `seconds`), --warmup W (W runs
before those, not measured: the first runs fault in the temporaries and
results).

A step loop (kina/steps.py): --steps N runs FUNCTION as a training step N
times, each result declared `@reuses(p)` feeding back as p, the other
arguments from --feed module:function (function(step) -> {name: global
array}) or INPUTS.npz; --checkpoint PATH --every K writes the state
atomically every K steps and after the last, --resume continues from PATH.
OUTPUT.npz then holds each reused parameter's final global value by name,
`result_<i>` (each other result, stacked over the steps run), `steps` (the
last step), `bytes_moved` (per step, summed over ranks) and `seconds` (the
median step).

A rank that fails (bad input, a gather id out of range, a collective
error) says why on stderr and the whole job exits non-zero; no rank is
left waiting.
"""

import argparse
import ctypes
import os
import sys
import time

import numpy as np

import kina
from kina import devices as _devices
from kina import steps as _steps


class _Backend:
    """libkina_mpi.so (built beside the `kina` package)."""

    def __init__(self, threads):
        path = os.path.join(os.path.dirname(kina.__file__), "libkina_mpi.so")
        if not os.path.exists(path):
            raise SystemExit("kina.mpi: %s is missing: Kina was built "
                             "without OpenMPI (scripts/install-deps.sh "
                             "installs it)" % path)
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        lib.kina_mpi_open.restype = ctypes.c_void_p
        lib.kina_mpi_open.argtypes = [ctypes.c_int32]
        lib.kina_mpi_allgather.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_int64]
        lib.kina_mpi_agree.argtypes = [ctypes.c_int32]
        lib.kina_mpi_agree.restype = ctypes.c_int32
        lib.kina_mpi_bytes_moved.restype = ctypes.c_int64
        lib.kina_mpi_collective_seconds.restype = ctypes.c_double
        lib.kina_mpi_abort.argtypes = [ctypes.c_int32]
        self.lib = lib
        self.device = lib.kina_mpi_open(threads)
        if not self.device:
            raise SystemExit("kina.mpi: MPI_Init failed")
        rank_and_size = (ctypes.c_int32 * 2).from_address(self.device)
        self.rank, self.size = rank_and_size[0], rank_and_size[1]

    def agree(self, failed):
        """True when no rank failed."""
        return self.lib.kina_mpi_agree(1 if failed else 0) == 0

    def allgather(self, array):
        """Every rank's `array` (same shape and dtype on all), rank order."""
        # Not np.ascontiguousarray: it makes a rank-0 result (1,).
        array = np.asarray(array, order="C")
        out = np.empty((self.size,) + array.shape, dtype=array.dtype)
        if self.lib.kina_mpi_allgather(array.ctypes.data, out.ctypes.data,
                                       array.nbytes) != 0:
            raise RuntimeError("gathering the results failed")
        return out


def _say(rank, message, program="kina.mpi"):
    sys.stderr.write("%s rank %d: %s\n" % (program, rank, message))
    sys.stderr.flush()


def _load(args, backend):
    """The module and the per-device function, checked against the ranks."""
    if args.program.endswith(".kina"):
        module = kina.compile_file(args.program)
    else:
        module = kina.load(args.program)
    if module.mesh is None:
        raise ValueError("%s has no mesh" % args.program)
    function = module._device_function(args.function)
    if backend.size != module.mesh.num_devices:
        raise ValueError("%s runs on %s: %d devices, but mpirun started %d "
                         "ranks" % (args.function, module.mesh,
                                    module.mesh.num_devices, backend.size))
    return module, function


def _local_block(param, array, rank):
    # A dense copy, once: a strided block (a split lm_head) would be
    # copied again by every call.
    return np.array(param.distribute(array)[rank], dtype=param.dtype,
                    order="C")


def _prepare(args, backend):
    """The module, the per-device function and this rank's local inputs."""
    module, function = _load(args, backend)
    with np.load(args.inputs) as data:
        missing = [p.name for p in function.params if p.name not in data]
        if missing:
            raise ValueError("%s has no array named %s (it has: %s)" % (
                args.inputs, ", ".join(missing), ", ".join(data.files)))
        arrays = [data[p.name] for p in function.params]
    arrays = _devices._check_global(function, arrays)
    local = [_local_block(param, array, backend.rank)
             for param, array in zip(function.params, arrays)]
    return module, function, local


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m kina.mpi",
        description="Run a sharded Kina function on the ranks of mpirun.")
    parser.add_argument("program")
    parser.add_argument("function")
    parser.add_argument("inputs")
    parser.add_argument("output")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--steps", type=int,
                        help="run FUNCTION as a training step this many "
                        "times (kina/steps.py)")
    parser.add_argument("--feed", metavar="MODULE:FUNCTION",
                        help="with --steps: function(step) -> {parameter "
                        "name: global array}, the arguments of each step")
    parser.add_argument("--checkpoint", metavar="PATH",
                        help="with --steps: where the state is saved")
    parser.add_argument("--every", type=int, default=0,
                        help="with --checkpoint: save every K steps (and "
                        "after the last)")
    parser.add_argument("--resume", action="store_true",
                        help="with --checkpoint: continue from it")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.repeat < 1:
        parser.error("--threads and --repeat must be >= 1")
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be >= 1, got %d" % args.steps)
    if args.every < 0:
        parser.error("--every must be >= 0")
    if not args.steps and (args.feed or args.checkpoint or args.resume):
        parser.error("--feed, --checkpoint and --resume go with --steps")
    if (args.every or args.resume) and not args.checkpoint:
        parser.error("--every and --resume need --checkpoint PATH")
    return run_or_abort(_Backend(args.threads), _run, args)


def run_or_abort(backend, run, args, program="kina.mpi"):
    """run(args, backend); an error of any kind says why on stderr (as
    `program rank N: ...`) and aborts the whole job, so that no rank is
    left waiting."""
    try:
        return run(args, backend)
    except BaseException as error:
        _say(backend.rank, "%s: %s" % (type(error).__name__, error), program)
        backend.lib.kina_mpi_abort(1)
        raise


def _stop(backend, message=None):
    """Says `message` (rank 0, or the rank that failed) and closes."""
    if message:
        _say(backend.rank, message)
    backend.lib.kina_mpi_close()
    return 1


def _run_steps(args, backend):
    """The step loop: every rank runs it in lockstep, and agrees before
    each step and each checkpoint, so that one rank's failure (a feed that
    raises, a checkpoint that cannot be written) stops them all."""
    problem = None
    try:
        module, function = _load(args, backend)
        entry = module._described["devices"][function.index]
        state = _steps.state_parameters(entry, function)
        if not state:
            raise ValueError("%s reuses no parameter (@reuses): nothing "
                             "carries over from one step to the next" %
                             function.name)
        feed = _steps.load_feed(args.feed) if args.feed else (lambda s: {})
        given = {}
        with np.load(args.inputs) as data:
            for i, param in enumerate(function.params):
                if param.name in data:
                    given[i] = _steps.checked(param, data[param.name],
                                              args.inputs)
        first = 1
        if args.resume:
            done, saved = _steps.load_checkpoint(args.checkpoint, function,
                                                 state)
            if done >= args.steps:
                raise ValueError(
                    "%s is at step %d: --steps %d leaves nothing to run "
                    "(--steps counts from the first step, not from the "
                    "checkpoint)" % (args.checkpoint, done, args.steps))
            given.update(saved)
            first = done + 1
        missing = [function.params[i].name for i in state.values()
                   if i not in given]
        if missing:
            raise ValueError("%s holds no %s: a reused parameter starts from "
                             "INPUTS (or the checkpoint)" % (
                                 args.inputs, ", ".join(missing)))
        local = {i: _local_block(function.params[i], array, backend.rank)
                 for i, array in given.items()}
    except (OSError, ValueError, KeyError, ImportError,
            kina.CompileError) as error:
        problem = error
    if not backend.agree(problem is not None):
        return _stop(backend, problem and str(problem))
    others = [i for i in range(len(function.results))
              if i not in state]
    history = {i: [] for i in others}
    times = []
    moved = 0  # by the steps only (the results' gathers count too)
    reused = set(state.values())

    def gathered(index):
        param = function.params[index]
        return param.assemble(list(backend.allgather(local[index])))

    for step in range(first, args.steps + 1):
        problem, inputs = None, None
        try:
            arrays = _steps.fed(feed, step, function, reused)
            blocks = dict(local)
            blocks.update({i: _local_block(function.params[i], a,
                                           backend.rank)
                           for i, a in arrays.items()})
            absent = [p.name for i, p in enumerate(function.params)
                      if i not in blocks]
            if absent:
                raise ValueError(
                    "step %d has no value for %s: not in %s, not given by "
                    "the feed, and no result reuses it" % (
                        step, ", ".join(absent), args.inputs))
            inputs = [blocks[i] for i in range(len(function.params))]
        except Exception as error:  # the user's feed: any error stops all
            problem = "step %d: %s: %s%s" % (step, type(error).__name__,
                                             error,
                                             _steps.where_raised(error))
        if not backend.agree(problem is not None):
            return _stop(backend, problem)
        # Each rank cuts its block from the global arrays its own call of
        # the feed gave: they must be the same arrays on every rank.
        every = backend.allgather(_steps.digests(arrays,
                                                 len(function.params)))
        differ = [i for i in range(every.shape[1])
                  if len(set(every[:, i])) > 1]
        if differ:
            return _stop(backend, (
                "step %d: the feed gave %s different values on different "
                "ranks; every rank calls it and cuts its own block from "
                "the global arrays, so it must give every rank the same "
                "arrays (seed its random generator by the step)" % (
                    step, ", ".join(repr(function.params[i].name)
                                    for i in differ)))
                if backend.rank == 0 else None)
        start = time.perf_counter()
        before = backend.lib.kina_mpi_bytes_moved()
        results, status = module._library.run_device(
            function.index, backend.device, inputs)
        moved += backend.lib.kina_mpi_bytes_moved() - before
        times.append(time.perf_counter() - start)
        if status != 0:
            return _stop(backend, "step %d: %s: %s (status %d on every rank)"
                         % (step, function.name,
                            kina._kina.describe_status(status), status)
                         if backend.rank == 0 else None)
        for result, param in state.items():
            local[param] = results[result]
        for i in others:
            history[i].append(function.results[i].assemble(
                list(backend.allgather(results[i]))))
        if args.checkpoint and (step == args.steps or
                                (args.every and step % args.every == 0)):
            arrays = {function.params[i].name: gathered(i) for i in reused}
            problem = None
            if backend.rank == 0:
                try:
                    _steps.save_checkpoint(args.checkpoint, function.name,
                                           step, arrays)
                except OSError as error:
                    problem = "step %d: the checkpoint: %s" % (step, error)
            if not backend.agree(problem is not None):
                return _stop(backend, problem)
    final = {function.params[i].name: gathered(i) for i in reused}
    ran = max(args.steps - first + 1, 1)
    moved = backend.allgather(np.array([moved], dtype=np.int64))
    if backend.rank == 0:
        outputs = dict(final)
        for i in others:
            outputs["result_%d" % i] = np.array(history[i])
        outputs.update(steps=np.int64(args.steps),
                       bytes_moved=np.int64(moved.sum() // ran),
                       seconds=np.median(times) if times else 0.0)
        np.savez(args.output, **outputs)
    backend.lib.kina_mpi_close()
    return 0


def _run(args, backend):
    if args.steps:
        return _run_steps(args, backend)
    rank = backend.rank
    prepared, problem = None, None
    try:
        prepared = _prepare(args, backend)
    except (OSError, ValueError, KeyError, kina.CompileError) as error:
        problem = error
    # Every rank learns whether one could not start: all stop together.
    if not backend.agree(problem is not None):
        if problem is not None:
            _say(rank, str(problem))
        backend.lib.kina_mpi_close()
        return 1
    module, function, local = prepared
    # A result that reuses a parameter's block overwrites it: every run
    # gets the inputs as read, untimed.
    entry = module._described["devices"][function.index]
    reused = {r.get("reuses") for r in entry["results"]}
    donated = [i for i, p in enumerate(function.params) if p.name in reused]
    times, computing = [], []
    moved_before = seconds_before = 0
    for run in range(args.warmup + args.repeat):
        if run == args.warmup:
            moved_before = backend.lib.kina_mpi_bytes_moved()
            seconds_before = backend.lib.kina_mpi_collective_seconds()
        inputs = [np.array(a) if i in donated else a
                  for i, a in enumerate(local)]
        start = time.perf_counter()
        waited = backend.lib.kina_mpi_collective_seconds()
        results, status = module._library.run_device(
            function.index, backend.device, inputs)
        elapsed = time.perf_counter() - start
        if run >= args.warmup:
            times.append(elapsed)
            computing.append(elapsed - (
                backend.lib.kina_mpi_collective_seconds() - waited))
        if status != 0:
            if rank == 0:
                _say(rank, "%s: %s (status %d on every rank)" % (
                    function.name, kina._kina.describe_status(status),
                    status))
            backend.lib.kina_mpi_close()
            return 1
    blocks = [backend.allgather(result) for result in results]
    moved = backend.allgather(np.array(
        [backend.lib.kina_mpi_bytes_moved() - moved_before], dtype=np.int64))
    seconds = backend.allgather(np.array(
        [backend.lib.kina_mpi_collective_seconds() - seconds_before]))
    compute = backend.allgather(np.array([np.median(computing)]))
    if rank == 0:
        outputs = {"bytes_moved": np.int64(moved.sum() // args.repeat),
                   "collective_seconds": seconds.sum() / args.repeat,
                   "seconds": np.median(times),
                   "compute_seconds": compute.ravel()}
        # One result: `result` and `local_<r>`; several: `result_<i>` and
        # `local_<r>_<i>`.
        several = len(function.results) > 1
        for i, (placed, gathered) in enumerate(zip(function.results, blocks)):
            suffix = "_%d" % i if several else ""
            outputs["result" + suffix] = placed.assemble(list(gathered))
            for r, block in enumerate(gathered):
                outputs["local_%d%s" % (r, suffix)] = block
        np.savez(args.output, **outputs)
    backend.lib.kina_mpi_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
