"""kina.pipeline: the schedules' timelines checked here against their own
rules (each action after what it needs, one action at a time per rank),
their idle fractions against the papers' closed forms, a hand-broken
schedule's cycle, the Gantt chart written as a PNG, and the command
`python3 -m kina.pipeline`."""

import os
import pathlib
import subprocess
import sys

import pytest

import kina.pipeline as kp

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON_DIR = os.environ.get("KINA_PYTHON_DIR", str(ROOT / "build" / "python"))


def closed_form_idle(kind, stages, microbatches, chunks=2):
    units = {"gpipe": microbatches, "1f1b": microbatches,
             "interleaved": chunks * microbatches,
             "zb-h1": 3 * microbatches}[kind]
    return (stages - 1) / (units + stages - 1)


def needs(schedule, rank, action):
    """What `action` on `rank` waits for, as (virtual stage, kind,
    microbatch): written from the pipeline's dataflow, not the compiler's."""
    p, last = schedule.stages, schedule.stages * schedule.chunks - 1
    stage = action.chunk * p + rank
    m = action.microbatch
    if action.phase == "F":
        return [(stage - 1, "activation", m)] if stage > 0 else []
    if action.phase in ("B", "BW"):
        return [(stage, "activation", m)] + (
            [(stage + 1, "cotangent", m)] if stage < last else [])
    return [(stage, "cotangent", m)]  # W: from its own B


def produced(schedule, rank, action):
    stage = action.chunk * schedule.stages + rank
    kind = {"F": "activation", "B": "cotangent", "BW": "cotangent"}
    return (stage, kind[action.phase], action.microbatch) \
        if action.phase in kind else None


@pytest.mark.parametrize("kind", kp.SCHEDULES)
@pytest.mark.parametrize("microbatches", [4, 8, 16])
def test_timeline_obeys_dataflow_and_has_the_closed_form_bubble(
        kind, microbatches):
    schedule = kp.schedule(kind, stages=4, microbatches=microbatches)
    clock = schedule.clock()
    ready = {}
    for rank, intervals in enumerate(clock.ranks):
        for action, start, end in intervals:
            key = produced(schedule, rank, action)
            if key:
                ready[key] = end
    for rank, intervals in enumerate(clock.ranks):
        previous_end = 0
        for action, start, end in intervals:
            assert start >= previous_end, (rank, action)  # one at a time
            for key in needs(schedule, rank, action):
                assert start >= ready[key], (rank, action, key)
            assert end - start == (2 if action.phase == "BW" else 1)
            previous_end = end
    assert clock.makespan == max(end for r in clock.ranks for _, _, end in r)
    for idle in clock.idle_fractions:
        assert idle == pytest.approx(
            closed_form_idle(kind, 4, microbatches), abs=1e-3)
    assert schedule.deadlock() is None


def test_paper_figures_for_four_stages_and_eight_microbatches():
    idle = {k: kp.schedule(k, 4, 8).clock().idle_fractions[0]
            for k in kp.SCHEDULES}
    assert round(100 * idle["gpipe"], 1) == 27.3
    assert round(100 * idle["1f1b"], 1) == 27.3
    assert round(100 * idle["interleaved"], 1) == 15.8
    assert round(100 * idle["zb-h1"], 1) == 11.1
    assert kp.schedule("1f1b", 4, 8).peak_in_flight == [4, 3, 2, 1]
    assert kp.schedule("gpipe", 4, 8).peak_in_flight == [8] * 4


def test_transfer_costs_lengthen_the_step():
    schedule = kp.schedule("1f1b", 2, 4)
    free, costly = schedule.clock(), schedule.clock(transfer=0.5)
    # Rank 1's first forward waits for one transfer, rank 0's first
    # backward for two more (there and back).
    assert costly.makespan > free.makespan
    assert costly.ranks[1][0][1] == 1.5


def test_measured_stage_costs_set_the_pace():
    # 1F1B on 2 ranks with stage 1 twice as slow: after stage 0's first
    # forward, stage 1 is busy throughout (M x (F1 + BW1)), then stage 0's
    # last backward: f0 + M (f1 + 2 b1) + 2 b0.
    s = kp.schedule("1f1b", 2, 4)
    assert s.clock(stages=[(1, 1, 1), (2, 2, 2)]).makespan == \
        1 + 4 * (2 + 4) + 2
    assert s.clock(stages=[(1, 1, 1), (1, 1, 1)]).makespan == \
        s.clock().makespan
    with pytest.raises(kp.ScheduleError, match=r"costs are given for 1 "
                       r"stages; the schedule has 2 virtual stages"):
        s.clock(stages=[(1, 1, 1)])
    with pytest.raises(kp.ScheduleError, match=r"a stage 1 forward's cost "
                       r"must be finite"):
        s.clock(stages=[(1, 1, 1), (-1, 1, 1)])


