"""StoryLM-0: the shared weights and the reference algebra (NumPy).

The one deterministic weight set that every validation script, test and
the notebook use (docs/storylm0.md documents it), and the unsharded forward
of docs/language.md ("StoryLM-0") written in NumPy, float32 throughout. This module
needs only NumPy, so it can be loaded without the compiled extension.
"""

import numpy as np

B, T, H, DH, D, V = 1, 4, 2, 2, 4, 8
PROMPT = np.array([[1, 4, 2, 6]], dtype=np.int64)
SEED = 20261130
PARAMETERS = ("token_ids", "embed", "wq", "wk", "wv", "wo", "lm_head",
              "scale", "mask")


def causal_mask(t=T):
    """0 on and below the diagonal, -1e9 above it."""
    return np.triu(np.full((t, t), -1e9, dtype=np.float32), k=1)


def weights(seed=SEED):
    """The shared weights: N(0, 1) embeddings and lm_head, N(0, 0.5^2)
    projections, scale = 1/sqrt(Dh), the causal mask; all float32."""
    rng = np.random.default_rng(seed)
    normal = lambda shape, std: (rng.standard_normal(shape) * std).astype(
        np.float32)
    return {
        "embed": normal((V, D), 1.0),
        "wq": normal((D, H * DH), 0.5),
        "wk": normal((D, H * DH), 0.5),
        "wv": normal((D, H * DH), 0.5),
        "wo": normal((H * DH, D), 0.5),
        "lm_head": normal((D, V), 1.0),
        "scale": np.array(1.0 / np.sqrt(DH), dtype=np.float32),
        "mask": causal_mask(),
    }


def arguments(token_ids=PROMPT, seed=SEED):
    """The entry's arguments, in the order of docs/language.md ("StoryLM-0")."""
    w = weights(seed)
    return [np.asarray(token_ids, dtype=np.int64)] + [w[n] for n in
                                                      PARAMETERS[1:]]


def softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(token_ids, wq, heads):
    """A reshape to [1, T, heads, Dh] for any width (T from the ids)."""
    t = np.shape(token_ids)[-1]
    dh = np.shape(wq)[1] // heads
    return lambda flat: flat.reshape(B, t, heads, dh)


def forward(token_ids, embed, wq, wk, wv, wo, lm_head, scale, mask, heads=H):
    """Every intermediate of the unsharded forward, by its name in the
    reference algebra; `logits` is [1, T, V] ([1, 4, 8] at the toy widths).
    Other widths: pass `heads` (Dh is wq's columns / heads)."""
    x = embed[token_ids]
    split = split_heads(token_ids, wq, heads)
    q = split(x @ wq).transpose(0, 2, 1, 3)
    k_t = split(x @ wk).transpose(0, 2, 3, 1)
    v = split(x @ wv).transpose(0, 2, 1, 3)
    probs = softmax(q @ k_t * scale + mask, axis=3)
    context = probs @ v
    attn = context.transpose(0, 2, 1, 3).reshape(B, x.shape[1], -1)
    residual = x + attn @ wo
    logits = residual @ lm_head
    return {"x": x, "q": q, "k_t": k_t, "v": v, "probs": probs,
            "context": context, "attn": attn, "residual": residual,
            "logits": logits}
