"""What a compiled function costs one device, before anything runs: the
compiler's cost view (`kina-opt --kina-cost` says the same as remarks),
and each collective the placement propagation inserted, with the
alternatives it weighed. `m.cost(name)` returns a `Cost`; printing it
gives a table, its fields are data."""

import collections

Remark = collections.namedtuple(
    "Remark",
    "location collective over placement origin reason bytes function weighed "
    "serves")
Remark.__doc__ = """A collective the placement propagation or an auto-shard
plan inserted: where (`file:line:col`, of the op that needed it), which
(`all_gather`, ...)
over which mesh axis, the placement and the annotation the value had, why,
the bytes each device sends, the function, the alternatives weighed (a
list of `Alternative`; empty when there was no choice), and the value it
serves ("the gradient of 'w1'", or "")."""

Alternative = collections.namedtuple("Alternative", "choice bytes")
Alternative.__doc__ = """One plan the propagation weighed for a collective:
what it would keep or the order of the mesh axes, and the bytes each
device would send."""

Traffic = collections.namedtuple(
    "Traffic", "direction collective over count bytes")
Traffic.__doc__ = """What one kind of collective over one mesh axis moves
in a function, per device: its direction (`forward`, or `backward` for a
reverseMode function's adjoint ops), how many run and the bytes sent."""


Memory = collections.namedtuple(
    "Memory", "weights gradients optimizer_state activations")
Memory.__doc__ = """Bytes one device holds, by what they are: weights (the
parameters a reverseMode differentiates, and what is passed to them),
gradients (adjoint values, a gradient function's gradients), optimizer
state (the other parameters a result reuses, `@reuses`) and activations
(the rest: the batch, intermediates). `total` is their sum."""
Memory.total = property(lambda m: sum(m))


def _memory(record):
    return Memory(record.weights, record.gradients, record.optimizer_state,
                  record.activations)


class Cost:
    """One function's cost on one device: `flops` (its ops' arithmetic,
    a multiply-add counting two), `peak_bytes` (the most bytes of values
    live at once, in program order, arguments included: a bound on what
    the compiled code allocates), `bytes_sent` and `traffic` (per
    direction, kind and mesh axis; what `m.simulate` counts, per device),
    `collectives` (the propagation's remarks in this function, with
    what it weighed), and the memory ledger: `at_rest` (its arguments,
    what a device keeps between calls) and `at_peak` (the values live at
    the peak), each a `Memory`; `at_peak.total == peak_bytes`;
    `peak_location`: the `file:line:col` of the op that reaches the peak
    (a call, for a peak inside its callee; "" when it is the arguments);
    `predicted_seconds`: the time automatic sharding's model predicts
    (the compile's `auto_shard` machine figures, else the compiler's
    defaults), the same for a hand-written plan as for a solved one."""

    def __init__(self, function, flops, peak_bytes, bytes_sent, traffic,
                 collectives, at_rest=None, at_peak=None,
                 peak_location="", predicted_seconds=None):
        self.function = function
        self.flops = flops
        self.peak_bytes = peak_bytes
        self.bytes_sent = bytes_sent
        self.traffic = traffic
        self.collectives = collectives
        self.at_rest = at_rest
        self.at_peak = at_peak
        self.peak_location = peak_location
        self.predicted_seconds = predicted_seconds

    def __repr__(self):
        return ("<kina.Cost of %r per device: %d FLOPs, %d bytes at peak, "
                "%d bytes sent>" % (self.function, self.flops,
                                    self.peak_bytes, self.bytes_sent))

    def __str__(self):
        lines = ["cost of %r, per device" % self.function,
                 "  FLOPs            %15d" % self.flops,
                 "  bytes at peak    %15d%s" % (
                     self.peak_bytes, "  (at %s)" % self.peak_location
                     if self.peak_location else ""),
                 "  bytes sent       %15d" % self.bytes_sent]
        if self.at_peak is not None:
            lines.append("  %-17s %12s %12s" % ("memory", "at rest",
                                                 "at peak"))
            lines += ["  %-17s %12d %12d" % (name.replace("_", " "),
                                              getattr(self.at_rest, name),
                                              getattr(self.at_peak, name))
                      for name in Memory._fields]
        if self.traffic:
            lines.append("  %-9s %-15s %-6s %5s %12s" %
                         ("direction", "collective", "over", "count", "bytes"))
            lines += ["  %-9s %-15s %-6s %5d %12d" % t for t in self.traffic]
        if self.collectives:
            lines.append("  inserted by the propagation:")
        for r in self.collectives:
            lines.append("    %s: %s over %s, %d B: %s" %
                         (r.location, r.collective, r.over, r.bytes,
                          r.reason))
            if r.weighed:
                lines.append("      weighed: " + ", ".join(
                    "%s %d B" % a for a in r.weighed))
        return "\n".join(lines)


def from_records(records):
    """(Remark list, {function: Cost}) from a compile's records (the
    compiler's `CostRecords`: the data its remarks say)."""
    remarks = [Remark(r.location, r.kind, r.over, r.placement, r.origin,
                      r.reason, r.bytes_per_device, r.function,
                      [Alternative(w.choice, w.bytes) for w in r.weighed],
                      r.serves)
               for r in records.collectives]
    costs = {}
    for c in records.costs:
        traffic = [Traffic("backward" if t.backward else "forward", t.kind,
                           t.over, t.count, t.bytes) for t in c.traffic]
        costs[c.function] = Cost(c.function, c.flops, c.peak_bytes,
                                 c.bytes_sent, traffic,
                                 [r for r in remarks
                                  if r.function == c.function],
                                 _memory(c.at_rest), _memory(c.at_peak),
                                 c.peak_location, c.predicted_seconds)
    return remarks, costs
