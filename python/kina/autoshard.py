"""Automatic sharding from Python: `kina.auto_shard(source, ...)` places
every value of a program's functions that have `@auto` parameters or
results by the cheapest plan of a mixed-integer program (solved by CBC),
compiles it, and returns a `Plan` (docs/interfaces.md, "Automatic
sharding").
"""

import math
import re


OBJECTIVES = ("time", "bytes")
BACKENDS = ("simulator", "mpi")
# The compiler's counts are 64-bit.
LARGEST_COUNT = 2 ** 63 - 1
# What a calibration dict holds (kina.calibrate.load).
CALIBRATION_KEYS = ("matmul_gflops", "memory_gbytes_per_s", "collectives")


def _is_count(value, least):
    """Whether `value` is an int the compiler takes as a count, at least
    `least`."""
    return not isinstance(value, bool) and isinstance(value, int) and \
        least <= value <= LARGEST_COUNT


def machine_options(calibration=None, backend="simulator"):
    """The cost model's figures as the compiler takes them, from a
    calibration (a path, a dict as `kina.calibrate.load` returns, or None:
    the file `python3 -m kina.calibrate` writes, else its defaults with a
    warning). `backend`: whose collectives ("simulator" or "mpi")."""
    if backend not in BACKENDS:
        raise ValueError("backend is one of %s, got %r" % (BACKENDS, backend))
    if calibration is None or not isinstance(calibration, dict):
        # Warns (the user's filters decide) when there is no file. Imported
        # here: kina.calibrate is also a program (kina/__init__.py).
        from . import calibrate
        calibration = calibrate.load(calibration)
    missing = [key for key in CALIBRATION_KEYS if key not in calibration]
    if missing:
        raise ValueError("the calibration has no %s (a dict as "
                         "kina.calibrate.load returns)" % ", ".join(missing))
    collectives = calibration["collectives"].get(backend)
    if not collectives:
        raise ValueError("the calibration has no %s collectives (measure "
                         "them: python3 -m kina.calibrate%s)" % (
                             backend, " --mpi" if backend == "mpi" else ""))
    figures = {kind: (c["latency_s"], c["gbytes_per_s"] * 1e9)
               for kind, c in collectives.items()}
    # all_to_all is not measured: priced as an all_gather, which moves
    # blocks the same way (each device's to every other).
    figures.setdefault("all_to_all", figures["all_gather"])
    return {"flops_per_second": calibration["matmul_gflops"] * 1e9,
            "memory_bytes_per_second":
                calibration["memory_gbytes_per_s"] * 1e9,
            "collectives": figures}


def _parameter_list(source, function):
    """(start, end) of `function`'s parameter list in `source`."""
    header = re.search(r"\bfn\s+%s\s*\(" % re.escape(function), source)
    if header is None:
        raise ValueError("no function %r in the source" % function)
    start = end = header.end()
    depth = 1
    while depth and end < len(source):
        depth += {"(": 1, ")": -1}.get(source[end], 0)
        end += 1
    return start, end


def _auto_parameter(name_pattern):
    """A parameter written `@auto` whose name matches `name_pattern`:
    `name: Tensor[T, [dims], ` (group 1, the name group 2), `@auto`, then
    `]` (group 3)."""
    return (r"(\b(%s)\s*:\s*Tensor\[\s*\w+\s*,\s*\[[^\]]*\]\s*,\s*)"
            r"@auto(\s*\])" % name_pattern)


def auto_parameters(source, function):
    """The names of `function`'s parameters written `@auto`."""
    start, end = _parameter_list(source, function)
    return [match.group(2) for match in
            re.finditer(_auto_parameter(r"\w+"), source[start:end])]


def with_placements(source, function, placements):
    """`source` with the `@auto` parameters of `function` written as
    `placements` ({name: placement}) says."""
    start, end = _parameter_list(source, function)
    params = source[start:end]
    for name, placement in placements.items():
        params = re.sub(_auto_parameter(re.escape(name)),
                        lambda m: m.group(1) + placement + m.group(3), params)
    return source[:start] + params + source[end:]


