"""The GPT's compiled training step (gpt.train_source: loss, gradients and
AdamW in one Kina function) against torch.optim.AdamW on the same tied
model, and kina.training's checks and checkpoints; its mesh plans (the
ZeRO ones included) against one device, and the ZeRO plans' ledger and
bytes against data parallelism's."""

import dataclasses
import os

import numpy as np
import pytest

import kina
from kina.models import gpt
from kina.training import Trainer, TrainingError

torch = pytest.importorskip("torch")
from kina_reference import RoundingTrainer, TorchTrainer  # noqa: E402

CFG = dataclasses.replace(gpt.Config.tiny(), b=2)
NAMES = gpt.weight_names(CFG, tied=True)
# Adam divides each gradient by its own running size, so a gradient that
# is rounding noise (the key biases' is exactly zero: softmax ignores a
# shift of a row's scores) moves its weight by about lr per step in a
# direction float32 and float64 choose differently. The weights' distance
# from the float64 reference grows with lr; at 1e-4 it is ~3e-5.
LR = 1e-4
STEPS = 10


@pytest.fixture(scope="module")
def module():
    return kina.compile(gpt.train_source(CFG), "gpt_train_tiny.kina")


def batches(seed, count):
    rng = np.random.default_rng(seed)
    return [(rng.integers(0, CFG.v, (CFG.b, CFG.t)),
             rng.integers(0, CFG.v, (CFG.b, CFG.t))) for _ in range(count)]


def relative(got, want):
    want = np.asarray(want, np.float64)
    return float(np.abs(np.asarray(got, np.float64) - want).max() /
                 np.abs(want).max())


def test_signature_is_tied_and_returns_loss_weights_and_moments(module):
    signature = module.functions[gpt.TRAIN_STEP]
    params = [p.name for p in signature.params]
    assert "lm_head" not in params
    assert params[-len(gpt.ADAMW_SCALARS):] == list(gpt.ADAMW_SCALARS)
    results = signature.result
    assert len(results) == 1 + 3 * len(NAMES)
    assert list(results[0].shape) == []
    shapes = gpt.parameter_shapes(CFG)
    for i, name in enumerate(NAMES * 3):
        assert list(results[1 + i].shape) == shapes[name], name


def steps_against_float64(module, tolerance):
    """STEPS steps of `module` and of the float64 PyTorch reference from
    the same weights, each loss within `tolerance` (relative); the two
    trainers."""
    w = gpt.weights(CFG, seed=3, tied=True)
    trainer = Trainer(CFG, w, lr=LR, module=module)
    reference = TorchTrainer(CFG, w, lr=LR, dtype=torch.float64)
    for ids, targets in batches(4, STEPS):
        loss = trainer.step(ids, targets)
        want = reference.step(ids, targets)
        assert abs(loss - want) <= tolerance * abs(want), (trainer.steps,
                                                           loss, want)
    return trainer, reference


def test_ten_adamw_steps_equal_torch(module):
    trainer, reference = steps_against_float64(module, 1e-4)
    assert trainer.steps == STEPS
    start = gpt.weights(CFG, seed=3, tied=True)
    moved = reference.weights()
    for name in NAMES:
        assert relative(trainer.weights[name], moved[name]) <= 1e-4, name
        # The steps moved every weight (a step that did nothing would pass
        # the comparison above only if torch's did nothing too).
        assert np.abs(moved[name] - start[name]).max() > 0, name


@pytest.fixture(scope="module")
def bf16_module():
    if os.environ.get("KINA_UNDER_ASAN") == "1":
        pytest.skip("one more compile: the plain suite runs it")
    return kina.compile(gpt.train_source(CFG, dtype="bf16"),
                        "gpt_train_bf16.kina")


# One BF16 rounding step, relative: 2^-8 (8 significant bits).
BF16_STEP = 2.0 ** -8


