import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The package of the build under test (scripts/hardening.sh picks its own).
sys.path.insert(0, os.environ.get("KINA_PYTHON_DIR",
                                  str(ROOT / "build" / "python")))


def host_has(flag):
    """Whether /proc/cpuinfo lists `flag` for this CPU."""
    with open("/proc/cpuinfo") as f:
        return any(flag in line.split() for line in f
                   if line.startswith("flags"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "avx512_bf16: runs vdpbf16ps; skipped on a CPU without "
        "AVX512_BF16")


def pytest_collection_modifyitems(config, items):
    if host_has("avx512_bf16"):
        return
    skip = pytest.mark.skip(reason="runs vdpbf16ps: needs a CPU with "
                            "AVX512_BF16")
    for item in items:
        if "avx512_bf16" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def zen4_module(tmp_path):
    """source text -> the module kina-translate compiles from it for a Zen
    4, whose BF16 products run on vdpbf16ps (checked in its disassembly),
    loaded here (an avx512_bf16 test's host runs it)."""
    import kina
    binaries = pathlib.Path(os.environ.get("KINA_BIN", ROOT / "build" / "bin"))

    def build(source):
        path = tmp_path / "zen4.kina"
        path.write_text(source)
        library = tmp_path / "zen4.so"
        subprocess.run([str(binaries / "kina-translate"), "--kina-to-so",
                        "--target-cpu=znver4", str(path), "-o", str(library)],
                       check=True)
        disassembly = subprocess.run(["objdump", "-d", str(library)],
                                     check=True, capture_output=True,
                                     text=True).stdout
        assert "vdpbf16ps" in disassembly
        return kina.load(library)
    return build