def test_a_hand_broken_schedule_names_its_cycle():
    text = ("schedule custom stages=2 microbatches=2 chunks=1\n"
            "rank 0: F0 F1 BW0 BW1\n"
            "rank 1: F0 F1 BW1 BW0\n")
    broken = kp.parse(text)
    with pytest.raises(kp.ScheduleError, match=r"rank 0 waits before BW0 to "
                       r"receive BW0's cotangent from rank 1; rank 1 waits "
                       r"before BW0 to send BW1's cotangent to rank 0"):
        broken.check_deadlock()
    assert str(kp.parse(str(kp.schedule("zb-h1", 3, 5)))) == \
        str(kp.schedule("zb-h1", 3, 5))


@pytest.mark.parametrize("call, message", [
    (lambda: kp.schedule("interleaved", 4, 6),
     r"microbatches \(6\) to be a multiple of the stages \(4\)"),
    (lambda: kp.schedule("pipedream", 2, 2),
     r"unknown schedule 'pipedream'; one of gpipe, 1f1b, interleaved, zb-h1"),
    (lambda: kp.schedule("1f1b", 0, 2), r"at least 1 stage, not 0"),
    (lambda: kp.parse("schedule custom stages=1 microbatches=1 chunks=1\n"
                      "rank 0: F0\n"),
     r"rank 0 never runs the backward of microbatch 0"),
    (lambda: kp.parse("schedule x stages=1 microbatches=1 chunks=1\n"
                      "rank 0: F0 Q0\n"), r"line 2: 'Q0' is not an action"),
    (lambda: kp.parse("schedule custom stages=2 microbatches=2 chunks=1\n"
                      "rank 0: F0 BW1 F1 BW0\nrank 1: F0 F1 BW1 BW0\n")
     .clock(), r"cycle of waits: rank 0 waits at BW1 for F1 of rank 0"),
    (lambda: kp.schedule("gpipe", 2**40, 4),
     r"1099511627776 stages x 4 microbatches x 1 chunks is more than the "
     r"16777216 actions"),
    (lambda: kp.schedule("1f1b", 2.7, 4), r"stages must be an integer, not "
     r"2.7"),
    (lambda: kp.schedule("1f1b", 2, True), r"microbatches must be an "
     r"integer, not True"),
    (lambda: kp.schedule("1f1b", 2, 4).clock(forward=-1),
     r"a forward's cost must be finite and at least 0, not -1"),
    (lambda: kp.schedule("1f1b", 2, 4).clock(transfer=float("inf")),
     r"a transfer's cost must be finite and at least 0, not INF"),
    (lambda: kp.schedule("1f1b", 2, 4).clock(weight_gradient=float("nan")),
     r"a weight gradient's cost must be finite"),
])
def test_bad_schedules_are_named(call, message):
    with pytest.raises(kp.ScheduleError, match=message):
        call()


def test_gantt_chart_is_a_png(tmp_path):
    path = tmp_path / "interleaved.png"
    kp.schedule("interleaved", 4, 8).clock().gantt(str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_gantt_boxes_say_microbatch_and_chunk_beside_a_phase_colour():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure = kp.schedule("interleaved", 2, 2).clock().figure()
    labels = {t.get_text() for t in figure.axes[0].texts}
    plt.close(figure)
    # BW0/1 is drawn as "0/1" in BW's colour, not as "W0/1".
    assert {"0/0", "1/0", "0/1", "1/1"} <= labels
    assert not any(label.startswith("W") for label in labels)


def run_command(*args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "kina.pipeline", *args],
                          env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_command_prints_the_schedule_its_bubbles_and_draws(tmp_path):
    done = run_command("zb-h1", "--stages", "4", "--microbatches", "8",
                       "--gantt", str(tmp_path / "zb.png"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("11.1% idle") == 4
    assert "rank 3: F0 B0 F1 B1" in done.stdout
    assert "no deadlock" in done.stdout
    assert (tmp_path / "zb.png").read_bytes()[:4] == b"\x89PNG"


def test_the_command_names_a_deadlock_and_fails(tmp_path):
    broken = tmp_path / "broken.txt"
    broken.write_text("schedule custom stages=2 microbatches=2 chunks=1\n"
                      "rank 0: F0 F1 BW0 BW1\nrank 1: F0 F1 BW1 BW0\n")
    done = run_command(str(broken))
    assert done.returncode == 1
    assert "rank 1 waits before BW0 to send BW1's cotangent" in done.stderr
    done = run_command("interleaved", "--microbatches", "6")
    assert done.returncode == 1
    assert "multiple of the stages (4)" in done.stderr
    assert run_command("pipedream").returncode == 2
    done = run_command(str(broken), "--stages", "8")
    assert done.returncode == 2
    assert "--stages: a schedule file gives its own counts" in done.stderr
    done = run_command("1f1b", "--gantt", str(tmp_path / "no" / "x" / "a.png"))
    assert done.returncode == 1
    assert "cannot write" in done.stderr and "Traceback" not in done.stderr
