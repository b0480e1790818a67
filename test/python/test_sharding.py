"""Annotated programs compile (propagation, then the host form) and compute
the unsharded forward: the same bits for column, head and vocabulary splits,
float32 rounding for the row-parallel sum (docs/language.md, "Meshes and
placements")."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import kina
from kina.models import storylm0

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "scripts" / "generate" / "gen_storylm.py"
BIT_IDENTICAL = ["vocab", "vocab4", "proj", "both"]


def forward_source(*options):
    return subprocess.run([sys.executable, str(GENERATOR), *options],
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def reference():
    args = storylm0.arguments()
    return args, kina.compile(forward_source()).main(*args)


@pytest.mark.parametrize("scheme", BIT_IDENTICAL)
def test_splits_without_a_sum_are_bit_identical(reference, scheme):
    args, unsharded = reference
    logits = kina.compile(forward_source("--shard", scheme)).main(*args)
    assert logits.dtype == np.float32 and logits.shape == (1, 4, 8)
    np.testing.assert_array_equal(logits, unsharded)


def test_row_parallel_equals_to_float32_rounding(reference):
    args, unsharded = reference
    logits = kina.compile(forward_source("--shard", "row")).main(*args)
    scale = np.abs(unsharded).max()
    assert np.abs(logits - unsharded).max() <= 1e-5 * scale
    # The same algebra as NumPy's reference, too.
    numpy_logits = storylm0.forward(*args)["logits"]
    assert np.abs(logits - numpy_logits).max() <= 1e-5 * scale


def test_sharded_entry_keeps_the_global_abi(reference):
    module = kina.compile(forward_source("--shard", "both"))
    signature = module.functions["storylm0_forward"]
    assert [p.shape for p in signature.params][6] == (4, 8)  # lm_head, whole
    assert signature.result.shape == (1, 4, 8)


def test_annotated_program_errors_are_compile_errors():
    source = forward_source("--shard", "vocab4").replace(
        "@mesh([4])", "@mesh([3])")
    with pytest.raises(kina.CompileError, match="does not divide it"):
        kina.compile(source)


def test_realistic_vocab_split_equals_the_unsharded_model():
    widths = ["--t", "128", "--h", "12", "--dh", "64", "--d", "768",
              "--v", "32000"]
    rng = np.random.default_rng(0)
    t, d, v, hd = 128, 768, 32000, 12 * 64
    args = [rng.integers(0, v, (1, t)).astype(np.int64),
            rng.standard_normal((v, d), dtype=np.float32)]
    for shape in [(d, hd)] * 3 + [(hd, d), (d, v)]:
        args.append(rng.standard_normal(shape, dtype=np.float32) * 0.02)
    args += [np.array(1 / 8, dtype=np.float32),
             np.triu(np.full((t, t), -1e9, np.float32), 1)]
    sharded = kina.compile(forward_source(*widths, "--shard", "vocab"))
    unsharded = kina.compile(forward_source(*widths))
    logits, reference = sharded.main(*args), unsharded.main(*args)
    assert np.abs(logits - reference).max() <= 1e-5 * np.abs(reference).max()


# Column splits of x @ w over a grid of shapes: the decode path (M = 1),
# small and odd contractions, panels the vector tiles do and do not fit
# (N / devices = 4 ... 48).
COLUMN_SHAPES = [(m, k, n) for m in (1, 4, 17) for k in (8, 13, 64)
                 for n in (16, 48, 96)]


def column_source(devices):
    lines = ["@mesh([%d])" % devices]
    for m, k, n in COLUMN_SHAPES:
        x = "Tensor[F32, [%d, %d], %%s]" % (m, k)
        w = "Tensor[F32, [%d, %d], %%s]" % (k, n)
        y = "Tensor[F32, [%d, %d], %%s]" % (m, n)
        for name, wp, yp in (("whole", "@host", "@host"),
                             ("split", "@sharded(axis=1)",
                              "@sharded(axis=1)")):
            xp = "@host" if name == "whole" else "@replicated"
            lines.append("fn %s_%d_%d_%d(x: %s, w: %s) -> %s {\n"
                         "  return x @ w\n}" % (name, m, k, n, x % xp, w % wp,
                                                y % yp))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("devices", [2, 4])
def test_column_splits_are_bit_identical_over_shapes(devices):
    module = kina.compile(column_source(devices), "columns.kina")
    rng = np.random.default_rng(devices)
    for m, k, n in COLUMN_SHAPES:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((k, n)).astype(np.float32)
        whole = getattr(module, "whole_%d_%d_%d" % (m, k, n))(x, w)
        split = getattr(module, "split_%d_%d_%d" % (m, k, n))(x, w)
        np.testing.assert_allclose(whole, x.astype(np.float64) @ w,
                                   rtol=1e-5, atol=1e-5)
        assert np.array_equal(split, whole), (m, k, n, devices,
                                              np.abs(split - whole).max())
    # The per-device form, on the simulator, too.
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    simulated = module.simulate("split_4_8_16", x, w, report=False).value
    assert np.array_equal(simulated, module.whole_4_8_16(x, w))
