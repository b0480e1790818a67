"""Each StoryLM-0 example compiled to a .so and called through the C ABI:
the entry, @main and the sharded sub-functions against NumPy."""

import importlib.util

import numpy as np
import pytest

import abi

spec = importlib.util.spec_from_file_location(
    "storylm0", abi.ROOT / "python" / "kina" / "models" / "storylm0.py")
storylm0 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(storylm0)

EXAMPLES = ["forward", "tp_heads", "tp_vocab", "tp_proj"]


@pytest.fixture(scope="module", params=EXAMPLES)
def example(request, tmp_path_factory):
    name = "storylm0_" + request.param
    so = abi.compile_file(abi.ROOT / "examples" / (name + ".kina"),
                          tmp_path_factory.mktemp(name), name)
    return name, so


def test_entry_and_main_match_numpy(example):
    name, so = example
    args = storylm0.arguments()
    expected = storylm0.forward(*args)["logits"]
    for entry in (name, "main"):
        status, logits = so.call(entry, *args)
        assert status == 0
        assert logits.shape == (1, 4, 8)
        np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)


def test_out_of_range_token_is_status_1(example):
    _, so = example
    args = storylm0.arguments(token_ids=[[1, 4, 2, 8]])
    status, _ = so.call("main", *args)
    assert status == 1


def test_sub_functions(tmp_path):
    args = storylm0.arguments()
    ref = storylm0.forward(*args)
    w = dict(zip(storylm0.PARAMETERS, args))
    vocab = abi.compile_file(abi.ROOT / "examples/storylm0_tp_vocab.kina",
                             tmp_path, "vocab")
    status, logits = vocab.call("tp_logits", ref["residual"], w["lm_head"])
    assert status == 0
    np.testing.assert_allclose(logits, ref["logits"], rtol=1e-5, atol=1e-5)
    heads = abi.compile_file(abi.ROOT / "examples/storylm0_tp_heads.kina",
                             tmp_path, "heads")
    status, context = heads.call("tp_heads", ref["q"], ref["k_t"], ref["v"],
                                 w["scale"], w["mask"])
    assert status == 0
    np.testing.assert_allclose(context, ref["context"], rtol=1e-5, atol=1e-6)
    proj = abi.compile_file(abi.ROOT / "examples/storylm0_tp_proj.kina",
                            tmp_path, "proj")
    status, q0 = proj.call("proj_q0", ref["x"], w["wq"])
    assert status == 0
    np.testing.assert_allclose(q0, ref["q"][:, 0:1], rtol=1e-5, atol=1e-6)
    status, context = proj.call("tp_proj", ref["x"], w["wq"], w["wk"],
                                w["wv"], w["scale"], w["mask"])
    assert status == 0
    np.testing.assert_allclose(context, ref["context"], rtol=1e-5, atol=1e-6)