def test_bf16_gradients_are_the_rounding_references_bits(bf16_module):
    # The float64 reference rounds where docs/language.md says Kina rounds
    # (kina_reference.RoundingTrainer: every op and adjoint op, the
    # cotangents summed in reverse program order): the gradients are its
    # bits but where an F32 sum and the exact one round to different BF16
    # values (measured: 9 elements of 133,888), and no element is a BF16
    # step of its tensor's largest one away. From the unrounded float64
    # model's they are up to 4.8 such steps away.
    assert "kina.matmul" in bf16_module.ir("kina") and \
        "xbf16, @host>) -> !kina.tensor" in bf16_module.ir("kina")
    check_bf16_gradients(bf16_module)


def check_bf16_gradients(module):
    w = gpt.weights(CFG, seed=3, tied=True)
    (ids, targets), = batches(4, 1)
    given = dict(w, token_ids=ids, targets=targets,
                 mask=gpt.causal_mask(CFG))
    signature = module.functions["gpt_loss_grad"]
    loss, *grads = module.gpt_loss_grad(
        *[given[p.name] for p in signature.params])
    want_loss, want = RoundingTrainer(CFG, w).loss_and_gradients(
        ids, targets)
    assert abs(loss - want_loss) <= BF16_STEP ** 2 * want_loss
    same = total = 0
    for name, got in zip(NAMES, grads):
        scale = np.abs(want[name]).max()
        assert np.abs(got - want[name]).max() <= BF16_STEP * scale, name
        same += np.count_nonzero(got == want[name])
        total += got.size
    assert same >= 0.999 * total, (same, total)


@pytest.mark.avx512_bf16
def test_bf16_gradients_on_the_vdpbf16ps_kernel(zen4_module):
    # The step compiled for a Zen 4, whose BF16 products run on
    # vdpbf16ps (the kernel), run on this host: the same check against the
    # rounding reference. (On a Xeon with AVX512_BF16 its losses and
    # weights after 5 AdamW steps were the widened path's bits.)
    if os.environ.get("KINA_UNDER_ASAN") == "1":
        pytest.skip("one more compile: the plain suite runs it")
    check_bf16_gradients(zen4_module(gpt.train_source(CFG, dtype="bf16")))


def test_bf16_mixed_precision_steps_track_the_rounding_reference(
        bf16_module):
    # Ten AdamW steps: each loss within 2^-12 (1/16 of a BF16 step) of
    # the rounding reference's, within 2^-8 of the unrounded float64
    # model's. The two trainers part by the master weights (F32 here,
    # float64 there: a cast to BF16 rounds some of them apart) and by the
    # key biases, whose gradient is rounding noise that Adam amplifies
    # (measured: at most 4e-5, 2^-14.6).
    w = gpt.weights(CFG, seed=3, tied=True)
    trainer = Trainer(CFG, w, lr=LR, module=bf16_module)
    rounding = RoundingTrainer(CFG, w, lr=LR)
    unrounded = TorchTrainer(CFG, w, lr=LR, dtype=torch.float64)
    for ids, targets in batches(4, STEPS):
        loss = trainer.step(ids, targets)
        want = rounding.step(ids, targets)
        assert abs(loss - want) <= BF16_STEP / 16 * want, (trainer.steps,
                                                            loss, want)
        exact = unrounded.step(ids, targets)
        assert abs(loss - exact) <= BF16_STEP * exact
    assert all(trainer.weights[n].dtype == np.float32 for n in NAMES)


def test_a_step_updates_its_weights_and_moments_in_place(module):
    # Every new weight and moment reuses its argument's array (@reuses):
    # no second copy of the model per step; the caller's weights are the
    # caller's (the Trainer copied them once).
    results = module.functions[gpt.TRAIN_STEP].result
    assert [r.reuses for r in results[1:]] == (
        NAMES + ["m_" + n for n in NAMES] + ["v_" + n for n in NAMES])
    w = gpt.weights(CFG, seed=5, tied=True)
    given = {n: a.copy() for n, a in w.items()}
    trainer = Trainer(CFG, w, lr=LR, module=module)
    arrays = [id(d[n]) for d in (trainer.weights, trainer.m, trainer.v)
              for n in NAMES]
    (ids, targets), = batches(6, 1)
    trainer.step(ids, targets)
    assert [id(d[n]) for d in (trainer.weights, trainer.m, trainer.v)
            for n in NAMES] == arrays
    assert np.abs(trainer.weights["wte"] - given["wte"]).max() > 0
    for name in NAMES:
        np.testing.assert_array_equal(w[name], given[name])


