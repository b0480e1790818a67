"""Runs one pipelined training step (kina.pipelining) on MPI ranks, one
rank per pipeline rank, each running its own program.

    mpirun -n S python3 -m kina.mpi_pipeline PROGRAM.kina INPUTS.npz \\
        OUTPUT.npz --stages f0,f1,... --batch x,y [--constants mask] \\
        [--shared wte] \\
        --schedule 1f1b --microbatches M [--chunks V] [--replicas D] \\
        [--repeat K] [--warmup W]

INPUTS.npz holds every weight and batch array by name (the batch at the
whole step's size). Every rank compiles PROGRAM (with $KINA_CACHE_DIR set,
one compile serves all). Each transfer is an MPI_Issend, complete only
once its receive is matched: no schedule here relies on MPI buffering.
With --replicas D, mpirun starts S x D ranks: D copies of the pipeline
(world rank d S + s is stage rank s of copy d), each on its D-th of the
batch, whose gradients are summed on copy 0 in copy order.
OUTPUT.npz (rank 0) holds `loss`, `losses` (per microbatch, copy by
copy), `grad_<w>` for each weight, `bytes_moved` (summed over ranks),
`seconds` (the median of the --repeat steps after --warmup ones), and
per rank of copy 0 `trace_<r>` (rows of start, end seconds of its
actions, in its schedule's order).

A rank that fails says why on stderr and ends the whole job.
"""

import argparse
import ctypes
import sys
import time

import numpy as np

import kina
from . import pipelining as _pipelining
from .files import atomic_writer
from .mpi import _Backend, run_or_abort

# The shared weights' and the replicas' gradients and the results to rank
# 0 use tags above every step's transfer tags.
_SHARED_TAG_BASE = 1 << 12
_REDUCE_TAG_BASE = 1 << 13
_RESULT_TAG_BASE = 1 << 14


class _MpiTransfers:
    """kina.pipelining's transfers over MPI (lib/MPI/KinaMPI.c)."""

    def __init__(self, backend, pipeline, offset):
        self.lib = backend.lib
        self.pipeline = pipeline
        self.offset = offset  # the world rank of this replica's rank 0
        self.handles = {}  # message -> (handle, buffer)

    def _check(self, handle, what):
        if handle < 0:
            raise RuntimeError("could not start %s" % what)
        return handle

    def post(self, message, buffer):
        _, source, _ = message
        handle = self.lib.kina_mpi_post_receive(
            buffer.ctypes.data, buffer.nbytes, self.offset + source,
            self.pipeline.message_tag(message))
        self.handles[message] = (self._check(handle, "a receive"), buffer)

    def send_all(self, messages, describe):
        started = []
        for message, array in messages:
            array = np.ascontiguousarray(array)
            handle = self.lib.kina_mpi_post_send(
                array.ctypes.data, array.nbytes, self.offset + message[2],
                self.pipeline.message_tag(message))
            started.append((self._check(handle, "to send " +
                                        describe(message)), array, message))
        for handle, _, message in started:
            if self.lib.kina_mpi_wait(handle) != 0:
                raise RuntimeError("sending %s failed" % describe(message))

    def receive(self, message, describe):
        handle, buffer = self.handles.pop(message)
        if self.lib.kina_mpi_wait(handle) != 0:
            raise RuntimeError("receiving %s failed" % describe(message))
        return buffer


def _bind(lib):
    lib.kina_mpi_post_receive.restype = ctypes.c_int64
    lib.kina_mpi_post_receive.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                          ctypes.c_int32, ctypes.c_int32]
    lib.kina_mpi_post_send.restype = ctypes.c_int64
    lib.kina_mpi_post_send.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                       ctypes.c_int32, ctypes.c_int32]
    lib.kina_mpi_wait.restype = ctypes.c_int32
    lib.kina_mpi_wait.argtypes = [ctypes.c_int64]


