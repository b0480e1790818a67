"""Named shardings for `kina.jit`, as JAX writes them, turned into the
language's placements:

    mesh = kina.sharding.Mesh((2, 2), ("dp", "tp"))
    NamedSharding(mesh, P("dp", None))   # @sharded(axis=0, over=dp)
    NamedSharding(mesh, P())             # @replicated

`P(("dp", "tp"))` (one dim over two mesh axes) becomes the language's
placement for it, and so its error while the language cannot say it.
"""

import math
import re

__all__ = ["Mesh", "NamedSharding", "P", "PartitionSpec"]

_AXIS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class Mesh:
    """A mesh of devices: its shape and one name per axis."""

    def __init__(self, shape, axis_names):
        shape = tuple(shape)
        axis_names = tuple((axis_names,) if isinstance(axis_names, str)
                           else axis_names)
        if not shape or any(isinstance(s, bool) or not isinstance(s, int)
                            or s < 1 for s in shape):
            raise ValueError("Mesh: the shape must be positive ints, got %r"
                             % (shape,))
        if len(axis_names) != len(shape):
            raise ValueError("Mesh: %d axis names for a shape of %d axes" %
                             (len(axis_names), len(shape)))
        for name in axis_names:
            if not isinstance(name, str) or not _AXIS_NAME.match(name):
                raise ValueError("Mesh: axis name %r is not an identifier" %
                                 (name,))
        if len(set(axis_names)) != len(axis_names):
            raise ValueError("Mesh: axis names repeat: %r" % (axis_names,))
        self.shape = shape
        self.axis_names = axis_names

    @property
    def devices(self):
        return math.prod(self.shape)

    def size(self, axis_name):
        return self.shape[self.axis_names.index(axis_name)]

    def declaration(self):
        """The program's `@mesh(...)` line."""
        return "@mesh([%s], axes=[%s])" % (
            ", ".join(map(str, self.shape)), ", ".join(self.axis_names))

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.shape == other.shape and
                self.axis_names == other.axis_names)

    def __hash__(self):
        return hash((self.shape, self.axis_names))

    def __repr__(self):
        return "Mesh(%r, %r)" % (self.shape, self.axis_names)


class PartitionSpec(tuple):
    """Per tensor dim: the mesh axis it is split over, or None."""

    def __new__(cls, *entries):
        return super().__new__(cls, entries)

    def __repr__(self):
        return "P(%s)" % ", ".join(map(repr, self))


P = PartitionSpec


class NamedSharding:
    """A tensor's placement on `mesh`: `spec` names, per dim, the mesh
    axis (or tuple of axes) it is split over, or None."""

    def __init__(self, mesh, spec=PartitionSpec()):
        if not isinstance(mesh, Mesh):
            raise TypeError("NamedSharding: expected a kina.sharding.Mesh, "
                            "got %s" % type(mesh).__name__)
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        self.mesh = mesh
        self.spec = spec

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and
                self.mesh == other.mesh and self.spec == other.spec)

    def __hash__(self):
        return hash((self.mesh, tuple(self.spec)))

    def __repr__(self):
        return "NamedSharding(%r, %r)" % (self.mesh, self.spec)

    def placement(self, shape, what):
        """The language's placement of a tensor of `shape`; `what` ("the
        argument params['wq']") opens the errors."""
        if len(self.spec) > len(shape):
            raise ValueError("%s: %r names %d dims, but the tensor has shape "
                             "%s" % (what, self.spec, len(self.spec),
                                     list(shape)))
        dims, axes = [], []
        for dim, entry in enumerate(self.spec):
            names = ((entry,) if isinstance(entry, str) else
                     () if entry is None else tuple(entry))
            for name in names:
                if name not in self.mesh.axis_names:
                    raise ValueError(
                        "%s: unknown mesh axis %r in %r (the mesh's axes: "
                        "%s)" % (what, name, self.spec,
                                 ", ".join(self.mesh.axis_names)))
            parts = math.prod(self.mesh.size(n) for n in names)
            if shape[dim] % parts:
                raise ValueError(
                    "%s: dim %d of shape %s (size %d) does not divide over "
                    "mesh axis %s of size %d" % (
                        what, dim, list(shape), shape[dim],
                        " x ".join(names), parts))
            dims += [dim] * len(names)
            axes += names
        if not dims:
            return "@replicated"
        if len(dims) == 1:
            return "@sharded(axis=%d, over=%s)" % (dims[0], axes[0])
        return "@sharded(axis=[%s], over=[%s])" % (
            ", ".join(map(str, dims)), ", ".join(axes))