def test_weight_decay_only_on_matrices(module):
    # With zero moments' effect removed (lr tiny against the decay's lr *
    # wd), a 2-D weight shrinks by (1 - lr * wd) and a 1-D one does not.
    w = gpt.weights(CFG, seed=5, tied=True)
    trainer = Trainer(CFG, w, lr=1e-3, weight_decay=0.5, module=module)
    reference = TorchTrainer(CFG, w, lr=1e-3, weight_decay=0.5,
                             dtype=torch.float64)
    ids, targets = batches(6, 1)[0]
    trainer.step(ids, targets)
    reference.step(ids, targets)
    want = reference.weights()
    for name in ("wte", "wq_0", "ln1_g_0", "b_fc_1"):
        assert relative(trainer.weights[name], want[name]) <= 1e-4, name


def test_checkpoint_resumes_the_same_next_step(module, tmp_path):
    data = batches(7, 3)
    trainer = Trainer(CFG, gpt.weights(CFG, seed=8, tied=True), lr=3e-4,
                      module=module)
    for ids, targets in data[:2]:
        trainer.step(ids, targets)
    path = tmp_path / "run.npz"
    trainer.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["run.npz"]
    uninterrupted = trainer.step(*data[2])
    resumed = Trainer.load(path, module=module)
    assert resumed.steps == 2
    assert resumed.step(*data[2]) == uninterrupted
    for name in NAMES:
        assert np.array_equal(resumed.weights[name], trainer.weights[name])


def test_bad_checkpoints_are_named_errors(module, tmp_path):
    with pytest.raises(TrainingError, match="missing.npz: no such checkpoint"):
        Trainer.load(tmp_path / "missing.npz", module=module)
    good = tmp_path / "good.npz"
    Trainer(CFG, gpt.weights(CFG, tied=True), module=module).save(good)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[:1000])
    with pytest.raises(TrainingError,
                       match="truncated.npz is not a Kina training checkpoint "
                       r"\(unreadable or truncated\)"):
        Trainer.load(truncated, module=module)
    other = tmp_path / "other.npz"
    np.savez(other, meta=np.array('{"format": "something else"}'))
    with pytest.raises(TrainingError, match="not a Kina training checkpoint"):
        Trainer.load(other, module=module)


def test_bad_batches_and_weights_are_named_errors(module):
    w = gpt.weights(CFG, tied=True)
    trainer = Trainer(CFG, w, module=module)
    ids, targets = batches(9, 1)[0]
    with pytest.raises(TrainingError, match=r"token ids have shape \[2, 15\]"):
        trainer.step(ids[:, 1:], targets)
    outside = targets.copy()
    outside[1, 3] = CFG.v
    with pytest.raises(TrainingError,
                       match=r"targets hold 512 outside .* at \[1, 3\]"):
        trainer.step(ids, outside)
    negative = ids.copy()
    negative[0, 0] = -1
    with pytest.raises(TrainingError, match="token ids hold -1"):
        trainer.step(negative, targets)
    assert trainer.steps == 0
    poisoned = dict(w, wq_1=np.full_like(w["wq_1"], np.nan))
    with pytest.raises(TrainingError, match="weight wq_1 holds NaN"):
        Trainer(CFG, poisoned, module=module)


