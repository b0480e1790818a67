"""`kina.jit`, `kina.grad` and `kina.value_and_grad`: Python functions
traced into `.kina` programs and compiled by the one pipeline.

    @kina.jit
    def step(params, x, y):
        loss, grads = kina.value_and_grad(loss_fn)(params, x, y)
        return loss, kina.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    loss, params = step(params, x, y)         # traced, compiled, run
    step.lower(params, x, y).source()         # the .kina program
    step.lower(params, x, y).as_text("spmd")  # any stage's IR

Tracing writes `.kina` text (not IR through the extension): the program
a traced function stands for is a program a user could have written,
with the same parser, shape rules and diagnostics, and `.source()`
shows it.
"""

import functools
import inspect
import warnings

import numpy as np

from . import trees
from .sharding import NamedSharding
from .tracing import (ELEMENT_TYPES, FLOAT_TYPES, FunctionTrace, ProgramTrace, TraceError,
                      Traced, current_function, located, tracing, type_text)

__all__ = ["jit", "grad", "value_and_grad", "with_sharding_constraint",
           "Lowered", "Compiled"]


# The tree of one array.
_ONE_LEAF = ("leaf",)


def _rebuild(out_treedef, out):
    """The result tree of a module function's result (an array, or a
    tuple of them for several)."""
    if out_treedef == _ONE_LEAF:
        return out
    return trees.unflatten(out_treedef,
                           out if isinstance(out, tuple) else (out,))


def _abstract(leaf, describe):
    """(shape, dtype) of an argument leaf; a TypeError or ValueError
    naming it (`describe()`: "the argument params['w']")."""
    if type(leaf) is np.ndarray and leaf.dtype in ELEMENT_TYPES and \
            0 not in leaf.shape:
        return leaf.shape, leaf.dtype  # the common case, at once
    if isinstance(leaf, (bool, np.bool_)):
        raise TypeError("%s is a bool: Kina has no bool arrays (pass "
                        "np.float32(1.0) or mark the argument static)" %
                        describe())
    if isinstance(leaf, float):
        leaf = np.float32(leaf)
    elif isinstance(leaf, int):
        leaf = np.int64(leaf)
    if not isinstance(leaf, (np.ndarray, np.generic)):
        raise TypeError("%s is a %s, not an array (arrays are NumPy arrays "
                        "or scalars; other values are static arguments: "
                        "static_argnums)" % (describe(),
                                             type(leaf).__name__))
    if leaf.dtype not in ELEMENT_TYPES:
        raise TypeError("%s has dtype %s; Kina's are float32, float64, "
                        "float16, uint16 (BF16 words), int32 and int64 "
                        "(x.astype(np.float32))" % (describe(), leaf.dtype))
    if 0 in leaf.shape:
        raise ValueError("%s has shape %s: Kina's dims are positive" %
                         (describe(), list(leaf.shape)))
    return tuple(leaf.shape), leaf.dtype


def _as_array(leaf):
    if type(leaf) is np.ndarray:
        return leaf
    if isinstance(leaf, float):
        return np.float32(leaf)
    if isinstance(leaf, int):
        return np.int64(leaf)
    return leaf


def _shardings_per_leaf(shardings, tree, root):
    """The sharding of each leaf of `tree`: `shardings` is None, one
    NamedSharding for every leaf, or a tree with `tree`'s structure down to
    where a NamedSharding or None covers a whole subtree (a prefix, as
    JAX's)."""
    leaves, treedef, paths = trees.flatten(tree)
    if shardings is None or isinstance(shardings, NamedSharding):
        return [shardings] * len(leaves)
    result = []

    def walk(spec, node, path):
        if spec is None or isinstance(spec, NamedSharding):
            count = len(trees.flatten(node)[0])
            result.extend([spec] * count)
            return
        spec_kind = trees._children(spec)
        node_kind = trees._children(node)
        if (spec_kind is None or node_kind is None or
                spec_kind[0] != node_kind[0]):
            raise ValueError(
                "the shardings of %s do not match its structure at %s: %s "
                "against %s" % (root, trees.keystr(path, root),
                                trees.describe(trees.flatten(spec)[1]),
                                trees.describe(trees.flatten(node)[1])))
        for (entry, s), (_, n) in zip(spec_kind[1], node_kind[1]):
            walk(s, n, path + (entry,))

    walk(shardings, tree, ())
    return result


