"""The GPT of `kina.models.gpt`, written in Python with `kina.numpy` and
traced by `kina.jit`: the forward, the loss, its gradient (kina.grad)
and AdamW, each written once over the parameter tree.

    from kina.models import gpt, gpt_traced
    cfg = gpt.Config.tiny()
    params = gpt_traced.init_params(cfg, seed=0)   # a tree of arrays
    state = gpt_traced.adamw_state(params)         # moments, zeros
    step = gpt_traced.train_step()                 # kina.jit of the step
    loss, params, state = step(params, state, ids, targets,
                               gpt.causal_mask(cfg), gpt_traced.hyper(1),
                               cfg.heads)

The ops and their order are those `gpt.train_source` writes, so a step
computes the same values (docs/interfaces.md, "Python as a frontend").
A plan's shardings are NamedShardings alone (`plan_shardings`).
"""

import numpy as np

import kina
import kina.numpy as knp
from kina.sharding import NamedSharding, P

from . import adamw, gpt

BLOCK = gpt.LAYER_PARAMS


def parameter_tree(cfg):
    """The parameter tree with each leaf's gen_gpt name in its place:
    {"wte", "wpe", "blocks": [{"ln1_g": "ln1_g_0", ...}, ...], "lnf_g",
    "lnf_b"}."""
    return {"wte": "wte", "wpe": "wpe",
            "blocks": [{p: "%s_%d" % (p, i) for p in BLOCK}
                       for i in range(cfg.layers)],
            "lnf_g": "lnf_g", "lnf_b": "lnf_b"}


def init_params(cfg, seed=0):
    """gpt.weights(cfg, seed, tied=True) as parameter_tree(cfg)."""
    flat = gpt.weights(cfg, seed=seed, tied=True)
    return kina.tree_map(lambda name: flat[name], parameter_tree(cfg))


def by_name(cfg, tree):
    """{gen_gpt name: leaf} of a tree shaped as parameter_tree(cfg)."""
    return dict(zip(kina.tree_leaves(parameter_tree(cfg)),
                    kina.tree_leaves(tree)))


def layer_norm(x, g, b):
    mu = knp.mean(x, axis=-1, keepdims=True)
    d = x - mu
    r = knp.rsqrt(knp.mean(d * d, axis=-1, keepdims=True) + gpt.EPS)
    return d * r * g + b


def attention(x, p, heads, mask):
    b, t, d = x.shape
    dh = d // heads

    def split(w, bias, perm):
        return (x @ w + bias).reshape(b, t, heads, dh).transpose(perm)

    q = split(p["wq"], p["bq"], (0, 2, 1, 3))
    k_t = split(p["wk"], p["bk"], (0, 2, 3, 1))
    v = split(p["wv"], p["bv"], (0, 2, 1, 3))
    scores = q @ k_t * float(1 / np.sqrt(dh)) + mask
    context = (knp.softmax(scores, axis=3) @ v).transpose(0, 2, 1, 3)
    return context.reshape(b, t, d)


def gelu(u):
    """tanh-GELU, as the generated program writes it."""
    return 0.5 * u * (1.0 + knp.tanh(float(np.sqrt(2 / np.pi)) *
                                     (u + 0.044715 * u * u * u)))


def forward(params, token_ids, mask, heads):
    """The logits [B, T, V]; the head is wte transposed (tied)."""
    x = knp.take(params["wte"], token_ids, axis=0) + params["wpe"]
    for p in params["blocks"]:
        a = layer_norm(x, p["ln1_g"], p["ln1_b"])
        h = x + attention(a, p, heads, mask) @ p["wo"] + p["bo"]
        m = layer_norm(h, p["ln2_g"], p["ln2_b"])
        x = h + gelu(m @ p["w_fc"] + p["b_fc"]) @ p["w_proj"] + p["b_proj"]
    f = layer_norm(x, params["lnf_g"], params["lnf_b"])
    return f @ params["wte"].T