# A sharded step sums in another order than one device's. Adam turns a
# gradient's rounding into up to lr * noise / eps of its weight (see LR
# above); eps = 1e-6 bounds that below the 1e-5 the comparison asks of
# the ordinary weights.
SHARDED_EPS = 1e-6
heavy = pytest.mark.skipif(
    os.environ.get("KINA_UNDER_ASAN") == "1",
    reason="two mesh compiles: the plain suite runs them")


# Two devices, or a 2 x 2 mesh (dp, tp) for the +megatron plans.
DEVICES = {"megatron": 2, "data": 2, "data+megatron": 4, "zero1": 2,
           "zero3": 2, "fsdp": 2, "zero1+megatron": 4, "zero3+megatron": 4}
# The plans the tests compile (each once per module): the ZeRO stages on
# the 2-D mesh compile as data+megatron does, slower; docs/gpt.md says
# how they were checked.
PLANS = ("megatron", "data", "data+megatron", "zero1", "zero3", "fsdp")


@pytest.fixture(scope="module")
def plan_modules():
    """compiled(parallel): the plan's step, compiled on first use and kept
    for the module (the ZeRO tests compare several plans' costs)."""
    cache = {}

    def compiled(parallel):
        if parallel not in cache:
            cache[parallel] = kina.compile(
                gpt.train_source(CFG, mesh=DEVICES[parallel],
                                 parallel=parallel),
                "gpt_train_tiny_%s.kina" % parallel.replace("+", "_"))
        return cache[parallel]
    return compiled


@pytest.fixture(scope="module", params=PLANS)
def sharded(request, plan_modules):
    return request.param, plan_modules(request.param)


@heavy
def test_sharded_steps_equal_one_device(module, sharded):
    parallel, mesh_module = sharded
    w = gpt.weights(CFG, seed=3, tied=True)
    one = Trainer(CFG, w, lr=LR, eps=SHARDED_EPS, module=module)
    host = Trainer(CFG, w, lr=LR, eps=SHARDED_EPS, module=mesh_module)
    simulated = Trainer(CFG, w, lr=LR, eps=SHARDED_EPS, module=mesh_module,
                        simulate=True)
    for ids, targets in batches(4, STEPS):
        want = one.step(ids, targets)
        for trainer in (host, simulated):
            loss = trainer.step(ids, targets)
            assert abs(loss - want) <= 1e-5 * abs(want), (parallel, loss,
                                                          want)
    for name in NAMES:
        for trainer in (host, simulated):
            assert relative(trainer.weights[name], one.weights[name]) <= \
                1e-5, (parallel, name)
    # Every device holds the same bits of each replicated result.
    signature = mesh_module.functions[gpt.TRAIN_STEP]
    placed = mesh_module.per_device[gpt.TRAIN_STEP].results
    devices = simulated.last_simulation.per_device
    labels = ["loss"] + NAMES + ["m_" + n for n in NAMES] + \
        ["v_" + n for n in NAMES]
    for i, label in enumerate(labels):
        if placed[i].placement == "@replicated":
            first = np.asarray(devices[0][i])
            for other in devices[1:]:
                assert np.asarray(other[i]).tobytes() == first.tobytes(), (
                    parallel, i, label)
    assert placed[0].placement == "@replicated"
    assert len(signature.result) == len(labels)
    # Each device sends what the cost model says it sends.
    assert simulated.last_simulation.bytes_moved == DEVICES[parallel] * \
        mesh_module.cost(gpt.TRAIN_STEP).bytes_sent


