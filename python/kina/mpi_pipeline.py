"""Runs one pipelined training step (kina.pipelining) on MPI ranks, one
rank per pipeline rank, each running its own program.

    mpirun -n S python3 -m kina.mpi_pipeline PROGRAM.kina INPUTS.npz \\
        OUTPUT.npz (--pipeline NAME | --stages f0,f1,... --batch x,y \\
        [--constants mask] [--shared wte]) \\
        --schedule 1f1b --microbatches M [--chunks V] [--replicas D] \\
        [--repeat K] [--warmup W]

--pipeline names a `fn NAME = pipeline(f0, f1, ..., batch=[...])` of the
program, which gives the stages and the parameters' roles.

INPUTS.npz holds every weight and batch array by name (the batch at the
whole step's size). Every rank compiles PROGRAM (with $KINA_CACHE_DIR set,
one compile serves all). Each transfer is an MPI_Issend, complete only
once its receive is matched: no schedule here relies on MPI buffering.
With --replicas D, mpirun starts S x D ranks: D copies of the pipeline
(world rank d S + s is stage rank s of copy d), each on its D-th of the
batch, whose gradients are summed on copy 0 in copy order. With stages
placed on a mesh of T devices (pipeline x tensor parallel), mpirun starts
S x D x T ranks: world rank (d S + s) T + t is device t of that stage
rank, its collectives within its group of T.
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


class _Lane:
    """Transfers among the ranks of one lane: device t of every pipeline
    rank's group (T devices a group when stages are placed on the mesh,
    else 1). Pipeline rank p (copy d's stage rank s: p = d S + s) of lane
    t is world rank p T + t."""

    def __init__(self, lib, devices, lane):
        self.lib, self.devices, self.lane = lib, devices, lane

    def world(self, p):
        return p * self.devices + self.lane

    def send(self, array, p, tag):
        """Starts sending `array` to pipeline rank p: (handle, array)."""
        array = np.ascontiguousarray(array)
        return (self.lib.kina_mpi_post_send(array.ctypes.data, array.nbytes,
                                            self.world(p), tag), array)

    def receive(self, buffer, p, tag):
        """Starts receiving into `buffer` from pipeline rank p."""
        return (self.lib.kina_mpi_post_receive(
            buffer.ctypes.data, buffer.nbytes, self.world(p), tag), buffer)

    def wait(self, handle):
        return handle >= 0 and self.lib.kina_mpi_wait(handle) == 0

    def wait_all(self, started, what):
        """Waits for every (handle, array) of `started`."""
        for handle, _ in started:
            if not self.wait(handle):
                raise RuntimeError("%s failed" % what)


class _MpiTransfers:
    """kina.pipelining's transfers over MPI (lib/MPI/KinaMPI.c)."""

    def __init__(self, lane, pipeline, offset):
        self.lane = lane
        self.pipeline = pipeline
        self.offset = offset  # the pipeline rank of this replica's rank 0
        self.handles = {}  # message -> (handle, buffer)

    def post(self, message, buffer):
        _, source, _ = message
        handle, _ = self.lane.receive(buffer, self.offset + source,
                                      self.pipeline.message_tag(message))
        if handle < 0:
            raise RuntimeError("could not start a receive")
        self.handles[message] = (handle, buffer)

    def send_all(self, messages, describe):
        started = []
        for message, array in messages:
            handle, array = self.lane.send(
                array, self.offset + message[2],
                self.pipeline.message_tag(message))
            if handle < 0:
                raise RuntimeError("could not start to send " +
                                   describe(message))
            started.append((handle, array, message))
        for handle, _, message in started:
            if not self.lane.wait(handle):
                raise RuntimeError("sending %s failed" % describe(message))

    def receive(self, message, describe):
        handle, buffer = self.handles.pop(message)
        if not self.lane.wait(handle):
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
    lib.kina_mpi_split_mesh.restype = ctypes.c_int32
    lib.kina_mpi_split_mesh.argtypes = [ctypes.c_int32]


def _to_rank_zero(lane, rank, arrays, layouts):
    """Pipeline rank 0 of the lane gets each rank's arrays (in `layouts`
    order per rank: (owner rank, shape, dtype)); returns them there, []
    elsewhere."""
    started = []
    for i, (owner, shape, dtype) in enumerate(layouts):
        if owner == 0 or (rank != 0 and rank != owner):
            continue
        started.append(lane.receive(np.empty(shape, dtype=dtype), owner,
                                    _RESULT_TAG_BASE + i) if rank == 0
                       else lane.send(arrays[i], 0, _RESULT_TAG_BASE + i))
    lane.wait_all(started, "gathering the results on rank 0")
    received = iter(buffer for _, buffer in started)
    return [arrays[i] if owner == 0 else next(received)
            for i, (owner, _, _) in enumerate(layouts)] if rank == 0 else []


def _device_runner(backend, module):
    """Runs a function placed on the mesh as this rank's device of its
    group, on its blocks (Pipeline.run_on_device)."""
    def run(name, args):
        function = module.per_device[name]
        results, status = module._library.run_device(
            function.index, backend.device,
            [np.ascontiguousarray(a) for a in args])
        if status != 0:
            raise RuntimeError("%s: %s (status %d)" % (
                name, kina._kina.describe_status(status), status))
        return results[0] if len(results) == 1 else tuple(results)
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m kina.mpi_pipeline",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("program")
    parser.add_argument("inputs")
    parser.add_argument("output")
    parser.add_argument("--pipeline",
                        help="a `fn NAME = pipeline(...)` of the program: "
                        "its stages and roles (instead of --stages, "
                        "--batch, --constants and --shared)")
    parser.add_argument("--stages",
                        help="the stage functions, comma-separated")
    parser.add_argument("--batch",
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
    if bool(args.pipeline) == bool(args.stages or args.batch):
        parser.error("give --pipeline NAME, or --stages and --batch")
    if not args.pipeline and not (args.stages and args.batch):
        parser.error("--stages and --batch go together")
    if args.pipeline and (args.constants or args.shared):
        parser.error("--pipeline %s declares its constants and shared "
                     "weights" % args.pipeline)
    backend = _Backend(1)
    _bind(backend.lib)
    return run_or_abort(backend, _run, args, "kina.mpi_pipeline")


def _sum_over_stages(lane, pipe, outcome, replica, rank):
    """The gradients of the weights whose owner stage runs on this rank,
    each summed over the stages that read it in stage order (a shared
    weight's other stages send their sums to its owner's rank)."""
    S = pipe.schedule.stages
    offset = replica * S
    parts, started = {}, []

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
                started.append(lane.send(outcome.stage_gradients[key],
                                         offset + owner, tag(name, stage)))
            elif owner == rank:  # from another stage's rank
                started.append(lane.receive(np.empty_like(
                    outcome.stage_gradients[(pipe.owner(name).index, name)]),
                    offset + here, tag(name, stage)))
                parts.setdefault(name, []).append(started[-1][1])
    lane.wait_all(started, "summing a shared weight's gradients")
    return {name: _pipelining.sum_in_order(g) for name, g in parts.items()}


def _reduce_over_replicas(lane, pipe, gradients, replica, rank):
    """Replica 0's rank `rank` gets its stages' gradients summed over the
    replicas in replica order (the simulator's order); the other replicas
    send theirs to it. Returns the sums there, {} elsewhere."""
    S = pipe.schedule.stages
    names = sorted(gradients)
    started = []
    for i, name in enumerate(names):
        if replica > 0:
            started.append(lane.send(gradients[name], rank,
                                     _REDUCE_TAG_BASE + i))
            continue
        for d in range(1, pipe.replicas):
            started.append(lane.receive(np.empty_like(gradients[name]),
                                        d * S + rank, _REDUCE_TAG_BASE + i))
    lane.wait_all(started, "summing the replicas' gradients")
    if replica > 0:
        return {}
    received = iter(buffer for _, buffer in started)
    return {name: _pipelining.sum_in_order(
        [gradients[name]] + [next(received)
                             for _ in range(1, pipe.replicas)])
        for name in names}


def _assemble_lanes(backend, pipe, lane, gradients):
    """World rank 0 gets each weight's gradient whole: the blocks the
    lanes' rank 0 hold (world ranks 0 .. T-1), assembled by the owner
    stage's placement. Returns them there, {} elsewhere."""
    T = pipe.tensor
    if T == 1:
        return gradients
    started = []
    for i, w in enumerate(pipe.weights):
        if lane.lane > 0:
            started.append((backend.lib.kina_mpi_post_send(
                gradients[w].ctypes.data, gradients[w].nbytes, 0,
                _RESULT_TAG_BASE + i), gradients[w]))
            continue
        for t in range(1, T):
            buffer = np.empty_like(gradients[w])
            started.append((backend.lib.kina_mpi_post_receive(
                buffer.ctypes.data, buffer.nbytes, t, _RESULT_TAG_BASE + i),
                buffer))
    lane.wait_all(started, "gathering the devices' gradient blocks")
    if lane.lane > 0:
        return {}
    received = iter(buffer for _, buffer in started)
    return {w: pipe.placement(w).assemble(
        [gradients[w]] + [next(received) for _ in range(1, T)])
        for w in pipe.weights}


def _run(args, backend):
    with open(args.program) as f:
        source = f.read()
    roles = {} if args.pipeline else dict(
        batch=args.batch.split(","),
        constants=[c for c in args.constants.split(",") if c],
        shared=[w for w in args.shared.split(",") if w])
    pipe = _pipelining.Pipeline(
        source, args.pipeline or args.stages.split(","), **roles,
        schedule=args.schedule, microbatches=args.microbatches,
        chunks=args.chunks, filename=args.program, replicas=args.replicas)
    s, R, T = pipe.schedule, pipe.replicas, pipe.tensor
    if backend.size != s.stages * R * T:
        groups = [("stages", s.stages)] + \
            ([("replicas", R)] if R > 1 else []) + \
            ([("devices a stage on the mesh", T)] if pipe.placed else [])
        raise ValueError("the %s schedule has %d ranks%s, but mpirun started "
                         "%d" % (s.kind, s.stages * R * T,
                                 " (%s)" % " x ".join("%d %s" % (n, what)
                                                      for what, n in groups)
                                 if len(groups) > 1 else "", backend.size))
    if pipe.placed and backend.lib.kina_mpi_split_mesh(T) != 0:
        raise RuntimeError("could not split the ranks into groups of %d" % T)
    p, t = divmod(backend.rank, T)
    replica, rank = divmod(p, s.stages)
    lane = _Lane(backend.lib, T, t)
    with np.load(args.inputs) as data:
        arrays = {name: data[name] for name in data.files}
    pipe.check_weights(arrays, ranks={rank})
    batch = pipe.split_batch(arrays)[replica]
    if pipe.placed:  # this device's blocks
        arrays = {name: pipe.block(name, a, t) for name, a in arrays.items()}
        batch = {name: [pipe.block(name, a, t) for a in parts]
                 for name, parts in batch.items()}
        pipe.run_on_device = _device_runner(backend, pipe.module)
    transfers = _MpiTransfers(lane, pipe, replica * s.stages)
    seconds = []
    for round in range(args.warmup + args.repeat):
        if round == args.warmup:
            backend.lib.kina_mpi_reset_counters()
        outcome = _pipelining._Outcome(s)
        backend.agree(False)  # every rank starts the step together
        start = time.perf_counter()
        pipe.run_rank(rank, arrays, batch, transfers, outcome, start)
        sums = _reduce_over_replicas(
            lane, pipe, _sum_over_stages(lane, pipe, outcome, replica,
                                         rank), replica, rank)
        seconds.append(time.perf_counter() - start)
    seconds = seconds[args.warmup:]
    M = s.microbatches * R
    gradients = {w: _pipelining.mean_gradient(g, M) for w, g in sums.items()}
    trace = outcome.clock()

    # Each lane's rank 0 gathers its lane's share: each replica's losses
    # (its last stage's rank), each gradient (its stage's rank in replica
    # 0), the ranks' traces in replica 0; world rank 0 then assembles the
    # lanes' gradient blocks.
    last = (s.stages * s.chunks - 1) % s.stages
    weights = [(w, pipe.owner(w).index % s.stages, pipe.block_shape(w),
                _pipelining.gradient_dtype(next(
                    q for q in pipe.owner(w).params if q.name == w)))
               for w in pipe.weights]
    layouts = [(d * s.stages + last, (s.microbatches,), np.float64)
               for d in range(R)]
    layouts += [(owner, shape, dtype) for _, owner, shape, dtype in weights]
    layouts += [(r, (len(s.ranks[r]), 2), np.float64) for r in range(s.stages)]
    mine = [np.array(outcome.losses if p == d * s.stages + last
                     else [0.0] * s.microbatches, dtype=np.float64)
            for d in range(R)]
    mine += [gradients.get(w, np.zeros(shape, dtype))
             for w, _, shape, dtype in weights]
    mine += [np.array([(a, b) for _, a, b in trace.ranks[r]]
                      if r == p else np.zeros((len(s.ranks[r]), 2)),
                      dtype=np.float64) for r in range(s.stages)]
    moved = backend.allgather(np.int64(
        backend.lib.kina_mpi_bytes_moved())).sum() // args.repeat
    gathered = _to_rank_zero(lane, p, mine, layouts)
    whole = _assemble_lanes(backend, pipe, lane, dict(zip(
        pipe.weights, gathered[R:R + len(weights)]))) if p == 0 else {}
    if backend.rank == 0:
        losses = np.concatenate(gathered[:R])
        out = {"loss": _pipelining.mean_loss(losses),
               "losses": losses, "bytes_moved": np.int64(moved),
               "seconds": np.float64(np.median(seconds))}
        for w in pipe.weights:
            out["grad_" + w] = whole[w]
        for r, t in enumerate(gathered[R + len(weights):]):
            out["trace_%d" % r] = t
        with atomic_writer(args.output) as f:
            np.savez(f, **out)
    backend.lib.kina_mpi_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
