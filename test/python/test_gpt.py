"""The GPT forward of scripts/generate/gen_gpt.py at test width: the logits of the
Kina program equal a PyTorch reference built from torch.nn modules with
the same weights, and the Megatron annotation of the same program runs as
the host form, on the simulator and under mpirun -n 2, each equal to the
unsharded logits to float32 rounding."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import kina
from kina.models import gpt
from kina_reference import TorchGPT
from test_mpi import mpirun

CFG = gpt.Config.tiny()
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def relative(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.fixture(scope="module")
def inputs():
    weights = gpt.weights(CFG, seed=0)
    ids = np.random.default_rng(1).integers(0, CFG.v, (1, CFG.t))
    return weights, ids, gpt.arguments(CFG, weights, ids)


@pytest.fixture(scope="module")
def unsharded(inputs):
    module = kina.compile(gpt.source(CFG), "gpt_tiny.kina")
    return module, module.gpt_forward(*inputs[2])


@pytest.fixture(scope="module")
def megatron():
    return kina.compile(gpt.source(CFG, mesh=2), "gpt_tiny_megatron.kina")


def test_the_small_config_is_gpt2_small_sized():
    cfg = gpt.Config.small()
    assert (cfg.layers, cfg.d, cfg.heads, cfg.dh, cfg.f, cfg.t, cfg.v) == \
        (12, 768, 12, 64, 3072, 128, 32000)
    assert 100e6 < cfg.parameter_count() < 120e6


GENERATOR = os.path.join(os.path.dirname(__file__), "..", "..", "scripts",
                         "generate", "gen_gpt.py")


def test_generator_writes_the_module_source(tmp_path):
    out = tmp_path / "gpt.kina"
    subprocess.run([sys.executable, GENERATOR, "--tiny", "--shard", "megatron",
                    "-o", str(out)], check=True)
    assert out.read_text() == gpt.source(CFG, mesh=2)


def test_generator_takes_every_split_the_trainer_does_and_explicit_sizes(
        tmp_path):
    out = tmp_path / "gpt.kina"
    subprocess.run([sys.executable, GENERATOR, "--tiny", "--d", "32",
                    "--batch", "2", "--form", "train", "--shard",
                    "data+megatron", "--devices", "4", "-o", str(out)],
                   check=True)
    cfg = gpt.Config(**dict(vars(CFG), d=32, b=2))
    assert out.read_text() == gpt.train_source(cfg, mesh=4,
                                               parallel="data+megatron")
    odd = subprocess.run([sys.executable, GENERATOR, "--tiny", "--shard",
                          "data+megatron", "--devices", "3", "--batch", "2"],
                         capture_output=True, text=True)
    assert odd.returncode == 2 and "even --devices" in odd.stderr


def test_generator_writes_the_zero_plans(tmp_path):
    out = tmp_path / "gpt.kina"
    subprocess.run([sys.executable, GENERATOR, "--tiny", "--batch", "2",
                    "--form", "train", "--shard", "zero3", "--devices", "2",
                    "-o", str(out)], check=True)
    cfg = gpt.Config(**dict(vars(CFG), b=2))
    assert out.read_text() == gpt.train_source(cfg, mesh=2, parallel="zero3")
    odd = subprocess.run([sys.executable, GENERATOR, "--tiny", "--shard",
                          "zero1+megatron", "--devices", "3", "--batch", "2"],
                         capture_output=True, text=True)
    assert odd.returncode == 2 and "even --devices" in odd.stderr


def declared(text, name):
    """The placement `name` is declared with in gpt_train_step."""
    step = text[text.index("fn %s(" % gpt.TRAIN_STEP):]
    return re.search(r"\b%s: Tensor\[\w+, \[[\d, ]*\], (@\w+(\([^)]*\))?)"
                     % name, step).group(1)


def test_zero_plans_split_the_moments_on_the_first_axis_megatron_leaves():
    # wpe is [10, 64]: 10 does not divide over 4 devices, 64 does.
    cfg = gpt.Config(layers=1, d=64, heads=4, t=10, v=96, b=4)
    zero1 = gpt.train_source(cfg, mesh=4, parallel="zero1")
    zero3 = gpt.train_source(cfg, mesh=4, parallel="zero3")
    assert "@mesh([4], axes=[dp])" in zero1
    for name, want in (("wte", "@sharded(axis=0, over=dp)"),
                       ("wpe", "@sharded(axis=1, over=dp)"),
                       ("ln1_g_0", "@sharded(axis=0, over=dp)"),
                       ("w_proj_0", "@sharded(axis=0, over=dp)")):
        for moment in ("m_", "v_"):
            assert declared(zero1, moment + name) == want, name
            assert declared(zero3, moment + name) == want, name
        assert declared(zero1, name) == "@replicated"
        assert declared(zero3, name) == want
    assert declared(zero1, "token_ids") == "@sharded(axis=0, over=dp)"
    assert gpt.zero_deviations(cfg, 4, "zero1") == {}
    # Megatron's split stays over tp; the moments add dp on another axis,
    # except where a 1-D tensor has none left.
    both = gpt.train_source(cfg, mesh=4, parallel="zero3+megatron")
    assert "@mesh([2, 2], axes=[dp, tp])" in both
    for name, want in (
            ("wq_0", "@sharded(axis=[0, 1], over=[dp, tp])"),
            ("wo_0", "@sharded(axis=[0, 1], over=[tp, dp])"),
            ("bq_0", "@sharded(axis=0, over=tp)"),
            ("bo_0", "@sharded(axis=0, over=dp)")):
        assert declared(both, "m_" + name) == want, name
        assert declared(both, name) == want, name
    assert sorted(gpt.zero_deviations(cfg, 4, "zero1+megatron")) == [
        "b_fc_0", "bk_0", "bq_0", "bv_0"]
    # Over 3 devices only wte's 96 rows split; every other tensor (sizes
    # 10, 64 and 256) keeps its weight's placement.
    three = gpt.Config(layers=1, d=64, heads=4, t=10, v=96, b=3)
    names = gpt.weight_names(three, tied=True)
    assert sorted(gpt.zero_deviations(three, 3, "zero1")) == sorted(
        n for n in names if n != "wte")
    text = gpt.train_source(three, mesh=3, parallel="zero3")
    assert declared(text, "m_wpe") == declared(text, "wpe") == "@replicated"
    # The plans before ZeRO keep the moments as their weights.
    for parallel in ("megatron", "data", "data+megatron"):
        text = gpt.train_source(cfg, mesh=4, parallel=parallel)
        for name in gpt.weight_names(cfg, tied=True):
            assert declared(text, "m_" + name) == declared(text, name)


def test_logits_equal_pytorch(inputs, unsharded):
    weights, ids, _ = inputs
    _, logits = unsharded
    reference = TorchGPT(CFG, weights)(ids).numpy()
    assert logits.shape == (1, CFG.t, CFG.v)
    assert relative(logits, reference) <= 1e-4


def test_causal(inputs, unsharded):
    module, logits = unsharded
    weights, ids, _ = inputs
    changed = ids.copy()
    changed[0, -1] = (changed[0, -1] + 1) % CFG.v
    again = module.gpt_forward(*gpt.arguments(CFG, weights, changed))
    np.testing.assert_array_equal(again[:, :-1], logits[:, :-1])
    assert not np.array_equal(again[:, -1], logits[:, -1])


def test_megatron_host_form(inputs, unsharded, megatron):
    _, logits = unsharded
    assert relative(megatron.gpt_forward(*inputs[2]), logits) <= 1e-5


def test_megatron_on_the_simulator(inputs, unsharded, megatron):
    _, logits = unsharded
    run = megatron.simulate("gpt_forward", *inputs[2])
    assert relative(run.value, logits) <= 1e-5
    for local in run.per_device:
        np.testing.assert_array_equal(local, run.value)
    # Row-parallel matmuls are where rounding enters: the first op that
    # differs from the unsharded program is a partial-sum matmul.
    first = next(row for row in run.report if row.max_abs_diff > 0)
    assert (first.op, first.placement) == ("kina.matmul", "@partial")
    placements = {row.placement for row in run.report}
    assert {"@sharded(axis=1)", "@sharded(axis=2)", "@partial",
            "@replicated"} <= placements


def test_megatron_under_mpirun(inputs, unsharded, megatron, tmp_path):
    if os.environ.get("KINA_SKIP_MPI") == "1":
        pytest.skip("KINA_SKIP_MPI=1")
    megatron.save(tmp_path / "gpt.so")
    names = gpt.parameter_names(CFG)
    np.savez(tmp_path / "in.npz", **dict(zip(names, inputs[2])))
    done = mpirun(2, tmp_path / "gpt.so", "gpt_forward", tmp_path / "in.npz",
                  tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    simulated = megatron.simulate("gpt_forward", *inputs[2], report=False)
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["result"], simulated.value)
        assert relative(out["result"], unsharded[1]) <= 1e-5


def test_the_demo_script_at_test_width():
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    options = ["--tiny"]
    if os.environ.get("KINA_SKIP_MPI") == "1":
        options.append("--no-mpi")
    done = subprocess.run([sys.executable, os.path.join(
        os.path.dirname(__file__), "..", "..", "examples", "gpt_demo.py"),
        *options], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "demo passed" in done.stdout
    assert "the first that differs: kina.matmul @partial" in done.stdout


def test_plans_do_not_depend_on_the_declared_axis_order():
    """The data x Megatron training step on axes=[dp, tp] and on
    axes=[tp, dp]: the same collectives, bytes and memory (the
    propagation decides the axes in the order that sends the fewest
    bytes, ties by name: docs/design.md)."""
    bin_dir = os.environ.get("KINA_BIN", os.path.join(
        os.path.dirname(__file__), "..", "..", "build", "bin"))
    cfg = gpt.Config(layers=2, d=64, heads=4, t=16, v=512, b=2)
    text = gpt.train_source(cfg, mesh=4, parallel="data+megatron")
    assert "axes=[dp, tp]" in text

    def costs(source):
        imported = subprocess.run(
            [os.path.join(bin_dir, "kina-translate"), "--import-kina"],
            input=source, capture_output=True, text=True, check=True).stdout
        done = subprocess.run(
            [os.path.join(bin_dir, "kina-opt"), "--kina-differentiate",
             "--kina-propagate-sharding", "--cse", "--kina-cost",
             "-o", os.devnull], input=imported, capture_output=True,
            text=True, check=True)
        return sorted(line.split("remark: ", 1)[1]
                      for line in done.stderr.splitlines()
                      if "remark: cost of" in line)

    declared = costs(text)
    assert len(declared) == 4 and any(gpt.TRAIN_STEP in c for c in declared)
    assert costs(text.replace("axes=[dp, tp]", "axes=[tp, dp]")) == declared
