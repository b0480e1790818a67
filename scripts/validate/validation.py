"""Shared steps of the validation scripts of the tensor-parallel splits
(docs/storylm0.md lists each one's checks): compile an example to a .so, load its functions from that same .so,
feed the shared StoryLM-0 weights and the prompt [1, 4, 2, 6], and compare
with NumPy (and PyTorch when importable). Prints every check; the last line
is `N passed, M failed`, and the exit status is non-zero on any failure."""

import pathlib
import shutil
import sys
import tempfile

import kina
from kina.models import storylm0

try:  # the tests' PyTorch reference, where PyTorch is installed
    from kina_reference import storylm0_forward as torch_storylm0_forward
except ImportError:
    torch_storylm0_forward = None

ROOT = pathlib.Path(__file__).resolve().parents[2]

import numpy as np


class Report:
    def __init__(self, title):
        print(title)
        self.passed = self.failed = 0

    def _record(self, ok, what, detail):
        print("  %s  %s%s" % ("ok  " if ok else "FAIL", what, detail))
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def close(self, what, actual, expected, rtol=1e-5, atol=1e-5):
        actual, expected = np.asarray(actual), np.asarray(expected)
        ok = actual.shape == expected.shape and np.allclose(
            actual, expected, rtol=rtol, atol=atol)
        diff = (np.abs(actual - expected).max()
                if actual.shape == expected.shape else float("inf"))
        self._record(ok, what, "  (max |diff| %.2e)" % diff)

    def exact(self, what, actual, expected):
        ok = np.array_equal(np.asarray(actual), np.asarray(expected))
        self._record(ok, what, "  (bit-identical)" if ok else "")

    def differs(self, what, a, b):
        self._record(not np.array_equal(a, b), what, "")

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        sys.exit(1 if self.failed else 0)


def compile_example(name):
    """Compiles examples/<name>.kina to a .so file and loads every function
    back from that file."""
    directory = pathlib.Path(tempfile.mkdtemp(prefix="kina-validate-"))
    try:
        so_path = directory / (name + ".so")
        kina.compile_file(ROOT / "examples" / (name + ".kina")).save(so_path)
        print("compiled examples/%s.kina -> %s" % (name, so_path))
        return kina.load(so_path)  # the mapping outlives the file
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def check_forward(report, module, entry):
    """(a) the entry and @main equal the unsharded forward; (c) changing
    the last prompt token leaves logit rows 0..2 unchanged."""
    args = storylm0.arguments()
    reference = storylm0.forward(*args)
    logits = getattr(module, entry)(*args)
    report.close("%s(prompt %s) == unsharded NumPy forward" %
                 (entry, storylm0.PROMPT.tolist()), logits,
                 reference["logits"])
    report.exact("main(...) == %s(...)" % entry, module.main(*args), logits)
    if torch_storylm0_forward is None:
        print("  skip  PyTorch is not importable")
    else:
        report.close("%s(...) == the same algebra in PyTorch" % entry, logits,
                     torch_storylm0_forward(*args)["logits"])

    changed = storylm0.arguments(token_ids=[[1, 4, 2, 3]])
    changed_logits = getattr(module, entry)(*changed)
    report.exact("causal: last token 6 -> 3 leaves logit rows 0..2 unchanged",
                 changed_logits[:, :3], logits[:, :3])
    report.differs("causal: ... and does change row 3", changed_logits[:, 3],
                   logits[:, 3])
    report.close("changed prompt still equals the NumPy forward",
                 changed_logits, storylm0.forward(*changed)["logits"])
    return args, reference


def attention_head(q, k_t, v, scale, mask):
    """One head's context, [1, 1, 4, Dh], in NumPy."""
    return storylm0.softmax(q @ k_t * scale + mask, axis=3) @ v
