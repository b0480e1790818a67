"""A training step split into pipeline stages, run by a schedule.

    pipe = kina.pipelining.Pipeline(source, stages=["embed", "block", "head"],
                                    batch=["tokens", "targets"],
                                    schedule="1f1b", microbatches=8)
    result = pipe.step(weights, batch)      # one rank per stage, threads
    result.loss, result.gradients           # mean over microbatches
    result.trace.gantt("1f1b.png")          # what each rank did, in seconds
    print(pipe.ir("pipeline"))              # per rank, its calls and transfers

Each stage is a function of the program, run on its own rank (with
interleaving, rank r runs stages r, r + S, ...: its chunks). Stage k > 0
takes stage k-1's result as its first parameter; the last stage returns
the microbatch's rank-0 loss. Parameters named in `batch` are cut into
`microbatches` equal slices along their first dimension (the functions
are written at a microbatch's size); those named in `constants` are
given whole to every stage that takes them, and get no gradient (a causal
mask); every other parameter is a weight of its stage (named once in the
whole pipeline). `step` takes the weights and constants in one mapping.
The backward of each stage
is the language's reverseMode of it, added to the program by this module:
split (`split=true`) so that an F keeps what its backward reads, and for
a schedule that runs B and W apart split again (`inputs=[...]`), B
handing W what it reads; or, with `recompute=True`, recomputing the
forward inside each backward (the schedule's model counts it). The
step's gradient of each weight is the sum over microbatches, in
microbatch order, times 1/M: the mean loss's gradient.

Each rank runs the program `kina.pipeline` lowers its schedule to (post
receives, send, wait, compute), every send waiting for its receive, so a
schedule that passes `Schedule.check_deadlock` runs here as on MPI.

Pipeline x tensor parallel: in a program with `@mesh([T], axes=[tp])`,
stage functions placed on the mesh (Megatron's column- and row-parallel
weights, activations replicated) run each of their actions as an SPMD
call on their rank's T devices (`m.simulate`: a thread per device, the
collectives among them); a rank is then a group of T devices, and each
device sends its block of an activation or cotangent to its counterpart
in the neighbouring group. Their backward recomputes the forward
(`split=true` is for host functions).
"""

import re
import threading
import time

import numpy as np

from . import pipeline as _pipeline
from .bfloat16 import from_bf16
from .models import adamw
from .pipeline import ScheduleError
from .tracing import ELEMENT_TYPES

# The signature's element type names ("f32", "bf16": its 16-bit words).
_NUMPY_DTYPES = {name.lower(): dtype for dtype, name in ELEMENT_TYPES.items()}

# The names of the functions this module adds: a stage's whole backward,
# its input gradient and its weight gradient.
_BACKWARD = "kina_pipeline_backward_%d"
_INPUT_GRADIENT = "kina_pipeline_input_gradient_%d"
_WEIGHT_GRADIENT = "kina_pipeline_weight_gradient_%d"
_ADAMW = "kina_pipeline_adamw_%d"
OPTIMIZERS = ("adamw",)

# How long a rank waits for a transfer before the step fails.
DEFAULT_TIMEOUT_SECONDS = 60.0


class PipelineError(RuntimeError):
    """A pipeline that cannot be built or a step that failed: the message
    names the stage, the rank and the action."""


def gradient_dtype(param):
    """The dtype a weight's gradient accumulates in: its own, but F32 for
    BF16 (whose gradients are 16-bit words)."""
    return np.float32 if param.dtype == "bf16" else _NUMPY_DTYPES[param.dtype]


def mean_gradient(total, microbatches):
    """A weight's gradient of the mean loss from its sum over microbatches."""
    return total * total.dtype.type(1.0 / microbatches)


def mean_loss(losses):
    """The step's loss: the microbatches' losses summed in float64 in
    microbatch order, over M."""
    total = np.float64(0)
    for loss in losses:
        total += np.float64(loss)
    return total / len(losses)


# The name under which a listed pipeline's stages are checked as the
# language's declaration.
_LISTED = "kina_pipeline_stages"


def _declaration(name, stages, batch, constants, shared):
    """`fn NAME = pipeline(...)` as source writes it."""
    options = "".join(", %s=[%s]" % (word, ", ".join(names))
                      for word, names in (("batch", batch),
                                          ("constants", constants),
                                          ("shared", shared)) if names)
    return "fn %s = pipeline(%s%s)" % (name, ", ".join(stages), options)