def _to_rank_zero(backend, rank, arrays, layouts):
    """Rank 0 gets each rank's arrays (in `layouts` order per rank:
    (owner rank, shape, dtype)); returns them there, [] elsewhere."""
    lib, out, handles = backend.lib, [], []
    for i, (owner, shape, dtype) in enumerate(layouts):
        if owner == 0 or (rank != 0 and rank != owner):
            continue
        if rank == 0:
            buffer = np.empty(shape, dtype=dtype)
            handles.append((lib.kina_mpi_post_receive(
                buffer.ctypes.data, buffer.nbytes, owner,
                _RESULT_TAG_BASE + i), buffer))
        else:
            array = np.ascontiguousarray(arrays[i])
            handles.append((lib.kina_mpi_post_send(
                array.ctypes.data, array.nbytes, 0, _RESULT_TAG_BASE + i),
                array))
    for handle, buffer in handles:
        if handle < 0 or lib.kina_mpi_wait(handle) != 0:
            raise RuntimeError("gathering the results on rank 0 failed")
    received = iter(buffer for _, buffer in handles)
    return [arrays[i] if owner == 0 else next(received)
            for i, (owner, _, _) in enumerate(layouts)] if rank == 0 else []


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m kina.mpi_pipeline",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("program")
    parser.add_argument("inputs")
    parser.add_argument("output")
    parser.add_argument("--stages", required=True,
                        help="the stage functions, comma-separated")
    parser.add_argument("--batch", required=True,
                        help="the batch parameters, comma-separated")
    parser.add_argument("--constants", default="",
                        help="parameters every stage gets whole, with no "
                        "gradient (a mask), comma-separated")
    parser.add_argument("--shared", default="",
                        help="weights several stages read (a tied "
                        "embedding), comma-separated")
    parser.add_argument("--schedule", default="1f1b",
                        help="gpipe, 1f1b, interleaved or zb-h1")
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--chunks", type=int, default=0)
    parser.add_argument("--replicas", type=int, default=1,
                        help="data-parallel copies of the pipeline: "
                        "mpirun starts stages x replicas ranks")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0,
                        help="steps before the measured ones, not measured")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0:
        parser.error("--repeat must be >= 1 and --warmup >= 0")
    backend = _Backend(1)
    _bind(backend.lib)
    return run_or_abort(backend, _run, args)


def _sum_over_stages(backend, pipe, outcome, replica, rank):
    """The gradients of the weights whose owner stage runs on this rank,
    each summed over the stages that read it in stage order (a shared
    weight's other stages send their sums to its owner's rank)."""
    lib, S = backend.lib, pipe.schedule.stages
    offset = replica * S
    parts, handles = {}, []

    def tag(name, stage):  # only shared weights move
        return _SHARED_TAG_BASE + pipe.shared.index(name) * \
            len(pipe._stages) + stage.index

    for name in pipe.weights:
        owner = pipe.owner(name).index % S
        for stage in pipe._stages:
            if name not in stage.weights:
                continue
            here = stage.index % S
            key = (stage.index, name)
            if here == rank == owner:
                parts.setdefault(name, []).append(outcome.stage_gradients[key])
            elif here == rank:  # to the owner
                array = np.ascontiguousarray(outcome.stage_gradients[key])
                handles.append((lib.kina_mpi_post_send(
                    array.ctypes.data, array.nbytes, offset + owner,
                    tag(name, stage)), array))
            elif owner == rank:  # from another stage's rank
                buffer = np.empty_like(
                    outcome.stage_gradients[(pipe.owner(name).index, name)])
                handles.append((lib.kina_mpi_post_receive(
                    buffer.ctypes.data, buffer.nbytes, offset + here,
                    tag(name, stage)), buffer))
                parts.setdefault(name, []).append(buffer)
    for handle, _ in handles:
        if handle < 0 or lib.kina_mpi_wait(handle) != 0:
            raise RuntimeError("summing a shared weight's gradients failed")
    return {name: _pipelining.sum_in_order(g) for name, g in parts.items()}


def _reduce_over_replicas(backend, pipe, gradients, replica, rank):
    """Replica 0's rank `rank` gets its stages' gradients summed over the
    replicas in replica order (the simulator's order); the other replicas
    send theirs to it. Returns the sums there, {} elsewhere."""
    lib, S = backend.lib, pipe.schedule.stages
    names = sorted(gradients)
    handles = []
    for i, name in enumerate(names):
        if replica > 0:
            array = np.ascontiguousarray(gradients[name])
            handles.append((lib.kina_mpi_post_send(
                array.ctypes.data, array.nbytes, rank,
                _REDUCE_TAG_BASE + i), array))
            continue
        for d in range(1, pipe.replicas):
            buffer = np.empty_like(gradients[name])
            handles.append((lib.kina_mpi_post_receive(
                buffer.ctypes.data, buffer.nbytes, d * S + rank,
                _REDUCE_TAG_BASE + i), buffer))
    for handle, _ in handles:
        if handle < 0 or lib.kina_mpi_wait(handle) != 0:
            raise RuntimeError("summing the replicas' gradients failed")
    if replica > 0:
        return {}
    received = iter(buffer for _, buffer in handles)
    return {name: _pipelining.sum_in_order(
        [gradients[name]] + [next(received)
                             for _ in range(1, pipe.replicas)])
        for name in names}


