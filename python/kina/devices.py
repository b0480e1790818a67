"""Per-device execution of a program with a mesh: blocks of global tensors,
the threaded simulator, and what each device holds.

The layout is the signature's (docs/interfaces.md, "Sharded programs"):
devices are numbered row-major over the mesh axes; a tensor dim cut over a
mesh axis of size G is split into G equal contiguous blocks, device
coordinate i holding block i; a partial tensor holds a summand.
"""

import collections

import numpy as np

from . import _kina

MeshAxis = collections.namedtuple("MeshAxis", "name size")


class Mesh:
    """The mesh of a compiled program."""

    def __init__(self, axes):
        self.axes = tuple(MeshAxis(a["name"], a["size"]) for a in axes)
        self.num_devices = int(np.prod([a.size for a in self.axes]))

    def coordinates(self, device):
        """Device `device`'s coordinate on each mesh axis (row-major)."""
        coords = []
        for axis in reversed(self.axes):
            coords.append(device % axis.size)
            device //= axis.size
        return tuple(reversed(coords))

    def __repr__(self):
        return "@mesh([%s])" % ", ".join("%s = %d" % a for a in self.axes)


class Placed:
    """One tensor of a per-device function: its local and global shapes,
    and where each device's block lies."""

    def __init__(self, entry, mesh):
        self.name = entry.get("name", "result")
        self.dtype = entry["numpy_dtype"]
        self.local_shape = tuple(entry["shape"])
        placed = entry["global"]
        self.placement = placed["placement"]
        self.shape = tuple(placed["shape"])
        self.split = tuple(placed["split"])
        self.partial = tuple(placed["partial"])
        self.mesh = mesh

    def block(self, device):
        """The index of device `device`'s block in the global tensor."""
        coords = self.mesh.coordinates(device)
        index = []
        for dim, over in enumerate(self.split):
            if over < 0:
                index.append(slice(None))
            else:
                size = self.local_shape[dim]
                start = coords[over] * size
                index.append(slice(start, start + size))
        return tuple(index)

    def distribute(self, value):
        """Each device's block of the global `value`, in device order.
        A partial input is given whole to coordinate 0 of its partial axes
        and as zeros to the others (so that the summands add up to it)."""
        blocks = []
        for device in range(self.mesh.num_devices):
            # A view: a whole (replicated) block is not copied; the call
            # copies a strided one.
            block = value[self.block(device)]
            coords = self.mesh.coordinates(device)
            if any(coords[p] != 0 for p in self.partial):
                block = np.zeros_like(block)
            blocks.append(block)
        return blocks

    def assemble(self, blocks):
        """The global tensor from the devices' blocks: placed by their
        splits, summed (in device order) over partial axes; a replicated
        block is taken from the first device that holds it, after checking
        that every other holder has the same bits (a hand-written per-device
        program may declare a placement its values do not have)."""
        value = np.zeros(self.shape, dtype=self.dtype)
        filled = {}
        for device, block in enumerate(blocks):
            coords = self.mesh.coordinates(device)
            index = self.block(device)
            # The devices that hold the same block of the same summand.
            key = (tuple((s.start, s.stop) for s in index
                         if isinstance(s, slice) and s.start is not None),
                   tuple(coords[p] for p in self.partial))
            if key in filled:
                first, held = filled[key]
                if np.asarray(block).tobytes() != np.asarray(held).tobytes():
                    raise DeviceError(
                        "devices %d and %d hold different values of a block "
                        "their result's placement (%s) says they share" % (
                            first, device, self.placement))
                continue
            filled[key] = (device, block)
            if all(over < 0 for over in self.split) and not self.partial:
                value = block  # replicated: every device holds all of it
                continue
            if self.partial:
                value[index] += block
            else:
                value[index] = block
        return value


class PerDeviceFunction:
    """The per-device form of a function of a program with a mesh.
    `results` holds one Placed per result; `result` is the one result of a
    single-result function (None for several)."""

    def __init__(self, entry, mesh, index):
        self.name = entry["name"]
        self.index = index
        self.mesh = mesh
        self.params = tuple(Placed(p, mesh) for p in entry["params"])
        self.results = tuple(Placed(dict(r, name="result_%d" % i
                                         if len(entry["results"]) > 1
                                         else "result"), mesh)
                             for i, r in enumerate(entry["results"]))
        self.result = self.results[0] if len(self.results) == 1 else None

    def assemble(self, local):
        """The global value from each device's list of local results: an
        array for one result, a tuple for several."""
        values = tuple(placed.assemble([results[i] for results in local])
                       for i, placed in enumerate(self.results))
        return values[0] if len(values) == 1 else values

    def per_device(self, local):
        """Each device's local value: an array, or a tuple for several
        results."""
        if len(self.results) == 1:
            return [results[0] for results in local]
        return [tuple(results) for results in local]


def _check_global(function, args):
    if len(args) != len(function.params):
        raise ValueError("%s() takes %d argument(s) (%s), got %d" % (
            function.name, len(function.params),
            ", ".join(p.name for p in function.params), len(args)))
    arrays = []
    for param, arg in zip(function.params, args):
        array = np.asarray(arg)
        if array.dtype != param.dtype or array.shape != param.shape:
            # As a direct call: a wrong dtype is a TypeError, a wrong
            # shape a ValueError.
            error = TypeError if array.dtype != param.dtype else ValueError
            raise error(
                "%s(): parameter '%s' expects %s of shape %s, got %s of "
                "shape %s" % (function.name, param.name, param.dtype,
                              list(param.shape), array.dtype,
                              list(array.shape)))
        arrays.append(array)
    return arrays