def loss(params, token_ids, targets, mask, heads):
    """Mean token cross-entropy of the logits against `targets`."""
    logits = forward(params, token_ids, mask, heads)
    nll = -knp.sum(knp.one_hot(targets, logits.shape[-1]) *
                   knp.log_softmax(logits, axis=2), axis=2)
    per_sequence = knp.mean(nll, axis=1, keepdims=True)
    return knp.mean(per_sequence, axis=0, keepdims=True).reshape(())


def adamw_update(w, g, m, v, h):
    """PyTorch's AdamW on one tensor (decoupled decay on 2-D weights);
    `h` holds the step's scalars by adamw.SCALARS' names."""
    m = h["beta1"] * m + (1.0 - h["beta1"]) * g
    v = h["beta2"] * v + (1.0 - h["beta2"]) * g * g
    shrunk = w * (1.0 - h["lr"] * h["weight_decay"]) if w.ndim == 2 else w
    step_size = h["lr"] / h["bc1"]
    new = shrunk - step_size * m / (knp.sqrt(v) / knp.sqrt(h["bc2"]) +
                                    h["eps"])
    return new, m, v


def step(params, state, token_ids, targets, mask, hyper, heads):
    """One training step: (loss, new params, new state)."""
    value, grads = kina.value_and_grad(loss)(params, token_ids, targets,
                                             mask, heads)
    weights, treedef = kina.tree_flatten(params)
    updates = [adamw_update(w, g, m, v, hyper) for w, g, m, v in zip(
        weights, kina.tree_leaves(grads), kina.tree_leaves(state["m"]),
        kina.tree_leaves(state["v"]))]
    new_weights, new_m, new_v = (
        kina.tree_unflatten(treedef, [u[i] for u in updates])
        for i in range(3))
    return value, new_weights, {"m": new_m, "v": new_v}


def adamw_state(params):
    """AdamW's moments at step 0: zeros shaped as `params`."""
    return {"m": kina.tree_map(np.zeros_like, params),
            "v": kina.tree_map(np.zeros_like, params)}


def hyper(step_number, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
          weight_decay=0.01):
    """The step's AdamW scalars (float32 0-d arrays), by name."""
    return dict(zip(adamw.SCALARS, gpt.adamw_scalars(
        step_number, lr, betas, eps, weight_decay)))


def plan_shardings(cfg, mesh, plan):
    """kina.jit's (in_shardings, out_shardings) of `step` for `plan`:
    "data" (the batch over mesh axis dp, all else replicated), "zero1"
    (data, and the moments split on their first dim over dp) or
    "megatron" (gpt.MEGATRON's splits over mesh axis tp, the batch
    replicated)."""
    replicated = NamedSharding(mesh, P())
    axis = "tp" if plan == "megatron" else "dp"
    shapes = gpt.parameter_shapes(cfg)

    def weight(name):
        base = gpt._base(name)
        if plan == "megatron" and base in gpt.MEGATRON:
            return NamedSharding(mesh, P(*[None] * gpt.MEGATRON[base], axis))
        return replicated

    def moment(name):
        if plan == "zero1" and shapes[name][0] % mesh.size(axis) == 0:
            return NamedSharding(mesh, P(axis))
        return weight(name)

    weights = kina.tree_map(weight, parameter_tree(cfg))
    state = {"m": kina.tree_map(moment, parameter_tree(cfg)),
             "v": kina.tree_map(moment, parameter_tree(cfg))}
    batch = replicated if plan == "megatron" else NamedSharding(mesh,
                                                                P("dp"))
    return ((weights, state, batch, batch, replicated, replicated, None),
            (replicated, weights, state))


def train_step(cfg=None, mesh=None, plan="data"):
    """kina.jit of `step` (heads static), donating the params and state:
    each step writes the new ones into the arrays it was given. With a
    `mesh`, the shardings of `plan` (plan_shardings)."""
    shardings = (plan_shardings(cfg, mesh, plan) if mesh is not None
                 else (None, None))
    return kina.jit(step, static_argnums=6, donate_argnums=(0, 1),
                    in_shardings=shardings[0], out_shardings=shardings[1])
