"""Tracing Python into a `.kina` program: the abstract values `kina.jit`
passes to the user's function, and the program text their operations
write, one statement per op, each carrying the user's file and line in a
`#loc("file":line:col)` comment (so errors, remarks and located IR name
the Python line)."""

import os
import re
import sys
import threading

import numpy as np

from .trees import reserved_words

__all__ = ["TraceError", "Traced", "FunctionTrace", "ProgramTrace",
           "current_function", "user_location"]

# The frontend's own files: a traced op is located at the innermost frame
# outside them (a model in kina.models is the user's code too).
_MACHINERY = frozenset(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    for name in ("tracing.py", "numpy.py", "jit.py", "trees.py",
                 "sharding.py"))

# Every shared object exports these (`kina_` + name): no fn may take them.
_EXPORTED_NAMES = ("module_signature", "get_num_threads", "set_num_threads")

# NumPy's own frames (`np.sum(traced)` reaches us through them).
_NUMPY_FILES = (os.path.dirname(np.__file__) + os.sep,
                "<__array_function__ internals>")

# NumPy has no bfloat16: a BF16 value is traced, passed and returned as its
# 16-bit words (uint16), as the ABI passes it.
ELEMENT_TYPES = {np.dtype(np.float32): "F32", np.dtype(np.int32): "I32",
                 np.dtype(np.int64): "I64", np.dtype(np.float64): "F64",
                 np.dtype(np.float16): "F16", np.dtype(np.uint16): "BF16"}
FLOAT_TYPES = frozenset(d for d, name in ELEMENT_TYPES.items()
                        if name.startswith(("F", "BF")))


class TraceError(Exception):
    """A traced program the language cannot hold; the message starts with
    the user's file:line."""


def user_location():
    """(file, line, col) of the innermost frame outside the frontend's
    files, or None."""
    frame = sys._getframe(1)
    while frame is not None and (
            frame.f_code.co_filename in _MACHINERY or
            frame.f_code.co_filename.startswith(_NUMPY_FILES)):
        frame = frame.f_back
    if frame is None:
        return None
    line, col = frame.f_lineno, 0
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions) and positions[index][2] is not None:
        line, col = positions[index][0] or line, positions[index][2] + 1
    return (frame.f_code.co_filename, line, col)


def located(message):
    """A TraceError at the user's current line."""
    where = user_location()
    return TraceError("%s:%d: %s" % (where[0], where[1], message) if where
                      else message)


def type_text(shape, dtype, placement):
    return "Tensor[%s, [%s], %s]" % (ELEMENT_TYPES[np.dtype(dtype)],
                                     ", ".join(map(str, shape)), placement)


def _location_comment(where):
    if where is None:
        return ""
    path, line, col = where
    # The comment ends at the line's end and its file at `":`: keep both
    # out of the name.
    path = path.replace("\n", " ").replace('":', '" :')
    return '#loc("%s":%d:%d)' % (path, line, col)


