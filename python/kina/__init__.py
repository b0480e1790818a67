"""Kina: compile `.kina` tensor programs and call them on NumPy arrays.

    import kina
    m = kina.compile(source_text)          # or kina.compile_file(path)
    logits = m.storylm0_tp_vocab(token_ids, embed, ...)
    m.functions                            # names and signatures
    print(m.ir("kina"), m.ir("propagated"), m.ir("host"), m.ir("spmd"),
          m.ir("linalg"), m.ir("llvm"))
    m.remarks, m.communication             # what the sharding decided, moves
    print(m.cost("f"))                     # FLOPs, peak bytes, bytes sent
    m.save("out.so"); m2 = kina.load("out.so")

    import kina.numpy as knp                # Python as a frontend
    step = kina.jit(f); step(params, x)     # traced to .kina, compiled
    kina.grad(loss)(params, x)              # the language's reverseMode
    kina.to_bf16(x), kina.from_bf16(words)  # BF16 tensors as uint16 words
"""

import collections
import os
import shutil
import tempfile

from . import _kina
from . import cache as _cache
from . import cost as _cost
from . import devices as _devices
from .bfloat16 import from_bf16, to_bf16
from .cost import Alternative, Cost, Remark, Traffic
from .devices import DeviceError, SimulationResult
from .files import atomic_writer
from .show import show_plan, show_sharding

__all__ = ["Alternative", "CompileError", "Cost", "DeviceError",
           "GradientCheckError", "Module", "Param", "Remark", "Signature",
           "SimulationResult", "Traffic",
           "TraceError", "Traced", "check", "check_grads", "compile", "compile_file",
           "from_bf16", "to_bf16",
           "grad", "jit", "load", "sharding", "show_sharding", "tree_flatten", "tree_leaves", "tree_map",
           "tree_structure", "tree_unflatten", "trees",
           "value_and_grad", "with_sharding_constraint"]


class CompileError(Exception):
    """A program did not compile; the message holds every located
    `file:line:col: error: ...` diagnostic."""


# `reuses`: for a result written into a parameter's array (`@reuses(p)`),
# that parameter's name; None otherwise.
Param = collections.namedtuple("Param", "name dtype shape reuses",
                               defaults=(None,))


class Signature(collections.namedtuple("Signature", "name params result")):
    """A function's parameters and result: `result` is one Param, or a
    tuple of them for several results; `results` is always the tuple (a
    Param is itself a tuple, so `isinstance(result, tuple)` cannot tell)."""
    __slots__ = ()

    @property
    def results(self):
        return self.result if type(self.result) is tuple else (self.result,)

# The IR kept per stage: as written, after differentiation and placement
# propagation (global view, collectives in place), the host form, the
# per-device form (mesh programs only), linalg, LLVM.
STAGES = ("kina", "propagated", "host", "spmd", "linalg", "llvm")

