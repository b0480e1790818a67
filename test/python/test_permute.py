"""`kina.permute`, point to point along a mesh axis, on the threaded
simulator and on mpirun ranks: each device gets the block of the device
`shift` places before it (zeros past the axis's end unless `cyclic`),
against NumPy's block shift; the bytes moved are the sending devices'
blocks; its adjoint sends the cotangent back."""

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kina

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("KINA_BIN", ROOT / "build" / "bin"))

# Per-device programs (the form kina-translate compiles on its own): a
# block of 2 rows per device, the global value split by rows over `pp`.
PROGRAM = """
kina.mesh @mesh [{axes}]
func.func @shift(%x: !kina.tensor<{block}x{t}, @local> {{kina.global = !kina.tensor<{rows}x{t}, @sharded(axis=0, over={over})>, kina.name = "x"}}) -> (!kina.tensor<{block}x{t}, @local> {{kina.global = !kina.tensor<{rows}x{t}, @sharded(axis=0, over={over})>}}) {{
  %0 = kina.permute %x [shift = {shift}, over = "{over}"{cyclic}] : !kina.tensor<{block}x{t}, @local> -> !kina.tensor<{block}x{t}, @local>
  return %0 : !kina.tensor<{block}x{t}, @local>
}}
"""


def compile_permute(directory, sizes, over, shift, cyclic=False, t="3xf32",
                    block=2):
    names = ["pp"] if len(sizes) == 1 else ["dp", "pp"]
    axes = ", ".join("%s = %d" % (n, s) for n, s in zip(names, sizes))
    rows = block * sizes[names.index(over)]
    source = PROGRAM.format(axes=axes, block=block, rows=rows, t=t,
                            over=over, shift=shift,
                            cyclic=", cyclic" if cyclic else "")
    mlir = directory / ("shift_%s_%d_%d.mlir" % (over, shift, cyclic))
    mlir.write_text(source)
    library = mlir.with_suffix(".so")
    done = subprocess.run([str(BIN / "kina-translate"), "--kina-to-so",
                           str(mlir), "-o", str(library)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return kina.load(library)


def shifted_blocks(x, n, shift, cyclic):
    """The reference: block c of the result is block c - shift of x."""
    blocks = np.split(x, n, axis=0)
    out = []
    for c in range(n):
        source = c - shift
        if cyclic:
            source %= n
        out.append(blocks[source] if 0 <= source < n
                   else np.zeros_like(blocks[0]))
    return np.concatenate(out, axis=0)


@pytest.mark.parametrize("n, shift, cyclic", [
    (2, 1, False), (4, 1, False), (4, -1, False), (4, 2, False),
    (4, 1, True), (4, -3, True), (3, 2, True)])
def test_permute_shifts_the_blocks_on_the_simulator(tmp_path, n, shift,
                                                    cyclic):
    module = compile_permute(tmp_path, [n], "pp", shift, cyclic)
    x = np.arange(2 * n * 3, dtype=np.float32).reshape(2 * n, 3) + 1
    run = module.simulate("shift", x, report=False)
    np.testing.assert_array_equal(run.value,
                                  shifted_blocks(x, n, shift, cyclic))
    senders = n if cyclic else n - abs(shift)
    assert run.bytes_moved == senders * 2 * 3 * 4


def test_permute_over_one_axis_of_a_2d_mesh(tmp_path):
    # [dp = 2, pp = 2]: pp has stride 1, so devices 0 <-> 1 and 2 <-> 3.
    module = compile_permute(tmp_path, [2, 2], "pp", 1, cyclic=True)
    x = np.arange(4 * 3, dtype=np.float32).reshape(4, 3)
    run = module.simulate("shift", x, report=False)
    for device, block in enumerate(run.per_device):
        dp, pp = divmod(device, 2)
        np.testing.assert_array_equal(block, x[2 * (1 - pp):2 * (2 - pp)])
    assert run.bytes_moved == 4 * 2 * 3 * 4


def test_sixteen_bit_blocks_move_as_words(tmp_path):
    module = compile_permute(tmp_path, [4], "pp", 1, t="5xbf16")
    words = np.arange(8 * 5, dtype=np.uint16).reshape(8, 5) + 0x3f80
    run = module.simulate("shift", words, report=False)
    np.testing.assert_array_equal(run.value, shifted_blocks(words, 4, 1,
                                                            False))
    assert run.bytes_moved == 3 * 2 * 5 * 2


LOCAL = "!kina.tensor<2x3xf32, @local>"
GLOBAL = "!kina.tensor<8x3xf32, @sharded(axis=0, over=pp)>"
ADJOINT = """
kina.mesh @mesh [pp = 4]
func.func @forward(%x: L {kina.global = G, kina.name = "x"}) -> (L {kina.global = G}) {
  %p = kina.permute %x [shift = 1, over = "pp"] : L -> L
  return %p : L
}
func.func @backward(%x: L {kina.global = G, kina.name = "x"}, %c: L {kina.global = G, kina.name = "c"}) -> (L {kina.global = G}, L {kina.global = G}) {
  %v, %d = kina.reverse_mode @forward(%x, %c) wrt = [0] : (L, L) -> (L, L)
  return %v, %d : L, L
}
""".replace("L", LOCAL).replace("G", GLOBAL)


def test_the_adjoint_sends_the_cotangent_back(tmp_path):
    mlir = tmp_path / "adjoint.mlir"
    mlir.write_text(ADJOINT)
    differentiated = subprocess.run(
        [str(BIN / "kina-opt"), str(mlir), "--kina-differentiate"],
        capture_output=True, text=True)
    assert differentiated.returncode == 0, differentiated.stderr
    assert "shift = -1" in differentiated.stdout
    (tmp_path / "grad.mlir").write_text(differentiated.stdout)
    done = subprocess.run([str(BIN / "kina-translate"), "--kina-to-so",
                           str(tmp_path / "grad.mlir"), "-o",
                           str(tmp_path / "grad.so")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    module = kina.load(tmp_path / "grad.so")
    rng = np.random.default_rng(5)
    x, c = (rng.standard_normal((8, 3)).astype(np.float32) for _ in "xc")
    value, dx = module.simulate("backward", x, c, report=False).value
    np.testing.assert_array_equal(value, shifted_blocks(x, 4, 1, False))
    # y = shift(x) is linear: dx = shift(c) backwards, zero for the last
    # device, whose value went nowhere.
    np.testing.assert_array_equal(dx, shifted_blocks(c, 4, -1, False))
    assert not dx[6:].any()


@pytest.mark.skipif(os.environ.get("KINA_SKIP_MPI") == "1" or
                    not shutil.which("mpirun"),
                    reason="OpenMPI's mpirun (KINA_SKIP_MPI=1: the "
                    "sanitizer build)")
@pytest.mark.parametrize("shift, cyclic", [(1, False), (-2, True)])
def test_permute_on_ranks_gives_the_simulators_bits(tmp_path, shift, cyclic):
    module = compile_permute(tmp_path, [4], "pp", shift, cyclic)
    library = tmp_path / ("shift_pp_%d_%d.so" % (shift, cyclic))
    x = np.random.default_rng(3).standard_normal((8, 3)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(["mpirun", "-n", "4", sys.executable, "-m",
                           "kina.mpi", str(library), "shift",
                           str(tmp_path / "in.npz"),
                           str(tmp_path / "out.npz")],
                          env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    simulated = module.simulate("shift", x, report=False)
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["result"], simulated.value)
        np.testing.assert_array_equal(out["result"],
                                      shifted_blocks(x, 4, shift, cyclic))
        assert int(out["bytes_moved"]) == simulated.bytes_moved


def translate(directory, text):
    mlir = directory / "edited.mlir"
    mlir.write_text(text)
    return subprocess.run([str(BIN / "kina-translate"), "--kina-to-so",
                           str(mlir), "-o", str(mlir.with_suffix(".so"))],
                          capture_output=True, text=True)


def test_a_result_declared_replicated_that_differs_is_refused(tmp_path):
    # An edited per-device program: the shifted blocks differ per device,
    # but the result says every device holds the whole (same) value.
    text = PROGRAM.format(axes="pp = 4", block=2, rows=8, t="3xf32",
                          over="pp", shift=1, cyclic="")
    text = text.replace("-> (!kina.tensor<2x3xf32, @local> {kina.global = "
                        "!kina.tensor<8x3xf32, @sharded(axis=0, over=pp)>})",
                        "-> (!kina.tensor<2x3xf32, @local> {kina.global = "
                        "!kina.tensor<2x3xf32, @replicated>})")
    assert "@replicated" in text
    done = translate(tmp_path, text)
    assert done.returncode == 0, done.stderr
    module = kina.load(tmp_path / "edited.so")
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    with pytest.raises(kina.DeviceError, match=r"devices 0 and 1 hold "
                       r"different values of a block their result's "
                       r"placement \(@replicated\) says they share"):
        module.simulate("shift", x, report=False)


def test_a_local_parameter_without_its_global_type_is_named(tmp_path):
    text = PROGRAM.format(axes="pp = 4", block=2, rows=8, t="3xf32",
                          over="pp", shift=1, cyclic="")
    text = text.replace('{kina.global = !kina.tensor<8x3xf32, '
                        '@sharded(axis=0, over=pp)>, kina.name = "x"}',
                        '{kina.name = "x"}')
    done = translate(tmp_path, text)
    assert done.returncode != 0
    assert "'shift': parameter 'x' is @local without a kina.global " \
        "attribute" in done.stderr
    assert "internal error" not in done.stderr