class Traced:
    """An abstract array while tracing: its shape, dtype and, where known,
    its placement. Arithmetic on it writes the program (`kina.numpy`)."""

    __hash__ = object.__hash__

    def __init__(self, function, name, shape, dtype, placement=None):
        self.function = function
        self.name = name
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.placement = placement

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise located("len() of a rank-0 traced value")
        return self.shape[0]

    def __repr__(self):
        return "Traced(%s)" % (
            type_text(self.shape, self.dtype, self.placement)
            if self.placement else
            type_text(self.shape, self.dtype, "").replace(", ]", "]"))

    def _unknown(self, what):
        raise located(
            "%s of a traced value (%r): its value is not known while "
            "tracing. For a per-element choice write knp.where(mask, a, b); "
            "to choose the program by a Python value, pass it as a static "
            "argument (kina.jit(f, static_argnums=...))" % (what, self))

    def __bool__(self):
        self._unknown("the truth")

    def __float__(self):
        self._unknown("float()")

    def __int__(self):
        self._unknown("int()")

    def __index__(self):
        self._unknown("an index")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy's ufuncs (`ndarray + traced`, `np.exp(traced)`) as
        kina.numpy's function of the same name, where it has one."""
        return _as_kina_numpy(ufunc.__name__, {"true_divide": "divide",
                                               "absolute": "abs"},
                              method == "__call__", inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """`np.sum(traced)` and the like: kina.numpy's function."""
        return _as_kina_numpy(func.__name__, {}, True, args, kwargs)

    def __setitem__(self, key, value):
        raise located(
            "x[...] = v on a traced value: arrays are immutable; write "
            "knp.where(mask, v, x), or build the result with "
            "knp.concatenate")

    def __array__(self, *args, **kwargs):
        raise located(
            "NumPy was given a traced value (%r): inside kina.jit, compute "
            "with kina.numpy (import kina.numpy as knp)" % self)


def _as_kina_numpy(name, renamed, plain_call, args, kwargs):
    from . import numpy as knp
    name = renamed.get(name, name)
    function = getattr(knp, name, None) if name in knp.__all__ else None
    if function is None or not plain_call:
        raise located("np.%s on a traced value: kina.numpy has no %s (inside "
                      "kina.jit, compute with kina.numpy's functions)" %
                      (name, name))
    try:
        return function(*args, **kwargs)
    except TypeError as error:
        raise located("np.%s on a traced value as knp.%s: %s" %
                      (name, name, error)) from None


class FunctionTrace:
    """One `fn` of the traced program: its parameters, statements and
    results, in the order the Python code made them."""

    def __init__(self, program, name, python_function, differentiated=False,
                 caller=None):
        self.program = program
        self.name = name
        self.python_function = python_function
        # The function whose trace called this one's Python function (a
        # kina.grad inside it): its values may be used here, as closures.
        self.caller = caller
        # id(a caller's value) -> (the value, the parameter standing for it
        # here), in the order first used.
        self.captures = {}
        # Traced as the function a reverseMode differentiates: a gradient
        # inside it would be a gradient of a gradient.
        self.differentiated = differentiated
        self.where = _definition_location(python_function)
        self.params = []   # (Traced, where)
        self.lines = []
        self.results = None
        self._count = 0

    def fresh_name(self):
        # Parameter names never start with `_v` followed by a digit
        # (trees.leaf_name escapes to `_` and hex digits only).
        self._count += 1
        return "_v%d" % self._count

    def local(self, value):
        """`value` as a value of this function: itself, or for a value of
        a function whose trace called this one (a Python closure over it),
        a parameter of this function that its call passes."""
        if value.function is self:
            return value
        if value.function.results is not None:
            raise located(
                "a traced value of '%s' is used after its trace ended "
                "(kept from an earlier call?): return it instead" %
                value.function.name)
        if self.caller is None:
            raise located(
                "a value traced in function '%s' is used in '%s', which "
                "its trace did not call: pass it as an argument" % (
                    value.function.name, self.name))
        outer = self.caller.local(value)
        entry = self.captures.get(id(outer))
        if entry is None:
            # `_k` and a number: no parameter name is (an escaped key is
            # `_` and hex digits).
            entry = self.captures[id(outer)] = (outer, self.parameter(
                "_k%d" % (len(self.captures) + 1), outer.shape, outer.dtype,
                outer.placement))
        return entry[1]

    def parameter(self, name, shape, dtype, placement):
        value = Traced(self, name, shape, dtype, placement)
        self.params.append(value)
        return value

    def emit(self, expression, shape, dtype, placement=None,
             ascription=None):
        """A statement `_vN = expression : [shape]`; `ascription` (a whole
        type) in place of the shape check constrains the placement."""
        value = Traced(self, self.fresh_name(), shape, dtype, placement)
        check = ascription or "[%s]" % ", ".join(map(str, shape))
        self.lines.append("  %s = %s : %s  %s" % (
            value.name, expression, check,
            _location_comment(user_location())))
        return value

    def emit_call(self, callee, arguments, results):
        """`_vA, _vB, ... = callee(arguments)`; `results` are (shape,
        dtype, placement) triples."""
        values = [Traced(self, self.fresh_name(), *r) for r in results]
        self.lines.append("  %s = %s(%s)  %s" % (
            ", ".join(v.name for v in values), callee,
            ", ".join(a.name for a in arguments),
            _location_comment(user_location())))
        return values

    def text(self):
        """The `fn`, once its results are set ((Traced, placement, reuses)
        triples)."""
        default = self.program.default_placement()
        header = _location_comment(self.where)
        params = "".join(
            "\n    %s: %s%s  %s" % (p.name, type_text(p.shape, p.dtype,
                                                 p.placement or default),
                                 "," if i + 1 < len(self.params) else "",
                                 header)
            for i, p in enumerate(self.params))
        result_types = [
            type_text(v.shape, v.dtype, placement or default) +
            (" @reuses(%s)" % reuses if reuses else "")
            for v, placement, reuses in self.results]
        results = (result_types[0] if len(result_types) == 1 else
                   "(%s)" % ", ".join(result_types))
        return "fn %s(  %s%s\n    ) -> %s {  %s\n%s\n  return %s  %s\n}\n" % (
            self.name, header, params, results, header,
            "\n".join(self.lines),
            ", ".join(v.name for v, _, _ in self.results), header)


def _definition_location(python_function):
    """Where `python_function` (or what it wraps) is defined, or None."""
    while not hasattr(python_function, "__code__") and hasattr(
            python_function, "__wrapped__"):
        python_function = python_function.__wrapped__
    code = getattr(python_function, "__code__", None)
    return (code.co_filename, code.co_firstlineno, 1) if code else None


class ProgramTrace:
    """The whole traced program: its functions, its reverseMode
    definitions and the mesh its placements name."""

    def __init__(self, mesh=None):
        self.mesh = mesh
        self.functions = []
        self.definitions = []  # `fn G = reverseMode(...)` lines
        self.gradients = {}    # signature -> name of the reverseMode fn
        self._names = set()

    def default_placement(self):
        return "@replicated" if self.mesh is not None else "@host"

    def use_mesh(self, mesh, what):
        if self.mesh is None:
            self.mesh = mesh
        elif mesh != self.mesh:
            raise located("%s names %r, but the program's mesh is %r (one "
                          "program has one mesh)" % (what, mesh, self.mesh))

    def function_name(self, base):
        """A function name not taken in this program, from `base`."""
        name = re.sub(r"[^A-Za-z0-9]+", "_", base).strip("_") or "f"
        if (name[0].isdigit() or name in reserved_words() or
                name in _EXPORTED_NAMES):
            name = "f_" + name
        candidate, n = name, 1
        while candidate in self._names:
            n += 1
            candidate = "%s_%d" % (name, n)
        self._names.add(candidate)
        return candidate

    def source(self):
        parts = []
        if self.mesh is not None:
            parts.append(self.mesh.declaration() + "\n")
        parts += [f.text() for f in self.functions]
        parts += self.definitions
        return "\n".join(parts)


_state = threading.local()


def tracing_stack():
    if not hasattr(_state, "stack"):
        _state.stack = []
    return _state.stack


def current_function():
    stack = tracing_stack()
    return stack[-1] if stack else None


class tracing:
    """`with tracing(function):` makes `function` the current one."""

    def __init__(self, function):
        self.function = function

    def __enter__(self):
        tracing_stack().append(self.function)
        return self.function

    def __exit__(self, *exc):
        tracing_stack().pop()
        return False
