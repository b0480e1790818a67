import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The package of the build under test (scripts/hardening.sh picks its own).
sys.path.insert(0, os.environ.get("KINA_PYTHON_DIR",
                                  str(ROOT / "build" / "python")))