class Module:
    """A compiled program: one attribute per exported function."""

    def __init__(self, library, shared_object, ir=None, source=None,
                 records=None, plans=None, auto_shard=None):
        self._library = library
        # What automatic sharding found for each function it placed (the
        # functions with @auto placements), and the options it was asked
        # with, which every recompile of this module (probes, locations)
        # passes again: the solver gives one plan for one input.
        self.plans = {plan.function: plan for plan in plans or []}
        self._auto_shard = dict(auto_shard or {})
        # What the placement propagation inserted and what each function
        # costs a device: the compiler's records, for a module compiled
        # here (a .so does not carry them: empty for kina.load()).
        self.remarks, self._costs = (_cost.from_records(records) if records
                                     else ([], {}))
        self._records = records
        # Loaded from the compile cache (kina.compile's cache_dir).
        self.from_cache = False
        self.communication = {name: cost.traffic
                              for name, cost in self._costs.items()
                              if cost.traffic}
        # (text, filename, matmul_tuning) when compiled here
        self._source = source
        self._probed_module = None
        self._located_ir = None  # every stage with locations, on first use
        self._shared_object = shared_object  # bytes, or a path to copy
        self._ir = ir
        self._index = {}
        self.functions = {}
        described = self._described = library.signature
        for i, entry in enumerate(described["functions"]):
            params = tuple(Param(p["name"], p["dtype"], p["shape"])
                           for p in entry["params"])
            results = tuple(Param("result" if len(entry["results"]) == 1
                                  else "result_%d" % i, r["dtype"], r["shape"],
                                  r.get("reuses"))
                            for i, r in enumerate(entry["results"]))
            result = results[0] if len(results) == 1 else results
            self.functions[entry["name"]] = Signature(entry["name"], params,
                                                      result)
            self._index[entry["name"]] = i
        self.mesh = (_devices.Mesh(described["mesh"])
                     if described["mesh"] else None)
        self.per_device = {
            entry["name"]: _devices.PerDeviceFunction(entry, self.mesh, i)
            for i, entry in enumerate(described["devices"])}

    def __getattr__(self, name):
        index = self.__dict__.get("_index", {}).get(name)
        if index is None:
            raise AttributeError("module has no function %r (it has: %s)" %
                                 (name, ", ".join(self.functions)))
        function = self._library.function(index)
        self.__dict__[name] = function  # later lookups skip __getattr__
        return function

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.functions))

    def __repr__(self):
        return "<kina.Module: %s>" % ", ".join(self.functions)

    def cost(self, name):
        """What function `name` costs one device, before anything runs
        (a `kina.Cost`: FLOPs, peak bytes, the bytes each collective sends
        and the alternatives the propagation weighed); known for modules
        compiled in this process, not for `kina.load()`."""
        if not isinstance(name, str):
            raise TypeError("cost() takes a function's name, got %r" % (name,))
        if name not in self.functions and name not in self.per_device:
            raise KeyError("module has no function %r (it has: %s)" %
                           (name, ", ".join(self.functions)))
        if name not in self._costs:
            raise KeyError("the cost of %r is known only to a module compiled "
                           "in this process (kina.compile), not to a loaded "
                           "one" % name)
        return self._costs[name]

    @property
    def num_threads(self):
        """Threads each call of this module may use, the caller's included.
        The default is $KINA_NUM_THREADS, else every usable core; assigning
        0 (or None) restores it. Results do not depend on it."""
        return self._library.num_threads

    @num_threads.setter
    def num_threads(self, n):
        self._library.num_threads = _thread_count(n)

    def simulate(self, name, *args, report=True, threads_per_device=1,
                 timeout=60.0, **kwargs):
        """Runs the per-device form of `name` on one thread per device of
        the mesh, with shared-memory collectives, on the global `args`
        (distributed by their placements). Returns a SimulationResult:
        `value` (the global result; a tuple for a function with several),
        `per_device` (each device's local result, in device order; tuples
        for several), `report` and `bytes_moved`. `args` may also be one
        `m.distribute(name, *args)`; arguments may be given by parameter
        name, as in a direct call.

        `report`: also run the unsharded program and compare every op's
        value (`r.report`, one row per op); it runs an instrumented build
        of the program, compiled on first use. With report=False the
        module's own per-device code runs (what a benchmark measures) and
        `r.report` is None.

        Raises IndexError (a gather id out of range) or DeviceError when a
        device fails; every device stops, none is left waiting (`timeout`
        seconds bound a wait in a collective)."""
        function = self._device_function(name)
        if (isinstance(threads_per_device, bool) or
                not isinstance(threads_per_device, int)):
            raise TypeError("threads_per_device must be an int, got %s" %
                            type(threads_per_device).__name__)
        if threads_per_device < 1:
            raise ValueError("threads_per_device must be at least 1, got %d"
                             % threads_per_device)
        if not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds, "
                             "got %r" % (timeout,))
        args = _devices.bind_arguments(function, args, kwargs)
        if not report:
            local, moved, seconds, _ = _devices.run_threads(
                self._library, function, args, threads_per_device, timeout)
            return SimulationResult(function.assemble(local),
                                    function.per_device(local), None, moved,
                                    seconds)
        probed = self._probed()
        probed_function = probed.per_device[name]
        local, moved, seconds, device_probes = _devices.run_threads(
            probed._library, probed_function, args, threads_per_device,
            timeout)
        if len(args) == 1 and isinstance(args[0], _devices.Distributed):
            args = args[0].global_args
        unsharded = getattr(probed, name)(*args)
        # (value, probes), or the value alone when no op is probed.
        probed_entry = probed._described["functions"][probed._index[name]]
        unsharded_probes = unsharded[1] if probed_entry["probes"] else []
        entries = probed._described["devices"][probed_function.index]
        rows = _devices.divergence_report(entries["probes"],
                                          device_probes, unsharded_probes,
                                          self.mesh)
        return SimulationResult(function.assemble(local),
                                function.per_device(local), rows, moved,
                                seconds)

    def distribute(self, name, *args):
        """The global `args` of `name` cut into each device's blocks once;
        pass the result to `simulate(name, distributed)` to run without
        cutting them again (as devices keep their weights)."""
        return _devices.Distributed(self._device_function(name), args)

    def _probed(self):
        """The program compiled with probes (cached)."""
        if self._probed_module is None:
            if self._source is None:
                raise ValueError(
                    "the per-op report needs the program's source: use "
                    "kina.compile or kina.compile_file (not kina.load), or "
                    "simulate(..., report=False)")
            text, filename, matmul_tuning = self._source
            self._probed_module = _compile(text, filename, matmul_tuning,
                                           probes=True,
                                           auto_shard=self._auto_shard)
        return self._probed_module

    def _device_function(self, name):
        function = self.per_device.get(name)
        if function is None:
            if self.mesh is None:
                raise ValueError("%s has no mesh: only programs with @mesh "
                                 "have per-device forms" % self)
            raise ValueError("no mesh-placed function %r (per-device forms: "
                             "%s)" % (name, ", ".join(self.per_device)))
        return function

    def ir(self, stage, locations=False):
        """The module at `stage`: "kina" (as written), "propagated"
        (differentiated, every placement decided, the collectives in
        place), "host" (the host form), "spmd" (the per-device form of a
        mesh program), "linalg" or "llvm". With `locations=True`, each op
        says where in the source it comes from: `loc("prog.kina":3:7)`
        beside it, or in LLVM IR `!dbg` line tables (`!DILocation(line: 3,
        column: 7, ...)`); the program is compiled once more for that, on
        first use."""
        if stage not in STAGES:
            raise ValueError("unknown stage %r; stages are %s" %
                             (stage, ", ".join(STAGES)))
        if self._ir is None:
            raise ValueError("IR is kept only for modules compiled in this "
                             "process, not for kina.load()")
        if stage == "spmd" and not self._ir[stage]:
            raise ValueError("no per-device form: the program declares no "
                             "@mesh")
        if not locations:
            return self._ir[stage]
        if self._located_ir is None:
            text, filename, matmul_tuning = self._source
            self._located_ir = _compile(text, filename, matmul_tuning,
                                        locations=True,
                                        auto_shard=self._auto_shard)._ir
        return self._located_ir[stage]

    def save(self, path):
        """Writes the shared object to `path` (replacing it atomically, so
        a process that has the old file loaded keeps working)."""
        with atomic_writer(path, permissions=0o755) as out:
            if isinstance(self._shared_object, bytes):
                out.write(self._shared_object)
            else:
                with open(self._shared_object, "rb") as src:
                    shutil.copyfileobj(src, out)


