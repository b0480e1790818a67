"""`kina.show_sharding(m, "NAME")`: which block of every parameter, value
and result of a sharded function each device holds, as a table (always)
and a figure (in a notebook, or when asked)."""

import numpy as np


def _blocks(placed):
    """Per device: the index ranges of its block, `[0:2, :]`-style."""
    text = []
    for device in range(placed.mesh.num_devices):
        parts = []
        for dim, index in enumerate(placed.block(device)):
            if index.start is None:
                parts.append(":")
            else:
                parts.append("%d:%d" % (index.start, index.stop))
        summand = ""
        if placed.partial:
            summand = " +"  # one summand of the value
        text.append("[" + ", ".join(parts) + "]" + summand)
    return text


def _rows(module, name, values):
    """(kind, label, Placed) of the parameters, the probed values (when
    `values`) and the result."""
    from .devices import Placed
    function = module._device_function(name)
    rows = [("param", p.name, p) for p in function.params]
    if values:
        probed = module._probed()
        entry = probed._described["devices"][
            probed.per_device[name].index]
        for probe in entry["probes"]:
            # `h @7:9`: the source name bound to the value where there is
            # one, else the op (`matmul @7:9`, an intermediate).
            location = probe["location"].rsplit(":", 2)
            label = "%s @%s" % (probe.get("name") or
                                probe["op"].replace("kina.", ""),
                                ":".join(location[-2:]))
            rows.append(("value", label, Placed(probe["tensor"],
                                                module.mesh)))
    rows.extend(("result", placed.name, placed) for placed in function.results)
    return function, rows


def sharding_table(module, name, values=True):
    """The table `show_sharding` prints."""
    function, rows = _rows(module, name, values)
    devices = module.mesh.num_devices
    header = ["", "tensor", "global", "placement"] + [
        "device %d %s" % (d, module.mesh.coordinates(d))
        for d in range(devices)]
    lines = [header]
    for kind, label, placed in rows:
        lines.append([kind, label, "%s%s" % (placed.dtype.name,
                                             list(placed.shape)),
                      placed.placement] + _blocks(placed))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    title = "%s on %s: %d devices" % (function.name, module.mesh, devices)
    table = [title] + ["  ".join(cell.ljust(w) for cell, w in
                                 zip(line, widths)).rstrip()
                       for line in lines]
    if any(placed.partial for _, _, placed in rows):
        table.append("+ (@partial): each device holds a summand of the "
                     "whole block; the value is their sum, which an "
                     "all_reduce makes where a whole value is needed")
    return "\n".join(table)


def sharding_figure(module, name, values=True):
    """A matplotlib figure: one row per tensor, one column per device, the
    device's block filled in the tensor (seen as rows x last dim)."""
    import matplotlib.pyplot as plt
    function, rows = _rows(module, name, values)
    devices = module.mesh.num_devices
    figure, axes = plt.subplots(len(rows), devices, squeeze=False,
                                figsize=(1.6 * devices + 2,
                                         0.55 * len(rows) + 1))
    for r, (kind, label, placed) in enumerate(rows):
        shape = placed.shape if placed.shape else (1,)
        grid = np.zeros((int(np.prod(shape[:-1])), shape[-1]))
        for device in range(devices):
            mask = np.zeros(shape)
            mask[placed.block(device)] = 1
            ax = axes[r][device]
            ax.imshow(mask.reshape(grid.shape), cmap="Blues", vmin=0, vmax=1.4,
                      aspect="auto", interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if placed.partial:
                ax.set_title("partial", fontsize=6, pad=1)
            if device == 0:
                ax.set_ylabel(label, rotation=0, ha="right", va="center",
                              fontsize=7)
            if r == 0:
                ax.set_xlabel("device %d" % device, fontsize=7)
                ax.xaxis.set_label_position("top")
    figure.suptitle("%s on %s" % (function.name, module.mesh), fontsize=9)
    figure.tight_layout()
    return figure


def _in_notebook():
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "ZMQ" in type(shell).__name__


def show_sharding(module, name, values=True, figure=None):
    """Prints which block of every parameter, value (`values`: the ops of
    the function, from an instrumented build compiled on first use) and
    the result each device holds; in a notebook (or with figure=True) also
    draws it and returns the matplotlib figure."""
    print(sharding_table(module, name, values))
    if figure or (figure is None and _in_notebook()):
        return sharding_figure(module, name, values)
    return None


def plan_text(plan):
    """What `show_plan` prints: the plan's figures, each parameter's and
    the result's blocks per device, the collectives by kind and mesh axis,
    and the alternatives."""
    unit = plan.objective_unit
    lines = [
        "%s: %s plan, objective %.1f %s (CBC's bound %.1f, gap %.2g); "
        "predicted %.3g s; %d B sent per device in %d collectives; %d B "
        "at peak" % (plan.function, "optimal" if plan.optimal else
                     "feasible", plan.objective, unit, plan.bound, plan.gap,
                     plan.predicted_seconds, plan.bytes_per_device,
                     plan.collectives, plan.peak_bytes),
        sharding_table(plan.module, plan.function, values=False)]
    traffic = [t for t in plan.cost.traffic if t.bytes]
    if traffic:
        lines.append("collectives (per device):")
        lines += ["  %-8s %-14s over %-4s x%d  %d B" % (
            t.direction, t.collective, t.over, t.count, t.bytes)
            for t in traffic]
    for i, other in enumerate(plan.alternatives, 1):
        lines.append("alternative %d: %+.1f %s, %d B sent: %s" % (
            i, other.delta, unit, other.bytes_per_device,
            ", ".join("%s %s" % item for item in other.placements.items())))
    return "\n".join(lines)


def plan_figure(plan):
    """The blocks of the parameters and results per device (as
    sharding_figure draws them) beside the bytes each device sends by
    collective kind, a bar each."""
    figure = sharding_figure(plan.module, plan.function, values=False)
    import matplotlib.pyplot as plt
    by_kind = {}
    for t in plan.cost.traffic:
        by_kind[t.collective] = by_kind.get(t.collective, 0) + t.bytes
    bars, axes = plt.subplots(figsize=(4, 2.2))
    kinds = sorted(by_kind)
    axes.bar(kinds, [by_kind[k] for k in kinds], color="tab:blue")
    axes.set_ylabel("bytes per device")
    axes.set_title("%s: %d B sent per device" % (plan.function,
                                                 plan.bytes_per_device),
                   fontsize=9)
    bars.tight_layout()
    return figure, bars


def show_plan(plan, figure=None):
    """Prints an auto-shard plan (plan_text); in a notebook (or with
    figure=True) also draws its blocks and its bytes by collective kind,
    returning the two matplotlib figures."""
    print(plan_text(plan))
    if figure or (figure is None and _in_notebook()):
        return plan_figure(plan)
    return None
