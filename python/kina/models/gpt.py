"""A GPT-2-small-like forward in Kina: the program (written by
scripts/generate/gen_gpt.py through `source`) and its weights from a seed.
The PyTorch reference with the same weights is kina_reference
(optional: it needs PyTorch; this module does not).

    from kina.models import gpt
    cfg = gpt.Config.small()                 # or gpt.Config.tiny() for tests
    text = gpt.source(cfg)                   # .kina source
    w = gpt.weights(cfg, seed=0)             # {name: np.ndarray}
    args = gpt.arguments(cfg, w, token_ids)  # in the entry's parameter order
    from kina_reference import TorchGPT
    logits = TorchGPT(cfg, w)(token_ids)     # the reference (needs PyTorch)

Pre-norm blocks: x += attn(ln1(x)); x += mlp(ln2(x)), causal multi-head
attention, an MLP D -> 4D -> D with tanh-GELU, a final layer norm and an
lm_head to the vocabulary. lm_head is wte's transpose (tied, as in GPT-2)
passed as its own [D, V] parameter, so that it can be placed on its own.
"""

import dataclasses
import re

import numpy as np

from . import adamw

ENTRY = "gpt_forward"
LAYER_PARAMS = ("ln1_g", "ln1_b", "wq", "bq", "wk", "bk", "wv", "bv", "wo",
                "bo", "ln2_g", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj")
EPS = 1e-5


@dataclasses.dataclass(frozen=True)
class Config:
    layers: int = 12
    d: int = 768
    heads: int = 12
    t: int = 128
    v: int = 32000
    b: int = 1  # sequences per call (the batch)

    @property
    def dh(self):
        return self.d // self.heads

    @property
    def f(self):
        return 4 * self.d

    @classmethod
    def small(cls):
        """GPT-2 small's shape: 12 layers, D=768, H=12, T=128, V=32000."""
        return cls()

    @classmethod
    def tiny(cls):
        """For tests: 2 layers, D=64, H=4, T=16, V=512."""
        return cls(layers=2, d=64, heads=4, t=16, v=512)

    def parameter_count(self):
        """Unique parameters (lm_head is wte's transpose)."""
        d, f = self.d, self.f
        block = 4 * d * d + 4 * d + 2 * d * f + f + d + 4 * d
        return self.layers * block + self.v * d + self.t * d + 2 * d

    def flops(self):
        """Multiply-adds x 2 of the matmuls of one forward (of the batch)."""
        t, d, f = self.t, self.d, self.f
        block = 2 * t * d * (4 * d + 2 * f) + 2 * 2 * t * t * d
        return self.b * (self.layers * block + 2 * t * d * self.v)


def parameter_names(cfg, tied=False):
    """The forward's parameters in order; `tied` leaves lm_head out (the
    program reads wte transposed)."""
    names = ["token_ids", "wte", "wpe"]
    for layer in range(cfg.layers):
        names += ["%s_%d" % (p, layer) for p in LAYER_PARAMS]
    return names + ["lnf_g", "lnf_b"] + ([] if tied else ["lm_head"]) + \
        ["mask"]


def parameter_shapes(cfg):
    d, f = cfg.d, cfg.f
    per_layer = {"ln1_g": [d], "ln1_b": [d], "wq": [d, d], "bq": [d],
                 "wk": [d, d], "bk": [d], "wv": [d, d], "bv": [d],
                 "wo": [d, d], "bo": [d], "ln2_g": [d], "ln2_b": [d],
                 "w_fc": [d, f], "b_fc": [f], "w_proj": [f, d], "b_proj": [d]}
    shapes = {"token_ids": [cfg.b, cfg.t], "wte": [cfg.v, d],
              "wpe": [cfg.t, d],
              "lnf_g": [d], "lnf_b": [d], "lm_head": [d, cfg.v],
              "mask": [cfg.t, cfg.t]}
    for layer in range(cfg.layers):
        for p, shape in per_layer.items():
            shapes["%s_%d" % (p, layer)] = shape
    return shapes


# Megatron-style tensor parallelism over one mesh axis: Q, K, V and the
# MLP's first matmul split on their output columns (column-parallel), Wo
# and the MLP's second matmul on their input rows (row-parallel: each
# device holds a partial sum, all-reduced before the bias), lm_head on the
# vocabulary (vocab-parallel; the logits are gathered at the end).
MEGATRON = {"wq": 1, "bq": 0, "wk": 1, "bk": 0, "wv": 1, "bv": 0,
            "w_fc": 1, "b_fc": 0, "wo": 0, "w_proj": 0}


# How a mesh splits the model: "megatron" (the placements above, over a
# mesh of one axis), "data" (the batch split over the devices, every
# weight replicated) or "data+megatron" (a 2-D mesh, axes dp and tp: the
# batch over dp, the Megatron placements over tp). The ZeRO plans are
# data parallelism with AdamW's moments split over dp (zero1) and the
# weights split as their moments (zero3), on a mesh of one axis dp or on
# data+megatron's [dp, tp] (zero1+megatron, zero3+megatron). zero3 keeps
# the weights it gathers for the forward until the backward; fsdp is
# zero3 gathering them again in the backward (reshard_after_forward, as
# FSDP2 does by default); docs/gpt.md, "ZeRO plans".
PARALLEL = ("megatron", "data", "data+megatron", "zero1", "zero3", "fsdp",
            "zero1+megatron", "zero3+megatron", "fsdp+megatron")
ZERO = ("zero1", "zero3")


def zero_stage(parallel):
    """The ZeRO stage of plan `parallel`: "zero1", "zero3" (zero3 and
    fsdp) or None."""
    stage = parallel.split("+")[0]
    if stage == "fsdp":
        return "zero3"
    return stage if stage in ZERO else None


def regathers(parallel):
    """Whether plan `parallel` gathers the weights split at rest again in
    the backward instead of keeping the forward's (fsdp)."""
    return parallel.split("+")[0] == "fsdp"


def _layout(parallel):
    """The plan without its ZeRO stage: where the batch and the Megatron
    placements go ("data" for zero1 and zero3, "data+megatron" for their
    +megatron forms)."""
    if zero_stage(parallel):
        return "data+megatron" if parallel.endswith("+megatron") else "data"
    return parallel


def _named_axes(parallel):
    """Whether the mesh names its axes (dp, tp): data+megatron's 2-D mesh
    and every ZeRO plan (the moments are split `over=dp`)."""
    return _layout(parallel) == "data+megatron" or bool(zero_stage(parallel))


def _over(parallel, axis):
    """` over=AXIS` on a mesh with named axes, else nothing."""
    return ", over=%s" % axis if _named_axes(parallel) else ""


def mesh_devices(mesh, parallel):
    """The mesh's shape: [n], or [dp, tp] for data+megatron and its ZeRO
    forms (`mesh` then a pair, or a device count split as [2, n / 2])."""
    if _layout(parallel) == "data+megatron":
        shape = list(mesh) if isinstance(mesh, (tuple, list)) else \
            [2, mesh // 2]
        if len(shape) != 2 or min(shape) < 1:
            raise ValueError("%s needs a 2-D mesh [dp, tp], got %r" % (
                parallel, mesh))
        return shape
    if isinstance(mesh, (tuple, list)):
        raise ValueError("%s runs on a mesh of one axis, got %r" % (
            parallel, mesh))
    return [mesh]


def check_split(cfg, devices, parallel):
    """ValueError unless `devices` devices can split `cfg`'s step as
    `parallel` does: an even count for the [2, N/2] mesh of data+megatron
    (and its ZeRO forms), a batch that divides over the data axis."""
    shape = mesh_devices(devices, parallel)
    layout = _layout(parallel)
    if layout == "data+megatron" and shape[0] * shape[1] != devices:
        raise ValueError("%s needs an even --devices (a 2 x N/2 mesh), got "
                         "%d" % (parallel, devices))
    batch_split = {"data": devices, "data+megatron": shape[0]}.get(layout, 1)
    if cfg.b % batch_split:
        raise ValueError("--batch %d does not split over %d devices" % (
            cfg.b, batch_split))


def _base(name):
    """A parameter's name without its layer number (wq_3: wq)."""
    return name.rsplit("_", 1)[0] if name[-1].isdigit() else name


def megatron_axis(name, parallel):
    """The tensor axis of weight `name` that `parallel` splits over the
    Megatron axis, or None."""
    if _layout(parallel) == "data":
        return None
    base = _base(name)
    if base in MEGATRON:
        return MEGATRON[base]
    return 1 if base == "lm_head" else None


def placement(name, mesh, parallel="megatron", cfg=None):
    """The placement of parameter `name` under `mesh` (None: unsharded).
    The zero3 plans place a weight as its moments (moment_placement,
    which needs `cfg` for the shapes)."""
    if mesh is None:
        return "@host"
    if name in ("token_ids", "targets"):
        return batch_placement(mesh, parallel)
    if zero_stage(parallel) == "zero3" and name != "mask":
        if cfg is None:
            raise ValueError("%s places the weights by their shapes: pass "
                             "cfg" % parallel)
        return moment_placement(cfg, name, mesh, parallel)
    return _megatron_placement(name, parallel)


def _megatron_placement(name, parallel):
    axis = megatron_axis(name, parallel)
    if axis is None:
        return "@replicated"
    return "@sharded(axis=%d%s)" % (axis, _over(parallel, "tp"))


def moment_placement(cfg, name, mesh, parallel="megatron"):
    """The placement of weight `name`'s AdamW moments. Outside the ZeRO
    plans, the weight's. Under them, split over dp on the first tensor
    axis that Megatron does not split and whose size divides by dp's size
    (beside the Megatron split over tp, if any); a tensor with no such
    axis keeps the weight's Megatron placement (zero_deviations)."""
    if mesh is None:
        return "@host"
    if not zero_stage(parallel):
        return placement(name, mesh, parallel)
    axis = zero_axis(cfg, name, mesh, parallel)
    if axis is None:
        return _megatron_placement(name, parallel)
    tp_axis = megatron_axis(name, parallel)
    if tp_axis is None:
        return "@sharded(axis=%d, over=dp)" % axis
    split = sorted([(axis, "dp"), (tp_axis, "tp")])
    return "@sharded(axis=[%d, %d], over=[%s, %s])" % (
        split[0][0], split[1][0], split[0][1], split[1][1])


def zero_axis(cfg, name, mesh, parallel):
    """The tensor axis a ZeRO plan splits weight `name`'s moments on over
    dp, or None when no axis is free of Megatron's split and divisible."""
    dp = mesh_devices(mesh, parallel)[0]
    tp_axis = megatron_axis(name, parallel)
    for axis, size in enumerate(parameter_shapes(cfg)[name]):
        if axis != tp_axis and size % dp == 0:
            return axis
    return None


def zero_deviations(cfg, mesh, parallel):
    """The weights (tied model) whose moments a ZeRO plan cannot split
    over dp (no free axis divides), with their placement: they are held
    whole over dp, as under data parallelism."""
    if not zero_stage(parallel):
        return {}
    return {name: moment_placement(cfg, name, mesh, parallel)
            for name in weight_names(cfg, tied=True)
            if zero_axis(cfg, name, mesh, parallel) is None}


def batch_placement(mesh, parallel="megatron"):
    """The placement of a value with the batch as its first dim (the ids,
    the targets, the logits)."""
    if mesh is None:
        return "@host"
    if parallel not in PARALLEL:
        raise ValueError("parallel must be one of %s, got %r" % (
            ", ".join(PARALLEL), parallel))
    if parallel == "megatron":
        return "@replicated"
    return "@sharded(axis=0%s)" % _over(parallel, "dp")


def vocab_placement(mesh, parallel):
    """The placement of logits split over the vocabulary (their last
    axis) across the Megatron devices, and over the batch as
    batch_placement says."""
    if _layout(parallel) == "data+megatron":
        return "@sharded(axis=[0, 2], over=[dp, tp])"
    return "@sharded(axis=2)"


def mesh_line(mesh, parallel):
    shape = mesh_devices(mesh, parallel)
    if _layout(parallel) == "data+megatron":
        return "@mesh([%d, %d], axes=[dp, tp])" % tuple(shape)
    if zero_stage(parallel):
        return "@mesh([%d], axes=[dp])" % shape[0]
    return "@mesh([%d])" % shape[0]


# The element types a forward computes in: "f32", or "bf16" (mixed
# precision: the F32 parameters, the master weights, cast to BF16 at the
# start; activations, products and their gradients in BF16, accumulating
# in F32 as the language's rules say; the logits cast back to F32 for the
# loss; docs/gpt.md, "Mixed precision").
DTYPES = ("f32", "bf16")



class _Body:
    """Writes the forward's statements into `lines`: the embedding, each
    block, the final norm (shared by the whole forward and the pipeline's
    stages, so both compute the same ops)."""

    def __init__(self, cfg, lines, mixed=False):
        self.cfg, self.lines, self.mixed = cfg, lines, mixed

    def r(self, name):
        """The value the body reads for parameter `name`."""
        return name + "_b" if self.mixed else name

    def ln(self, out, x, g, b):
        r = self.r
        self.lines.extend([
            "  %s_mu = mean(%s, axis=2)" % (out, x),
            "  %s_d = %s - broadcast(%s_mu)" % (out, x, out),
            "  %s_var = mean(%s_d * %s_d, axis=2)" % (out, out, out),
            "  %s_r = rsqrt(%s_var + broadcast(%r))" % (out, out, EPS),
            "  %s = %s_d * broadcast(%s_r) * broadcast(%s) + broadcast(%s)"
            % (out, out, out, r(g), r(b))])

    def embed(self):
        """x = the tokens' embeddings plus the positions'."""
        cfg = self.cfg
        self.lines.append("  x = gather %s token_ids + broadcast(%s)   : "
                          "[%d, %d, %d]" % (self.r("wte"), self.r("wpe"),
                                            cfg.b, cfg.t, cfg.d))

    @staticmethod
    def input_of(layer):
        """The name block `layer` reads: x, or the previous block's x<l>."""
        return "x" if layer == 0 else "x%d" % (layer - 1)

    def block(self, layer):
        """Block `layer`: from input_of(layer) to x<layer>."""
        cfg, r, lines = self.cfg, self.r, self.lines
        b, t, h, dh = cfg.b, cfg.t, cfg.heads, cfg.dh
        p = lambda name: "%s_%d" % (name, layer)
        lines.append("  # block %d" % layer)
        self.ln("a%d" % layer, self.input_of(layer), p("ln1_g"), p("ln1_b"))
        a = "a%d" % layer
        for proj, perm in (("q", "[0, 2, 1, 3]"), ("k", "[0, 2, 3, 1]"),
                           ("v", "[0, 2, 1, 3]")):
            lines.append(
                "  %s%d = (%s @ broadcast(%s) + broadcast(%s)).reshape([%d, %d,"
                " %d, %d]).transpose(%s)" % (proj, layer, a,
                                             r(p("w" + proj)),
                                             r(p("b" + proj)), b, t, h, dh,
                                             perm))
        lines += [
            "  s%d = q%d @ k%d * broadcast(%r) + broadcast(%s)"
            % (layer, layer, layer, 1 / np.sqrt(dh), r("mask")),
            "  c%d = (softmax(s%d, axis=3) @ v%d).transpose([0, 2, 1, 3])"
            ".reshape([%d, %d, %d])" % (layer, layer, layer, b, t, cfg.d),
            "  h%d = %s + c%d @ broadcast(%s) + broadcast(%s)"
            % (layer, self.input_of(layer), layer, r(p("wo")), r(p("bo")))]
        self.ln("m%d" % layer, "h%d" % layer, p("ln2_g"), p("ln2_b"))
        lines += [
            "  u%d = m%d @ broadcast(%s) + broadcast(%s)"
            % (layer, layer, r(p("w_fc")), r(p("b_fc"))),
            # tanh-GELU: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))
            "  g%d = broadcast(0.5) * u%d * (broadcast(1.0) + tanh(broadcast("
            "%r) * (u%d + broadcast(0.044715) * u%d * u%d * u%d)))"
            % (layer, layer, float(np.sqrt(2 / np.pi)), layer, layer, layer,
               layer),
            "  x%d = h%d + g%d @ broadcast(%s) + broadcast(%s)"
            % (layer, layer, layer, r(p("w_proj")), r(p("b_proj")))]


def source(cfg, mesh=None, tied=False, parallel="megatron", dtype="f32"):
    """The forward as `.kina` source; `mesh` (a device count) adds
    `@mesh([mesh])` and the placements of `parallel` (PARALLEL); `tied`
    reads the logits' weight as wte transposed instead of a parameter
    lm_head; `dtype` (DTYPES) is the type it computes in."""
    if dtype not in DTYPES:
        raise ValueError("dtype must be one of %s, got %r" % (DTYPES, dtype))
    d, t, h, dh, b = cfg.d, cfg.t, cfg.heads, cfg.dh, cfg.b
    shapes = parameter_shapes(cfg)
    result = batch_placement(mesh, parallel)
    lines = ["# GPT-2-small-like forward: %d layers, D=%d, H=%d, T=%d, V=%d "
             "(%.1fM parameters)." % (cfg.layers, d, h, t, cfg.v,
                                      cfg.parameter_count() / 1e6),
             "# Written by scripts/generate/gen_gpt.py; docs/gpt.md explains it.", ""]
    if mesh:
        lines += [mesh_line(mesh, parallel), ""]
    params = []
    for name in parameter_names(cfg, tied):
        element = "I64" if name == "token_ids" else "F32"
        params.append("    %s: Tensor[%s, %s, %s]" % (
            name, element, shapes[name], placement(name, mesh, parallel,
                                                   cfg)))
    lines.append("fn %s(" % ENTRY)
    lines.append(",\n".join(params) + ") -> Tensor[F32, [%d, %d, %d], %s] {"
                 % (b, t, cfg.v, result))
    body = _Body(cfg, lines, mixed=dtype == "bf16")
    if body.mixed:
        lines.append("  # The master weights in BF16 for the forward and "
                     "backward.")
        lines += ["  %s = cast(%s, to=BF16)" % (body.r(n), n)
                  for n in parameter_names(cfg, tied) if n != "token_ids"]
    body.embed()
    for layer in range(cfg.layers):
        body.block(layer)
    r, ln, mixed = body.r, body.ln, body.mixed
    ln("f", "x%d" % (cfg.layers - 1), "lnf_g", "lnf_b")
    head = r("lm_head")
    if tied:
        head = "wte_t"
        lines.append("  wte_t = %s.transpose([1, 0])" % r("wte"))
    ascription = "[%d, %d, %d]" % (b, t, cfg.v)
    if tied and mesh and _layout(parallel) != "data":
        # The tied head's product split over the vocabulary, as an untied
        # lm_head's is: each device multiplies by its own half of the
        # replicated wte (a free cut) instead of every device computing all
        # of it; its gradient's halves are then gathered.
        ascription = "Tensor[F32, %s, %s]" % (ascription, vocab_placement(
            mesh, parallel))
    product = "f @ broadcast(%s)" % head
    if mixed:  # the loss in F32
        product = "cast(%s, to=F32)" % product
    lines += ["  logits = %s        : %s" % (product, ascription),
              "  return logits", "}", ""]
    return "\n".join(lines)


LOSS = "gpt_loss"


def _loss_lines(cfg):
    """The mean token cross-entropy of `logits` against `targets`."""
    return ["  nll = -sum(one_hot(targets, classes=%d) * log_softmax(logits, "
            "axis=2), axis=2)" % cfg.v,
            "  return reshape(mean(mean(nll, axis=1), axis=0), [])"]
LOSS_GRAD = "gpt_loss_grad"


TRAIN_STEP = "gpt_train_step"
# AdamW's scalar inputs of the training step, after the moments.
ADAMW_SCALARS = adamw.SCALARS


def weight_names(cfg, tied=False):
    """The parameters that are weights (not the token ids or the mask)."""
    return [n for n in parameter_names(cfg, tied)
            if n not in ("token_ids", "mask")]


def _signature(text):
    """The entry's parameter list as written, and its names."""
    params = re.search(r"fn %s\((.*?)\) ->" % ENTRY, text,
                       re.S).group(1).strip().rstrip(",")
    return params, re.findall(r"(\w+):", params)


def loss_source(cfg, mesh=None, tied=False, parallel="megatron",
                dtype="f32"):
    """`source(cfg, mesh, tied)` with the mean token cross-entropy of its
    logits against `targets` ([B, T]) as `gpt_loss`, and its reverseMode
    with respect to every weight as `gpt_loss_grad` (the loss, then one
    gradient per weight in weight_names order)."""
    text = source(cfg, mesh=mesh, tied=tied, parallel=parallel, dtype=dtype)
    params, names = _signature(text)
    placed = "@replicated" if mesh else "@host"
    return text + """
fn %s(%s, targets: Tensor[I64, [%d, %d], %s]) -> Tensor[F32, [], %s] {
  logits = %s(%s)
%s
}
fn %s = reverseMode(%s, wrt=[%s]%s)
""" % (LOSS, params, cfg.b, cfg.t, batch_placement(mesh, parallel), placed,
       ENTRY, ", ".join(names),
       "\n".join(_loss_lines(cfg)), LOSS_GRAD, LOSS,
       ", ".join(weight_names(cfg, tied)),
       ", reshard_after_forward=true" if regathers(parallel) else "")


def train_source(cfg, mesh=None, parallel="megatron", dtype="f32"):
    """`loss_source(cfg, mesh, tied=True)` and `gpt_train_step`: the loss,
    its gradients and one AdamW update (PyTorch's, decoupled weight decay
    on the 2-D weights only). Parameters: the forward's, `targets`, one
    first moment `m_<w>` per weight, one second moment `v_<w>` per weight,
    then the scalars ADAMW_SCALARS (bc1 = 1 - beta1^step and bc2 = 1 -
    beta2^step are the step's bias corrections). Results: the loss, the
    new weights, the new first moments, the new second moments, each in
    weight_names(cfg, tied=True) order and each written into the array of
    the argument it replaces (`@reuses`)."""
    text = loss_source(cfg, mesh=mesh, tied=True, parallel=parallel,
                       dtype=dtype)
    params, names = _signature(text)
    placed = "@replicated" if mesh else "@host"
    shapes = parameter_shapes(cfg)
    weights = weight_names(cfg, tied=True)

    def typed(prefix, weight):
        # The ZeRO plans place the moments apart from their weights.
        where = moment_placement(cfg, weight, mesh, parallel) if prefix \
            else placement(weight, mesh, parallel, cfg)
        return "Tensor[F32, %s, %s]" % (shapes[weight], where)

    scalar = "Tensor[F32, [], %s]" % placed
    inputs = [params, "targets: Tensor[I64, [%d, %d], %s]"
              % (cfg.b, cfg.t, batch_placement(mesh, parallel))]
    inputs += ["%s_%s: %s" % (k, w, typed(k, w)) for k in "mv"
               for w in weights]
    inputs += ["%s: %s" % (name, scalar) for name in ADAMW_SCALARS]
    # Written into the arrays they replace (docs/interfaces.md): a step
    # keeps one copy of the weights and moments, not two.
    results = [scalar] + ["%s @reuses(%s%s)" % (typed(prefix, w), prefix, w)
                          for prefix in ("", "m_", "v_") for w in weights]
    lines = ["", "fn %s(%s) -> (%s) {" % (TRAIN_STEP, ",\n    ".join(inputs),
                                        ", ".join(results)),
             "  loss, %s = %s(%s, targets)" % (
                 ", ".join("d_" + w for w in weights), LOSS_GRAD,
                 ", ".join(names)),
             *adamw.scalar_lines()]
    for w in weights:
        lines += adamw.update_lines(w, "m_" + w, "v_" + w, "d_" + w,
                                    ("mn_" + w, "vn_" + w, "wn_" + w),
                                    decayed=len(shapes[w]) == 2)
    lines += ["  return loss, %s" % ", ".join(
        ["wn_" + w for w in weights] + ["mn_" + w for w in weights] +
        ["vn_" + w for w in weights]), "}", ""]
    return text + "\n".join(lines)


PIPELINE_STAGE = "gpt_stage_%d"
# The name of the source's pipeline declaration (`fn gpt_pipeline =
# pipeline(gpt_stage_0, ...)`).
PIPELINE = "gpt_pipeline"


def pipeline_stages(cfg, stages):
    """Each stage's layers: `stages` equal runs of consecutive blocks."""
    if stages < 2 or stages > cfg.layers or cfg.layers % stages:
        raise ValueError(
            "%d layers cannot be cut into %d pipeline stages of equal "
            "length (2 <= stages <= layers, layers a multiple of stages)" %
            (cfg.layers, stages))
    per = cfg.layers // stages
    return [list(range(k * per, (k + 1) * per)) for k in range(stages)]


def pipeline_source(cfg, stages, tied=False, tensor=None):
    """The F32 forward and loss cut into `stages` functions gpt_stage_K
    (kina.pipelining's stages, in order), the blocks shared out equally:
    stage 0 embeds the tokens, each stage runs its blocks, the last adds
    the final norm, lm_head and the mean token cross-entropy against
    `targets`. The batch is token_ids and targets; `mask` is a constant
    every stage reads; every other parameter is its stage's, but with
    `tied` the last stage reads wte (transposed) as lm_head: wte is then
    shared by the first and last stages (Pipeline(shared=["wte"])).
    `tensor` (a device count T): each stage tensor parallel on
    `@mesh([T], axes=[tp])`, the Megatron placements over tp, the
    activations between stages replicated."""
    shapes = parameter_shapes(cfg)
    b, t, d = cfg.b, cfg.t, cfg.d
    home = "@replicated" if tensor else "@host"
    activation = "Tensor[F32, [%d, %d, %d], %s]" % (b, t, d, home)
    cuts = pipeline_stages(cfg, stages)
    lines = ["# The GPT's forward and loss as %d pipeline stages of %d "
             "blocks each (%d layers, D=%d, H=%d, T=%d, V=%d)%s." % (
                 stages, len(cuts[0]), cfg.layers, d, cfg.heads, t, cfg.v,
                 ", each tensor parallel over %d devices" % tensor
                 if tensor else ""),
             "# Written by kina.models.gpt.pipeline_source; docs/gpt.md "
             "explains it.", ""]
    if tensor:
        lines += ["@mesh([%d], axes=[tp])" % tensor, ""]

    def typed(name):
        element = "I64" if name == "token_ids" else "F32"
        where = home
        if tensor and name not in ("token_ids", "targets", "mask"):
            where = _megatron_placement(name, "data+megatron")
        return "%s: Tensor[%s, %s, %s]" % (name, element, shapes[name],
                                           where)

    for k, layers in enumerate(cuts):
        last = k == stages - 1
        params = ([typed("token_ids"), typed("wte"), typed("wpe")] if k == 0
                  else ["%s: %s" % (_Body.input_of(layers[0]), activation)])
        params.append(typed("mask"))
        params += [typed("%s_%d" % (p, layer)) for layer in layers
                   for p in LAYER_PARAMS]
        if last:
            params += [typed("lnf_g"), typed("lnf_b"),
                       typed("wte" if tied else "lm_head"),
                       "targets: Tensor[I64, [%d, %d], %s]" % (b, t, home)]
        result = "Tensor[F32, [], %s]" % home if last else activation
        lines.append("fn %s(%s) -> %s {" % (PIPELINE_STAGE % k,
                                             ",\n    ".join(params), result))
        body = _Body(cfg, lines)
        if k == 0:
            body.embed()
        for layer in layers:
            body.block(layer)
        if last:
            body.ln("f", "x%d" % layers[-1], "lnf_g", "lnf_b")
            head = "lm_head"
            if tied:
                head = "wte_t"
                lines.append("  wte_t = wte.transpose([1, 0])")
            lines += [
                "  logits = f @ broadcast(%s)        : [%d, %d, %d]" % (
                    head, b, t, cfg.v)] + _loss_lines(cfg)
        else:
            lines.append("  return x%d" % layers[-1])
        lines += ["}", ""]
    lines += ["# The stages in order, and their parameters' roles.",
              "fn %s = pipeline(%s, batch=[token_ids, targets], "
              "constants=[mask]%s)" % (
                  PIPELINE, ", ".join(PIPELINE_STAGE % k
                                      for k in range(stages)),
                  ", shared=[wte]" if tied else ""), ""]
    return "\n".join(lines)


def adamw_scalars(step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                  weight_decay=0.01):
    """The training step's scalar inputs for step `step` (from 1), as
    float32 0-d arrays in ADAMW_SCALARS order (adamw.scalars)."""
    return adamw.scalars(step, lr, betas, eps, weight_decay)


def weights(cfg, seed=0, tied=False):
    """Every parameter but token_ids and mask, float32, from `seed`:
    N(0, 0.02) matrices and embeddings, small biases, gains near 1
    (lm_head is wte's transpose; `tied` leaves it out)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in parameter_shapes(cfg).items():
        if name in ("token_ids", "mask", "lm_head"):
            continue
        base = name.rsplit("_", 1)[0] if name[-1].isdigit() else name
        if base.endswith("_g"):
            value = 1 + 0.1 * rng.standard_normal(shape)
        elif base.startswith("b") or base.endswith("_b"):
            value = 0.02 * rng.standard_normal(shape)
        else:
            value = 0.02 * rng.standard_normal(shape)
        out[name] = value.astype(np.float32)
    if not tied:
        out["lm_head"] = np.ascontiguousarray(out["wte"].T)
    return out


def causal_mask(cfg):
    return np.triu(np.full((cfg.t, cfg.t), -1e9, np.float32), 1)


def arguments(cfg, w, token_ids, tied=False):
    """The entry's arguments in parameter order."""
    token_ids = np.asarray(token_ids, dtype=np.int64).reshape(cfg.b, cfg.t)
    values = dict(w, token_ids=token_ids, mask=causal_mask(cfg))
    return [values[name] for name in parameter_names(cfg, tied)]


def train_arguments(cfg, w, m, v, token_ids, targets, scalars):
    """gpt_train_step's arguments: the tied forward's, the targets, the
    moments `m` and `v` ({weight: array}) and adamw_scalars(...)."""
    names = weight_names(cfg, tied=True)
    targets = np.asarray(targets, dtype=np.int64).reshape(cfg.b, cfg.t)
    return (arguments(cfg, w, token_ids, tied=True) + [targets] +
            [m[n] for n in names] + [v[n] for n in names] + list(scalars))
