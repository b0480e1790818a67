"""Compiled gradients against central finite differences (as
`jax.test_util.check_grads` does): `kina.check_grads(m, "F", *args,
wrt=["w", ...])`.

The module must have been compiled here from source (kina.compile or
kina.compile_file): the check compiles that source again with
`fn <F>_check_grads = reverseMode(F, wrt=[...])` added. For each `wrt`
parameter p and a random direction v (and, for a result of rank > 0, a
random cotangent s), the compiled gradient's <grad_p, v> is compared with
(phi(p + eps v) - phi(p - eps v)) / (2 eps), phi = <s, F(...)>, evaluated
by the compiled F in its own type: F32 or F64 (16-bit floats are too
coarse for finite differences)."""

import numpy as np

__all__ = ["GradientCheckError", "check_grads"]

# The element types finite differences check, by signature name.
_CHECKED = {"f32": np.float32, "f64": np.float64}


class GradientCheckError(AssertionError):
    """A compiled gradient disagrees with finite differences; `parameter`
    is the worst one and `error` its relative error."""

    def __init__(self, message, parameter, error):
        super().__init__(message)
        self.parameter = parameter
        self.error = error


def check_grads(module, name, *args, wrt, eps=1e-3, rtol=2e-2, seed=0,
                **kwargs):
    """Raises GradientCheckError naming the parameter whose gradient is
    farthest from central finite differences, when that relative error
    exceeds `rtol`; returns {parameter: relative error} otherwise. The
    arguments bind as a call's do, by position or by parameter name."""
    from . import _compile
    from .devices import bind_arguments
    if module._source is None:
        raise ValueError("check_grads recompiles the program: use a module "
                         "from kina.compile or kina.compile_file")
    signature = module.functions.get(name)
    if signature is None:
        raise ValueError("module has no function %r" % name)
    params = [p.name for p in signature.params]
    unknown = [p for p in wrt if p not in params]
    if unknown or not wrt:
        raise ValueError("wrt must name parameters of %s (%s), got %s" % (
            name, ", ".join(params), list(wrt)))
    # What reverseMode refuses, said of the user's function and parameter
    # (from the signature) rather than of the line the check adds.
    several = len(signature.results) > 1
    if several or signature.result.dtype not in _CHECKED:
        raise ValueError(
            "check_grads: '%s' returns %s; the check takes a function of "
            "one F32 or F64 result" % (name, "%d results" %
                                       len(signature.result) if several
                                       else signature.result.dtype.upper()))
    for p in signature.params:
        if p.name in wrt and p.dtype not in _CHECKED:
            raise ValueError(
                "check_grads: parameter '%s' of '%s' is %s; the check "
                "takes F32 and F64 parameters (16-bit floats are too coarse "
                "for finite differences; integers have no gradient)" % (
                    p.name, name, p.dtype.upper()))
    text, filename, tuning = module._source
    checker = "%s_check_grads" % name
    checked = _compile(text + "\nfn %s = reverseMode(%s, wrt=[%s])\n" % (
        checker, name, ", ".join(wrt)), filename, tuning,
        auto_shard=module._auto_shard)
    rng = np.random.default_rng(seed)
    args = [np.asarray(a) for a in bind_arguments(signature, args, kwargs)]
    result = signature.result
    cotangent = (None if len(result.shape) == 0 else
                 rng.standard_normal(result.shape).astype(
                     _CHECKED[result.dtype]))
    forward = getattr(checked, name)
    outputs = getattr(checked, checker)(
        *(args + ([] if cotangent is None else [cotangent])))

    def phi(values):
        out = np.asarray(forward(*values), dtype=np.float64)
        return float(out if cotangent is None else (out * cotangent).sum())

    errors = {}
    for param, gradient in zip(wrt, outputs[1:]):
        index = params.index(param)
        direction = rng.standard_normal(args[index].shape).astype(
            args[index].dtype)
        step = eps * max(1.0, float(np.abs(args[index]).max()))
        shifted = []
        for sign in (1, -1):
            values = list(args)
            values[index] = (args[index] + sign * step *
                             direction).astype(args[index].dtype)
            shifted.append(phi(values))
        numeric = (shifted[0] - shifted[1]) / (2 * step)
        analytic = float((np.asarray(gradient, np.float64) * direction).sum())
        scale = max(abs(numeric), abs(analytic), 1e-6)
        errors[param] = abs(numeric - analytic) / scale
    worst = max(errors, key=errors.get)
    if errors[worst] > rtol:
        raise GradientCheckError(
            "%s: the gradient of parameter '%s' is %.3g off finite "
            "differences (relative; tolerance %.3g)" % (
                name, worst, errors[worst], rtol), worst, errors[worst])
    return errors
