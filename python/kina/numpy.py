"""The language's ops under NumPy's names, on values traced by `kina.jit`:

    import kina.numpy as knp
    h = knp.tanh(x @ w + b)             # b broadcast as NumPy does
    p = knp.softmax(h, axis=-1)
    m = knp.mean(h, axis=(0, 1), keepdims=True)

Each function writes the language's op (`x @ w` is `@`, `knp.where` is
`where`, a select) or a composition of them (`keepdims=False` is a
reshape, a reduction over several axes one per axis, a NumPy broadcast
an explicit `broadcast[shape=...]`), so the compiler sees nothing it
does not see in a `.kina` program. Python scalars are the language's
weak literals: of the float type of what they meet, F32 alone.
Comparisons give masks (1.0 / 0.0) of their operands' type, as the
language's do. `x.astype(knp.float64)` is the language's cast; BF16 values
are traced as their words (`knp.bfloat16`, NumPy's uint16).
"""

import builtins

import numpy as np

from .tracing import (ELEMENT_TYPES, FLOAT_TYPES, Traced, current_function,
                      located)

float32, float64, float16 = np.float32, np.float64, np.float16
int32, int64 = np.int32, np.int64

__all__ = [
    "bfloat16", "float16", "float32", "float64", "int32", "int64",
    "astype",
    "abs", "add", "broadcast_to", "clip", "concatenate", "divide", "equal",
    "exp", "expand_dims", "full", "greater", "greater_equal", "less",
    "less_equal", "log", "log_softmax", "matmul", "max", "maximum", "mean",
    "min", "minimum", "multiply", "negative", "one_hot", "ones", "ones_like",
    "power", "reshape", "rsqrt", "softmax", "sqrt", "square", "squeeze",
    "stack", "std", "subtract", "sum", "take", "tanh", "transpose", "var",
    "where", "zeros", "zeros_like"]

_F32 = np.dtype(np.float32)
# BF16 values are traced as their 16-bit words, as the ABI passes them:
# `x.astype(knp.bfloat16)`.
bfloat16 = np.dtype(np.uint16)


class _Literal:
    """A Python or NumPy scalar: a literal of rank 0, which takes the float
    type of the values it meets (the language's weak literals), F32
    alone."""

    shape = ()
    dtype = _F32
    placement = None

    def __init__(self, value):
        # As a double: the language rounds it once to the type it takes.
        self.value = float(value)

    @property
    def name(self):
        v = self.value
        if np.isnan(v):
            return "(0.0 / 0.0)"
        if np.isinf(v):
            return "(%s1.0 / 0.0)" % ("-" if v < 0 else "")
        return "(%r)" % float(v)


def _function_of(*values):
    """The function being traced, where the op is written (`values` of a
    function whose trace called it are captured: FunctionTrace.local)."""
    function = current_function()
    if function is None:
        if any(isinstance(v, Traced) for v in values):
            raise located("a traced value is used after the trace of its "
                          "function ended (kept from inside a kina.jit "
                          "function?): return it instead")
        raise located("kina.numpy works on values traced by kina.jit (call "
                      "the function through kina.jit)")
    return function


def _captured_names(function, array):
    """Names under which the traced Python functions see `array`."""
    names = []
    f = function.python_function
    code = getattr(f, "__code__", None)
    if code is None:
        return names
    cells = dict(zip(code.co_freevars, f.__closure__ or ()))
    for name, cell in cells.items():
        try:
            if cell.cell_contents is array:
                names.append(name)
        except ValueError:  # an empty cell
            pass
    for name in code.co_names:
        if f.__globals__.get(name) is array:
            names.append(name)
    return names


def _operand(x, function):
    if isinstance(x, Traced):
        return function.local(x)
    if isinstance(x, (bool, np.bool_)):
        raise located("a Python bool in a traced op: write 1.0 or 0.0")
    if isinstance(x, (int, float, np.floating, np.integer)):
        return _Literal(x)
    if isinstance(x, np.ndarray):
        names = _captured_names(function, x)
        raise located(
            "%s is a NumPy array of shape %s from outside the traced "
            "function: kina.jit does not bake arrays into the program; pass "
            "it as an argument" % (
                ("'%s'" % "', '".join(names)) if names else "an operand",
                list(x.shape)))
    raise located("kina.numpy cannot take a %s" % type(x).__name__)