def _thread_count(n):
    if n is None:
        return 0
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError("num_threads must be an int or None, got %s" %
                        type(n).__name__)
    if n < 0:
        raise ValueError("num_threads must be >= 0 (0: the default), got %d"
                         % n)
    return min(n, _kina.MAX_THREADS)


def _with_threads(module, num_threads):
    if num_threads is not None:
        module.num_threads = num_threads
    return module


def _check_text(source, filename, caller):
    if not isinstance(source, str):
        raise TypeError("kina.%s expects the program text as str, got %s" %
                        (caller, type(source).__name__))
    if not isinstance(filename, str):
        raise TypeError("filename must be a str")


def check(source, filename="<string>"):
    """Parses and type-checks `.kina` source without compiling it; returns
    the kina dialect module as text, or raises CompileError."""
    _check_text(source, filename, "check")
    ok, diagnostics, kina_ir = _kina.check(source, filename)
    if not ok:
        raise CompileError(diagnostics.rstrip())
    return kina_ir


def compile(source, filename="<string>", num_threads=None,
            matmul_tuning=None, cache_dir=None, auto_shard=None):
    """Compiles `.kina` source text; raises CompileError. `num_threads`
    sets Module.num_threads (None: $KINA_NUM_THREADS, else every core).
    `matmul_tuning`: a tuning file measured on this CPU (`python3 -m
    kina.tune`) whose parameters replace the model's for its shapes.
    `cache_dir` (default $KINA_CACHE_DIR; unset: no cache): a directory
    of compiled modules keyed on everything a compile reads (kina.cache);
    a hit loads the module instead of compiling (`Module.from_cache`).
    Functions with `@auto` parameters or results are placed by automatic
    sharding (`auto_shard`: its options, as kina.auto_shard passes them;
    such programs are not cached, and `Module.plans` says each plan)."""
    _check_text(source, filename, "compile")
    _thread_count(num_threads)
    cache_dir = cache_dir or _cache.default_directory()
    if cache_dir is None or auto_shard is not None or "@auto" in source:
        return _with_threads(_compile(source, filename, matmul_tuning,
                                      auto_shard=auto_shard), num_threads)
    key = _cache.entry_key(source, filename, matmul_tuning)
    entry = _cache.load_entry(cache_dir, key)
    if entry is not None:
        path, blob, ir, records = entry
        module = Module(_kina.Library(str(path)), blob, ir,
                        (source, filename, matmul_tuning), records)
        module.from_cache = True
        return _with_threads(module, num_threads)
    module = _compile(source, filename, matmul_tuning)
    _cache.store_entry(cache_dir, key, module._shared_object, module._ir,
                       module._records)
    return _with_threads(module, num_threads)


