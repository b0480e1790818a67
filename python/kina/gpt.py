"""A GPT-2-small-like forward in Kina: the program (written by
scripts/gen_gpt.py through `source`), its weights from a seed, and a
PyTorch reference built from torch.nn modules with the same weights.

    from kina import gpt
    cfg = gpt.Config.small()                 # or gpt.Config.tiny() for tests
    text = gpt.source(cfg)                   # .kina source
    w = gpt.weights(cfg, seed=0)             # {name: np.ndarray}
    args = gpt.arguments(cfg, w, token_ids)  # in the entry's parameter order
    logits = gpt.TorchGPT(cfg, w)(token_ids) # the reference

Pre-norm blocks: x += attn(ln1(x)); x += mlp(ln2(x)), causal multi-head
attention, an MLP D -> 4D -> D with tanh-GELU, a final layer norm and an
lm_head to the vocabulary. lm_head is wte's transpose (tied, as in GPT-2)
passed as its own [D, V] parameter, so that it can be placed on its own.
"""

import dataclasses

import numpy as np

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
        """Multiply-adds x 2 of the matmuls of one forward."""
        t, d, f = self.t, self.d, self.f
        block = 2 * t * d * (4 * d + 2 * f) + 2 * 2 * t * t * d
        return self.layers * block + 2 * t * d * self.v


def parameter_names(cfg):
    names = ["token_ids", "wte", "wpe"]
    for layer in range(cfg.layers):
        names += ["%s_%d" % (p, layer) for p in LAYER_PARAMS]
    return names + ["lnf_g", "lnf_b", "lm_head", "mask"]


