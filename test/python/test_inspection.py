"""What a compiled module shows of its sharding: m.ir at every stage,
m.remarks (the collectives the propagation inserted, as data),
m.communication (per function, forward and backward, what each kind of
collective moves) and m.cost (FLOPs, peak bytes, bytes sent, the
alternatives weighed), on a Megatron transformer layer and its gradient
and a data x tensor parallel MLP."""

import pathlib
import re

import numpy as np
import pytest

import kina

ROOT = pathlib.Path(__file__).resolve().parents[2]

LAYER = """@mesh([2])
fn layer(x: Tensor[F32, [8, 16], @replicated],
         wq: Tensor[F32, [16, 16], @sharded(axis=1)],
         wk: Tensor[F32, [16, 16], @sharded(axis=1)],
         wv: Tensor[F32, [16, 16], @sharded(axis=1)],
         wo: Tensor[F32, [16, 16], @sharded(axis=0)],
         w_fc: Tensor[F32, [16, 64], @sharded(axis=1)],
         w_proj: Tensor[F32, [64, 16], @sharded(axis=0)]) -> Tensor[F32, [], @replicated] {
  q      = (x @ wq).reshape([8, 2, 8]).transpose([1, 0, 2])   : [2, 8, 8]
  k_t    = (x @ wk).reshape([8, 2, 8]).transpose([1, 2, 0])   : [2, 8, 8]
  v      = (x @ wv).reshape([8, 2, 8]).transpose([1, 0, 2])   : [2, 8, 8]
  probs  = softmax(q @ k_t, axis=2)                           : [2, 8, 8]
  attn   = (probs @ v).transpose([1, 0, 2]).reshape([8, 16])  : [8, 16]
  x1     = x + attn @ wo                                      : [8, 16]
  y      = x1 + tanh(x1 @ w_fc) @ w_proj                      : [8, 16]
  return reshape(sum(sum(y * y, axis=1), axis=0), [])
}
fn layer_grad = reverseMode(layer, wrt=[x, wq, wk, wv, wo, w_fc, w_proj])
"""


@pytest.fixture(scope="module")
def layer():
    return kina.compile(LAYER, "layer.kina")


def moved(rows, direction, collective):
    return [(r.count, r.bytes) for r in rows
            if r.direction == direction and r.collective == collective]


def test_communication_of_a_megatron_layer(layer):
    forward = layer.communication["layer"]
    assert moved(forward, "forward", "all_reduce") == [(2, 1024)]
    assert not moved(forward, "backward", "all_reduce")
    grad = layer.communication["layer_grad"]
    assert moved(grad, "forward", "all_reduce") == [(2, 1024)]
    assert moved(grad, "backward", "all_reduce") == [(2, 1024)]
    assert not [r for r in grad if r.collective == "all_gather"]
    assert all(r.over == "x" for r in grad)


def test_remarks_name_the_line_and_the_bytes(layer):
    assert layer.remarks
    for remark in layer.remarks:
        assert re.fullmatch(r"layer\.kina:\d+:\d+", remark.location)
        assert remark.collective in ("all_reduce", "all_gather",
                                     "reduce_scatter", "all_to_all")
        assert remark.over == "x" and remark.bytes > 0 and remark.reason
    # The MLP's row-parallel product is reduced where the residual adds
    # it, a remark at that line naming the row-parallel weight that made
    # it partial (not the column-parallel one before it).
    mlp = [r for r in layer.remarks if r.location == "layer.kina:15:15"]
    assert mlp and all(r.collective == "all_reduce" and r.bytes == 512
                       for r in mlp)
    assert {r.origin for r in mlp} == {"parameter 'w_proj'"}
    # In the backward, x1's cotangent through x1 @ w_fc (at the product's
    # line) is partial because of w_fc's column split.
    backward = [r for r in layer.remarks if r.location == "layer.kina:15:25"]
    assert [r.origin for r in backward] == ["parameter 'w_fc'"]



def test_a_gradients_all_reduce_is_at_its_parameter():
    # Data parallel: each gradient is all-reduced at its parameter, and the
    # remark says which gradient it serves; the batch split is the origin.
    source = ROOT / "test" / "Sharding" / "Inputs" / "data-parallel-mlp.kina"
    m = kina.compile(source.read_text(), "mlp.kina")
    grads = {r.serves: r for r in m.remarks if r.serves}
    assert {name: (r.location, r.bytes, r.origin)
            for name, r in grads.items()} == {
        "the gradient of 'w1'": ("mlp.kina:7:9", 256, "parameter 'x'"),
        "the gradient of 'b1'": ("mlp.kina:7:48", 64, "parameter 'x'"),
        "the gradient of 'w2'": ("mlp.kina:8:9", 128, "parameter 'x'"),
        "the gradient of 'b2'": ("mlp.kina:8:48", 8, "parameter 'x'"),
    }
    assert all(r.function == "grads" and r.collective == "all_reduce"
               for r in grads.values())

def test_every_stage_is_kept(layer):
    propagated = layer.ir("propagated")
    assert "kina.all_reduce" in propagated and "@auto" not in propagated
    assert "kina.reverse_mode" not in propagated
    host = layer.ir("host")
    assert "kina.all_" not in host and "@replicated" not in host
    assert "@local" in layer.ir("spmd") and "kina.all_reduce" in layer.ir("spmd")
    for stage in ("kina", "linalg", "llvm"):
        assert layer.ir(stage)