@heavy
def test_data_parallel_moves_one_all_reduce_per_weight(sharded):
    parallel, mesh_module = sharded
    if parallel != "data":
        pytest.skip("the data-parallel plan")
    traffic = mesh_module.communication[gpt.LOSS_GRAD]
    backward = [t for t in traffic if t.direction == "backward"]
    # The step calls the gradient function: its gradients are returned as
    # partial sums, and the step all-reduces each where AdamW uses it (the
    # tied wte's inside, where its embedding rows add to the head's
    # partial product): once per weight either way.
    assert sum(t.count for t in backward if t.collective == "all_reduce") < \
        len(NAMES)
    step = mesh_module.communication[gpt.TRAIN_STEP]
    reduces = [t for t in step if t.collective == "all_reduce"]
    assert sum(t.count for t in reduces) == len(NAMES)
    # n = 2: an all-reduce moves its tensor's bytes once per device.
    assert sum(t.bytes for t in reduces) == 4 * sum(
        int(np.prod(gpt.parameter_shapes(CFG)[n])) for n in NAMES)
    forward = [t for t in traffic if t.direction == "forward" and t.bytes]
    # The loss's mean over the split batch: the two devices' scalars
    # gathered (4 B) and added in device order, cheaper than an
    # all_reduce's rounded-up blocks (8 B).
    assert [(t.collective, t.count, t.bytes) for t in forward] == [
        ("all_gather", 1, 4)]
    # Besides: the embedding's cotangent rows (and their ids) gathered,
    # fewer bytes than reducing the vocabulary-sized table they scatter to.
    others = [t for t in backward if t.collective != "all_reduce" and t.bytes]
    assert sum(t.bytes for t in others) < 4 * CFG.v * CFG.d


@heavy
def test_megatron_splits_the_tied_heads_product(module, sharded):
    """Each device multiplies by its own half of the replicated wte: the
    head's three products (logits, their gradients for f and for wte)
    count half on each device, the rest of the step as Megatron splits
    it; the tied embedding's gradient halves are gathered."""
    parallel, mesh_module = sharded
    if parallel != "megatron":
        pytest.skip("the Megatron plan")
    head = 3 * 2 * CFG.b * CFG.t * CFG.d * CFG.v
    whole = module.cost(gpt.TRAIN_STEP).flops
    split = mesh_module.cost(gpt.TRAIN_STEP).flops
    assert split <= whole - head // 2, (split, whole, head)
    traffic = mesh_module.communication[gpt.LOSS_GRAD]
    gathered = [t for t in traffic if t.direction == "backward" and
                t.collective == "all_gather"]
    # n = 2: each device receives the other's half of the gradient.
    assert sum(t.bytes for t in gathered) == 4 * CFG.v * CFG.d // 2