def _placement(sharding, shape, what, program):
    if sharding is None:
        return None
    if not isinstance(sharding, NamedSharding):
        raise TypeError("%s: a sharding is a kina.sharding.NamedSharding or "
                        "None, got %s" % (what, type(sharding).__name__))
    program.use_mesh(sharding.mesh, what)
    return sharding.placement(shape, what)


def _parameter_names(f, count):
    """The names of `f`'s first `count` positional parameters."""
    try:
        parameters = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    names = []
    for i in range(count):
        p = parameters[i] if i < len(parameters) else None
        if p is None or p.kind == p.VAR_POSITIONAL:
            names.append("arg%d" % i)
        else:
            names.append(p.name)
    return names


def _bind(f, args, kwargs):
    """Keyword arguments moved to their positions (kina.jit traces
    positional arguments): `f(x, n=2)` is `f(x, 2)`; a default fills a
    position only below one the call gives."""
    if not kwargs:
        return tuple(args)
    try:
        signature = inspect.signature(f)
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError("%s: %s" % (getattr(f, "__name__", "f"), e)) from None
    positional = [p.name for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword_only = [name for name in kwargs if name not in positional]
    if keyword_only:
        raise TypeError("%r: keyword-only arguments (%s) are not traced; "
                        "pass them positionally (a functools.partial "
                        "binding a keyword makes the later parameters "
                        "keyword-only: bind them all, or close over them)"
                        % (f, ", ".join(keyword_only)))
    given = max([len(args)] + [positional.index(name) + 1
                               for name in kwargs])
    bound.apply_defaults()
    return tuple(bound.arguments[name] for name in positional[:given])


class _Signature:
    """What one compiled program is for: the arguments' structure, each
    array leaf's shape and dtype, the static arguments' values."""

    def __init__(self, f, args, static_argnums):
        self.static = tuple((i, args[i]) for i in static_argnums
                            if i < len(args))
        self.dynamic = tuple(a for i, a in enumerate(args)
                             if i not in static_argnums)
        self.positions = tuple(i for i in range(len(args))
                               if i not in static_argnums)
        self._f, self._count = f, len(args)
        self._static_argnums = static_argnums
        self._names = None
        leaves, self.treedef, self.paths = trees.flatten(self.dynamic)
        self.leaves = [_as_array(leaf) for leaf in leaves]
        self.avals = tuple(
            _abstract(leaf, functools.partial(self.describe, path))
            for leaf, path in zip(leaves, self.paths))
        for i, value in self.static:
            try:
                hash(value)
            except TypeError:
                raise TypeError("static argument %d (%s) is not hashable: "
                                "static arguments key the compiled programs"
                                % (i, type(value).__name__)) from None

    @property
    def names(self):
        """The dynamic arguments' parameter names (found on first use:
        errors and tracing need them, a cached call does not)."""
        if self._names is None:
            self._names = [
                n for i, n in enumerate(_parameter_names(self._f,
                                                         self._count))
                if i not in self._static_argnums]
        return self._names

    def describe(self, path):
        """`the argument params['wq']`."""
        position, rest = path[0][1], path[1:]
        return "the argument %s" % trees.keystr(rest, self.names[position])

    def key(self):
        return (self.treedef, self.avals, self.static)


def _trace(f, signature, in_shardings, out_shardings, donate_argnums):
    """The ProgramTrace of `f` on `signature`'s abstract arguments, and
    the output tree's structure."""
    program = ProgramTrace()
    function = FunctionTrace(program,
                             program.function_name(getattr(f, "__name__",
                                                           "f")), f)
    per_argument = (in_shardings if isinstance(in_shardings, (tuple, list))
                    and not isinstance(in_shardings, NamedSharding)
                    else None)
    if per_argument is not None and len(per_argument) != len(
            signature.positions) + len(signature.static):
        raise ValueError("in_shardings has %d entries for %d arguments" % (
            len(per_argument), len(signature.positions) +
            len(signature.static)))
    shardings = []
    for k, argument in enumerate(signature.dynamic):
        spec = (per_argument[signature.positions[k]] if per_argument
                is not None else in_shardings)
        shardings += _shardings_per_leaf(spec, argument, signature.names[k])
    traced_leaves = []
    names = set()
    for (shape, dtype), path, sharding in zip(signature.avals,
                                              signature.paths, shardings):
        name = trees.leaf_name(signature.names[path[0][1]], path[1:])
        if name in names:
            raise ValueError("two arguments' leaves are both named %r (%s): "
                             "rename a key" % (name,
                                               signature.describe(path)))
        names.add(name)
        what = signature.describe(path)
        traced_leaves.append(function.parameter(
            name, shape, dtype, _placement(sharding, shape, what, program)))
    with tracing(function):
        # Rebuilt inside the trace: a dataclass's __post_init__ may compute.
        dynamic = trees.unflatten(signature.treedef, traced_leaves)
        args = [None] * (len(signature.positions) + len(signature.static))
        for position, value in zip(signature.positions, dynamic):
            args[position] = value
        for position, value in signature.static:
            args[position] = value
        output = f(*args)
    out_leaves, out_treedef, out_paths = trees.flatten(output)
    if not out_leaves:
        raise located("%s returns no arrays" % function.name)
    out_shardings_per_leaf = _shardings_per_leaf(out_shardings, output,
                                                 "the result")
    results = []
    for leaf, path, sharding in zip(out_leaves, out_paths,
                                    out_shardings_per_leaf):
        what = ("the result %s" % trees.keystr(path, "") if path else
                "the result")
        if isinstance(leaf, Traced) and leaf.function is not function:
            raise TraceError(
                "%s of %s was traced in another function (%s)" % (
                    what, function.name, leaf.function.name))
        if isinstance(leaf, (float, np.floating)) and not isinstance(
                leaf, bool):
            # A Python float result: an F32 literal, as jax.jit returns it.
            from .numpy import full
            with tracing(function):
                leaf = full((), leaf)
        if not isinstance(leaf, Traced):
            raise TraceError(
                "%s%s of %s is %s, not an array computed by the function "
                "(kina.jit returns traced arrays and floats)" % (
                    "%s:%d: " % function.where[:2] if function.where else "",
                    what, function.name, type(leaf).__name__))
        results.append([leaf, _placement(sharding, leaf.shape, what, program),
                        None])
    _donate(function, results, signature, traced_leaves, donate_argnums)
    function.results = [tuple(r) for r in results]
    program.functions.insert(0, function)
    return program, function.name, out_treedef


def _donate(function, results, signature, traced_leaves, donate_argnums):
    """`@reuses(p)`: each leaf of a donated argument takes the first result
    of its type not yet taken."""
    default = function.program.default_placement()
    for leaf, path in zip(traced_leaves, signature.paths):
        if signature.positions[path[0][1]] not in donate_argnums:
            continue
        for result in results:
            value, placement = result[0], result[1] or default
            if (result[2] is None and value.shape == leaf.shape and
                    value.dtype == leaf.dtype and
                    placement == (leaf.placement or default)):
                result[2] = leaf.name
                break
        else:
            warnings.warn("kina.jit: %s is donated but no result has its "
                          "type: its buffer is not reused" %
                          signature.describe(path), stacklevel=4)


class Compiled:
    """A compiled traced program, called on arguments of the signature it
    was traced for."""

    def __init__(self, lowered, module):
        self.lowered = lowered
        self.module = module

    def __call__(self, *args, **kwargs):
        lowered = self.lowered
        signature = _Signature(lowered.f, _bind(lowered.f, args, kwargs),
                               lowered.static_argnums)
        if signature.key() != lowered.signature.key():
            raise ValueError(
                "called with arguments other than those it was compiled "
                "for (%s); call the kina.jit function instead, which "
                "compiles again" % _difference(lowered.signature, signature))
        return _rebuild(lowered.out_treedef,
                        getattr(self.module, lowered.name)(*signature.leaves))

    def cost(self):
        return self.module.cost(self.lowered.name)

    def simulate(self, *args, report=True, threads_per_device=1,
                 timeout=60.0, **kwargs):
        """`Module.simulate` of the traced function (a program with a
        mesh) on these arguments; `value` is the result's tree, and each
        of `per_device` a tree of the device's blocks."""
        signature = _Signature(self.lowered.f, _bind(self.lowered.f, args,
                                                     kwargs),
                               self.lowered.static_argnums)
        run = self.module.simulate(self.lowered.name, *signature.leaves,
                                   report=report,
                                   threads_per_device=threads_per_device,
                                   timeout=timeout)
        rebuild = functools.partial(trees.unflatten, self.lowered.out_treedef)
        single = not isinstance(run.value, tuple)
        run.value = rebuild((run.value,) if single else run.value)
        run.per_device = [rebuild((local,) if single else local)
                          for local in run.per_device]
        return run


def _difference(expected, got):
    if expected.treedef != got.treedef:
        where = trees.first_difference(expected.treedef, got.treedef)
        return "the arguments' structure differs at %s: %s against %s" % (
            trees.keystr(where[1:], expected.names[where[0][1]]) if where
            else "the top", trees.describe(got.treedef),
            trees.describe(expected.treedef))
    for (a, b), path in zip(zip(expected.avals, got.avals), got.paths):
        if a != b:
            return "%s is %s %s, compiled for %s %s" % (
                got.describe(path), b[1], list(b[0]), a[1], list(a[0]))
    return "static arguments differ"


class Lowered:
    """A traced program: its `.kina` source, its IR at each stage, its
    cost, and the compiled program."""

    def __init__(self, jitted, signature, program, name, out_treedef):
        self.f = jitted.f
        self.static_argnums = jitted.static_argnums
        self.signature = signature
        self.name = name
        self.out_treedef = out_treedef
        self._source = program.source()
        # The traced function's parameters, in order.
        self.parameter_names = [p.name for p in program.functions[0].params]
        self._jitted = jitted
        self._compiled = None

    def source(self):
        """The `.kina` program this stands for."""
        return self._source

    def named_arguments(self, *args, **kwargs):
        """{parameter name: array} of these arguments' leaves, as the
        program names them (`np.savez` it for `python3 -m kina.mpi`)."""
        signature = _Signature(self.f, _bind(self.f, args, kwargs),
                               self.static_argnums)
        if signature.key() != self.signature.key():
            raise ValueError("arguments other than those traced: %s" %
                             _difference(self.signature, signature))
        return dict(zip(self.parameter_names, signature.leaves))

    def compile(self):
        if self._compiled is None:
            from . import compile as compile_source
            module = compile_source(self._source,
                                    filename="<kina.jit %s>" % self.name,
                                    cache_dir=self._jitted.cache_dir)
            if module.from_cache:
                self._jitted.cache_hits += 1
            else:
                self._jitted.compile_count += 1
            self._compiled = Compiled(self, module)
        return self._compiled

    def as_text(self, stage="kina", locations=False):
        """The IR at `stage` ("kina", "propagated", "host", "spmd",
        "linalg", "llvm"), as `Module.ir` gives it."""
        return self.compile().module.ir(stage, locations=locations)

    def cost(self):
        return self.compile().cost()


class Jitted:
    """`kina.jit(f)`: traced and compiled once per distinct signature
    (the arguments' tree structure, shapes and dtypes, and the static
    arguments' values); `trace_count` and `compile_count` count both,
    `cache_hits` the compiles the on-disk cache (`cache_dir`) saved."""

    def __init__(self, f, in_shardings=None, out_shardings=None,
                 static_argnums=(), donate_argnums=(), cache_dir=None):
        if not callable(f):
            raise TypeError("kina.jit expects a function, got %s" %
                            type(f).__name__)
        self.f = f
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.static_argnums = _argnums("static_argnums", static_argnums, f)
        self.donate_argnums = _argnums("donate_argnums", donate_argnums, f)
        both = set(self.static_argnums) & set(self.donate_argnums)
        if both:
            raise ValueError("argument %s is both static and donated" %
                             ", ".join(map(str, sorted(both))))
        self.cache_dir = cache_dir
        self._flat = {}  # ((shape, dtype), ...) -> (function, out treedef)
        self.trace_count = 0
        self.compile_count = 0
        self.cache_hits = 0
        self._cache = {}
        functools.update_wrapper(self, f, updated=())

    def __get__(self, instance, owner=None):
        """A method: `obj.f(x)` calls f(obj, x) (so `self` is argument 0,
        static or a pytree, as with jax.jit)."""
        if instance is None:
            return self
        return functools.partial(self, instance)

    def lower(self, *args, **kwargs):
        """The traced program for these arguments' signature (traced on
        the first request; calls with the signature then reuse it, and its
        compile)."""
        args = _bind(self.f, args, kwargs)
        return self._lower(_Signature(self.f, args, self.static_argnums))

    def _lower(self, signature):
        key = signature.key()
        lowered = self._cache.get(key)
        if lowered is None:
            self.trace_count += 1
            try:
                program, name, out_treedef = _trace(
                    self.f, signature, self.in_shardings, self.out_shardings,
                    self.donate_argnums)
            except TraceError as e:
                raise e.with_traceback(None) from None
            lowered = self._cache[key] = Lowered(self, signature, program,
                                                 name, out_treedef)
        return lowered

    def __call__(self, *args, **kwargs):
        if current_function() is not None:
            return self._inline(args, kwargs)
        if not kwargs:
            # Arrays only, no trees: the program found by shapes and dtypes
            # alone (a signature seen before, all of whose arguments were
            # arrays), without flattening anything.
            try:
                hit = self._flat.get(tuple([(a.shape, a.dtype)
                                            for a in args]))
            except AttributeError:  # not all arrays
                hit = None
            if hit is not None:
                function, out_treedef = hit
                return _rebuild(out_treedef, function(*args))
        args = _bind(self.f, args, kwargs)
        signature = _Signature(self.f, args, self.static_argnums)
        compiled = self._lower(signature).compile()
        function = getattr(compiled.module, compiled.lowered.name)
        if not self.static_argnums and all(
                isinstance(a, (np.ndarray, np.generic)) for a in args):
            self._flat[tuple((a.shape, a.dtype) for a in args)] = (
                function, compiled.lowered.out_treedef)
        return _rebuild(compiled.lowered.out_treedef,
                        function(*signature.leaves))

    def _inline(self, args, kwargs):
        """A kina.jit function called while another is traced is traced
        into it, as jax.jit inlines (its shardings become constraints)."""
        args = _bind(self.f, args, kwargs)
        if self.in_shardings is not None:
            per_argument = (self.in_shardings if isinstance(
                self.in_shardings, (tuple, list)) else
                [self.in_shardings] * len(args))
            args = tuple(
                a if i in self.static_argnums or s is None else
                with_sharding_constraint(a, s)
                for i, (a, s) in enumerate(zip(args, per_argument)))
        out = self.f(*args)
        if self.out_shardings is not None:
            out = with_sharding_constraint(out, self.out_shardings)
        return out


def _argnums(what, argnums, f):
    """`argnums` as non-negative positions of `f`'s parameters (negative
    ones count from the end, as JAX's); a position `f` does not have is a
    ValueError, unless `f` takes *args."""
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    try:
        parameters = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        parameters = None
    count = None
    if parameters is not None and not any(
            p.kind == p.VAR_POSITIONAL for p in parameters):
        count = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                    for p in parameters)
    positions = []
    for i in argnums:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError("%s: %r is not an argument position" % (what, i))
        if count is not None and not -count <= i < count:
            raise ValueError("%s: %d, but %s takes %d positional arguments"
                             % (what, i, getattr(f, "__name__", "f"), count))
        if i < 0 and count is None:
            raise ValueError("%s: %d counts from the end, but %s takes "
                             "*args" % (what, i, getattr(f, "__name__", "f")))
        positions.append(i % count if i < 0 else i)
    return tuple(positions)


