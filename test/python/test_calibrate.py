"""python3 -m kina.calibrate: the cost model's machine parameters,
measured on Kina's compiled code and the simulator, written as JSON; and
kina.calibrate.load, which falls back to the defaults with a warning."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kina
from kina import calibrate

heavy = pytest.mark.skipif(
    os.environ.get("KINA_UNDER_ASAN") == "1",
    reason="times compiled code: the plain suite runs it")


def block_bytes(kind, elements, n=calibrate.DEVICES):
    """What one device sends in `kind` of a float32 block of `elements`
    (the per-device formulas of docs/gpt.md)."""
    per = -(-elements // n) * 4
    return {"all_gather": (n - 1) * elements * 4,
            "reduce_scatter": (n - 1) * per,
            "all_reduce": 2 * (n - 1) * per}[kind]


@pytest.mark.parametrize("kind", calibrate.KINDS)
def test_each_probe_moves_one_collective_of_its_kind(kind):
    elements = 64
    m = kina.compile(calibrate.collective_source(kind, elements),
                     "probe.kina")
    traffic = m.cost("c").traffic
    assert [(t.collective, t.count) for t in traffic if t.bytes] == \
        [(kind, 1)]
    assert m.cost("c").bytes_sent == block_bytes(kind, elements)
    run = m.simulate("c", *calibrate._arguments(kind, elements),
                     report=False)
    assert run.bytes_moved == calibrate.DEVICES * block_bytes(kind, elements)


def test_the_fit_recovers_latency_and_bandwidth():
    latency, bandwidth = 3e-5, 4e9
    points = [(b, latency + b / bandwidth) for b in (1e3, 1e5, 1e7)]
    fitted = calibrate.fit(points)
    assert fitted["latency_s"] == pytest.approx(latency, rel=1e-6)
    assert fitted["gbytes_per_s"] == pytest.approx(bandwidth / 1e9,
                                                   rel=1e-6)


def test_no_file_means_the_defaults_and_a_warning(tmp_path):
    with pytest.warns(UserWarning, match="python3 -m kina.calibrate"):
        data = calibrate.load(tmp_path / "none.json")
    assert data["measured"] is False
    assert set(data["collectives"]["simulator"]) == set(calibrate.KINDS)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json is not a kina "
                       "calibration"):
        calibrate.load(bad)
    bad.write_text(json.dumps({"version": 99}))
    with pytest.raises(ValueError, match="of version 1"):
        calibrate.load(bad)


@heavy
def test_the_command_writes_what_load_reads(tmp_path):
    path = tmp_path / "calibration.json"
    done = subprocess.run([sys.executable, "-m", "kina.calibrate",
                           "--quick", "--output", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "wrote %s" % path in done.stdout
    data = calibrate.load(path)
    assert data["measured"] is True
    assert data["vector_lanes"] in (8, 16)
    # Rates a CPU can have: above a slow core's, below what a core's
    # widest FMAs (2 pipes, 5 GHz) and a memory bus could do.
    assert 1 < data["matmul_gflops"] < 2 * 2 * data["vector_lanes"] * 5
    assert 0.5 < data["memory_gbytes_per_s"] < 1000
    for kind in calibrate.KINDS:
        fitted = data["collectives"]["simulator"][kind]
        assert 0 <= fitted["latency_s"] < 0.1
        assert fitted["gbytes_per_s"] > 0
    assert not list(tmp_path.glob("*.json.*")) and \
        [p.name for p in tmp_path.iterdir()] == ["calibration.json"]