def _pinned(source, function, pins):
    """`source` with `pins` ({parameter: placement}) written in place of
    their `@auto`; the function is `function`, else the one function of
    the source with `@auto` parameters."""
    if not isinstance(pins, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in pins.items()):
        raise TypeError("pins is a dict of parameter names to placements "
                        "as the language writes them, got %r" % (pins,))
    if function is None:
        candidates = [name for name in re.findall(r"\bfn\s+(\w+)\s*\(",
                                                   source)
                      if auto_parameters(source, name)]
        if len(candidates) != 1:
            raise ValueError("pins: name the function (functions with @auto "
                             "parameters: %s)" % (", ".join(candidates)
                                                  or "none"))
        function = candidates[0]
    free = auto_parameters(source, function)
    for name, placement in pins.items():
        if name not in free:
            raise ValueError("pins: %r is not an @auto parameter of %r (its "
                             "@auto parameters: %s)" % (
                                 name, function, ", ".join(free) or "none"))
        if not placement.startswith("@"):
            raise ValueError("pins: %r's placement is written as the language "
                             "writes it (\"@replicated\", \"@sharded(axis=0)"
                             "\"), got %r" % (name, placement))
    return with_placements(source, function, pins)


class Alternative:
    """Another plan than the best: its `objective`, `delta` (its
    objective less the best's, in the same unit), `bytes_per_device` and
    `placements` (each parameter's, by name); for a "why not" question,
    `feasible` (False: no plan has that placement, under the budget)."""

    def __init__(self, best, plan, feasible=True):
        self.feasible = feasible
        self.objective = plan.objective if feasible else None
        self.delta = plan.objective - best if feasible else None
        self.bytes_per_device = plan.bytes_per_device if feasible else None
        self.placements = dict(plan.parameters) if feasible else {}

    def __repr__(self):
        if not self.feasible:
            return "<no plan>"
        return "<%+.1f, %d B sent: %s>" % (
            self.delta, self.bytes_per_device,
            ", ".join("%s %s" % item for item in self.placements.items()))


class Plan:
    """What the solver chose for one function, and the compiled module.

    `placements`: each parameter's placement, by name, as the language
    writes it; `objective` (ns with objective="time", bytes with
    "bytes"), `bound` (CBC's lower bound on the optimum) and `gap`;
    `optimal`; `predicted_seconds`, `bytes_per_device` (what the plan's
    collectives send, each device, as the solver priced them),
    `peak_bytes`; `module` (a kina.Module, its `cost(function)` the
    compiled plan's ledger) and `ir` (the placed program, stage
    "propagated")."""

    def __init__(self, module, report, resolve=None, source=None):
        self.module = module
        self._source = source
        # Compiles again with other options (explain), for explain().
        self._resolve = resolve
        self.function = report.function
        self.objective = report.objective
        self.objective_unit = "B" if report.bytes_objective else "ns"
        self.bound = report.bound
        self.lower_bound = report.bound  # the same, by its longer name
        self.gap = report.gap
        self.optimal = report.optimal
        self.predicted_seconds = report.predicted_seconds
        self.bytes_per_device = report.bytes_per_device
        self.peak_bytes = report.peak_bytes
        self.collectives = report.collectives
        self.placements = dict(report.parameters)
        self.parameters = list(report.parameters)
        self.enumerated = report.enumerated
        self.enumerated_best = report.enumerated_best
        self.decisions = report.decisions
        self.tied_decisions = report.tied_decisions
        self.remark = report.remark()
        self.alternatives = [Alternative(report.objective, plan)
                             for plan in report.alternatives]
        self._why_not = {}
        for entry in report.why_not:
            self._why_not.setdefault(entry.parameter, {})[entry.placement] = \
                Alternative(report.objective, entry.plan, entry.feasible)

    @property
    def source(self):
        """The program with this function's `@auto` parameters written as
        the plan places them (its results stay `@auto`): compiled, the
        solver places the rest again under those pins, the same plan (one
        input, one plan); edit a placement to see what it costs."""
        return with_placements(self._source, self.function, self.placements)

    def explain(self, name):
        """Why parameter `name` is placed as it is: {placement: the best
        plan with `name` pinned there (an Alternative; `delta` is what it
        costs more)} for each other placement it could have, and the
        chosen one's {placement: this plan}. Compiles again (once per
        name) unless auto_shard was given `explain=[name]`."""
        if name not in self.placements:
            raise KeyError("%r has no parameter %r (it has: %s)" % (
                self.function, name, ", ".join(self.placements)))
        if name not in self._why_not:
            self._why_not[name] = self._resolve(name)._why_not.get(name, {})
        chosen = self.placements[name]
        answer = {chosen: Alternative(self.objective, self)}
        answer.update(self._why_not[name])
        return answer

    @property
    def ir(self):
        return self.module.ir("propagated")

    @property
    def cost(self):
        """The compiled plan's ledger (`Module.cost`)."""
        return self.module.cost(self.function)

    def __repr__(self):
        return ("<kina.Plan of %r: %s, objective %.1f %s (gap %.2g), "
                "%d B sent per device; %s>" % (
                    self.function, "optimal" if self.optimal else "feasible",
                    self.objective, self.objective_unit, self.gap,
                    self.bytes_per_device,
                    ", ".join("%s %s" % item
                              for item in self.placements.items())))