def test_every_stage_with_source_locations(layer):
    # m.ir(stage, locations=True): each op says where in layer.kina it
    # comes from, beside it (the attention's softmax is on line 12); the
    # LLVM IR in line tables. Without it, no location is printed.
    for stage in ("kina", "propagated", "host", "spmd", "linalg"):
        assert '"layer.kina":' not in layer.ir(stage)
        located = layer.ir(stage, locations=True)
        at_softmax = r'loc\((?:"\w+"\()?"layer\.kina":12:\d+\)'
        assert re.search(at_softmax, located), stage
    llvm = layer.ir("llvm", locations=True)
    assert "layer.kina" not in layer.ir("llvm")
    assert '!DIFile(filename: "layer.kina"' in llvm
    assert re.search(r"!DILocation\(line: 12, column: \d+", llvm)


MLP_2D = (ROOT / "test" / "Sharding" / "Inputs" / "mlp-2d.kina").read_text()
# x [4, 8] @ w_fc [8, 16], maximum, @ w_proj [16, 8]; the same placements
# replicated give the unsharded program.
MLP_FLOPS = 2 * 4 * 8 * 16 + 4 * 16 + 2 * 4 * 16 * 8
MLP_PARAMS = {"x": (4, 8), "w_fc": (8, 16), "w_proj": (16, 8)}


def test_cost_of_two_annotations_side_by_side():
    split = kina.compile(MLP_2D, "mlp-2d.kina")
    whole = kina.compile(re.sub(r"@sharded\(axis=\d, over=\w+\)",
                                "@replicated", MLP_2D), "whole.kina")
    devices = split.mesh.num_devices
    assert whole.cost("mlp").flops == MLP_FLOPS
    assert whole.cost("mlp").bytes_sent == 0 and not whole.cost("mlp").traffic
    # Each of the 4 devices computes a quarter: both products are split
    # over dp (rows) and tp (the hidden dim), maximum's elements too.
    assert split.cost("mlp").flops * devices == MLP_FLOPS
    params = sum(4 * np.prod(shape) for shape in MLP_PARAMS.values())
    assert whole.cost("mlp").peak_bytes > params
    assert split.cost("mlp").peak_bytes < whole.cost("mlp").peak_bytes
    # The bytes it predicts are what the simulator's devices send.
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(shape).astype(np.float32)
            for shape in MLP_PARAMS.values()]
    run = split.simulate("mlp", *args, report=False)
    cost = split.cost("mlp")
    assert cost.bytes_sent == sum(t.bytes for t in cost.traffic) == 128
    assert run.bytes_moved == devices * cost.bytes_sent
    # The order of the two reductions was weighed; the cheaper one ran.
    weighed = {tuple(r.weighed) for r in cost.collectives}
    assert len(weighed) == 1
    (alternatives,) = weighed
    assert sorted(a.bytes for a in alternatives) == [128, 192]
    assert min(alternatives, key=lambda a: a.bytes).choice == "tp then dp"
    table = str(cost)
    assert "FLOPs" in table and "all_reduce" in table and "weighed" in table


def test_a_mean_costs_its_sum_and_its_division():
    # As the propagation and automatic sharding compute a mean over a split
    # axis (a sum, then a division), so the ledger prices every mean.
    m = kina.compile("""
fn mean_of(x: Tensor[F32, [4, 8], @host]) -> Tensor[F32, [4, 1], @host] {
  return mean(x, axis=1)
}
fn sum_then_divide(x: Tensor[F32, [4, 8], @host]) -> Tensor[F32, [4, 1], @host] {
  return sum(x, axis=1) / broadcast(8.0)
}
""", "mean.kina")
    assert m.cost("mean_of").flops == m.cost("sum_then_divide").flops == \
        4 * 8 + 4


def test_cost_of_a_loaded_module_is_not_known(tmp_path):
    m = kina.compile(MLP_2D, "mlp-2d.kina")
    m.save(tmp_path / "mlp.so")
    loaded = kina.load(tmp_path / "mlp.so")
    with pytest.raises(KeyError, match="compiled in this process"):
        loaded.cost("mlp")
    with pytest.raises(KeyError, match="no function 'nope'"):
        m.cost("nope")
    with pytest.raises(TypeError, match="a function's name"):
        m.cost(3)


def test_a_program_without_a_mesh():
    m = kina.compile("fn f(x: Tensor[F32, [2], @host]) -> Tensor[F32, [2], "
                     "@host] {\n  return x + x\n}\n", "plain.kina")
    assert m.remarks == [] and m.communication == {}
    assert m.cost("f").flops == 2 and m.cost("f").bytes_sent == 0
    assert "kina.add" in m.ir("propagated") and "kina.add" in m.ir("host")
    with pytest.raises(ValueError, match="declares no @mesh"):
        m.ir("spmd")


def test_remarks_are_rendered_from_the_records_python_reads(tmp_path):
    """The compile returns typed records; each remark it says is its
    record rendered, and m.remarks / m.cost are built from the records,
    never from the remarks' text (rewording one changes no record)."""
    ok, diagnostics, _, records, _ = kina._kina.compile_to_file(
        LAYER, "layer.kina", str(tmp_path / "layer.so"))
    assert ok and records.collectives and records.costs
    said = [line for line in diagnostics.splitlines() if ": remark: " in line]
    rendered = ["%s: remark: %s" % (r.location, r.remark())
                for r in records.collectives + records.costs]
    assert sorted(said) == sorted(rendered)
    for record in records.collectives:
        assert isinstance(record.bytes_per_device, int)
        assert all(isinstance(w.bytes, int) for w in record.weighed)
    grad = next(c for c in records.costs if c.function == "layer_grad")
    assert grad.bytes_sent == sum(t.bytes for t in grad.traffic)
    assert {t.backward for t in grad.traffic} == {False, True}
    remarks, costs = kina.cost.from_records(records)
    assert remarks == kina.compile(LAYER, "layer.kina").remarks
    assert costs["layer_grad"].flops == grad.flops
    assert not hasattr(kina.cost, "parse")
