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
from kina import storylm0

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "scripts" / "gen_storylm.py"
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
