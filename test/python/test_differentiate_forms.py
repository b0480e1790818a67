"""reverseMode on each form of a sharded program (docs/design.md, "Reverse mode"): the
global view (what kina.compile does), the host form and the per-device
(SPMD) form, each from kina-opt's passes in that order, compiled with
kina-translate and run: the host form called directly, the per-device one
on the simulator and under mpirun. Every form's gradients equal
torch.autograd (float64) within 1e-4 relative, the global view's within
1e-5, and every device holds identical bits of each replicated gradient."""

import os
import pathlib
import subprocess

import numpy as np
import pytest
import torch

import kina
from test_mpi import mpirun

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("KINA_BIN", ROOT / "build" / "bin"))
SOURCE = ROOT / "test" / "Differentiate" / "per-device.test"
SHAPES = {"x": (4, 8), "w": (8, 16), "b": (4, 16)}
# The last pass differentiates: after the partitioning, in that form.
FORMS = {"host": "--kina-partition=form=host",
         "spmd": "--kina-partition=form=spmd"}


def relative(a, b):
    return np.abs(np.asarray(a, np.float64) - b).max() / np.abs(b).max()


@pytest.fixture(scope="module")
def arguments():
    rng = np.random.default_rng(7)
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES.values()]


@pytest.fixture(scope="module")
def reference(arguments):
    """Loss and gradients by torch.autograd in float64."""
    x, w, b = (torch.tensor(a, dtype=torch.float64, requires_grad=True)
               for a in arguments)
    y = torch.tanh(x @ w + b)
    loss = (y * y).sum()
    loss.backward()
    return [loss.item(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()]


def compiled_form(form, directory):
    """The program partitioned to `form`, then differentiated, as a .so."""
    imported = subprocess.run(
        [str(BIN / "kina-translate"), "--import-kina", str(SOURCE)],
        capture_output=True, text=True, check=True).stdout
    partitioned = subprocess.run(
        [str(BIN / "kina-opt"), "--kina-propagate-sharding", "--cse",
         FORMS[form], "--kina-differentiate"],
        input=imported, capture_output=True, text=True)
    assert partitioned.returncode == 0, partitioned.stderr
    mlir = directory / (form + ".mlir")
    mlir.write_text(partitioned.stdout)
    library = directory / (form + ".so")
    subprocess.run([str(BIN / "kina-translate"), "--kina-to-so", str(mlir),
                    "-o", str(library)], check=True)
    return kina.load(library)


@pytest.fixture(scope="module")
def forms(tmp_path_factory):
    directory = tmp_path_factory.mktemp("forms")
    return {form: compiled_form(form, directory) for form in FORMS}


def check(values, reference, global_view):
    for value, want, whole in zip(values, reference, global_view):
        assert relative(value, want) <= 1e-4
        assert relative(value, np.asarray(whole, np.float64)) <= 1e-5


def test_each_form_differentiates_to_torch(forms, arguments, reference):
    global_view = kina.compile_file(SOURCE).grads(*arguments)
    check(global_view, reference, global_view)
    check(forms["host"].grads(*arguments), reference, global_view)
    # A per-device program exports per-device functions only.
    assert forms["spmd"].functions == {}
    run = forms["spmd"].simulate("grads", *arguments, report=False)
    check(run.value, reference, global_view)
    # The loss and b's gradient are replicated: the same bits everywhere.
    for local in run.per_device[1:]:
        for i in (0, 3):
            np.testing.assert_array_equal(local[i], run.per_device[0][i])


@pytest.mark.skipif(
    os.environ.get("KINA_SKIP_MPI") == "1",
    reason="KINA_SKIP_MPI=1 (the sanitizer build: MPI is not instrumented)")
def test_the_per_device_gradients_under_mpirun(forms, arguments, tmp_path):
    module = forms["spmd"]
    path = tmp_path / "grads.so"
    module.save(path)
    np.savez(tmp_path / "in.npz", **dict(zip(SHAPES, arguments)))
    done = mpirun(module.mesh.num_devices, path, "grads", tmp_path / "in.npz",
                  tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    simulated = module.simulate("grads", *arguments, report=False)
    with np.load(tmp_path / "out.npz") as out:
        for i, value in enumerate(simulated.value):
            np.testing.assert_array_equal(out["result_%d" % i], value)
