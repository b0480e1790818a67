"""PyTorch references for Kina's models, for tests, the benchmark and the
demos. Optional: importing this module needs PyTorch (Debian's
python3-torch); `import kina` never imports it.

    from kina import gpt
    from kina.torch_reference import TorchGPT
    logits = TorchGPT(cfg, w)(token_ids)     # [1, T, V], torch.Tensor
"""

import numpy as np
import torch
from torch import nn

from . import gpt


def TorchGPT(cfg, w):
    """The reference: torch.nn modules (Embedding, LayerNorm, Linear,
    GELU(approximate="tanh")) loaded with `w`, attention written with torch
    ops; call it on token ids ([1, T]) for the logits ([1, T, V])."""
    def tensor(name):
        return torch.from_numpy(np.ascontiguousarray(w[name]))

    def norm(g, b):
        layer = nn.LayerNorm(cfg.d, eps=gpt.EPS)
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
            self.register_buffer(
                "mask", torch.from_numpy(gpt.causal_mask(cfg)))

        @torch.no_grad()
        def forward(self, token_ids):
            ids = torch.as_tensor(np.asarray(token_ids, dtype=np.int64))
            x = self.wte(ids) + self.wpe
            for block in self.blocks:
                x = block(x, self.mask)
            return self.lm_head(self.lnf(x))

    return GPT().eval()
