"""The validation scripts (scripts/validate/validate_*.py),
each run as a user runs it: every check it prints passes, and it says so in
its closing line."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "scripts" / "validate").glob("validate_*.py"))

# Each compiles its examples again; the sanitizer pass runs the suites that
# reach the same code.
pytestmark = pytest.mark.skipif(os.environ.get("KINA_UNDER_ASAN") == "1",
                                reason="validations stay out of the "
                                "sanitizer build")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_validation_script_passes_every_check(script):
    run = subprocess.run([sys.executable, str(script)], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    closing = re.search(r"^(\d+) passed, (\d+) failed$", run.stdout,
                        re.MULTILINE)
    assert closing, run.stdout
    assert int(closing.group(1)) > 0 and closing.group(2) == "0", run.stdout
    assert "FAIL" not in run.stdout
