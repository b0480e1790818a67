"""The step loop of `python3 -m kina.mpi --steps N`: a training step of any
program, run N times on the ranks (docs/interfaces.md, "N devices on MPI
ranks").

Each step calls FUNCTION once. A result declared `@reuses(p)` feeds back as
parameter p (each rank keeps its block, written in place); the other
arguments of step s (1, 2, ...) come from the user's `module:function`
(`--feed`), called on every rank as function(s) -> {parameter name: global
array}, or else from INPUTS.npz, the same every step. `--checkpoint PATH
--every K` writes the state (every reused parameter, as global arrays) and
the step atomically every K steps and after the last; `--resume` starts
from PATH. A checkpoint holds global arrays, so one written under any
placement of the state (data parallel, ZeRO-1, ZeRO-3) resumes under any
other.
"""

import hashlib
import importlib
import os
import sys
import traceback

import numpy as np

from .files import atomic_writer

STEP_KEY = "kina_step"
FUNCTION_KEY = "kina_function"


def load_feed(spec):
    """The callable `module:function` names (the current directory is on
    the path, as for `python3 -m`)."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise ValueError("--feed takes module:function, got %r" % spec)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise  # the feed's module imports something missing
        raise ValueError("--feed %s: no module %r in the current directory "
                         "(%s) or on sys.path" % (spec, module_name,
                                                   os.getcwd()))
    feed = getattr(module, function_name, None)
    if not callable(feed):
        raise ValueError("--feed %s: %s has no function %r" % (
            spec, module.__file__, function_name))
    return feed


def where_raised(error):
    """' (raised at FILE:LINE in FUNCTION)': the innermost frame of
    `error`'s traceback (the user's feed), or nothing."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    frame = frames[-1]
    return " (raised at %s:%d in %s)" % (frame.filename, frame.lineno,
                                         frame.name)


def digests(arrays, count):
    """One int64 per parameter index below `count`: a digest of the bytes
    (and dtype and shape) of arrays[index], 0 where none is given. Ranks
    compare them to check that the feed gave every rank the same global
    arrays."""
    out = np.zeros(count, dtype=np.int64)
    for index, array in arrays.items():
        array = np.ascontiguousarray(array)
        digest = hashlib.blake2b(digest_size=8)
        digest.update(repr((array.dtype.str, array.shape)).encode())
        digest.update(array.tobytes())
        out[index] = np.frombuffer(digest.digest(), dtype=np.int64)[0] | 1
    return out


def state_parameters(entry, function):
    """{result index: parameter index} of the results that reuse a
    parameter (the state carried from step to step)."""
    names = [p.name for p in function.params]
    return {i: names.index(r["reuses"]) for i, r in enumerate(entry["results"])
            if r.get("reuses")}


def fed(feed, step, function, state):
    """The global arrays `feed` gives for step `step`, by parameter index,
    checked: known non-state parameter names, each array of its
    parameter's dtype and global shape."""
    given = feed(step)
    if not isinstance(given, dict):
        raise ValueError("the feed returned %s for step %d, not a dict of "
                         "arrays by parameter name" % (type(given).__name__,
                                                       step))
    by_name = {p.name: i for i, p in enumerate(function.params)}
    arrays = {}
    for name, value in given.items():
        if name not in by_name:
            raise ValueError("the feed gave %r for step %d, which is not a "
                             "parameter of %s (its parameters: %s)" % (
                                 name, step, function.name,
                                 ", ".join(by_name)))
        index = by_name[name]
        if index in state:
            raise ValueError("the feed gave %r for step %d, but a result "
                             "reuses it: it carries over from the step "
                             "before" % (name, step))
        arrays[index] = checked(function.params[index], value, "the feed")
    return arrays


def checked(param, value, source):
    """`value` as an array of `param`'s dtype and global shape, or a
    ValueError naming the parameter, `source` and both shapes."""
    array = np.asarray(value)
    if array.dtype != param.dtype or array.shape != param.shape:
        raise ValueError("%s gives parameter '%s' %s of shape %s; it takes "
                         "%s of shape %s" % (source, param.name, array.dtype,
                                             list(array.shape), param.dtype,
                                             list(param.shape)))
    return array


def save_checkpoint(path, function_name, step, arrays):
    """Writes {name: global array} with the step, atomically: a temporary
    file in the same directory renamed over `path` (never half a file)."""
    with atomic_writer(path) as out:
        np.savez(out, **{STEP_KEY: np.int64(step),
                         FUNCTION_KEY: np.array(function_name)}, **arrays)


def load_checkpoint(path, function, state):
    """(step, {parameter index: global array}) from a checkpoint of
    `function`'s state; ValueError naming what does not match."""
    try:
        data = np.load(path)
    except (OSError, ValueError) as error:
        raise ValueError("%s is not a kina.mpi checkpoint (an .npz archive "
                         "of arrays): %s" % (path, error))
    if not hasattr(data, "files"):
        raise ValueError("%s is not a kina.mpi checkpoint: it holds one "
                         "array, not an .npz archive" % path)
    with data:
        if STEP_KEY not in data or FUNCTION_KEY not in data:
            raise ValueError("%s is not a kina.mpi checkpoint (no %s)" % (
                path, STEP_KEY))
        if str(data[FUNCTION_KEY]) != function.name:
            raise ValueError("%s is a checkpoint of %s, not of %s" % (
                path, data[FUNCTION_KEY], function.name))
        arrays = {}
        for index in state.values():
            param = function.params[index]
            if param.name not in data:
                raise ValueError("%s holds no %r" % (path, param.name))
            arrays[index] = checked(param, data[param.name],
                                    "checkpoint %s" % path)
        return int(data[STEP_KEY]), arrays