def _same_dtype(what, *values):
    dtypes = {v.dtype for v in values if not isinstance(v, _Literal)}
    if len(dtypes) > 1:
        raise located("%s: operands of element types %s; the language "
                      "converts none implicitly" % (
                          what, " and ".join(sorted(ELEMENT_TYPES[d]
                                                    for d in dtypes))))
    dtype = dtypes.pop() if dtypes else _F32
    if dtype not in FLOAT_TYPES and any(isinstance(v, _Literal)
                                        for v in values):
        raise located("%s: a Python scalar with an %s tensor (the "
                      "language's literals are floats)" %
                      (what, ELEMENT_TYPES[dtype]))
    return dtype


def _require_float(what, *values):
    for v in values:
        if v.dtype not in FLOAT_TYPES:
            raise located("%s takes float values, got %s" %
                          (what, ELEMENT_TYPES[v.dtype]))


def _dims(shape):
    return "[%s]" % ", ".join(map(str, shape))


def _broadcast_to(function, x, shape, dtype=_F32):
    """`x` as a value of `shape` (NumPy's rules), a name or a literal; a
    literal of float `dtype` (each traced op is its own statement, where
    the language's literal would be F32)."""
    shape = tuple(shape)
    if isinstance(x, _Literal) and dtype != _F32:
        x = function.emit("cast(%s, to=%s)" % (x.name, ELEMENT_TYPES[dtype]),
                          (), dtype)
    if x.shape == shape:
        return x
    return function.emit("broadcast[shape=%s] %s" % (_dims(shape), x.name),
                         shape, x.dtype)


def _common_shape(what, *values):
    try:
        return tuple(np.broadcast_shapes(*(v.shape for v in values)))
    except ValueError:
        raise located("%s: shapes %s do not broadcast together" % (
            what, " and ".join(str(list(v.shape)) for v in values))
        ) from None


def _elementwise(what, token, a, b, float_only=False):
    function = _function_of(a, b)
    a, b = _operand(a, function), _operand(b, function)
    if float_only:
        _require_float(what, a, b)
    dtype = _same_dtype(what, a, b)
    shape = _common_shape(what, a, b)
    a, b = (_broadcast_to(function, a, shape, dtype),
            _broadcast_to(function, b, shape, dtype))
    return function.emit("%s %s %s" % (a.name, token, b.name), shape,
                         dtype)


def add(a, b):
    return _elementwise("add", "+", a, b)


def subtract(a, b):
    return _elementwise("subtract", "-", a, b)


def multiply(a, b):
    return _elementwise("multiply", "*", a, b)


def divide(a, b):
    return _elementwise("divide", "/", a, b)


def _comparison(what, token):
    def compare(a, b):
        return _elementwise(what, token, a, b, float_only=True)
    compare.__name__ = what
    compare.__doc__ = ("`a %s b` as a mask of the operands' type: 1.0 where it holds, 0.0 "
                       "elsewhere (NaN compares false)" % token)
    return compare


equal = _comparison("equal", "==")
less = _comparison("less", "<")
less_equal = _comparison("less_equal", "<=")
greater = _comparison("greater", ">")
greater_equal = _comparison("greater_equal", ">=")


def _call(what, x, float_only=True):
    function = _function_of(x)
    x = _operand(x, function)
    if float_only:
        _require_float(what, x)
    if isinstance(x, _Literal):
        x = function.emit(x.name, (), _F32)
    return function, x


def _unary(op):
    def apply(x):
        function, x = _call(op, x)
        return function.emit("%s(%s)" % (op, x.name), x.shape, x.dtype)
    apply.__name__ = op
    apply.__doc__ = "The language's `%s`, element by element." % op
    return apply


exp, log, sqrt, rsqrt, tanh, abs = (_unary(op) for op in (
    "exp", "log", "sqrt", "rsqrt", "tanh", "abs"))


def negative(x):
    function, x = _call("negative", x, float_only=False)
    return function.emit("-%s" % x.name, x.shape, x.dtype)


def square(x):
    return multiply(x, x)


