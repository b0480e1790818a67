"""`--help` of the scripts and of `python3 -m kina.*`: each describes the
command in whole sentences (its docstring), not a first line cut
mid-sentence, and says nothing else (no warning that the package had
imported the module already)."""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON_DIR = os.environ.get("KINA_PYTHON_DIR", str(ROOT / "build" / "python"))

SCRIPTS = ["scripts/generate/gen_gpt.py", "scripts/generate/gen_storylm.py",
           "examples/train_gpt.py", "examples/gpt_demo.py"]
MODULES = ["kina.tune", "kina.pipeline", "kina.mpi_pipeline"]
# The package's modules that are programs too (`python3 -m ...`).
PROGRAMS = ["kina.tune", "kina.calibrate", "kina.pipeline",
            "kina.mpi_pipeline"]


def words(text):
    return " ".join(text.split())


def first_paragraph(source):
    doc = ast.get_docstring(ast.parse(source.read_text()))
    return words(doc.split("\n\n")[0])


@pytest.mark.parametrize("command", SCRIPTS + MODULES)
def test_help_describes_the_command_in_whole_sentences(command):
    if command in MODULES:
        argv = ["-m", command]
        source = ROOT / "python" / (command.replace(".", "/") + ".py")
    else:
        argv = [str(ROOT / command)]
        source = ROOT / command
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    done = subprocess.run([sys.executable] + argv + ["--help"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    description = words(done.stdout.split("\n\n", 1)[1])
    # The docstring's words, to the end of its first paragraph at least.
    paragraph = first_paragraph(source)
    assert paragraph.endswith("."), paragraph
    assert description.startswith(paragraph), description


@pytest.mark.parametrize("module", PROGRAMS)
def test_programs_of_the_package_run_without_a_warning(module):
    # `import kina` must not import them: runpy would warn that the module
    # was imported before it ran (and hold two copies of its globals).
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    done = subprocess.run([sys.executable, "-m", module, "--help"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