def jit(f=None, *, in_shardings=None, out_shardings=None, static_argnums=(),
        donate_argnums=(), cache_dir=None):
    """`f` traced into a `.kina` program and compiled, once per signature.
    `in_shardings`/`out_shardings`: None (each array on the host, or
    replicated on the mesh), one NamedSharding for all, or per argument a
    NamedSharding, None or a tree of them. `donate_argnums`: arguments
    whose arrays the results may be written into (`@reuses`): after the
    call they hold the results (the same array objects are returned).
    `cache_dir`: kina.compile's on-disk cache (default $KINA_CACHE_DIR;
    unset: none)."""
    if f is None:
        return functools.partial(jit, in_shardings=in_shardings,
                                 out_shardings=out_shardings,
                                 static_argnums=static_argnums,
                                 donate_argnums=donate_argnums,
                                 cache_dir=cache_dir)
    return Jitted(f, in_shardings, out_shardings, static_argnums,
                  donate_argnums, cache_dir)


class _Gradient:
    """`kina.grad(f)`: the language's reverseMode of `f`. Inside a traced
    function it writes `fn f_grad = reverseMode(f, wrt=[...])` and a call;
    on arrays it runs as `kina.jit` of itself."""

    def __init__(self, f, argnums, with_value):
        if not callable(f):
            raise TypeError("kina.grad expects a function, got %s" %
                            type(f).__name__)
        self.f = f
        self.argnums = argnums
        self.with_value = with_value
        self.__name__ = getattr(f, "__name__", "f") + (
            "_value_and_grad" if with_value else "_grad")
        self.__wrapped__ = f
        self._jitted = None

    def __call__(self, *args, **kwargs):
        args = _bind(self.f, args, kwargs)
        caller = current_function()
        if caller is None:
            if self._jitted is None:
                self._jitted = Jitted(self)
            return self._jitted(*args)
        return self._trace(caller, args)

    def _trace(self, caller, args):
        if caller.differentiated:
            raise located("a gradient of a gradient (kina.grad inside a "
                          "function kina.grad differentiates): the language's "
                          "reverseMode differentiates first-order only")
        argnums = ((self.argnums,) if isinstance(self.argnums, int)
                   else tuple(self.argnums))
        for i in argnums:
            if not -len(args) <= i < len(args):
                raise located("kina.grad: argnums %r for %d arguments" %
                              (self.argnums, len(args)))
        argnums = tuple(i % len(args) for i in argnums)
        program = caller.program
        leaves, treedef, paths = trees.flatten(tuple(args))
        names = _parameter_names(self.f, len(args))
        # Arrays (traced, or float scalars made literals) are the traced
        # function's parameters; any other leaf (an int, a string) is
        # static, traced into it as it is, as kina.jit's static arguments.
        dynamic = [isinstance(leaf, (Traced, float, np.floating))
                   for leaf in leaves]
        for leaf, path in zip(leaves, paths):
            if isinstance(leaf, np.ndarray):
                raise located(
                    "kina.grad's argument %s is a NumPy array from outside "
                    "the traced function: pass it to the kina.jit function "
                    "as an argument" % trees.keystr(path[1:],
                                                   names[path[0][1]]))
        values = [self._as_traced(leaf, caller) if is_array else leaf
                  for leaf, is_array in zip(leaves, dynamic)]
        try:
            key = (self.f, self.argnums, treedef, tuple(
                (v.shape, v.dtype, v.placement) if is_array else ("static", v)
                for v, is_array in zip(values, dynamic)))
            hash(key)
        except TypeError:
            raise located("kina.grad: an argument of %s is neither an array "
                          "nor hashable" % self.__name__) from None
        definition = program.gradients.get(key)
        if definition is None:
            definition = self._define(program, caller, treedef, paths, names,
                                      values, dynamic, argnums)
            # A definition that captured the caller's values is traced
            # again at each call: its closure may hold other values then.
            if not definition[2]:
                program.gradients[key] = definition
        gradient_name, wrt, captured, value_dtype = definition
        results = [((), value_dtype, None)] + [
            (values[i].shape, values[i].dtype, values[i].placement)
            for i in wrt]
        out = caller.emit_call(gradient_name, [v for v, is_array in zip(
            values, dynamic) if is_array] + captured, results)
        value, gradients = out[0], iter(out[1:])
        per_argument = []
        for i in argnums:
            sub_leaves, sub_def, _ = trees.flatten(args[i])
            per_argument.append(trees.unflatten(
                sub_def, [next(gradients) for _ in sub_leaves]))
        grads = (per_argument[0] if isinstance(self.argnums, int)
                 else tuple(per_argument))
        return (value, grads) if self.with_value else grads

    @staticmethod
    def _as_traced(leaf, caller):
        if isinstance(leaf, Traced):
            return caller.local(leaf)
        from .numpy import full
        return full((), leaf)

    def _define(self, program, caller, treedef, paths, names, values,
                dynamic, argnums):
        """Traces `f` as a function of the program and defines its
        reverseMode; (the reverseMode's name, positions of the wrt
        leaves, the caller's values it captured)."""
        for k, path in enumerate(paths):
            if path[0][1] not in argnums:
                continue
            what = trees.keystr(path[1:], names[path[0][1]])
            if not dynamic[k]:
                raise located("kina.grad: %s is a %s, not an array: it "
                              "has no gradient" % (
                                  what, type(values[k]).__name__))
            if values[k].dtype not in FLOAT_TYPES:
                raise located("kina.grad: %s is %s; gradients are taken of "
                              "float arrays only" % (what, values[k].dtype))
        function = FunctionTrace(program, program.function_name(
            getattr(self.f, "__name__", "f")), self.f, differentiated=True,
            caller=caller)
        params = [function.parameter(
            trees.leaf_name(names[path[0][1]], path[1:]), value.shape,
            value.dtype, value.placement) if is_array else value
            for value, path, is_array in zip(values, paths, dynamic)]
        with tracing(function):
            out = self.f(*trees.unflatten(treedef, params))
            if isinstance(out, Traced):
                out = function.local(out)
        if (not isinstance(out, Traced) or
                out.shape != () or out.dtype not in FLOAT_TYPES):
            raise located(
                "kina.grad: %s must return one float scalar (the language's "
                "reverseMode differentiates a float scalar here), got %r" % (
                    function.name, out))
        function.results = [(out, None, None)]
        program.functions.append(function)
        wrt = [k for k, path in enumerate(paths) if path[0][1] in argnums]
        if not wrt:
            raise located("kina.grad: the arguments differentiated hold no "
                          "arrays")
        gradient_name = program.function_name(function.name + "_grad")
        program.definitions.append(
            "fn %s = reverseMode(%s, wrt=[%s])\n" % (
                gradient_name, function.name,
                ", ".join(params[k].name for k in wrt)))
        return gradient_name, wrt, [outer for outer, _ in
                                    function.captures.values()], out.dtype


