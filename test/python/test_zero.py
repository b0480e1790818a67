"""Sharded optimizer state by placement (docs/language.md, "Sharded
optimizer state"): a three-layer MLP trained with AdamW under data
parallelism, ZeRO-1 and ZeRO-3 (kept or re-gathered weights). The bytes
each device sends equal the ZeRO formula to the byte and what the
simulator moves; the memory ledger holds 1/N of the sharded state; after
20 steps the weights match torch.autograd with a NumPy AdamW, and the
stages match each other to the bit where their sums group alike."""

import numpy as np
import pytest
import torch

import kina
from conftest import ROOT
from kina.models import adamw

DIMS = [4, 16, 8, 2]  # x: [B, 4], three weights
BATCH = 8
WEIGHTS = ["w1", "w2", "w3"]
STEPS = 20
LR, EPS, BETAS, DECAY = 1e-4, 1e-6, (0.9, 0.999), 0.01
STAGES = ["data", "zero1", "zero2", "zero3", "zero3-regather"]
SCALARS = adamw.SCALARS


def shape(i):
    return [DIMS[i], DIMS[i + 1]]


def mlp_source(stage, devices):
    """The loss, its reverseMode and one AdamW step, placed for `stage` on
    a mesh of `devices` devices over axis dp (None: one device, @host)."""
    split = "@sharded(axis=0, over=dp)"
    if devices is None:
        batch = weight = state = scalar = "@host"
    else:
        batch, scalar = split, "@replicated"
        weight = split if stage.startswith("zero3") else "@replicated"
        state = "@replicated" if stage == "data" else split

    def t(dims, placement):
        return "Tensor[F32, %s, %s]" % (dims, placement)

    ws = ", ".join("%s: %s" % (w, t(shape(i), weight))
                   for i, w in enumerate(WEIGHTS))
    lines = ["@mesh([%d], axes=[dp])" % devices] if devices else []
    lines += [
        "fn loss(x: %s, y: %s, %s) -> %s {" % (
            t([BATCH, DIMS[0]], batch), t([BATCH, DIMS[-1]], batch), ws,
            t([], scalar)),
        "  h1 = relu(x @ w1)",
        "  h2 = relu(h1 @ w2)",
        "  d = h2 @ w3 - y",
        "  return reshape(sum(sum(d * d, axis=1), axis=0), [])",
        "}",
        "fn grads = reverseMode(loss, wrt=[w1, w2, w3]%s)%s" % (
            ", reshard_after_forward=true" if stage == "zero3-regather"
            else "",
            # ZeRO-2: the gradients placed as the optimizer state,
            # reduce-scattered in the backward as each is complete.
            " -> (%s, %s)" % (t([], scalar), ", ".join(
                t(shape(i), state) for i in range(len(WEIGHTS))))
            if stage == "zero2" else "")]
    params = ["x: %s" % t([BATCH, DIMS[0]], batch),
              "y: %s" % t([BATCH, DIMS[-1]], batch)]
    params += ["%s: %s" % (w, t(shape(i), weight))
               for i, w in enumerate(WEIGHTS)]
    params += ["%s_%s: %s" % (k, w, t(shape(i), state))
               for k in "mv" for i, w in enumerate(WEIGHTS)]
    params += ["%s: %s" % (s, t([], scalar)) for s in SCALARS]
    results = [t([], scalar)]
    results += ["%s @reuses(%s%s)" % (t(shape(i), p), prefix, w)
                for prefix, p in (("", weight), ("m_", state), ("v_", state))
                for i, w in enumerate(WEIGHTS)]
    lines += [
        "fn step(%s) -> (%s) {" % (", ".join(params), ", ".join(results)),
        "  l, g1, g2, g3 = grads(x, y, w1, w2, w3)", *adamw.scalar_lines()]
    for i, w in enumerate(WEIGHTS, 1):
        lines += adamw.update_lines(w, "m_" + w, "v_" + w, "g%d" % i,
                                    ("mn%d" % i, "vn%d" % i, "wn%d" % i))
    lines += ["  return l, %s" % ", ".join(
        ["wn%d" % i for i in (1, 2, 3)] + ["mn%d" % i for i in (1, 2, 3)] +
        ["vn%d" % i for i in (1, 2, 3)]), "}", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def modules():
    """Each stage compiled once on two devices, and the one-device form."""
    compiled = {stage: kina.compile(mlp_source(stage, 2)) for stage in STAGES}
    compiled["one"] = kina.compile(mlp_source("data", None))
    return compiled


def initial(seed=0):
    rng = np.random.default_rng(seed)
    return {w: (rng.standard_normal(shape(i)) / np.sqrt(DIMS[i]))
            .astype(np.float32) for i, w in enumerate(WEIGHTS)}


def batch(step):
    """The inputs x and targets y of step `step` (from 1)."""
    rng = np.random.default_rng(1000 + step)
    return (rng.standard_normal((BATCH, DIMS[0])).astype(np.float32),
            rng.standard_normal((BATCH, DIMS[-1])).astype(np.float32))


def scalars(step):
    beta1, beta2 = BETAS
    values = (LR, beta1, beta2, EPS, DECAY, 1 - beta1 ** step,
              1 - beta2 ** step)
    return [np.array(v, dtype=np.float32) for v in values]


def feed(step):
    """Step `step`'s arguments but the state, by parameter name (as
    `kina.mpi --steps --feed test_zero:feed` takes them)."""
    x, y = batch(step)
    return dict(zip(SCALARS, scalars(step)), x=x, y=y)


def train(module, simulate=False):
    """The weights after STEPS steps, and the last step's simulation."""
    w = initial()
    m = {k: np.zeros_like(v) for k, v in w.items()}
    v = {k: np.zeros_like(a) for k, a in w.items()}
    run = None
    for step in range(1, STEPS + 1):
        x, y = batch(step)
        args = ([x, y] + [w[k] for k in WEIGHTS] + [m[k] for k in WEIGHTS] +
                [v[k] for k in WEIGHTS] + scalars(step))
        if simulate:
            run = module.simulate("step", *args)
            out = [np.asarray(r) for r in run.value]
        else:
            out = module.step(*args)
        for i, k in enumerate(WEIGHTS):
            w[k], m[k], v[k] = (np.array(out[1 + i]), np.array(out[4 + i]),
                                np.array(out[7 + i]))
    return w, run


def torch_reference():
    """STEPS steps of the same loss, torch.autograd's gradients and
    PyTorch's AdamW (decoupled decay), in float64."""
    w = {k: torch.tensor(a, dtype=torch.float64, requires_grad=True)
         for k, a in initial().items()}
    optimizer = torch.optim.AdamW(list(w.values()), lr=LR, betas=BETAS,
                                  eps=EPS, weight_decay=DECAY)
    for step in range(1, STEPS + 1):
        x, y = batch(step)
        x = torch.tensor(x, dtype=torch.float64)
        y = torch.tensor(y, dtype=torch.float64)
        h = torch.relu(torch.relu(x @ w["w1"]) @ w["w2"])
        loss = ((h @ w["w3"] - y) ** 2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {k: t.detach().numpy() for k, t in w.items()}


def block_bytes(i, n):
    return (n - 1) * -(-DIMS[i] * DIMS[i + 1] // n) * 4


def expected_bytes(stage, n):
    """k (N-1) ceil(e/N) b per weight, plus the loss scalar's all-reduce:
    k = 2 for data parallel, ZeRO-1 and ZeRO-2 (an all-reduce is a
    reduce-scatter and an all-gather), 2 for ZeRO-3 kept, 3 for ZeRO-3 re-gathered where
    the backward needs the weight (w2, w3: their input's gradient; w1's
    input is the batch, which has none)."""
    total = 2 * (n - 1) * 4  # the loss: an all_reduce of one float
    for i in range(len(WEIGHTS)):
        k = 3 if stage == "zero3-regather" and i > 0 else 2
        total += k * block_bytes(i, n)
    return total


@pytest.mark.parametrize("stage", STAGES)
def test_bytes_follow_the_zero_formula(modules, stage):
    cost = modules[stage].cost("step")
    assert cost.bytes_sent == expected_bytes(stage, 2), str(cost)
    kinds = {(t.collective, t.direction) for t in cost.traffic if t.bytes}
    if stage == "data":
        assert ("reduce_scatter", "forward") not in kinds
    else:
        assert {("reduce_scatter", "forward"), ("reduce_scatter",
                                                "backward")} & kinds
    assert not [t for t in cost.traffic if t.collective == "all_to_all"]


@pytest.mark.parametrize("stage", STAGES)
def test_the_simulator_moves_what_the_cost_says(modules, stage):
    _, run = train(modules[stage], simulate=True)
    assert run.bytes_moved == 2 * modules[stage].cost("step").bytes_sent


def test_zero2_holds_no_full_gradient_after_its_reduce_scatter(modules):
    """ZeRO-2 reduce-scatters each gradient inside the backward, as soon as
    it is complete: the gradient function returns 1/N of every gradient,
    and holds less at its peak than ZeRO-1's, which returns them whole."""
    zero1, zero2 = (modules[s].cost("grads") for s in ("zero1", "zero2"))
    assert zero2.bytes_sent > zero1.bytes_sent  # the reduce-scatters moved in
    assert zero2.at_peak.gradients < zero1.at_peak.gradients
    assert zero2.peak_bytes < zero1.peak_bytes
    step1, step2 = (modules[s].cost("step") for s in ("zero1", "zero2"))
    assert step2.bytes_sent == step1.bytes_sent
    assert step2.peak_bytes < step1.peak_bytes


def test_the_ledger_holds_one_nth_of_what_is_sharded(modules):
    data, zero1, zero3 = (modules[s].cost("step")
                          for s in ("data", "zero1", "zero3"))
    weight_bytes = 4 * sum(np.prod(shape(i)) for i in range(len(WEIGHTS)))
    assert data.at_rest.weights == weight_bytes
    assert data.at_rest.optimizer_state == 2 * weight_bytes
    assert zero1.at_rest.weights == weight_bytes
    assert zero1.at_rest.optimizer_state == weight_bytes  # 2 moments / 2
    assert zero3.at_rest.weights == weight_bytes // 2
    assert zero3.at_rest.optimizer_state == weight_bytes
    for cost in (data, zero1, zero3):
        assert cost.at_peak.total == cost.peak_bytes
        assert cost.at_peak.gradients > 0
    # The sharded steps peak in the gradient function, its full-size
    # partial gradients live: at the call.
    call = next(i for i, line in enumerate(
        mlp_source("zero1", 2).splitlines(), 1) if "= grads(" in line)
    for cost in (zero1, zero3):
        assert cost.peak_location.split(":")[-2] == str(call), (
            cost.peak_location, call)
    assert zero3.peak_bytes < zero1.peak_bytes < data.peak_bytes
    # The optimizer's arithmetic (the step without its gradient function)
    # is split over the devices, but for the six scalar ops every device
    # computes (decay: a mul and a sub; lr / bc1; sqrt(bc2); 1 - beta1;
    # 1 - beta2).
    optimizer = {s: modules[s].cost("step").flops - modules[s].cost(
        "grads").flops for s in ("data", "zero1")}
    assert optimizer["zero1"] * 2 - optimizer["data"] == 6


def test_stages_train_to_the_same_bits_and_to_torch(modules):
    reference = torch_reference()
    one, _ = train(modules["one"])
    trained = {stage: train(modules[stage]) for stage in STAGES}
    simulated = {stage: train(modules[stage], simulate=True)
                 for stage in ("data", "zero1", "zero3")}
    for k in WEIGHTS:
        scale = np.abs(reference[k]).max()
        assert np.abs(one[k] - reference[k]).max() <= 1e-5 * scale, k
        for stage in STAGES:
            w = trained[stage][0][k]
            assert np.abs(w - one[k]).max() <= 1e-5 * scale, (stage, k)
            # Two devices sum each gradient in one order in every stage.
            assert w.tobytes() == trained["data"][0][k].tobytes(), (stage, k)
        for stage, (w, _) in simulated.items():
            assert w[k].tobytes() == trained["data"][0][k].tobytes(), (
                stage, k)


def test_partial_results_cross_function_boundaries():
    """A function returning `@partial` gives the host the summed value;
    its callers reduce-scatter or all-reduce it."""
    source = (ROOT / "test" / "Sharding" / "Inputs" /
              "partial-results.kina").read_text()
    source = source[:source.index("fn not_a_sum")]
    m = kina.compile(source)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    mo = rng.standard_normal((4, 2)).astype(np.float32)
    g = x.astype(np.float64).T @ (x.astype(np.float64) @ w)
    for name, args, want in (("partial_grad", (x, w), g),
                             ("scattered", (x, w, mo), mo + g),
                             ("reduced", (x, w), g * g)):
        for got in (getattr(m, name)(*args),
                    m.simulate(name, *args).value):
            assert np.allclose(np.asarray(got), want, rtol=1e-5,
                               atol=1e-5), name
    assert m.cost("scattered").bytes_sent == 16  # a reduce_scatter of 8 floats
    assert m.cost("reduced").bytes_sent == 32  # an all_reduce of 8 floats


def test_a_split_that_does_not_divide_names_the_tensor():
    bad = mlp_source("zero1", 2).replace("@mesh([2]", "@mesh([3]")
    with pytest.raises(kina.CompileError,
                       match=r"parameter 'x': placement @sharded\(axis=0, "
                             r"over=dp\) cuts axis 0 of size 8 over mesh axis "
                             r"'dp' of size 3, which does not divide it"):
        kina.compile(bad)