class Report(list):
    """One row per op of the program: `op`, `location`, `placement`,
    `max_abs_diff` (sharded against unsharded) and `name` (the source name
    bound to the op's value, `h` for `h = x @ w`; empty when none). Prints
    as a table."""

    def __str__(self):
        if not self:
            return "(no ops)"
        width = max(len(r.location) for r in self)
        named = max(len("value"), *(len(r.name) for r in self))
        lines = ["%-*s  %-*s  %-16s  %-34s  %s" % (
            width, "location", named, "value", "op", "placement",
            "max_abs_diff")]
        for r in self:
            lines.append("%-*s  %-*s  %-16s  %-34s  %.3g" % (
                width, r.location, named, r.name, r.op, r.placement,
                r.max_abs_diff))
        return "\n".join(lines)

    def __repr__(self):
        return str(self)


ReportRow = collections.namedtuple("ReportRow",
                                   "op location placement max_abs_diff name",
                                   defaults=("",))


class SimulationResult:
    """What `Module.simulate` returns: `value` (the global result, a tuple
    for several), `per_device` (each device's local result, a tuple for
    several), `report`, `bytes_moved`, `collective_seconds`."""

    def __init__(self, value, per_device, report, bytes_moved,
                 collective_seconds):
        self.value = value
        self.per_device = per_device
        self.report = report
        self.bytes_moved = bytes_moved
        self.collective_seconds = collective_seconds

    def __repr__(self):
        values = self.value if isinstance(self.value, tuple) else (
            self.value,)
        return ("<kina.SimulationResult: %d devices, %d bytes moved, "
                "value %s>" % (len(self.per_device), self.bytes_moved,
                               ", ".join("%s %s" % (v.dtype, list(v.shape))
                                         for v in values)))


class DeviceError(RuntimeError):
    """A device of a simulated or MPI run failed; every device stopped."""


class Distributed:
    """The global arguments of a per-device function cut into each device's
    blocks once (dense copies), as devices hold their weights: a run on it
    moves no argument data (`Module.distribute`)."""

    def __init__(self, function, args):
        self.function = function
        self.global_args = _check_global(function, args)
        self.per_device = [[] for _ in range(function.mesh.num_devices)]
        for param, array in zip(function.params, self.global_args):
            for device, block in enumerate(param.distribute(array)):
                self.per_device[device].append(
                    np.array(block, dtype=param.dtype, order="C"))


def bind_arguments(function, args, kwargs):
    """`args` with the keyword arguments `kwargs` put in their parameters'
    places, as a direct call binds them; TypeError for an unknown name, one
    given twice or one missing."""
    if not kwargs:
        return args
    names = [p.name for p in function.params]
    bound = list(args) + [None] * (len(names) - len(args))
    if len(args) > len(names):
        raise TypeError("%s() takes %d argument(s) (%s), got %d" % (
            function.name, len(names), ", ".join(names),
            len(args) + len(kwargs)))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError("%s() got an unexpected keyword argument %r "
                            "(its parameters: %s)" % (function.name, key,
                                                      ", ".join(names)))
        index = names.index(key)
        if index < len(args):
            raise TypeError("%s() got parameter %r twice" %
                            (function.name, key))
        bound[index] = value
    missing = [n for n, value in zip(names, bound) if value is None]
    if missing:
        raise TypeError("%s() is missing argument(s) %s" % (
            function.name, ", ".join(missing)))
    return bound


def run_threads(library, function, args, threads_per_device, timeout):
    """Runs `function` on one thread per device, on global `args` or on a
    Distributed; (each device's list of local results, bytes moved,
    seconds in collectives, each device's probe values). Raises on a
    failed status."""
    if len(args) == 1 and isinstance(args[0], Distributed):
        if args[0].function.name != function.name:
            raise ValueError("arguments distributed for %s, not %s" % (
                args[0].function.name, function.name))
        per_device = args[0].per_device
    else:
        arrays = _check_global(function, args)
        per_device = [[] for _ in range(function.mesh.num_devices)]
        for param, array in zip(function.params, arrays):
            for device, block in enumerate(param.distribute(array)):
                per_device[device].append(block)
    results, statuses, moved, seconds, error, probes = library.simulate(
        function.index, per_device, threads_per_device, timeout)
    check_statuses(function.name, statuses, error)
    return results, moved, seconds, probes


def divergence_report(probe_entries, device_probes, unsharded_probes, mesh):
    """One row per probed op: its value assembled from the devices' blocks
    against the unsharded program's."""
    report = Report()
    for i, entry in enumerate(probe_entries):
        placed = Placed(entry["tensor"], mesh)
        sharded = placed.assemble([probes[i] for probes in device_probes])
        whole = unsharded_probes[i]
        if sharded.size == 0:
            diff = 0.0
        else:
            difference = np.abs(sharded.astype(np.float64) -
                                whole.astype(np.float64))
            # NaN where both are NaN (or the same infinity) is no divergence.
            same = (sharded == whole) | (np.isnan(sharded) & np.isnan(whole))
            diff = float(np.where(same, 0.0, difference).max())
        report.append(ReportRow(entry["op"], entry["location"],
                                placed.placement, diff,
                                entry.get("name", "")))
    return report


def check_statuses(name, statuses, error=""):
    """Raises unless every device returned success (IndexError for a gather
    id out of range, as the host form does)."""
    if all(s == 0 for s in statuses):
        return
    if len(set(statuses)) != 1:
        raise DeviceError("%s: devices disagree on the status: %s" %
                          (name, statuses))
    status = statuses[0]
    message = "%s on %d devices: %s (status %d on every device)" % (
        name, len(statuses), _kina.describe_status(status), status)
    if error:
        message += ": " + error
    if status == _kina.STATUS_GATHER_OUT_OF_RANGE:
        raise IndexError(message)
    raise DeviceError(message)