def _binary_call(op):
    def apply(a, b):
        function = _function_of(a, b)
        a, b = _operand(a, function), _operand(b, function)
        _require_float(op, a, b)
        dtype = _same_dtype(op, a, b)
        shape = _common_shape(op, a, b)
        a, b = (_broadcast_to(function, a, shape, dtype),
                _broadcast_to(function, b, shape, dtype))
        return function.emit("%s(%s, %s)" % (op, a.name, b.name), shape,
                             dtype)
    apply.__name__ = op
    apply.__doc__ = ("The language's `%s`, with NumPy broadcasting (NaN "
                     "propagates)." % op)
    return apply


maximum, minimum = _binary_call("maximum"), _binary_call("minimum")


def where(condition, x, y):
    """`x` where `condition` is not 0.0, `y` where it is: the language's
    select, which reads only the chosen element (an inf or NaN in the other
    does not reach the result)."""
    function = _function_of(condition, x, y)
    values = [_operand(v, function) for v in (condition, x, y)]
    _require_float("where", *values)
    dtype = _same_dtype("where", *values)
    shape = _common_shape("where", *values)
    c, a, b = (_broadcast_to(function, v, shape, dtype) for v in values)
    return function.emit("where(%s, %s, %s)" % (c.name, a.name, b.name),
                         shape, dtype)