def _run(args, backend):
    with open(args.program) as f:
        source = f.read()
    pipe = _pipelining.Pipeline(
        source, args.stages.split(","), args.batch.split(","),
        constants=[c for c in args.constants.split(",") if c],
        shared=[w for w in args.shared.split(",") if w],
        schedule=args.schedule, microbatches=args.microbatches,
        chunks=args.chunks, filename=args.program, replicas=args.replicas)
    s, R = pipe.schedule, pipe.replicas
    if pipe.placed:
        raise ValueError("stages placed on the mesh (%s: pipeline x tensor "
                         "parallel) run on the simulator's threads "
                         "(kina.pipelining.Pipeline.step); these ranks run "
                         "host stages" % ", ".join(pipe.placed))
    if backend.size != s.stages * R:
        raise ValueError("the %s schedule has %d ranks%s, but mpirun started "
                         "%d" % (s.kind, s.stages * R,
                                 " (%d stages x %d replicas)" % (s.stages, R)
                                 if R > 1 else "", backend.size))
    replica, rank = divmod(backend.rank, s.stages)
    with np.load(args.inputs) as data:
        arrays = {name: data[name] for name in data.files}
    pipe.check_weights(arrays, ranks={rank})
    batch = pipe.split_batch(arrays)[replica]
    transfers = _MpiTransfers(backend, pipe, replica * s.stages)
    seconds = []
    for round in range(args.warmup + args.repeat):
        if round == args.warmup:
            backend.lib.kina_mpi_reset_counters()
        outcome = _pipelining._Outcome(s)
        backend.agree(False)  # every rank starts the step together
        start = time.perf_counter()
        pipe.run_rank(rank, arrays, batch, transfers, outcome, start)
        sums = _reduce_over_replicas(
            backend, pipe, _sum_over_stages(backend, pipe, outcome, replica,
                                            rank), replica, rank)
        seconds.append(time.perf_counter() - start)
    seconds = seconds[args.warmup:]
    M = s.microbatches * R
    gradients = {w: _pipelining.mean_gradient(g, M) for w, g in sums.items()}
    trace = outcome.clock()

    # Rank 0 gathers every rank's share: each replica's losses (its last
    # stage's rank), each gradient (its stage's rank in replica 0), the
    # ranks' traces in replica 0.
    last = (s.stages * s.chunks - 1) % s.stages
    weights = [(w, pipe.owner(w).index % s.stages,
                next(p for p in pipe.owner(w).params if p.name == w))
               for w in pipe.weights]
    layouts = [(d * s.stages + last, (s.microbatches,), np.float64)
               for d in range(R)]
    layouts += [(owner, tuple(p.shape), _pipelining.gradient_dtype(p))
                for _, owner, p in weights]
    layouts += [(r, (len(s.ranks[r]), 2), np.float64) for r in range(s.stages)]
    mine = [np.array(outcome.losses if backend.rank == d * s.stages + last
                     else [0.0] * s.microbatches, dtype=np.float64)
            for d in range(R)]
    mine += [gradients.get(w, np.zeros(p.shape,
                                       _pipelining.gradient_dtype(p)))
             for w, _, p in weights]
    mine += [np.array([(a, b) for _, a, b in trace.ranks[r]]
                      if r == backend.rank else np.zeros((len(s.ranks[r]), 2)),
                      dtype=np.float64) for r in range(s.stages)]
    moved = backend.allgather(np.int64(
        backend.lib.kina_mpi_bytes_moved())).sum() // args.repeat
    gathered = _to_rank_zero(backend, backend.rank, mine, layouts)
    if backend.rank == 0:
        losses = np.concatenate(gathered[:R])
        out = {"loss": _pipelining.mean_loss(losses),
               "losses": losses, "bytes_moved": np.int64(moved),
               "seconds": np.float64(np.median(seconds))}
        for (w, _, _), g in zip(weights, gathered[R:R + len(weights)]):
            out["grad_" + w] = g
        for r, t in enumerate(gathered[R + len(weights):]):
            out["trace_%d" % r] = t
        with atomic_writer(args.output) as f:
            np.savez(f, **out)
    backend.lib.kina_mpi_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
