"""StoryLM-0's forward in PyTorch (float32), the reference the
validations and the benchmark compare Kina with."""

import numpy as np
import torch

from kina.models.storylm0 import B, H, split_heads


def storylm0_forward(token_ids, embed, wq, wk, wv, wo, lm_head, scale, mask,
                     heads=H):
    """The forward's context, residual and logits, as NumPy arrays."""
    t = lambda a: torch.from_numpy(np.asarray(a))
    x = t(embed)[t(token_ids)]
    split = split_heads(token_ids, wq, heads)
    q = split(x @ t(wq)).permute(0, 2, 1, 3)
    k_t = split(x @ t(wk)).permute(0, 2, 3, 1)
    v = split(x @ t(wv)).permute(0, 2, 1, 3)
    probs = torch.softmax(q @ k_t * t(scale) + t(mask), dim=3)
    context = probs @ v
    attn = context.permute(0, 2, 1, 3).reshape(B, x.shape[1], -1)
    residual = x + attn @ t(wo)
    return {"context": context.numpy(), "residual": residual.numpy(),
            "logits": (residual @ t(lm_head)).numpy()}