def _axes(what, x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    normalized = []
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise located("%s: axis %d is out of range for shape %s" %
                          (what, a, list(x.shape)))
        normalized.append(int(a) % x.ndim)
    if len(set(normalized)) != len(normalized):
        raise located("%s: axis %r repeats an axis" % (what, axis))
    return tuple(sorted(normalized))


def _reduce(op, x, axis, keepdims):
    function, x = _call(op, x)
    axes = _axes(op, x, axis)
    for a in axes:
        shape = x.shape[:a] + (1,) + x.shape[a + 1:]
        x = function.emit("%s(%s, axis=%d)" % (op, x.name, a), shape,
                          x.dtype)
    if keepdims:
        return x
    return reshape(x, tuple(d for i, d in enumerate(x.shape)
                            if i not in axes))


def sum(x, axis=None, keepdims=False):
    """The sum over `axis` (an int, a tuple of ints or None: every axis),
    one language `sum` per axis."""
    return _reduce("sum", x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    return _reduce("mean", x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    return _reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    """The minimum: -max(-x) (NaN propagates as max's)."""
    return negative(max(negative(x), axis, keepdims))


def var(x, axis=None, keepdims=False):
    """The mean of the squared deviations from the mean (NumPy's ddof=0)."""
    d = subtract(x, mean(x, axis, keepdims=True))
    return mean(multiply(d, d), axis, keepdims)


def std(x, axis=None, keepdims=False):
    return sqrt(var(x, axis, keepdims))


def clip(x, a_min, a_max):
    """minimum(maximum(x, a_min), a_max), as NumPy's clip."""
    return minimum(maximum(x, a_min), a_max)


def _softmax(op):
    def apply(x, axis=-1):
        function, x = _call(op, x)
        (a,) = _axes(op, x, axis)
        return function.emit("%s(%s, axis=%d)" % (op, x.name, a), x.shape,
                             x.dtype)
    apply.__name__ = op
    return apply


softmax, log_softmax = _softmax("softmax"), _softmax("log_softmax")


def reshape(x, shape):
    """NumPy's reshape (one dim may be -1), row-major."""
    function, x = _call("reshape", x, float_only=False)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    shape = tuple(int(d) for d in shape)
    if shape.count(-1) > 1 or any(d < -1 or d == 0 for d in shape):
        raise located("reshape: bad shape %s" % list(shape))
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            raise located("reshape: %d elements cannot take shape %s" %
                          (x.size, list(shape)))
        shape = tuple(x.size // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise located("reshape: %d elements (shape %s) cannot take shape %s"
                      % (x.size, list(x.shape), list(shape)))
    if shape == x.shape:
        return x
    return function.emit("reshape(%s, %s)" % (x.name, _dims(shape)), shape,
                         x.dtype)


def squeeze(x, axis=None):
    """`x` without its size-1 dims (`axis`: only those, each of size 1)."""
    function, x = _call("squeeze", x, float_only=False)
    axes = (tuple(i for i, d in enumerate(x.shape) if d == 1)
            if axis is None else _axes("squeeze", x, axis))
    for a in axes:
        if x.shape[a] != 1:
            raise located("squeeze: axis %d of shape %s is not of size 1" %
                          (a, list(x.shape)))
    return reshape(x, tuple(d for i, d in enumerate(x.shape)
                            if i not in axes))


def broadcast_to(x, shape):
    """`x` broadcast to `shape` by NumPy's rules."""
    function = _function_of(x)
    x = _operand(x, function)
    shape = tuple(shape)
    try:
        fits = tuple(np.broadcast_shapes(x.shape, shape)) == shape
    except ValueError:
        fits = False
    if not fits:
        raise located("broadcast_to: shape %s does not broadcast to %s" %
                      (list(x.shape), list(shape)))
    if isinstance(x, _Literal):
        return full(shape, x.value)
    return _broadcast_to(function, x, shape)


def expand_dims(x, axis):
    shape = list(x.shape)
    a = axis if axis >= 0 else axis + x.ndim + 1
    if not 0 <= a <= x.ndim:
        raise located("expand_dims: axis %d is out of range for rank %d" %
                      (axis, x.ndim))
    return reshape(x, shape[:a] + [1] + shape[a:])


def transpose(x, axes=None):
    function, x = _call("transpose", x, float_only=False)
    axes = (tuple(reversed(range(x.ndim))) if axes is None else
            tuple(int(a) % x.ndim if -x.ndim <= a < x.ndim else -1
                  for a in axes))
    if sorted(axes) != list(range(x.ndim)):
        raise located("transpose: %r is not a permutation of the axes of "
                      "shape %s" % (axes, list(x.shape)))
    if axes == tuple(range(x.ndim)):
        return x
    shape = tuple(x.shape[a] for a in axes)
    return function.emit("transpose(%s, %s)" % (x.name, _dims(axes)), shape,
                         x.dtype)


def matmul(a, b):
    """NumPy's matmul: batch dims broadcast, a vector operand is a row
    (lhs) or a column (rhs) dropped from the result."""
    function = _function_of(a, b)
    a, b = _operand(a, function), _operand(b, function)
    _require_float("matmul", a, b)
    _same_dtype("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise located("matmul: a scalar operand (shapes %s and %s); use *" %
                      (list(a.shape), list(b.shape)))
    vector_lhs, vector_rhs = a.ndim == 1, b.ndim == 1
    if vector_lhs:
        a = reshape(a, (1,) + a.shape)
    if vector_rhs:
        b = reshape(b, b.shape + (1,))
    if a.shape[-1] != b.shape[-2]:
        raise located("matmul: contracting dims differ: shapes %s and %s" %
                      (list(a.shape), list(b.shape)))
    try:
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise located("matmul: batch dims %s and %s do not broadcast" %
                      (list(a.shape[:-2]), list(b.shape[:-2]))) from None
    a = _broadcast_to(function, a, batch + a.shape[-2:])
    b = _broadcast_to(function, b, batch + b.shape[-2:])
    shape = batch + (a.shape[-2], b.shape[-1])
    result = function.emit("%s @ %s" % (a.name, b.name), shape, a.dtype)
    if vector_lhs or vector_rhs:
        result = reshape(result, shape[:-2] +
                         (() if vector_lhs else shape[-2:-1]) +
                         (() if vector_rhs else shape[-1:]))
    return result


def take(a, indices, axis=None):
    """Rows of `a` along `axis` at the traced integer `indices` (the
    language's gather; an index out of range fails the call with
    IndexError, as the language says). `axis=None` takes from `a`
    flattened, as NumPy does."""
    function = _function_of(a, indices)
    a, indices = _operand(a, function), _operand(indices, function)
    _require_float("take", a)
    if isinstance(indices, _Literal) or indices.dtype in FLOAT_TYPES:
        raise located("take: the indices must be a traced I32 or I64 array")
    if axis is None:
        a, axis = reshape(a, (a.size,)), 0
    (axis,) = _axes("take", a, axis)
    moved = transpose(a, (axis,) + tuple(i for i in range(a.ndim)
                                          if i != axis))
    rest = moved.shape[1:]
    gathered = function.emit("gather %s %s" % (moved.name, indices.name),
                             indices.shape + rest, a.dtype)
    # gathered: ids dims, then a's dims before `axis`, then those after.
    k = indices.ndim
    order = (tuple(range(k, k + axis)) + tuple(range(k)) +
             tuple(range(k + axis, k + len(rest))))
    return transpose(gathered, order)


def one_hot(indices, num_classes):
    """F32 rows of `num_classes` with 1.0 at each index (a row of zeros
    for an index outside [0, num_classes)), as jax.nn.one_hot."""
    function, x = _call("one_hot", indices, float_only=False)
    if x.dtype in FLOAT_TYPES:
        raise located("one_hot: the indices must be I32 or I64")
    return function.emit("one_hot(%s, classes=%d)" % (x.name, num_classes),
                         x.shape + (int(num_classes),), _F32)


def concatenate(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise located("concatenate: no arrays")
    function = _function_of(*arrays)
    arrays = [_operand(x, function) for x in arrays]
    dtype = _same_dtype("concatenate", *arrays)
    if any(isinstance(x, _Literal) for x in arrays):
        raise located("concatenate: a scalar cannot be concatenated")
    (a,) = _axes("concatenate", arrays[0], axis)
    for x in arrays[1:]:
        if (x.ndim != arrays[0].ndim or
                x.shape[:a] + x.shape[a + 1:] !=
                arrays[0].shape[:a] + arrays[0].shape[a + 1:]):
            raise located("concatenate: shapes %s differ off axis %d" % (
                " and ".join(str(list(v.shape)) for v in arrays), a))
    if len(arrays) == 1:
        return arrays[0]
    shape = list(arrays[0].shape)
    shape[a] = int(np.sum([x.shape[a] for x in arrays]))
    return function.emit("concat[axis=%d] %s" % (
        a, " ".join(x.name for x in arrays)), tuple(shape), dtype)


def stack(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise located("stack: no arrays")
    return concatenate([expand_dims(x, axis) for x in arrays],
                       axis if axis >= 0 else axis + arrays[0].ndim + 1)


def full(shape, fill_value, dtype=np.float32):
    dtype = np.dtype(dtype)
    if dtype not in FLOAT_TYPES:
        raise located("full: only float constants (the language's "
                      "literals), not %s" % dtype)
    function = _function_of()
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    value = _Literal(fill_value).name
    if dtype != _F32:  # the literal in that type, rounded once
        value = "(cast(%s, to=%s))" % (value, ELEMENT_TYPES[dtype])
    if not shape:
        return function.emit(value, (), dtype)
    return function.emit("broadcast[shape=%s] %s" % (_dims(shape), value),
                         shape, dtype)


def zeros(shape, dtype=np.float32):
    return full(shape, 0.0, dtype)


def ones(shape, dtype=np.float32):
    return full(shape, 1.0, dtype)


def zeros_like(x):
    return full(x.shape, 0.0, x.dtype)


def ones_like(x):
    return full(x.shape, 1.0, x.dtype)


def astype(x, dtype):
    """`x` converted to float type `dtype` (the language's cast: rounded to
    nearest even, once; `knp.bfloat16` for BF16); `x` itself when it has
    `dtype` already."""
    dtype = np.dtype(dtype)
    function, x = _call("astype", x, float_only=False)
    if dtype == x.dtype:
        return x
    if dtype not in FLOAT_TYPES:
        raise located("astype(%s): the language casts to float types only "
                      "(float32, float64, float16, knp.bfloat16)" %
                      dtype.name)
    return function.emit("cast(%s, to=%s)" % (x.name, ELEMENT_TYPES[dtype]),
                         x.shape, dtype)


def getitem(x, key):
    """`x[key]`: ints, slices of step 1, None and ... (NumPy's basic
    indexing, as slices and reshapes), or a traced integer array (take
    along axis 0)."""
    if isinstance(key, Traced):
        return take(x, key, axis=0)
    key = key if isinstance(key, tuple) else (key,)
    traced = [i for i, k in enumerate(key) if isinstance(k, Traced)]
    if traced:
        i = traced[0]
        if len(traced) > 1 or any(
                not (isinstance(k, slice) and k == slice(None))
                for k in key[:i] + key[i + 1:]):
            raise located("index: a traced integer array indexes one axis, "
                          "with `:` on the others (x[:, ids]); got %r" %
                          (key,))
        return take(x, key[i], axis=i)
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise located("index: more than one ...")
    used = builtins.sum(k is not None and k is not Ellipsis for k in key)
    if used > x.ndim:
        raise located("index: %d indices for shape %s" % (used,
                                                          list(x.shape)))
    ellipsis = [i for i, k in enumerate(key) if k is Ellipsis]
    i = ellipsis[0] if ellipsis else len(key)
    key = key[:i] + (slice(None),) * (x.ndim - used) + key[i + 1:]
    function = _function_of(x)
    x = _operand(x, function)
    result_shape, dim = [], 0
    for k in key:
        if k is None:
            result_shape.append(1)
            continue
        size = x.shape[dim]
        if isinstance(k, (int, np.integer)):
            if not -size <= k < size:
                raise IndexError(str(located(
                    "index %d is out of bounds for axis %d of size %d" %
                    (k, dim, size))))
            start = int(k) % size
            x = _slice(function, x, dim, start, start + 1)
            dim += 1
        elif isinstance(k, slice):
            start, stop, step = k.indices(size)
            if step != 1:
                raise located("index: slices of step %d (only step 1)" % step)
            if stop <= start:
                raise located("index: the slice %r of axis %d (size %d) is "
                              "empty" % (k, dim, size))
            x = _slice(function, x, dim, start, stop)
            result_shape.append(stop - start)
            dim += 1
        else:
            raise located("index: %r is not an int, a slice, None or ... "
                          "(a traced integer array indexes alone: x[ids])" %
                          (k,))
    return reshape(x, tuple(result_shape))


def _slice(function, x, axis, start, stop):
    if start == 0 and stop == x.shape[axis]:
        return x
    shape = x.shape[:axis] + (stop - start,) + x.shape[axis + 1:]
    return function.emit("slice[axis=%d, start=%d, stop=%d] %s" % (
        axis, start, stop, x.name), shape, x.dtype)


def power(x, exponent):
    """`x ** n` for the exponents the language writes exactly: 1, 2, 3 as
    products, -1 as a division, 0.5 as sqrt, -0.5 as rsqrt."""
    if not isinstance(exponent, (int, float, np.integer, np.floating)) or \
            isinstance(exponent, bool):
        raise located("x ** y: the exponent must be a Python number (the "
                      "language has no pow; for b ** x write "
                      "knp.exp(x * math.log(b)))")
    if exponent == 1:
        return x
    if exponent == 2:
        return multiply(x, x)
    if exponent == 3:
        return multiply(multiply(x, x), x)
    if exponent == -1:
        return divide(1.0, x)
    if exponent == 0.5:
        return sqrt(x)
    if exponent == -0.5:
        return rsqrt(x)
    raise located("x ** %r: only the exponents 1, 2, 3, -1, 0.5 and -0.5 "
                  "(the language has no pow)" % (exponent,))


def _install_operators():
    """Traced's operators and methods, as ndarray's."""
    def reflected(f):
        return lambda self, other: f(other, self)

    T = Traced
    T.__add__, T.__radd__ = add, reflected(add)
    T.__sub__, T.__rsub__ = subtract, reflected(subtract)
    T.__mul__, T.__rmul__ = multiply, reflected(multiply)
    T.__truediv__, T.__rtruediv__ = divide, reflected(divide)
    T.__matmul__, T.__rmatmul__ = matmul, reflected(matmul)
    T.__neg__ = negative
    T.__abs__ = abs
    T.__pow__ = power
    T.__rpow__ = lambda self, base: power(base, self)
    T.__eq__, T.__lt__, T.__le__ = equal, less, less_equal
    T.__gt__, T.__ge__ = greater, greater_equal
    T.__getitem__ = getitem
    T.__iter__ = lambda self: (self[i] for i in range(len(self)))
    T.T = property(lambda self: transpose(self))
    T.reshape = lambda self, *shape: reshape(
        self, shape[0] if len(shape) == 1 else shape)
    T.transpose = lambda self, *axes: transpose(
        self, (axes[0] if len(axes) == 1 else axes) or None)
    T.sum = lambda self, axis=None, keepdims=False: sum(self, axis, keepdims)
    T.mean = lambda self, axis=None, keepdims=False: mean(self, axis,
                                                          keepdims)
    T.max = lambda self, axis=None, keepdims=False: max(self, axis, keepdims)
    T.min = lambda self, axis=None, keepdims=False: min(self, axis, keepdims)
    T.var = lambda self, axis=None, keepdims=False: var(self, axis, keepdims)
    T.std = lambda self, axis=None, keepdims=False: std(self, axis, keepdims)
    T.squeeze = lambda self, axis=None: squeeze(self, axis)
    T.astype = astype


_install_operators()