def zero_block(name, n):
    """(N-1) ceil(e/N) b: the bytes one device sends to reduce-scatter or
    all-gather weight `name` (float32) over n devices."""
    e = int(np.prod(gpt.parameter_shapes(CFG)[name]))
    return (n - 1) * -(-e // n) * 4


def whole_over_dp(mesh_module, prefix):
    """The weights whose parameter `prefix + name` the step's per-device
    signature leaves unsplit (held whole on every device)."""
    params = {p.name: p for p in mesh_module.per_device[gpt.TRAIN_STEP].params}
    return [n for n in NAMES
            if all(over < 0 for over in params[prefix + n].split)]


@heavy
def test_zero_ledgers_hold_one_nth_of_the_split_state(plan_modules):
    n = DEVICES["zero1"]
    shapes = gpt.parameter_shapes(CFG)
    size = {w: 4 * int(np.prod(shapes[w])) for w in NAMES}
    # A tensor with no axis that n divides cannot be split over dp: held
    # whole, as under data parallelism (docs/gpt.md, "ZeRO plans").
    unsplittable = [w for w in NAMES if all(d % n for d in shapes[w])]
    for plan, prefixes in (("zero1", ("m_", "v_")),
                           ("zero3", ("", "m_", "v_"))):
        for prefix in prefixes:
            assert whole_over_dp(plan_modules(plan), prefix) == \
                unsplittable, (plan, prefix)
    data, zero1, zero3 = (plan_modules(p).cost(gpt.TRAIN_STEP)
                          for p in ("data", "zero1", "zero3"))
    weights = sum(size.values())
    kept = sum(size[w] for w in unsplittable)
    split = (weights - kept) // n + kept  # one copy, per device
    assert data.at_rest.weights == weights
    assert data.at_rest.optimizer_state == 2 * weights
    assert zero1.at_rest.weights == weights
    assert zero1.at_rest.optimizer_state == 2 * split
    assert zero3.at_rest.weights == split
    assert zero3.at_rest.optimizer_state == 2 * split
    for cost in (data, zero1, zero3):
        assert cost.at_peak.total == cost.peak_bytes
    assert zero3.peak_bytes < zero1.peak_bytes < data.peak_bytes


@heavy
def test_zero1_sends_what_data_parallel_sends(plan_modules):
    """Data parallelism all-reduces each gradient; ZeRO-1 reduce-scatters
    it and all-gathers the new weight: the same bytes, 2 (N-1) ceil(e/N)
    b per weight, the tied wte included (the scatter-add of the
    embedding's cotangent rows stays a partial sum and joins the head's
    partial gradient, reduced once with it), and the loss's all-reduce."""
    n = DEVICES["zero1"]
    zero1 = plan_modules("zero1")
    # The gradient function sends only the loss: its per-device values
    # gathered, or the scalar all-reduced; every gradient leaves partial.
    loss = sum(t.bytes for t in zero1.communication[gpt.LOSS_GRAD])
    assert 0 < loss <= 2 * (n - 1) * 4
    block = sum(zero_block(w, n) for w in NAMES)
    step = zero1.cost(gpt.TRAIN_STEP)
    assert sum(t.bytes for t in step.traffic
               if t.collective == "reduce_scatter") == block
    data = plan_modules("data").cost(gpt.TRAIN_STEP)
    assert step.bytes_sent == data.bytes_sent == 2 * block + loss


@heavy
def test_fsdp_gathers_again_what_the_backward_multiplies_by(plan_modules):
    """fsdp is zero3 with the weights gathered again in the backward: one
    block more for each weight the backward multiplies by (the matrices,
    the tied wte's head, the layer norms' gains; not the biases nor wpe,
    which are only added), and the forward's gathered copies are not
    held until the backward: a lower peak."""
    n = DEVICES["fsdp"]
    zero3, fsdp = plan_modules("zero3"), plan_modules("fsdp")

    def gathered_in_backward(module):
        return sum(t.bytes for t in module.communication[gpt.LOSS_GRAD]
                   if t.direction == "backward" and
                   t.collective == "all_gather")

    multiplied = [w for w in NAMES if gpt._base(w).endswith("_g") or
                  (gpt._base(w).startswith("w") and w != "wpe")]
    again = sum(zero_block(w, n) for w in multiplied)
    assert gathered_in_backward(fsdp) - gathered_in_backward(zero3) == again
    kept, regathered = (m.cost(gpt.TRAIN_STEP) for m in (zero3, fsdp))
    assert regathered.bytes_sent - kept.bytes_sent == again
    assert regathered.at_rest == kept.at_rest
    assert regathered.peak_bytes < kept.peak_bytes


@heavy
def test_a_zero1_checkpoint_resumes_under_zero3_and_data(plan_modules,
                                                         tmp_path):
    # The checkpoint holds global arrays; the simulator cuts the moments
    # by each plan's own placement of them.
    data = batches(10, 3)
    w = gpt.weights(CFG, seed=11, tied=True)
    zero1 = Trainer(CFG, w, lr=LR, eps=SHARDED_EPS,
                    module=plan_modules("zero1"), simulate=True)
    for ids, targets in data[:2]:
        zero1.step(ids, targets)
    path = tmp_path / "zero1.npz"
    zero1.save(path)
    uninterrupted = zero1.step(*data[2])
    for plan in ("zero3", "data"):
        resumed = Trainer.load(path, module=plan_modules(plan),
                               simulate=True)
        assert resumed.steps == 2
        loss = resumed.step(*data[2])
        assert abs(loss - uninterrupted) <= 1e-5 * abs(uninterrupted), (
            plan, loss, uninterrupted)
        for name in NAMES:
            assert relative(resumed.weights[name], zero1.weights[name]) <= \
                1e-5, (plan, name)