def auto_shard(source, function=None, budget_bytes=None, pins=None,
               objective="time", calibration=None, backend="simulator",
               filename="<string>", alternatives=3, explain=(), enumerate=0,
               seconds_limit=60.0, num_threads=None, tie_layers=True):
    """Places the functions of `source` with `@auto` parameters or results
    (the placements written are pins) and compiles the program; returns
    the Plan of `function` (default: the one function placed).

    `budget_bytes`: what one device may hold at any program point (None:
    no limit); `pins`: {parameter: placement} for `@auto` parameters, as
    if the source wrote them; `objective`: "time" (the predicted seconds under
    `calibration`, see machine_options) or "bytes" (each device's bytes
    sent); `alternatives`: the next plans to find (Plan.alternatives);
    `explain`: parameters whose other placements to price at once
    (Plan.explain); `enumerate`: also enumerate every plan when there are at most
    this many and record the best objective (a check of the solver);
    `tie_layers`: repeated layers share their decisions (False: each op
    decides alone, a larger program to solve)."""
    from . import compile as _compile_source
    if objective not in OBJECTIVES:
        raise ValueError("objective is one of %s, got %r" % (OBJECTIVES,
                                                            objective))
    if budget_bytes is not None and not _is_count(budget_bytes, 1):
        raise ValueError("budget_bytes is a positive int below 2**63 or None, "
                         "got %r" % (budget_bytes,))
    for name, value in (("alternatives", alternatives),
                        ("enumerate", enumerate)):
        if not _is_count(value, 0):
            raise ValueError("%s is an int from 0 to 2**63 - 1, got %r" % (
                name, value))
    if isinstance(seconds_limit, bool) or \
            not isinstance(seconds_limit, (int, float)) or \
            not 0 < seconds_limit < math.inf:
        raise ValueError("seconds_limit is a positive number of seconds, "
                         "got %r" % (seconds_limit,))
    if not isinstance(tie_layers, bool):
        raise TypeError("tie_layers is True or False, got %r" % (tie_layers,))
    if isinstance(explain, str):
        explain = [explain]
    if pins:
        source = _pinned(source, function, pins)
    options = dict(machine_options(calibration, backend),
                   objective=objective, budget_bytes=budget_bytes or 0,
                   alternatives=alternatives, explain=list(explain),
                   enumerate=enumerate, seconds_limit=float(seconds_limit),
                   tie_layers=tie_layers)
    module = _compile_source(source, filename=filename,
                             num_threads=num_threads, auto_shard=options)
    if not module.plans:
        raise ValueError("no function of %s has @auto parameters or "
                         "results: nothing to place" % filename)
    if function is None:
        if len(module.plans) != 1:
            raise ValueError("several functions were placed (%s): name one"
                             % ", ".join(module.plans))
        function = next(iter(module.plans))
    if function not in module.plans:
        raise ValueError("%r was not placed by the solver (placed: %s)" % (
            function, ", ".join(module.plans)))
    def resolve(name):
        return auto_shard(source, function, budget_bytes, None, objective,
                          calibration, backend, filename, alternatives=0,
                          explain=[name], seconds_limit=seconds_limit,
                          tie_layers=tie_layers)
    return Plan(module, module.plans[function], resolve, source)