def parameter_shapes(cfg):
    d, f = cfg.d, cfg.f
    per_layer = {"ln1_g": [d], "ln1_b": [d], "wq": [d, d], "bq": [d],
                 "wk": [d, d], "bk": [d], "wv": [d, d], "bv": [d],
                 "wo": [d, d], "bo": [d], "ln2_g": [d], "ln2_b": [d],
                 "w_fc": [d, f], "b_fc": [f], "w_proj": [f, d], "b_proj": [d]}
    shapes = {"token_ids": [1, cfg.t], "wte": [cfg.v, d], "wpe": [cfg.t, d],
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


def placement(name, mesh):
    """The placement of parameter `name` under `mesh` (None: unsharded)."""
    if mesh is None:
        return "@host"
    base = name.rsplit("_", 1)[0] if name[-1].isdigit() else name
    if base in MEGATRON:
        return "@sharded(axis=%d)" % MEGATRON[base]
    if base == "lm_head":
        return "@sharded(axis=1)"
    return "@replicated"


def source(cfg, mesh=None):
    """The forward as `.kina` source; `mesh` (a device count) adds
    `@mesh([mesh])` and the Megatron placements."""
    d, t, h, dh = cfg.d, cfg.t, cfg.heads, cfg.dh
    shapes = parameter_shapes(cfg)
    result = "@replicated" if mesh else "@host"
    lines = ["# GPT-2-small-like forward: %d layers, D=%d, H=%d, T=%d, V=%d "
             "(%.1fM parameters)." % (cfg.layers, d, h, t, cfg.v,
                                      cfg.parameter_count() / 1e6),
             "# Written by scripts/gen_gpt.py; docs/gpt.md explains it.", ""]
    if mesh:
        lines += ["@mesh([%d])" % mesh, ""]
    params = []
    for name in parameter_names(cfg):
        dtype = "I64" if name == "token_ids" else "F32"
        params.append("    %s: Tensor[%s, %s, %s]" % (
            name, dtype, shapes[name], placement(name, mesh)))
    lines.append("fn %s(" % ENTRY)
    lines.append(",\n".join(params) + ") -> Tensor[F32, [1, %d, %d], %s] {"
                 % (t, cfg.v, result))

    def ln(out, x, g, b):
        lines.extend([
            "  %s_mu = mean(%s, axis=2)" % (out, x),
            "  %s_d = %s - broadcast(%s_mu)" % (out, x, out),
            "  %s_var = mean(%s_d * %s_d, axis=2)" % (out, out, out),
            "  %s_r = rsqrt(%s_var + broadcast(%r))" % (out, out, EPS),
            "  %s = %s_d * broadcast(%s_r) * broadcast(%s) + broadcast(%s)"
            % (out, out, out, g, b)])

    lines.append("  x = gather wte token_ids + broadcast(wpe)   : [1, %d, %d]"
                 % (t, d))
    for layer in range(cfg.layers):
        p = lambda name: "%s_%d" % (name, layer)
        lines.append("  # block %d" % layer)
        ln("a%d" % layer, "x" if layer == 0 else "x%d" % (layer - 1),
           p("ln1_g"), p("ln1_b"))
        a = "a%d" % layer
        for proj, perm in (("q", "[0, 2, 1, 3]"), ("k", "[0, 2, 3, 1]"),
                           ("v", "[0, 2, 1, 3]")):
            lines.append(
                "  %s%d = (%s @ broadcast(%s) + broadcast(%s)).reshape([1, %d,"
                " %d, %d]).transpose(%s)" % (proj, layer, a, p("w" + proj),
                                             p("b" + proj), t, h, dh, perm))
        lines += [
            "  s%d = q%d @ k%d * broadcast(%r) + broadcast(mask)"
            % (layer, layer, layer, 1 / np.sqrt(dh)),
            "  c%d = (softmax(s%d, axis=3) @ v%d).transpose([0, 2, 1, 3])"
            ".reshape([1, %d, %d])" % (layer, layer, layer, t, d),
            "  h%d = %s + c%d @ broadcast(%s) + broadcast(%s)"
            % (layer, "x" if layer == 0 else "x%d" % (layer - 1), layer,
               p("wo"), p("bo"))]
        ln("m%d" % layer, "h%d" % layer, p("ln2_g"), p("ln2_b"))
        lines += [
            "  u%d = m%d @ broadcast(%s) + broadcast(%s)"
            % (layer, layer, p("w_fc"), p("b_fc")),
            # tanh-GELU: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))
            "  g%d = broadcast(0.5) * u%d * (broadcast(1.0) + tanh(broadcast("
            "%r) * (u%d + broadcast(0.044715) * u%d * u%d * u%d)))"
            % (layer, layer, float(np.sqrt(2 / np.pi)), layer, layer, layer,
               layer),
            "  x%d = h%d + g%d @ broadcast(%s) + broadcast(%s)"
            % (layer, layer, layer, p("w_proj"), p("b_proj"))]
    ln("f", "x%d" % (cfg.layers - 1), "lnf_g", "lnf_b")
    lines += ["  logits = f @ broadcast(lm_head)        : [1, %d, %d]"
              % (t, cfg.v), "  return logits", "}", ""]
    return "\n".join(lines)


def weights(cfg, seed=0):
    """Every parameter but token_ids and mask, float32, from `seed`:
    N(0, 0.02) matrices and embeddings, small biases, gains near 1."""
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
    out["lm_head"] = np.ascontiguousarray(out["wte"].T)
    return out


def causal_mask(cfg):
    return np.triu(np.full((cfg.t, cfg.t), -1e9, np.float32), 1)


def arguments(cfg, w, token_ids):
    """The entry's arguments in parameter order."""
    token_ids = np.asarray(token_ids, dtype=np.int64).reshape(1, cfg.t)
    values = dict(w, token_ids=token_ids, mask=causal_mask(cfg))
    return [values[name] for name in parameter_names(cfg)]


def TorchGPT(cfg, w):
    """The reference: torch.nn modules (Embedding, LayerNorm, Linear,
    GELU(approximate="tanh")) loaded with `w`, attention written with torch
    ops; call it on token ids ([1, T]) for the logits ([1, T, V])."""
    import torch
    from torch import nn

    def tensor(name):
        return torch.from_numpy(np.ascontiguousarray(w[name]))

    def norm(g, b):
        layer = nn.LayerNorm(cfg.d, eps=EPS)
        with torch.no_grad():
            layer.weight.copy_(tensor(g))
            layer.bias.copy_(tensor(b))
        return layer

    class Block(nn.Module):
        def __init__(self, layer):
            super().__init__()
            p = lambda name: "%s_%d" % (name, layer)
            shape = lambda name: tuple(w[p(name)].shape)
            self.ln1 = norm(p("ln1_g"), p("ln1_b"))
            self.q, self.k, self.v, self.o = (
                nn.Linear(*shape(m)) for m in ("wq", "wk", "wv", "wo"))
            self.ln2 = norm(p("ln2_g"), p("ln2_b"))
            self.fc = nn.Linear(*shape("w_fc"))
            self.proj = nn.Linear(*shape("w_proj"))
            self.gelu = nn.GELU(approximate="tanh")
            with torch.no_grad():
                for module, m, b in ((self.q, "wq", "bq"), (self.k, "wk", "bk"),
                                     (self.v, "wv", "bv"), (self.o, "wo", "bo"),
                                     (self.fc, "w_fc", "b_fc"),
                                     (self.proj, "w_proj", "b_proj")):
                    module.weight.copy_(tensor(p(m)).T)
                    module.bias.copy_(tensor(p(b)))

        def forward(self, x, mask):
            t, h, dh = cfg.t, cfg.heads, cfg.dh
            a = self.ln1(x)
            split = lambda y: y.reshape(1, t, h, dh).transpose(1, 2)
            q, k, v = split(self.q(a)), split(self.k(a)), split(self.v(a))
            scores = q @ k.transpose(2, 3) * (1 / np.sqrt(dh)) + mask
            context = (torch.softmax(scores, dim=3) @ v).transpose(1, 2)
            x = x + self.o(context.reshape(1, t, cfg.d))
            return x + self.proj(self.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg.v, cfg.d)
            self.wpe = nn.Parameter(tensor("wpe").clone())
            with torch.no_grad():
                self.wte.weight.copy_(tensor("wte"))
            self.blocks = nn.ModuleList(Block(i) for i in range(cfg.layers))
            self.lnf = norm("lnf_g", "lnf_b")
            self.lm_head = nn.Linear(cfg.d, cfg.v, bias=False)
            with torch.no_grad():
                self.lm_head.weight.copy_(tensor("lm_head").T)
            self.register_buffer("mask", torch.from_numpy(causal_mask(cfg)))

        @torch.no_grad()
        def forward(self, token_ids):
            ids = torch.as_tensor(np.asarray(token_ids, dtype=np.int64))
            x = self.wte(ids) + self.wpe
            for block in self.blocks:
                x = block(x, self.mask)
            return self.lm_head(self.lnf(x))

    return GPT().eval()
