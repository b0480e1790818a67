"""Pipeline schedules as data: `python3 -m kina.pipeline SCHEDULE
--stages S --microbatches M` prints a schedule (per rank, its ordered
actions), each rank's idle fraction and activations in flight on a logical
clock, and whether its transfers can deadlock; `--gantt PATH` draws its
Gantt chart. SCHEDULE is gpipe, 1f1b, interleaved or zb-h1, or a file
holding a hand-written schedule in the text this prints.

From Python (the compiler's lib/PipelineSchedule underneath):

    s = kina.pipeline.schedule("1f1b", stages=4, microbatches=8)
    print(s)                    # per rank, the ordered actions
    clock = s.clock()           # F = B = W = 1, free transfers
    clock.idle_fractions        # [0.2727..., ...]: the bubble per rank
    s.peak_in_flight            # [4, 3, 2, 1]
    s.check_deadlock()          # raises ScheduleError naming the cycle
    clock.gantt("1f1b.png")     # a Gantt chart, one row per rank

Actions are F (forward), BW (the whole backward), B (input gradient) and
W (weight gradient), each for a microbatch and a chunk (`F3/1`: microbatch
3 of the rank's chunk 1, interleaved schedules only). A hand-written
schedule is read from the same text: `kina.pipeline.parse(text)`.
"""

import argparse
import collections
import os
import sys

from . import _kina
from .show import _in_notebook

SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1")

# The Gantt chart's colour per phase letter.
_PHASE_COLOURS = {"F": "tab:blue", "BW": "tab:orange", "B": "tab:green",
                  "W": "tab:purple"}


class ScheduleError(ValueError):
    """A schedule that cannot be made, read, or run: the message names the
    count, the line, or the cycle of ranks waiting for each other."""


def _checked(call, *args):
    try:
        return call(*args)
    except ValueError as error:
        raise ScheduleError(str(error)) from None


# One action: its phase letter, microbatch and chunk.
Action = collections.namedtuple("Action", "phase microbatch chunk")


class Schedule:
    """Per rank, the ordered actions of one training step."""

    def __init__(self, text):
        (self.text, self.kind, self.stages, self.microbatches, self.chunks,
         ranks, peaks) = _checked(_kina.pipeline_read, text)
        self.ranks = [[Action(*action) for action in actions]
                      for actions in ranks]
        self.peak_in_flight = list(peaks)

    def label(self, action):
        """`F3`, or `F3/1` when the ranks hold several chunks."""
        text = "%s%d" % (action.phase, action.microbatch)
        return text + ("/%d" % action.chunk if self.chunks > 1 else "")

    def clock(self, forward=1.0, input_gradient=1.0, weight_gradient=1.0,
              transfer=0.0, stages=None):
        """The timeline on a logical clock (a BW costs input_gradient +
        weight_gradient; `stages`: per virtual stage, its own (forward,
        input_gradient, weight_gradient), as measured); raises
        ScheduleError naming a cycle of waits."""
        stages = [tuple(float(c) for c in costs) for costs in stages or []]
        if any(len(costs) != 3 for costs in stages):
            raise ScheduleError("each stage's costs are (forward, "
                                "input_gradient, weight_gradient)")
        makespan, ranks = _checked(_kina.pipeline_clock, self.text,
                                   float(forward), float(input_gradient),
                                   float(weight_gradient), float(transfer),
                                   stages)
        return Clock(self, makespan, ranks)

    def programs(self):
        """Each rank's program (the compiler's Rendezvous.h): per step,
        (sends, receives, awaits, compute), a message as ((phase,
        microbatch, chunk) of the action that produced it, from rank, to
        rank), compute as (phase, microbatch, chunk) or None."""
        return _checked(_kina.pipeline_programs, self.text)

    def deadlock(self):
        """None when the transfers finish with every send blocking until
        its receive is posted; otherwise the cycle of waits, as text."""
        return _checked(_kina.pipeline_rendezvous, self.text) or None

    def check_deadlock(self):
        """Raises ScheduleError naming the cycle if `deadlock()` finds one."""
        cycle = self.deadlock()
        if cycle:
            raise ScheduleError(cycle)

    def __str__(self):
        return self.text.rstrip("\n")

    def __repr__(self):
        return "<Schedule %s: %d stages, %d microbatches, %d chunks>" % (
            self.kind, self.stages, self.microbatches, self.chunks)


