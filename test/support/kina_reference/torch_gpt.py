"""The GPT of kina.models.gpt in PyTorch, for tests, the benchmark and the
demos.

    from kina.models import gpt
    from kina_reference import TorchGPT, TorchTrainer, TrainableGPT
    from kina_reference import named_gradients
    logits = TorchGPT(cfg, w)(token_ids)     # [B, T, V], torch.Tensor
    model = TrainableGPT(cfg, w)             # the same, for autograd
    named_gradients(model)                   # after backward: {name: grad}
    trainer = TorchTrainer(cfg, w)           # tied wte, AdamW
    loss = trainer.step(token_ids, targets)  # one step; trainer.weights()
"""

import numpy as np
import torch
from torch import nn

from kina.models import gpt


def TorchGPT(cfg, w):
    """The reference: torch.nn modules (Embedding, LayerNorm, Linear,
    GELU(approximate="tanh")) loaded with `w`, attention written with torch
    ops; call it on token ids ([B, T]) for the logits ([B, T, V])."""
    return TrainableGPT(cfg, w).eval().requires_grad_(False)


def TrainableGPT(cfg, w, tied=None):
    """The same GPT as an nn.Module whose parameters take gradients. `tied`
    (by default: when `w` has no lm_head) computes the logits with wte's
    own weight (one parameter, as GPT-2), else with lm_head."""
    if tied is None:
        tied = "lm_head" not in w
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
            b, t, h, dh = x.shape[0], cfg.t, cfg.heads, cfg.dh
            a = self.ln1(x)
            split = lambda y: y.reshape(b, t, h, dh).transpose(1, 2)
            q, k, v = split(self.q(a)), split(self.k(a)), split(self.v(a))
            scores = q @ k.transpose(2, 3) * (1 / np.sqrt(dh)) + mask
            context = (torch.softmax(scores, dim=3) @ v).transpose(1, 2)
            x = x + self.o(context.reshape(b, t, cfg.d))
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
            if not tied:
                self.lm_head = nn.Linear(cfg.d, cfg.v, bias=False)
                with torch.no_grad():
                    self.lm_head.weight.copy_(tensor("lm_head").T)
            self.register_buffer(
                "mask", torch.from_numpy(gpt.causal_mask(cfg)))

        def forward(self, token_ids):
            ids = torch.as_tensor(np.asarray(token_ids, dtype=np.int64))
            x = self.wte(ids) + self.wpe
            for block in self.blocks:
                x = block(x, self.mask)
            head = self.wte.weight if tied else self.lm_head.weight
            return self.lnf(x) @ head.T

    return GPT()


def named_gradients(model):
    """A TrainableGPT's gradients (after backward) by Kina's parameter
    names, as NumPy arrays in Kina's layouts ([in, out] matrices)."""
    grads = {"wte": model.wte.weight.grad, "wpe": model.wpe.grad,
             "lnf_g": model.lnf.weight.grad, "lnf_b": model.lnf.bias.grad}
    if hasattr(model, "lm_head"):  # untied
        grads["lm_head"] = model.lm_head.weight.grad.T
    for i, block in enumerate(model.blocks):
        linears = {"q": block.q, "k": block.k, "v": block.v, "o": block.o,
                   "_fc": block.fc, "_proj": block.proj}
        for suffix, linear in linears.items():
            grads["w%s_%d" % (suffix, i)] = linear.weight.grad.T
            grads["b%s_%d" % (suffix, i)] = linear.bias.grad
        for norm, module in (("ln1", block.ln1), ("ln2", block.ln2)):
            grads["%s_g_%d" % (norm, i)] = module.weight.grad
            grads["%s_b_%d" % (norm, i)] = module.bias.grad
    return {name: g.numpy() for name, g in grads.items()}


class TorchTrainer:
    """The tied GPT trained by torch.optim.AdamW(foreach=True), weight decay
    on the 2-D weights only, in `dtype` (float64 for a reference of
    Kina's float32 step)."""

    def __init__(self, cfg, w, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, dtype=torch.float32):
        self.cfg = cfg
        self.model = TrainableGPT(cfg, w, tied=True).to(dtype)
        named = dict(self.model.named_parameters())
        self.names = _kina_names(cfg, named)
        decay = [p for p in named.values() if p.dim() == 2]
        rest = [p for p in named.values() if p.dim() != 2]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": weight_decay},
             {"params": rest, "weight_decay": 0.0}],
            lr=lr, betas=betas, eps=eps, foreach=True)

    def loss(self, token_ids, targets):
        logits = self.model(token_ids)
        targets = torch.as_tensor(np.asarray(targets, dtype=np.int64))
        return nn.functional.cross_entropy(
            logits.reshape(-1, self.cfg.v), targets.reshape(-1))

    def step(self, token_ids, targets):
        """One AdamW step on the batch; returns the loss before it."""
        self.optimizer.zero_grad()
        loss = self.loss(token_ids, targets)
        loss.backward()
        self.optimizer.step()
        return float(loss)

    def weights(self):
        """{Kina weight name: np.ndarray} in Kina's layout (Linear weights
        transposed back to [in, out])."""
        return {name: _kina_layout(parameter, transposed)
                for name, (parameter, transposed) in self.names.items()}

    def moments(self):
        """AdamW's first and second moments, ({name: np.ndarray}, {name:
        np.ndarray}), in Kina's layout, as weights()."""
        state = self.optimizer.state
        return tuple({name: _kina_layout(state[parameter][key], transposed)
                      for name, (parameter, transposed) in self.names.items()}
                     for key in ("exp_avg", "exp_avg_sq"))


def _kina_layout(tensor, transposed):
    return (tensor.T if transposed else tensor).detach().numpy().copy()


def _kina_names(cfg, named):
    """Kina's weight names, each with its parameter and whether Kina's
    layout is its transpose (a Linear's [out, in] weight)."""
    linear = {"wq": "q", "wk": "k", "wv": "v", "wo": "o", "w_fc": "fc",
              "w_proj": "proj"}
    bias = {"bq": "q", "bk": "k", "bv": "v", "bo": "o", "b_fc": "fc",
            "b_proj": "proj"}
    norms = {"ln1": "ln1", "ln2": "ln2"}
    out = {"wte": (named["wte.weight"], False), "wpe": (named["wpe"], False),
           "lnf_g": (named["lnf.weight"], False),
           "lnf_b": (named["lnf.bias"], False)}
    for layer in range(cfg.layers):
        block = "blocks.%d." % layer
        for k, m in linear.items():
            out["%s_%d" % (k, layer)] = (named[block + m + ".weight"], True)
        for k, m in bias.items():
            out["%s_%d" % (k, layer)] = (named[block + m + ".bias"], False)
        for k, m in norms.items():
            out["%s_g_%d" % (k, layer)] = (named[block + m + ".weight"],
                                           False)
            out["%s_b_%d" % (k, layer)] = (named[block + m + ".bias"], False)
    return out
