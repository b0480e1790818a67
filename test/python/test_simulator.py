"""The threaded N-device simulator (`m.simulate`): the sharded examples
give the host form's bits on every device, each device's local result is
its block, the per-op report locates the one op where a row-parallel sum
rounds, every collective is right on 1 to 4 devices and a 2-D mesh, and
a failing device stops them all with its status."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import kina
from collective_programs import CASES, arguments, expected, program
from kina.models import storylm0

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = {name: ROOT / "examples" / ("storylm0_sharded_%s.kina" % name)
            for name in ["vocab", "vocab4", "proj", "heads", "row", "2d"]}
ROW_PARALLEL = {"row"}


@pytest.fixture(scope="module", params=sorted(EXAMPLES))
def example(request):
    return request.param, kina.compile_file(EXAMPLES[request.param])


def test_examples_equal_the_host_form_on_every_device(example):
    name, module = example
    args = storylm0.arguments()
    host = module.storylm0_forward(*args)
    run = module.simulate("storylm0_forward", *args)
    assert len(run.per_device) == module.mesh.num_devices
    if name in ROW_PARALLEL:
        assert np.abs(run.value - host).max() <= 1e-5 * np.abs(host).max()
    else:
        np.testing.assert_array_equal(run.value, host)
    # The result is @replicated: every device holds all of it, same bits.
    for local in run.per_device:
        np.testing.assert_array_equal(local, run.value)
    assert run.bytes_moved > 0
    # Every device sent what the static cost view predicts.
    cost = module.cost("storylm0_forward")
    assert run.bytes_moved == module.mesh.num_devices * cost.bytes_sent


def test_report_is_zero_exactly_where_the_split_is_exact(example):
    name, module = example
    run = module.simulate("storylm0_forward", *storylm0.arguments())
    ops = {row.op for row in run.report}
    assert {"kina.gather", "kina.matmul", "kina.softmax"} <= ops
    assert all(row.location.startswith(str(EXAMPLES[name]))
               for row in run.report)
    diverged = [row for row in run.report if row.max_abs_diff != 0]
    if name in ROW_PARALLEL:
        # The first op that differs is the partial-sum matmul of Wo.
        assert diverged and diverged[0].op == "kina.matmul"
        assert diverged[0].placement == "@partial"
        assert max(r.max_abs_diff for r in diverged) < 1e-5
    else:
        assert diverged == []
    assert "max_abs_diff" in str(run.report)


def test_local_results_are_the_blocks_of_a_sharded_result():
    module = kina.compile(program([4]))
    args = arguments(module, "keep")
    run = module.simulate("keep", *args)
    np.testing.assert_array_equal(run.value, args[0])
    for device, local in enumerate(run.per_device):
        np.testing.assert_array_equal(local,
                                      args[0][:, 3 * device:3 * device + 3])


@pytest.mark.parametrize("sizes, over", [([1], None), ([2], None), ([3], None),
                                         ([4], None), ([2, 3], "rows"),
                                         ([2, 3], "cols")])
@pytest.mark.parametrize("name", sorted(CASES))
def test_collective(sizes, over, name):
    module = kina.compile(program(sizes, over))
    collective = CASES[name][0]
    args = arguments(module, name)
    run = module.simulate(name, *args, report=False)
    want = expected(name, args)
    if collective in ("all_reduce", "reduce_scatter"):
        np.testing.assert_allclose(run.value, want, rtol=1e-5, atol=1e-5)
        # Summed in device order on every device: identical bits.
        if collective == "all_reduce":
            for local in run.per_device[1:]:
                np.testing.assert_array_equal(local, run.per_device[0])
    else:
        np.testing.assert_array_equal(run.value, want)
    assert run.value.dtype == want.dtype
    devices = int(np.prod(sizes))
    axis_size = sizes[0] if over in (None, "rows") else sizes[1]
    moves_data = collective != "all_slice" and axis_size > 1
    assert (run.bytes_moved > 0) == moves_data
    # Every device sends what the cost model predicts, to the byte.
    predicted = sum(t.bytes for t in module.communication.get(name, []))
    assert run.bytes_moved == devices * predicted
    # The per-device code calls the runtime (a collective over one device
    # folds away).
    called = "call @kina_collective_" + collective in module.ir("linalg")
    assert called == (axis_size > 1)
    assert len(run.per_device) == devices


def test_gather_out_of_range_stops_every_device_with_its_status():
    module = kina.compile_file(EXAMPLES["vocab4"])
    args = storylm0.arguments()
    args[0] = args[0].copy()
    args[0][0, 2] = 8  # one past the 8-word vocabulary
    with pytest.raises(IndexError, match=r"status 1 on every device"):
        module.simulate("storylm0_forward", *args, report=False)
    # Nothing is left behind: the next run is fine.
    module.simulate("storylm0_forward", *storylm0.arguments(), report=False)


def test_wrong_inputs_are_refused_before_any_device_starts():
    module = kina.compile_file(EXAMPLES["vocab"])
    args = storylm0.arguments()
    with pytest.raises(ValueError, match="parameter 'embed' expects float32 "
                       "of shape \\[8, 4\\]"):
        module.simulate("storylm0_forward", args[0], args[1][:4], *args[2:])
    # A wrong dtype is a TypeError, as in a direct call.
    with pytest.raises(TypeError, match="parameter 'embed' expects float32"):
        module.simulate("storylm0_forward", args[0],
                        args[1].astype(np.float64), *args[2:])
    with pytest.raises(TypeError, match="parameter 'embed'"):
        module.storylm0_forward(args[0], args[1].astype(np.float64),
                                *args[2:])
    with pytest.raises(ValueError, match="takes 9 argument"):
        module.simulate("storylm0_forward", *args[:3])
    with pytest.raises(ValueError, match="no mesh-placed function 'nope'"):
        module.simulate("nope", *args)
    plain = kina.compile("fn f(x: Tensor[F32, [2], @host]) -> "
                         "Tensor[F32, [2], @host] {\n  return x\n}\n")
    with pytest.raises(ValueError, match="has no mesh"):
        plain.simulate("f", np.zeros(2, np.float32))


def test_arguments_by_name_and_the_options_are_checked():
    module = kina.compile_file(EXAMPLES["vocab"])
    args = storylm0.arguments()
    names = [p.name for p in module.functions["storylm0_forward"].params]
    by_name = module.simulate("storylm0_forward", args[0], report=False,
                              **dict(zip(names[1:], args[1:])))
    np.testing.assert_array_equal(by_name.value,
                                  module.storylm0_forward(*args))
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        module.simulate("storylm0_forward", *args, nope=args[1])
    with pytest.raises(TypeError, match="parameter 'embed' twice"):
        module.simulate("storylm0_forward", *args[:2], embed=args[1])
    with pytest.raises(TypeError, match="missing argument\\(s\\) wq"):
        module.simulate("storylm0_forward", args[0], embed=args[1],
                        **dict(zip(names[3:], args[3:])))
    with pytest.raises(ValueError, match="threads_per_device must be at "
                       "least 1, got 0"):
        module.simulate("storylm0_forward", *args, threads_per_device=0)
    with pytest.raises(ValueError, match="timeout must be a positive"):
        module.simulate("storylm0_forward", *args, timeout=0)


def test_threads_per_device_do_not_change_the_bits():
    module = kina.compile_file(EXAMPLES["row"])
    args = storylm0.arguments()
    one = module.simulate("storylm0_forward", *args, report=False)
    two = module.simulate("storylm0_forward", *args, report=False,
                          threads_per_device=2)
    np.testing.assert_array_equal(one.value, two.value)


def test_report_needs_the_source():
    module = kina.compile_file(EXAMPLES["vocab"])
    path = ROOT / "build" / "test-simulator-vocab.so"
    module.save(path)
    try:
        loaded = kina.load(path)
        args = storylm0.arguments()
        run = loaded.simulate("storylm0_forward", *args, report=False)
        np.testing.assert_array_equal(run.value,
                                      module.storylm0_forward(*args))
        with pytest.raises(ValueError, match="needs the program's source"):
            loaded.simulate("storylm0_forward", *args)
    finally:
        path.unlink()


def test_show_sharding_names_each_devices_block(capsys):
    module = kina.compile_file(EXAMPLES["2d"])
    kina.show_sharding(module, "storylm0_forward", figure=False)
    table = capsys.readouterr().out.splitlines()
    assert table[0] == ("storylm0_forward on @mesh([heads = 2, vocab = 2]): "
                        "4 devices")
    lm_head = next(line.split() for line in table if " lm_head " in line)
    # devices 0..3 are (heads, vocab) = (0,0), (0,1), (1,0), (1,1)
    assert " ".join(lm_head).endswith("[:, 0:4] [:, 4:8] [:, 0:4] [:, 4:8]")
    wq = " ".join(next(line.split() for line in table if " wq " in line))
    assert wq.endswith("[:, 0:2] [:, 0:2] [:, 2:4] [:, 2:4]")
    # Values by their source names; an intermediate without one by its op.
    assert any(line.split()[:2] == ["value", "probs"] for line in table)
    assert any(line.split()[:2] == ["value", "scores"] for line in table)
    assert any(line.split()[:2] == ["value", "mul"] for line in table)
    assert not any("partial" in line for line in table)
    figure = kina.show.sharding_figure(module, "storylm0_forward",
                                       values=False)
    assert len(figure.axes) == 4 * 10  # 4 devices x (9 params + result)


def test_show_sharding_explains_partial_sums(capsys):
    module = kina.compile_file(EXAMPLES["row"])
    kina.show_sharding(module, "storylm0_forward", figure=False)
    table = capsys.readouterr().out.splitlines()
    summands = [line for line in table if line.endswith(" +")]
    assert summands and table[-1].startswith("+ (@partial): each device "
                                             "holds a summand")
    report = module.simulate("storylm0_forward",
                             *storylm0.arguments()).report
    assert "residual" in {row.name for row in report}
    assert "value" in str(report).splitlines()[0]


def test_process_exits_cleanly_after_simulating_and_unloading():
    # The device threads outlive the module; its runtime must have dropped
    # their per-thread state when it was unloaded (a crash at exit else).
    code = ("import gc, sys; sys.path[:0] = %r; import kina\n"
            "from kina.models import storylm0\n"
            "m = kina.compile_file(%r)\n"
            "m.simulate('storylm0_forward', *storylm0.arguments())\n"
            "del m; gc.collect()\n" % (sys.path, str(EXAMPLES["vocab"])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_reductions_on_devices_and_host():
    module = kina.compile_file(ROOT / "test" / "Sharding" / "Inputs" /
                               "reductions.kina")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    y = rng.standard_normal((4, 6)).astype(np.float32)
    for name, arg, want in [
            ("total", x, x.sum(1, keepdims=True)),
            ("average", x, x.mean(1, keepdims=True)),
            ("rows", y, np.tanh(y).max(1, keepdims=True) +
             np.exp(y).sum(1, keepdims=True))]:
        host = getattr(module, name)(arg)
        np.testing.assert_allclose(host, want, rtol=1e-5, atol=1e-6)
        run = module.simulate(name, arg)
        np.testing.assert_allclose(run.value, host, rtol=1e-6, atol=1e-6)
        assert all(row.max_abs_diff <= 1e-6 for row in run.report)


def test_a_split_asked_of_an_intermediate_splits_its_computation():
    # test/Sharding/Inputs/asked-back.kina: weights replicated, one
    # annotation on `h`; the split flows back, each device computes half
    # of every product, and the values are NumPy's.
    module = kina.compile_file(
        ROOT / "test" / "Sharding" / "Inputs" / "asked-back.kina")
    rng = np.random.default_rng(3)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32)
                 for s in [(4, 8), (8, 16), (16, 8)])
    run = module.simulate("mlp", x, w1, w2)
    want = np.tanh(x.astype(np.float64) @ w1) @ w2
    np.testing.assert_allclose(run.value, want, rtol=1e-5, atol=1e-5)
    unsharded = 2 * 4 * 8 * 16 + 4 * 16 + 2 * 4 * 16 * 8
    assert module.cost("mlp").flops * module.mesh.num_devices == unsharded
    e = np.exp(x.astype(np.float64))
    run = module.simulate("conflict", x)
    np.testing.assert_allclose(run.value, e * e + (e + e), rtol=1e-6)
    assert run.bytes_moved == (module.mesh.num_devices *
                               module.cost("conflict").bytes_sent)


CALLED = """@mesh([2])
fn loss(x: Tensor[F32, [4, 8], @replicated],
        w: Tensor[F32, [8, 16], @sharded(axis=1)]) -> Tensor[F32, [], @replicated] {
  y = tanh(x @ w) : [4, 16]
  return reshape(sum(sum(y * y, axis=1), axis=0), [])
}
"""


def test_report_of_a_function_another_one_calls():
    # A caller (a training step) must not take the callee's report away:
    # the callee is probed and its calls leave the probes.
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    alone = kina.compile(CALLED).simulate("loss", x, w).report
    assert len(alone) == 6
    module = kina.compile(CALLED + """fn grads = reverseMode(loss, wrt=[w])
fn twice(x: Tensor[F32, [4, 8], @replicated],
         w: Tensor[F32, [8, 16], @sharded(axis=1)]) -> Tensor[F32, [], @replicated] {
  a = loss(x, w) : []
  return a + loss(x, w)
}
fn step(x: Tensor[F32, [4, 8], @replicated],
        w: Tensor[F32, [8, 16], @sharded(axis=1)]) -> Tensor[F32, [8, 16], @sharded(axis=1)] {
  l, gw = grads(x, w)
  return w - gw * broadcast(0.1)
}
""")
    called = module.simulate("loss", x, w).report
    assert [(r.op, r.location, r.placement) for r in called] == [
        (r.op, r.location, r.placement) for r in alone]
    assert max(r.max_abs_diff for r in called) < 1e-5
    assert len(module.simulate("grads", x, w).report) > len(alone)
    # The callers' own rows: the calls' results and what uses them.
    twice = module.simulate("twice", x, w)
    assert [r.op for r in twice.report] == ["func.call", "func.call",
                                            "kina.add"]
    assert twice.value == module.twice(x, w)
    step = module.simulate("step", x, w)
    np.testing.assert_array_equal(step.value, module.step(x, w))
    assert step.report and all(r.max_abs_diff == 0 for r in step.report)