def declared_pipeline(source, filename, name, checked=None):
    """`fn NAME = pipeline(...)` of `source`, as the kina.pipeline op the
    frontend checked (`checked`: kina.check's text of it, if at hand):
    (stage names, batch, constants, shared)."""
    import kina
    declared = {}
    for match in re.finditer(
            r'kina\.pipeline @(\w+) stages \[(.*?)\] batch \[(.*?)\] '
            r'constants \[(.*?)\] shared \[(.*?)\]',
            checked or kina.check(source, filename)):
        stages, *roles = match.groups()[1:]
        declared[match.group(1)] = (re.findall(r"@(\w+)", stages),
                                    *[re.findall(r'"(\w+)"', r)
                                      for r in roles])
    if name not in declared:
        raise PipelineError("no pipeline %r in the program (%s)" % (
            name, "it declares: " + ", ".join(declared) if declared
            else "it declares none: fn NAME = pipeline(f0, f1, ..., "
            "batch=[...])"))
    return declared[name]


class _Stage:
    """One virtual stage: its function, its parameters' roles; `bind`
    adds their types once the program is compiled."""

    def __init__(self, index, name, param_names, batch, constants, last,
                 types):
        self.index, self.name, self.last = index, name, last
        self.types = types  # parameter name -> its type as source writes it
        self.activation = param_names[0] if index > 0 and param_names \
            else None
        self.weights = [p for p in param_names
                        if p != self.activation and p not in batch
                        and p not in constants]
        self.batch = [p for p in param_names if p in batch]
        # Placed on the program's mesh: its actions run on T devices.
        self.placed = any(not text.endswith("@host]")
                          for text, _ in types.values())
        self.params, self.result = None, None

    def bind(self, signature):
        self.params, self.result = signature.params, signature.result

    def arguments(self, weights, batch, microbatch, activation):
        """The stage's arguments for one microbatch, in its order."""
        out = []
        for p in self.params:
            if p.name == self.activation:
                out.append(activation)
            elif p.name in self.batch:
                out.append(batch[p.name][microbatch])
            else:  # a weight or a constant
                out.append(weights[p.name])
        return out


def _gradient_source(stage, split, keep):
    """The reverseMode definitions of a stage's backward. `keep`: split
    into its forward, which returns what the backward reads, and its
    backward, which takes that; for a schedule that runs B and W apart
    (`split`) with both an input and weights, the backward split again
    into the input gradient and the weight gradient. Without `keep`, one
    recomputing backward, and for `split` an input gradient and a weight
    gradient each recomputing the forward."""
    lines = []
    def define(name, wrt, option=""):
        lines.append("fn %s = reverseMode(%s, wrt=[%s]%s)" % (
            name % stage.index, stage.name, ", ".join(wrt), option))
    inputs = [stage.activation] if stage.activation else []
    if not stage.weights and not inputs:
        return ""
    if keep:
        define(_BACKWARD, stage.weights + inputs, ", split=true" + (
            ", inputs=[%s]" % inputs[0]
            if split and inputs and stage.weights else ""))
        return "\n".join(lines)
    define(_BACKWARD, stage.weights + inputs)
    if split and inputs:
        define(_INPUT_GRADIENT, inputs)
    if split and stage.weights:
        define(_WEIGHT_GRADIENT, stage.weights)
    return "\n".join(lines)


def _source_type(ir_type):
    """`4x8xf32, @host` (a kina.tensor's body) as source writes it,
    `Tensor[F32, [4, 8], @host]`, and its rank."""
    shape_and_type, placement = [part.strip()
                                 for part in ir_type.split(",", 1)]
    *dims, element = shape_and_type.split("x")
    return "Tensor[%s, [%s], %s]" % (element.upper(), ", ".join(dims),
                                     placement), len(dims)


def _adamw_source(stage, owned):
    """`kina_pipeline_adamw_K`: one AdamW step (PyTorch's: decoupled
    weight decay, on weights of rank 2 or more) of the stage's `owned`
    weights from their mean gradients, each weight and moment written
    back into its own array (@reuses)."""
    w = owned
    scalar = "Tensor[F32, [], %s]" % ("@replicated" if stage.placed
                                      else "@host")
    typed = {n: stage.types[n][0] for n in w}
    params = ["%s%s: %s" % (prefix, n, typed[n])
              for prefix in ("", "d_", "m_", "v_") for n in w]
    params += ["%s: %s" % (n, scalar) for n in adamw.SCALARS]
    results = ["%s @reuses(%s%s)" % (typed[n], prefix, n)
               for prefix in ("", "m_", "v_") for n in w]
    lines = ["fn %s(%s) -> (%s) {" % (_ADAMW % stage.index,
                                      ", ".join(params), ", ".join(results)),
             *adamw.scalar_lines()]
    for n in w:
        lines += adamw.update_lines(n, "m_" + n, "v_" + n, "d_" + n,
                                    ("mn_" + n, "vn_" + n, "wn_" + n),
                                    decayed=stage.types[n][1] >= 2)
    lines += ["  return %s" % ", ".join(
        ["wn_" + n for n in w] + ["mn_" + n for n in w] +
        ["vn_" + n for n in w]), "}"]
    return "\n".join(lines)