def _compile(source, filename, matmul_tuning=None, probes=False,
             locations=False, auto_shard=None):
    tuning = "" if matmul_tuning is None else os.fspath(matmul_tuning)
    directory = tempfile.mkdtemp(prefix="kina-")
    try:
        path = os.path.join(directory, "module.so")
        ok, diagnostics, ir, records, plans = _kina.compile_to_file(
            source, filename, path, probes, tuning, locations,
            dict(auto_shard or {}))
        if not ok:
            raise CompileError(diagnostics.rstrip())
        with open(path, "rb") as f:
            shared_object = f.read()
        # The loaded mapping outlives the file: nothing is left on disk.
        library = _kina.Library(path)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return Module(library, shared_object, ir,
                  (source, filename, matmul_tuning), records, plans,
                  auto_shard)


def compile_file(path, num_threads=None, matmul_tuning=None):
    """Compiles a `.kina` file; diagnostics name it. The options are
    compile's."""
    path = os.fspath(path)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    return compile(text, filename=path, num_threads=num_threads,
                   matmul_tuning=matmul_tuning)


def load(path, num_threads=None):
    """Loads a shared object written by kina-translate or Module.save: the
    file as it is now (a private copy is opened, so a file rebuilt at the
    same path loads anew, where dlopen would hand back the first one)."""
    _thread_count(num_threads)
    path = os.path.abspath(os.fspath(path))
    try:
        with open(path, "rb") as f:
            shared_object = f.read()
    except OSError as e:
        raise ValueError("cannot load %s: %s" % (path, e.strerror)) from None
    directory = tempfile.mkdtemp(prefix="kina-")
    try:
        copy = os.path.join(directory, "module.so")
        with open(copy, "wb") as f:
            f.write(shared_object)
        library = _kina.Library(copy)
    except ValueError as e:  # the loader's message, naming the user's file
        raise ValueError(str(e).replace(copy, path)) from None
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return _with_threads(Module(library, shared_object), num_threads)


# Last: kina.check_grads and kina.jit compile through `compile` above.
from .autoshard import Plan, auto_shard  # noqa: E402
from .gradcheck import GradientCheckError, check_grads  # noqa: E402
from . import sharding  # noqa: E402
# kina.numpy gives traced values their operators (x * 2.0 without it).
from . import numpy as _kina_numpy  # noqa: E402,F401
from .jit import (grad, jit, value_and_grad,  # noqa: E402
                  with_sharding_constraint)
from . import trees  # noqa: E402
from .trees import (tree_flatten, tree_leaves, tree_map,  # noqa: E402
                    tree_structure, tree_unflatten)
from .tracing import TraceError, Traced  # noqa: E402


# Programs as well as modules (`python3 -m kina.tune`, `python3 -m
# kina.calibrate`): imported on first use, as `kina.tune`, so that running
# one does not find it imported already by the package (runpy's
# RuntimeWarning, and two copies of its globals).
_PROGRAMS = ("tune", "calibrate")


def __getattr__(name):
    if name in _PROGRAMS:
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'kina' has no attribute %r" % name)
