"""Programs whose propagation inserts exactly one collective each, on a
mesh of any size, with odd extents, and what NumPy says they compute.
Shared by the simulator's and MPI's collective tests."""

import numpy as np

# name: (collective inserted, source body, NumPy of the arguments)
CASES = {
    "collect": ("all_gather", "return x", lambda x: x),
    "keep": ("all_slice", "return x", lambda x: x),
    "move": ("all_to_all", "return x", lambda x: x),
    "add_up": ("all_reduce", "return x @ w", lambda x, w: x @ w),
    "scatter": ("reduce_scatter", "return x @ w", lambda x, w: x @ w),
}


def program(sizes, over=None):
    """Every case on `@mesh(sizes)`, cut over mesh axis `over` (a name
    when the mesh has several axes). Extents are odd multiples of the
    axis size n: 5 rows, 3n columns, and so on."""
    if len(sizes) == 1:
        mesh = "@mesh([%d])" % sizes[0]
        n, by = sizes[0], ""
    else:
        names = ["rows", "cols"][:len(sizes)]
        mesh = "@mesh([%s], axes=[%s])" % (", ".join(map(str, sizes)),
                                           ", ".join(names))
        n, by = sizes[names.index(over)], ", over=%s" % over

    def cut(axis):
        return "@sharded(axis=%d%s)" % (axis, by)

    signatures = {
        "collect": ("x: Tensor[F32, [5, %d], %s]" % (3 * n, cut(1)),
                    "Tensor[F32, [5, %d], @replicated]" % (3 * n)),
        "keep": ("x: Tensor[I64, [5, %d], @replicated]" % (3 * n),
                 "Tensor[I64, [5, %d], %s]" % (3 * n, cut(1))),
        "move": ("x: Tensor[I32, [%d, %d], %s]" % (3 * n, 5 * n, cut(0)),
                 "Tensor[I32, [%d, %d], %s]" % (3 * n, 5 * n, cut(1))),
        "add_up": ("x: Tensor[F32, [5, %d], %s], w: Tensor[F32, [%d, 7], %s]"
                   % (3 * n, cut(1), 3 * n, cut(0)),
                   "Tensor[F32, [5, 7], @replicated]"),
        "scatter": ("x: Tensor[F32, [5, %d], %s], w: Tensor[F32, [%d, %d], %s]"
                    % (3 * n, cut(1), 3 * n, 3 * n, cut(0)),
                    "Tensor[F32, [5, %d], %s]" % (3 * n, cut(1))),
    }
    lines = [mesh, ""]
    for name, (params, result) in signatures.items():
        lines += ["fn %s(%s) -> %s {" % (name, params, result),
                  "  " + CASES[name][1], "}", ""]
    return "\n".join(lines)


def arguments(module, name, seed=0):
    """Random global arguments of function `name` of `module`."""
    rng = np.random.default_rng(seed)
    args = []
    for param in module.functions[name].params:
        if param.dtype == "f32":
            args.append(rng.standard_normal(param.shape).astype(np.float32))
        else:
            args.append(rng.integers(-1000, 1000, size=param.shape)
                        .astype(np.dtype(param.dtype.replace("i", "int"))))
    return args


def expected(name, args):
    return CASES[name][2](*args)