class _Transfers:
    """Messages between the ranks' threads. A send completes once its
    receiver has posted the receive (as MPI may do for a large message);
    a failure anywhere wakes every rank."""

    def __init__(self, timeout, weigh=lambda message, array: array.nbytes):
        self.timeout, self.weigh = timeout, weigh
        self.condition = threading.Condition()
        self.posted = set()   # receives posted, not yet delivered
        self.arrived = {}     # message -> its array
        self.failure = None
        self.bytes_moved = 0

    def fail(self, why):
        with self.condition:
            if self.failure is None:
                self.failure = why
            self.condition.notify_all()

    def _wait(self, ready, what):
        deadline = time.monotonic() + self.timeout
        while not ready():
            if self.failure is not None:
                raise _Abandoned()
            left = deadline - time.monotonic()
            if left <= 0:
                raise PipelineError("waited %g s %s" % (self.timeout, what))
            self.condition.wait(left)

    def post(self, message, buffer=None):
        with self.condition:
            self.posted.add(message)
            self.condition.notify_all()

    def send_all(self, messages, describe):
        """Sends each (message, array) pair; returns once all are taken."""
        with self.condition:
            for message, array in messages:
                self._wait(lambda: message in self.posted,
                           "to send %s" % describe(message))
                self.posted.discard(message)
                self.arrived[message] = array
                self.bytes_moved += self.weigh(message, array)
            self.condition.notify_all()

    def receive(self, message, describe):
        with self.condition:
            self._wait(lambda: message in self.arrived,
                       "to receive %s" % describe(message))
            return self.arrived.pop(message)


class _ReplicaTransfers:
    """One replica's view of the transfers: its messages keyed apart from
    the other replicas' (the same pipeline ranks, other threads)."""

    def __init__(self, transfers, replica):
        self.transfers, self.replica = transfers, replica

    def post(self, message, buffer=None):
        self.transfers.post((self.replica, message), buffer)

    def send_all(self, messages, describe):
        self.transfers.send_all([((self.replica, m), a) for m, a in messages],
                                lambda keyed: describe(keyed[1]))

    def receive(self, message, describe):
        return self.transfers.receive((self.replica, message),
                                      lambda keyed: describe(keyed[1]))


class _Abandoned(Exception):
    """Another rank failed: this one stops without an error of its own."""


class StepResult:
    """One step: the mean loss over microbatches, each weight's gradient,
    each microbatch's loss, the wall-clock trace per rank (a
    kina.pipeline.Clock in seconds) and the bytes sent between ranks."""

    def __init__(self, loss, gradients, losses, trace, bytes_moved=0):
        self.loss, self.gradients = loss, gradients
        self.losses, self.trace = losses, trace
        self.bytes_moved = bytes_moved


