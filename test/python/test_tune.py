"""The empirical refinement of the matmul parameters (`kina.tune`) and
compiles that use its tuning files (`matmul_tuning=`)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kina
from kina import _kina, tune

SHAPE = (16, 128, 64)
# Child interpreters import the package under test.
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
MM = tune.matmul_source(*SHAPE)


def arguments():
    rng = np.random.default_rng(1)
    m, k, n = SHAPE
    return (rng.standard_normal((m, k)).astype(np.float32),
            rng.standard_normal((k, n)).astype(np.float32))


def write_tuning(path, entries, cpu=None):
    path.write_text(json.dumps({"format": tune.FORMAT,
                                "cpu": cpu or _kina.host_cpu()[0],
                                "matmuls": entries}))
    return path


def test_tuning_writes_an_entry_for_this_cpu(tmp_path):
    path = tune.tune([SHAPE], rounds=1, output=tmp_path / "t.json",
                     log=lambda line: None)
    written = json.loads(path.read_text())
    assert written["cpu"] == _kina.host_cpu()[0]
    [entry] = written["matmuls"]
    assert (entry["m"], entry["k"], entry["n"]) == SHAPE
    assert entry["threads"] == 1 and entry["median-us"] > 0
    # The model's parameters stay unless a candidate beat them by MARGIN.
    if entry["median-us"] > entry["model-median-us"] * (1 - tune.MARGIN):
        _, model = _kina.host_cpu()
        assert all(entry[name] == model[name]
                   for name in ("tile-m",) + tune.TUNED)
    a, b = arguments()
    m = kina.compile(MM, matmul_tuning=path)
    np.testing.assert_allclose(m.mm(a, b), a @ b, rtol=1e-5, atol=1e-4)


def test_tuning_another_shape_keeps_the_entries(tmp_path):
    path = write_tuning(tmp_path / "t.json",
                        [dict(m=8, k=8, n=32, **{"tile-m": 4, "cache-m": 8,
                                                 "cache-n": 32, "cache-k": 8})])
    tune.tune([SHAPE], rounds=1, output=path, log=lambda line: None)
    shapes = [(e["m"], e["k"], e["n"])
              for e in json.loads(path.read_text())["matmuls"]]
    assert shapes == [(8, 8, 32), SHAPE]


def test_an_entry_sets_the_tiles_of_its_shape(tmp_path):
    # K tiles of 32 and register tiles of 4 rows instead of the model's:
    # other code, the same products.
    path = write_tuning(tmp_path / "t.json",
                        [dict(m=SHAPE[0], k=SHAPE[1], n=SHAPE[2],
                              **{"tile-m": 4, "cache-m": 16, "cache-n": 32,
                                 "cache-k": 32})])
    model, tuned = kina.compile(MM), kina.compile(MM, matmul_tuning=path)
    assert tuned.ir("llvm") != model.ir("llvm")
    a, b = arguments()
    np.testing.assert_allclose(tuned.mm(a, b), a @ b, rtol=1e-5, atol=1e-4)
    # A file without this shape leaves the code as the model makes it.
    other = write_tuning(tmp_path / "other.json", [])
    assert kina.compile(MM, matmul_tuning=other).ir("llvm") == model.ir("llvm")


def test_a_file_of_another_cpu_is_refused(tmp_path):
    path = write_tuning(tmp_path / "t.json", [], cpu="another CPU")
    with pytest.raises(kina.CompileError,
                       match=r"t\.json: measured on 'another CPU'.*tune "
                             r"again on this CPU"):
        kina.compile(MM, matmul_tuning=path)
    with pytest.raises(ValueError, match="measured on 'another CPU'"):
        tune.tune([SHAPE], rounds=1, output=path, log=lambda line: None)


def test_the_command_line_rejects_bad_shapes():
    run = subprocess.run([sys.executable, "-m", "kina.tune", "16x0x64"],
                         capture_output=True, text=True, env=ENV)
    assert run.returncode == 2
    assert "'16x0x64' is not MxKxN with positive sizes" in run.stderr


def test_the_default_file_is_named_after_the_cpu(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = tune.default_path()
    assert path.parent == tmp_path / "kina"
    assert path.name.startswith("matmul-") and path.name.endswith(".json")
    assert _kina.host_cpu()[0].split(",")[0].lower() in path.name


def test_the_package_exposes_the_tuner():
    # As the README writes it, after a plain `import kina` (in a fresh
    # interpreter: this file imported kina.tune already).
    run = subprocess.run([sys.executable, "-c",
                          "import kina; print(kina.tune.default_path())"],
                         capture_output=True, text=True, env=ENV)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(tune.default_path())