class Clock:
    """A schedule's timeline: per rank, (action, start, end) in order."""

    def __init__(self, schedule, makespan, ranks, unit="logical time"):
        self.schedule = schedule
        self.unit = unit  # of makespan and the intervals
        self.makespan = makespan
        self.ranks = [[(action, start, end)
                       for action, (start, end) in zip(actions, intervals)]
                      for actions, intervals in zip(schedule.ranks, ranks)]

    def __repr__(self):
        return "<kina.pipeline.Clock: makespan %g %s; idle %s>" % (
            self.makespan, self.unit, ", ".join(
                "%.1f%%" % (100 * f) for f in self.idle_fractions))

    @property
    def busy(self):
        """Per rank, the time it computes."""
        return [sum(end - start for _, start, end in rank)
                for rank in self.ranks]

    @property
    def idle_fractions(self):
        """Per rank, 1 - busy / makespan: its share of the step idle."""
        return [1 - busy / self.makespan if self.makespan else 0.0
                for busy in self.busy]

    def figure(self):
        """A matplotlib Gantt chart: one row per rank, one box per action
        (its label inside), the idle fraction at the row's end."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
        s = self.schedule
        # About 0.35 inch per unit-cost action, whatever the clock's unit.
        width = (self.makespan if self.unit == "logical time"
                 else 1.3 * max(len(actions) for actions in s.ranks))
        figure, axes = plt.subplots(
            figsize=(min(2 + 0.35 * width, 24), 0.55 * s.stages + 1.2))
        for rank, intervals in enumerate(self.ranks):
            for action, start, end in intervals:
                axes.barh(rank, end - start, left=start, height=0.8,
                          color=_PHASE_COLOURS[action.phase],
                          edgecolor="white", linewidth=0.5)
                # The microbatch (and chunk); the colour says the phase.
                axes.text((start + end) / 2, rank,
                          s.label(action)[len(action.phase):],
                          ha="center", va="center", fontsize=6,
                          color="white")
            axes.text(self.makespan * 1.01, rank,
                      "%.1f%% idle" % (100 * self.idle_fractions[rank]),
                      va="center", fontsize=7)
        axes.set_yticks(range(s.stages))
        axes.set_yticklabels(["rank %d" % r for r in range(s.stages)])
        axes.invert_yaxis()
        axes.set_xlim(0, self.makespan * 1.12)
        axes.set_xlabel(self.unit)
        phases = sorted({a.phase for rank in s.ranks for a in rank},
                        key=list(_PHASE_COLOURS).index)
        axes.legend(handles=[Patch(color=_PHASE_COLOURS[p], label=p)
                             for p in phases],
                    loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        axes.set_title("%s: %d stages, %d microbatches%s" % (
            s.kind, s.stages, s.microbatches,
            ", %d chunks" % s.chunks if s.chunks > 1 else ""), fontsize=9)
        figure.tight_layout()
        return figure

    def gantt(self, path=None):
        """Draws the Gantt chart; saves it as `path` (PNG) when given, and
        returns the figure in a notebook (else closes it)."""
        import matplotlib
        if not _in_notebook():
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        figure = self.figure()
        if path is not None:
            figure.savefig(path, dpi=120)
        # Closed either way: in a notebook the returned figure is what is
        # shown (an open one would be shown a second time).
        plt.close(figure)
        return figure if _in_notebook() else None


def schedule(kind, stages, microbatches, chunks=0):
    """The generated schedule `kind` (one of SCHEDULES); `chunks` is the
    interleaved schedule's v (2 when 0)."""
    return Schedule(_checked(_kina.pipeline_generate, kind,
                             _count("stages", stages),
                             _count("microbatches", microbatches),
                             _count("chunks", chunks)))


def _count(name, value):
    """An integer count, or a ScheduleError naming it (no 2.7 -> 2)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ScheduleError("%s must be an integer, not %r" % (name, value))
    return value.__index__()


def parse(text):
    """A schedule from its text (what str(schedule) prints)."""
    return Schedule(text)


def _or(value, default):
    return default if value is None else value


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m kina.pipeline",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("schedule", help="gpipe, 1f1b, interleaved, zb-h1, "
                        "or a file holding a schedule's text")
    parser.add_argument("--stages", type=int,
                        help="ranks along the pipeline (default 4)")
    parser.add_argument("--microbatches", type=int,
                        help="microbatches per step (default 8)")
    parser.add_argument("--chunks", type=int,
                        help="chunks per rank, interleaved only (default 2)")
    parser.add_argument("--transfer", type=float, default=0.0,
                        help="a transfer's cost in units of a forward "
                        "(default 0: free)")
    parser.add_argument("--gantt", metavar="PATH",
                        help="also draw the Gantt chart into PATH (PNG)")
    args = parser.parse_args(argv)
    try:
        if args.schedule in SCHEDULES:
            s = schedule(args.schedule, _or(args.stages, 4),
                         _or(args.microbatches, 8), _or(args.chunks, 0))
        elif os.path.isfile(args.schedule):
            given = [o for o in ("stages", "microbatches", "chunks")
                     if getattr(args, o) is not None]
            if given:
                parser.error("--%s: a schedule file gives its own counts" %
                             ", --".join(given))
            with open(args.schedule) as f:
                s = parse(f.read())
        else:
            parser.error("%s is neither a schedule (%s) nor a file" % (
                args.schedule, ", ".join(SCHEDULES)))
        print(s)
        clock = s.clock(transfer=args.transfer)
    except ScheduleError as error:
        print("kina.pipeline: %s" % error, file=sys.stderr)
        return 1
    print("logical clock (F = B = W = 1, a transfer %g): makespan %g" % (
        args.transfer, clock.makespan))
    for rank, (idle, peak) in enumerate(zip(clock.idle_fractions,
                                            s.peak_in_flight)):
        print("rank %d: %.1f%% idle, at most %d %s in flight" % (
            rank, 100 * idle, peak,
            "microbatch" + ("-chunk" if s.chunks > 1 else "") +
            ("es" if peak != 1 and s.chunks == 1 else
             "s" if peak != 1 else "")))
    cycle = s.deadlock()
    if cycle:
        print("kina.pipeline: %s" % cycle, file=sys.stderr)
        return 1
    print("transfers: no deadlock, even with every send waiting for its "
          "receive")
    if args.gantt:
        try:
            clock.gantt(args.gantt)
        except OSError as error:
            print("kina.pipeline: cannot write %s: %s" % (
                args.gantt, error.strerror or error), file=sys.stderr)
            return 1
        print("wrote %s" % args.gantt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