def grad(f, argnums=0, has_aux=False):
    """The gradient of `f` (returning a float scalar) with respect to the
    arguments `argnums` (an int: that argument's tree of gradients; a
    tuple: a tuple of them), by the language's reverseMode."""
    _no_aux(has_aux)
    return _Gradient(f, argnums, with_value=False)


def value_and_grad(f, argnums=0, has_aux=False):
    """`(f(...), grad(f)(...))`, from one reverseMode."""
    _no_aux(has_aux)
    return _Gradient(f, argnums, with_value=True)


def _no_aux(has_aux):
    if has_aux:
        raise located("kina.grad: has_aux is not supported (the language's "
                      "reverseMode returns the value and the gradients "
                      "only); return the auxiliary values from a second "
                      "traced call")


def with_sharding_constraint(x, sharding):
    """`x` (a traced array or a tree of them) constrained to `sharding`
    (one NamedSharding, or a tree of them matching `x`): the language's
    ascription with a placement."""
    leaves, treedef, paths = trees.flatten(x)
    per_leaf = _shardings_per_leaf(sharding, x, "the value")
    out = []
    for leaf, path, s in zip(leaves, paths, per_leaf):
        if not isinstance(leaf, Traced):
            raise located("with_sharding_constraint takes traced values, got "
                          "%s at %s" % (type(leaf).__name__,
                                        trees.keystr(path)))
        function = current_function()
        if function is None:
            raise located("with_sharding_constraint outside a traced "
                          "function")
        leaf = function.local(leaf)
        what = "the value %s" % trees.keystr(path, "x")
        try:
            placement = _placement(s, leaf.shape, what, function.program)
        except (TypeError, ValueError) as error:
            raise located(str(error)) from None
        if placement is None:
            out.append(leaf)
            continue
        out.append(function.emit(leaf.name, leaf.shape, leaf.dtype, placement,
                                 ascription=type_text(leaf.shape, leaf.dtype,
                                                      placement)))
    return trees.unflatten(treedef, out)