class Pipeline:
    """A program's functions as the stages of a pipeline, compiled once
    with their backward; `step` runs one training step."""

    def __init__(self, source, stages, batch=None, constants=(),
                 schedule="1f1b", microbatches=4, chunks=0,
                 filename="<pipeline>", num_threads=1,
                 timeout=DEFAULT_TIMEOUT_SECONDS, cache_dir=None,
                 optimizer=None, recompute=None, replicas=1, shared=()):
        import kina
        checked = None  # kina.check's text of a declared pipeline's source
        if isinstance(stages, str):  # a `fn P = pipeline(...)` of the source
            if batch is not None or constants or shared:
                raise PipelineError(
                    "pipeline %r declares its batch, constants and shared "
                    "weights; give them there, not here" % stages)
            checked = kina.check(source, filename)
            stages, batch, constants, shared = declared_pipeline(
                source, filename, stages, checked)
        elif batch is None:
            raise PipelineError("batch=[...] names the parameters cut into "
                                "microbatches")
        if isinstance(schedule, _pipeline.Schedule):
            self.schedule = schedule
        else:
            per_rank = chunks or (2 if schedule == "interleaved" else 1)
            if len(stages) % per_rank:
                raise PipelineError(
                    "%s with %d chunks per rank needs a multiple of %d stage "
                    "functions; %d are named" % (schedule, per_rank,
                                                 per_rank, len(stages)))
            self.schedule = _pipeline.schedule(
                schedule, len(stages) // per_rank, microbatches, chunks)
        s = self.schedule
        if len(stages) != s.stages * s.chunks:
            raise PipelineError(
                "the %s schedule has %d stages x %d chunks = %d virtual "
                "stages, but %d stage functions are named (%s)" % (
                    s.kind, s.stages, s.chunks, s.stages * s.chunks,
                    len(stages), ", ".join(stages)))
        if len(set(stages)) != len(stages):
            raise PipelineError("a function is named as two stages: %s" %
                                ", ".join(stages))
        if isinstance(replicas, bool) or not isinstance(replicas, int) or \
                replicas < 1:
            raise PipelineError("replicas counts the pipeline's data-parallel "
                                "copies, at least 1, not %r" % (replicas,))
        self.replicas = replicas
        self.batch_names = list(batch)
        self.constants = list(constants)
        self.shared = list(shared)
        self.timeout = timeout
        if optimizer not in (None,) + OPTIMIZERS:
            raise PipelineError("optimizer must be None or one of %s, not "
                                "%r" % (", ".join(OPTIMIZERS), optimizer))
        self.optimizer = optimizer
        self._stages = self._find_stages(source, filename, stages, checked)
        placed = [stage for stage in self._stages if stage.placed]
        if recompute is False and placed:
            raise PipelineError(
                "recompute=False keeps each forward's values for its "
                "backward, which split=true does for host functions only; "
                "stage %d (%s) is placed on the mesh" % (placed[0].index,
                                                         placed[0].name))
        # Keep what each backward reads from its forward, unless asked to
        # recompute it (or a stage runs on the mesh).
        self.keeps = not recompute and not placed
        added = [_gradient_source(stage, split=self._splits_backward(),
                                  keep=self.keeps)
                 for stage in self._stages]
        if optimizer:
            added += [_adamw_source(stage, self._owned(stage))
                      for stage in self._stages if self._owned(stage)]
        self.source = source.rstrip("\n") + "\n\n" + "\n".join(added) + \
            "\n"
        self.module = kina.compile(self.source, filename,
                                   num_threads=num_threads,
                                   cache_dir=cache_dir)
        self._bind_stages(self.module)
        # The stages placed on the mesh, and the devices each rank's group
        # has: the mesh's, when stages are placed on it.
        self.placed = [stage.name for stage in placed]
        self.tensor = self.module.mesh.num_devices if placed else 1
        # Set by kina.mpi_pipeline: runs a function placed on the mesh as
        # this rank's one device of its group, on its blocks.
        self.run_on_device = None
        self._programs = s.programs()
        cycle = s.deadlock()
        if cycle:
            raise ScheduleError(cycle)

    def _splits_backward(self):
        """Whether the schedule runs B and W apart (then each stage gets
        its input and weight gradients as functions of their own)."""
        return any(a.phase in ("B", "W") for rank in self.schedule.ranks
                   for a in rank)

    def _find_stages(self, source, filename, names, checked=None):
        """The stages by name, their parameters' roles from the program's
        declarations (kina.check: parsed and typed, not compiled; `checked`:
        that text of a program that declares this pipeline, whose rules
        the frontend has checked)."""
        import kina
        declared, types = {}, {}
        for match in re.finditer(r"func\.func (?:private )?@([\w.]+)\((.*)\)"
                                 r" ->", checked or kina.check(source,
                                                               filename)):
            params = re.findall(r'!kina\.tensor<([^>]*)> \{kina\.name = '
                                r'"(\w+)"\}', match.group(2))
            declared[match.group(1)] = [name for _, name in params]
            types[match.group(1)] = {name: _source_type(t)
                                     for t, name in params}
        for index, name in enumerate(names):
            if name not in declared:
                raise PipelineError("stage %d: no function %r in the program "
                                    "(it has: %s)" % (index, name,
                                                      ", ".join(declared)))
        # The language's rules of a pipeline (types that chain, each
        # parameter's role, a function left out of the list): a listed one
        # is checked as if the program declared it.
        if not checked:
            try:
                kina.check(source + "\n" + _declaration(
                    _LISTED, names, self.batch_names, self.constants,
                    self.shared) + "\n", filename)
            except kina.CompileError as error:
                raise PipelineError(
                    str(error).split(": error: ")[-1]
                    .replace("pipeline '%s': " % _LISTED, "")
                    .splitlines()[0]) from None
        return [_Stage(index, name, declared[name], self.batch_names,
                       self.constants, index == len(names) - 1, types[name])
                for index, name in enumerate(names)]

    def _bind_stages(self, module):
        """Each stage's compiled signature (the language checked its types
        against its neighbours')."""
        for stage in self._stages:
            stage.bind(module.functions[stage.name])

    @property
    def weights(self):
        """Every weight's name, stage by stage, each once (a shared one
        with the first stage that reads it, its owner)."""
        out = []
        for stage in self._stages:
            out += [w for w in stage.weights if w not in out]
        return out

    def _owned(self, stage):
        """The weights whose update runs with `stage`."""
        return [w for w in stage.weights if self.owner(w) is stage]

    def owner(self, weight):
        """The first stage that reads `weight`: where its gradient is
        summed over the stages that share it, and its update runs."""
        return next(stage for stage in self._stages
                    if weight in stage.weights)

    def _describe(self, message):
        (phase, microbatch, chunk), source, target = message
        what = "activation" if phase == "F" else "cotangent"
        return "%s%d%s's %s from rank %d to rank %d" % (
            phase, microbatch, "/%d" % chunk if self.schedule.chunks > 1
            else "", what, source, target)

    def programs(self):
        """Each rank's program as text: its receives, sends and calls."""
        lines = []
        s = self.schedule
        for rank, program in enumerate(self._programs):
            lines.append("rank %d:" % rank)
            for sends, receives, awaits, compute in program:
                for m in receives:
                    lines.append("  post receive %s" % self._describe(m))
                for m in sends:
                    lines.append("  send %s" % self._describe(m))
                for m in awaits:
                    lines.append("  wait for %s" % self._describe(m))
                if compute:
                    phase, mb, chunk = compute
                    stage = self._stages[chunk * s.stages + rank]
                    label = s.label(_pipeline.Action(*compute))
                    function = self._function(stage, phase)
                    if function is None:
                        lines.append("  %s: nothing to compute (stage %d "
                                     "has no %s)" % (label, stage.index,
                                                     "input" if phase == "B"
                                                     else "weights"))
                        continue
                    lines.append("  %s: call @%s on microbatch %d%s" % (
                        label, function, mb, " (on the mesh's %d devices)" %
                        self.tensor if function in self.module.per_device
                        else ""))
        return "\n".join(lines)

    def ir(self, stage="pipeline"):
        """"pipeline": each rank's program (`programs()`); any other stage
        of kina.STAGES: the compiled module's IR, the stage functions and
        their backward included."""
        return self.programs() if stage == "pipeline" else \
            self.module.ir(stage)

    def split_batch(self, batch):
        """Per replica, each batch array cut into its microbatches (replica
        d takes the d-th of `replicas` equal blocks), checked."""
        M = self.schedule.microbatches * self.replicas
        split = {}
        for name in self.batch_names:
            if name not in batch:
                raise PipelineError("the batch has no %r" % name)
            array = np.asarray(batch[name])
            param = next(p for stage in self._stages for p in stage.params
                         if p.name == name)
            want = [M * param.shape[0]] + list(param.shape[1:]) \
                if param.shape else None
            if want is None or list(array.shape) != want:
                raise PipelineError(
                    "batch %r has shape %s; %d microbatches of %s need %s" %
                    (name, list(array.shape), M, list(param.shape), want))
            if array.dtype != _NUMPY_DTYPES[param.dtype]:
                raise PipelineError("batch %r is %s; it is declared %s" % (
                    name, array.dtype, _NUMPY_DTYPES[param.dtype]))
            split[name] = [np.ascontiguousarray(part)
                           for part in np.split(array, M)]
        per = self.schedule.microbatches
        return [{name: parts[d * per:(d + 1) * per]
                 for name, parts in split.items()}
                for d in range(self.replicas)]

    def message_buffer(self, message):
        """An empty array for what `message` carries: a forward's
        activation (its stage's result) or a backward's cotangent (its
        stage's first parameter)."""
        (phase, _, chunk), source, _ = message
        stage = self._stages[chunk * self.schedule.stages + source]
        if stage.placed:  # one device's block
            function = self.module.per_device[stage.name]
            placed = function.result if phase == "F" else function.params[0]
            return np.empty(placed.local_shape, dtype=placed.dtype)
        param = stage.result if phase == "F" else stage.params[0]
        return np.empty(param.shape, dtype=_NUMPY_DTYPES[param.dtype])

    def message_tag(self, message):
        """A number unique to `message` among one step's transfers."""
        (phase, microbatch, chunk), _, _ = message
        return (microbatch * self.schedule.chunks + chunk) * 4 + \
            "F BW B W".split().index(phase)

    def check_weights(self, weights, ranks=None):
        """Raises PipelineError when a weight the ranks' stages need is
        missing or of another shape or dtype."""
        for stage in self._stages:
            if ranks is not None and \
                    stage.index % self.schedule.stages not in ranks:
                continue
            for p in stage.params:
                if p.name not in stage.weights + self.constants:
                    continue
                if p.name not in weights:
                    raise PipelineError("no value for weight %r of stage %d "
                                        "(%s)" % (p.name, stage.index,
                                                  stage.name))
                array = np.asarray(weights[p.name])
                want = _NUMPY_DTYPES[p.dtype]
                if array.dtype != want or array.shape != tuple(p.shape):
                    raise PipelineError(
                        "weight %r of stage %d (%s) is %s %s; it is declared "
                        "%s %s" % (p.name, stage.index, stage.name,
                                   array.dtype, list(array.shape), want,
                                   list(p.shape)))

    def step(self, weights, batch, update=None):
        """One training step on the simulator (a thread per rank of each
        replica): the mean loss and each weight's gradient, as
        `StepResult`."""
        self.check_weights(weights)
        split = self.split_batch(batch)
        s = self.schedule
        transfers = _Transfers(
            self.timeout, lambda keyed, _: self.message_bytes(keyed[1]))
        outcomes = [_Outcome(s) for _ in range(self.replicas)]
        errors = []
        origin = time.perf_counter()

        def run(replica, rank):
            try:
                self.run_rank(rank, weights, split[replica],
                              _ReplicaTransfers(transfers, replica),
                              outcomes[replica], origin)
            except _Abandoned:
                pass
            except Exception as error:  # a rank's failure ends the step
                errors.append((replica, rank, error))
                transfers.fail(str(error))

        threads = [threading.Thread(target=run, args=(d, r))
                   for d in range(self.replicas) for r in range(s.stages)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            replica, rank, error = errors[0]  # the first; the rest stopped
            where = "rank %d" % rank if self.replicas == 1 else \
                "replica %d, rank %d" % (replica, rank)
            raise PipelineError("%s: %s" % (where, error)) from error
        result = reduce_replicas(outcomes)
        # What the MPI ranks send besides: a shared weight's gradient from
        # each stage on another rank than its owner's, in every copy, and
        # the gradients the copies after the first send to it; and the
        # collectives of the stages placed on the mesh.
        S = s.stages
        shared = sum(self.weight_bytes(w) for w in self.shared
                     for stage in self._stages if w in stage.weights and
                     stage.index % S != self.owner(w).index % S)
        result.bytes_moved = transfers.bytes_moved + \
            self.replicas * shared + (self.replicas - 1) * \
            sum(self.weight_bytes(w) for w in result.gradients) + \
            sum(sum(o.collective_bytes) for o in outcomes)
        if update is not None:
            self._update(weights, result.gradients, update)
        return result

    def optimizer_state(self, weights):
        """AdamW's moments for `weights`, zero: {"m_<w>": ..., "v_<w>": ...}."""
        return {prefix + w: np.zeros_like(np.asarray(weights[w]))
                for prefix in ("m_", "v_") for w in self.weights}

    def train_step(self, weights, state, batch, step, lr=1e-3,
                   betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        """`step` and then one AdamW update of every stage's weights from
        the step's mean gradients (`step` counts from 1 for the bias
        corrections). `weights` and `state` (optimizer_state's
        moments) are updated in place; returns the StepResult."""
        if self.optimizer != "adamw":
            raise PipelineError("train_step needs Pipeline(..., "
                                "optimizer=\"adamw\")")
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise PipelineError("step counts from 1, not %r" % (step,))
        missing = [k for k in self.optimizer_state({w: 0 for w in
                                                    self.weights})
                   if k not in state]
        if missing:
            raise PipelineError("the optimizer state has no %s" %
                                ", ".join(missing))
        update = (state, adamw.scalars(step, lr, betas, eps, weight_decay))
        return self.step(weights, batch, update=update)

    def _update(self, weights, gradients, update):
        """AdamW on every stage's weights from their mean gradients, in
        place (each rank's own stages: in one process, one after another)."""
        state, scalars = update
        for stage in self._stages:
            w = self._owned(stage)
            if not w:
                continue
            arrays = ([weights[n] for n in w] +
                      [state["m_" + n] for n in w] +
                      [state["v_" + n] for n in w])
            args = arrays[:len(w)] + [gradients[n] for n in w] + \
                arrays[len(w):] + scalars
            # In place on the host; on the mesh the devices' blocks come
            # back as new arrays (the caller's are copies), written back.
            for array, new in zip(arrays, self.call(_ADAMW % stage.index,
                                                    args)[0]):
                if new is not array:
                    np.copyto(array, new)

    def run_rank(self, rank, weights, batch, transfers, outcome, origin):
        """Rank `rank`'s program: its transfers through `transfers`, its
        losses, gradients and trace into `outcome`."""
        s = self.schedule
        kept = ({}, {})  # (stage, microbatch) -> its input; its cotangent
        produced = {}    # action -> what it sends
        describe = self._describe

        for sends, receives, awaits, compute in self._programs[rank]:
            for message in receives:
                transfers.post(message, self.message_buffer(message))
            transfers.send_all([(message, produced.pop(message[0]))
                                for message in sends], describe)
            received = [transfers.receive(message, describe)
                        for message in awaits]
            if compute is None:
                continue
            phase, mb, chunk = compute
            stage = self._stages[chunk * s.stages + rank]
            start = time.perf_counter() - origin
            try:
                sent = self._act(stage, phase, mb, received, weights, batch,
                                 kept, outcome)
            except Exception as error:
                raise PipelineError("%s (%s on microbatch %d): %s" % (
                    self.schedule.label(_pipeline.Action(*compute)),
                    stage.name, mb, error)) from error
            if sent is not None:
                produced[tuple(compute)] = sent
            outcome.trace[rank].append(
                (compute, start, time.perf_counter() - origin))


    def call(self, name, args):
        """Calls function `name` on the host or, placed on the mesh, on its
        T devices (a thread each): (its value, the bytes its collectives
        sent)."""
        if name not in self.module.per_device:
            return getattr(self.module, name)(*args), 0
        if self.run_on_device is not None:
            return self.run_on_device(name, args), 0  # MPI counts its bytes
        run = self.module.simulate(name, *args, report=False,
                                   timeout=self.timeout)
        return run.value, run.bytes_moved

    def group_bytes(self, function, param):
        """What all devices of a rank hold of `function`'s parameter
        `param` (an index; "result" for its result): its bytes on the
        host, each device's block times T on the mesh (a replicated
        tensor is T whole copies)."""
        placed = self.module.per_device.get(function)
        if placed is None:
            p = self.module.functions[function]
            p = p.result if param == "result" else p.params[param]
            return int(np.prod(p.shape, dtype=np.int64)) * \
                np.dtype(_NUMPY_DTYPES[p.dtype]).itemsize
        p = placed.result if param == "result" else placed.params[param]
        return int(np.prod(p.local_shape, dtype=np.int64)) * \
            np.dtype(p.dtype).itemsize * placed.mesh.num_devices

    def message_bytes(self, message):
        """The bytes a message moves between two ranks' groups: each
        device sends its block to its counterpart."""
        (phase, _, chunk), source, _ = message
        stage = self._stages[chunk * self.schedule.stages + source]
        return self.group_bytes(stage.name, "result" if phase == "F" else 0)

    def placement(self, name):
        """How the first placed stage taking parameter `name` places it (a
        kina.devices.Placed), or None when no placed stage takes it."""
        for stage in self._stages:
            if stage.placed and name in stage.types:
                function = self.module.per_device[stage.name]
                return next(p for p in function.params if p.name == name)
        return None

    def block(self, name, array, device):
        """Device `device`'s block of parameter `name`'s global `array`
        (the array itself for a host stage's parameter)."""
        placed = self.placement(name)
        return array if placed is None else \
            np.ascontiguousarray(placed.distribute(array)[device])

    def block_shape(self, weight):
        """The shape of one device's block of `weight` (its gradient's)."""
        placed = self.placement(weight)
        if placed is not None:
            return placed.local_shape
        return tuple(next(p for p in self.owner(weight).params
                          if p.name == weight).shape)

    def weight_bytes(self, weight):
        """The bytes of `weight`'s gradient over its owner's devices."""
        stage = self.owner(weight)
        index = next(i for i, p in enumerate(stage.params)
                     if p.name == weight)
        return self.group_bytes(stage.name, index)

    def _function(self, stage, phase):
        """What an action of `phase` calls for `stage` (None: a B of a
        stage without an input, or a W of one without weights: nothing).
        F: the stage, or its split backward's forward (which also returns
        what the backward reads); BW: the backward; B and W: the split
        backward's input and weight parts (its one backward when the
        stage has only one of the two), or the recomputing ones."""
        has_input, has_weights = bool(stage.activation), bool(stage.weights)
        if (phase == "B" and not has_input) or \
                (phase == "W" and not has_weights):
            return None
        base = _BACKWARD % stage.index
        if phase == "F":
            return base + "_forward" if self.keeps and \
                (has_input or has_weights) else stage.name
        if phase == "BW":
            return base + ("_backward" if self.keeps else "")
        if not self.keeps:
            return (_INPUT_GRADIENT if phase == "B"
                    else _WEIGHT_GRADIENT) % stage.index
        if has_input and has_weights:
            return base + ("_input" if phase == "B" else "_weight")
        return base + "_backward"

    def _act(self, stage, phase, mb, received, weights, batch, kept,
             outcome):
        """Runs one action of `stage`; returns what it sends, if anything.
        `kept`: each (stage, microbatch)'s input activation and the values
        its forward kept, until its backward (or its W); and a B's
        cotangent and what it hands on, until its W."""
        saved, cotangents = kept
        key = (stage.index, mb)
        rank = stage.index % self.schedule.stages
        function = self._function(stage, phase)

        def call(args):
            out, moved = self.call(function, args)
            outcome.collective_bytes[rank] += moved
            return list(out) if isinstance(out, tuple) else [out]

        if phase == "F":
            x = received[0] if stage.activation else None
            out, *kept_values = call(stage.arguments(weights, batch, mb, x))
            if function == stage.name:  # nothing kept: recomputed later
                kept_values = []
            saved[key] = (x, kept_values)
            if stage.last:
                outcome.losses[mb] = float(out)
                return None
            return out
        x, kept_values = saved[key]
        args = stage.arguments(weights, batch, mb, x) + kept_values
        if phase == "W":
            dy, handed = cotangents.pop(key)
        else:
            dy = None if stage.last else received[0]
        seed = [] if stage.last else [dy]
        # The recomputing backwards return the value first.
        first = 0 if self.keeps else 1
        if phase == "BW":
            del saved[key]
            grads = call(args + seed)[first:] if function else []
            sent = grads.pop() if stage.activation else None
            outcome.accumulate(stage, grads)
            return sent
        if phase == "B":
            if function is None:
                cotangents[key] = (dy, [])
                return None
            dx, *handed = call(args + seed)[first:]
            # A stage without weights hands nothing on.
            cotangents[key] = (dy, handed if stage.weights else [])
            return dx
        del saved[key]  # W
        if function is not None:
            outcome.accumulate(stage, call(args + handed + seed)[first:])
        return None

class _Outcome:
    """What the ranks compute: each microbatch's loss, each weight's
    gradient summed in microbatch order, each rank's trace."""

    def __init__(self, schedule):
        self.schedule = schedule
        self.losses = [None] * schedule.microbatches
        self.stage_gradients = {}  # (stage, weight) -> sum over microbatches
        self.trace = [[] for _ in range(schedule.stages)]
        # Per rank: bytes sent by the collectives of its mesh-placed calls.
        self.collective_bytes = [0] * schedule.stages

    def accumulate(self, stage, values):
        # Every schedule runs a stage's backwards in microbatch order, so
        # the sum rounds alike under every schedule. Per stage: a shared
        # weight's stages run on other ranks (threads).
        for name, value in zip(stage.weights, values):
            if value.dtype == np.uint16:  # BF16 words
                value = from_bf16(value)
            key = (stage.index, name)
            g = self.stage_gradients.get(key)
            if g is None:
                self.stage_gradients[key] = value.copy()
            else:  # in place: no new array per microbatch, the same sum
                np.add(g, value, out=g)

    @property
    def gradients(self):
        """Each weight's sum over microbatches, and over the stages that
        share it in stage order."""
        parts = {}
        for (_, name), g in sorted(self.stage_gradients.items(),
                                   key=lambda item: item[0][0]):
            parts.setdefault(name, []).append(g)
        return {name: sum_in_order(g) for name, g in parts.items()}

    def clock(self):
        """The ranks' wall-clock trace as a kina.pipeline.Clock."""
        makespan = max((end for rank in self.trace for _, _, end in rank),
                       default=0.0)
        return _pipeline.Clock(
            self.schedule, makespan, [[(start, end) for _, start, end in rank]
                                      for rank in self.trace],
            unit="seconds")


def sum_in_order(arrays):
    """((a0 + a1) + a2) + ...: one order on every backend."""
    total = arrays[0]
    for array in arrays[1:]:
        total = total + array
    return total


def reduce_replicas(outcomes):
    """The step's result from each replica's outcome: every weight's
    gradient summed over the replicas in replica order, then times 1/(M x
    replicas); the losses in replica order; replica 0's trace (each
    replica's in `traces`)."""
    microbatches = len(outcomes[0].losses) * len(outcomes)
    gradients = {w: mean_gradient(sum_in_order([o.gradients[w]
                                                for o in outcomes]),
                                  microbatches)
                 for w in outcomes[0].gradients}
    losses = [l for o in outcomes for l in o.losses]
    traces = [o.clock() for o in outcomes]
    result = StepResult(mean_loss(losses), gradients, losses, traces[0])
    result.traces = traces
    return result
