"""The bad-input contract of docs/interfaces.md, from Python: malformed programs
are located CompileErrors, never a crash."""

import pathlib
import re

import pytest

import kina

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOCATED = re.compile(r"^example\.kina:\d+:\d+: error: ", re.MULTILINE)


def test_every_truncation_of_an_example():
    """Cut examples/storylm0_tp_proj.kina at every byte: each prefix is a
    valid program (cut between functions) or a CompileError whose
    diagnostics are located. (kina.check: the frontend, in process.)"""
    text = (ROOT / "examples" / "storylm0_tp_proj.kina").read_text()
    valid = []
    for cut in range(len(text)):
        try:
            kina.check(text[:cut], filename="example.kina")
            valid.append(cut)
        except kina.CompileError as error:
            assert LOCATED.search(str(error)), (cut, str(error)[:200])
    # Complete programs: only cuts between whole functions.
    assert len(valid) < len(text) // 5
    for cut in valid[::max(1, len(valid) // 3)]:
        kina.compile(text[:cut])  # and those compile all the way


def test_every_single_character_deletion_in_a_function():
    """Delete each character of tp_logits in turn: located errors or a
    valid program, nothing else."""
    text = (ROOT / "examples" / "storylm0_tp_vocab.kina").read_text()
    start = text.index("fn tp_logits")
    end = text.index("fn storylm0_tp_vocab")
    for i in range(start, end):
        try:
            kina.check(text[:i] + text[i + 1:], filename="example.kina")
        except kina.CompileError as error:
            assert LOCATED.search(str(error)), (i, str(error)[:200])


@pytest.mark.parametrize("junk", [
    "\x00" * 100, "fn", "fn f(", "@main", "@main\nfn", "}" * 50,
    "fn f() -> Tensor[F32, [2], @host] {\n  return 1\n}",
    "\U0010ffff" * 10, "fn f(x: Tensor[F32, [-1], @host])",
])
def test_junk_is_a_compile_error(junk):
    with pytest.raises(kina.CompileError):
        kina.compile(junk, filename="example.kina")


def test_empty_program_is_an_empty_library():
    assert kina.compile("").functions == {}


def test_text_that_is_not_unicode_raises():
    with pytest.raises(TypeError):
        kina.compile("fn \ud800")  # a lone surrogate cannot be encoded
