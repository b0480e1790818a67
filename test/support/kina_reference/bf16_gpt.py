"""A float64 reference of the GPT's BF16 training step (gpt.train_source
with dtype="bf16") that rounds where docs/language.md ("Element types and
rounding") says Kina rounds, and nowhere else.

    from kina_reference import RoundingTrainer, bf16_round
    trainer = RoundingTrainer(cfg, w, lr=1e-4)   # tied wte, AdamW
    loss = trainer.step(token_ids, targets)       # one step; trainer.weights()

Every value is a float64 array; a BF16 value is rounded to BF16 once per op
(nearest even), an F32 one to float32. Reductions, products and softmax
compute in float64 before that rounding where Kina accumulates in F32: the
two agree except where F32's sum and the exact one round apart. The
backward is written here (a tape in NumPy) from the language's rules, not
from Kina: each op's adjoint is the ops docs/language.md lists for it, each
rounding in its type; a value's cotangents from its uses add in reverse
program order, each sum rounding; a broadcast's adjoint sums its stretched
dims one at a time, first dim first. The master weights and AdamW are
float64 (torch.optim.AdamW), as the F32 ones they stand for.
"""

import numpy as np
import torch

from kina.models import gpt

BF16_MANTISSA_BITS = 7
BF16_MIN_EXPONENT = -126
BF16_MAX = float.fromhex("0x1.fep127")


def bf16_round(x):
    """float64 `x` rounded to the nearest BF16 value (ties to even), as
    float64; beyond BF16's largest finite value, inf; NaN stays."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, exponent = np.frexp(x)  # |x| in [2^(e-1), 2^e)
        exponent = np.maximum(exponent - 1, BF16_MIN_EXPONENT)
        spacing = np.ldexp(1.0, exponent - BF16_MANTISSA_BITS)
        rounded = np.round(x / spacing) * spacing  # round(): ties to even
        return np.where(np.abs(rounded) > BF16_MAX, np.copysign(np.inf, x),
                        rounded)


def _f32_round(x):
    return np.asarray(x, np.float64).astype(np.float32).astype(np.float64)


ROUNDING = {"bf16": bf16_round, "f32": _f32_round}


class _Value:
    """A value of the program: its float64 array and its element type."""

    def __init__(self, array, dtype):
        self.array, self.dtype = array, dtype


class _Tape:
    """The program's ops in order, each with its adjoint rule: a function
    of the result's cotangent giving each operand's (None: none)."""

    def __init__(self):
        self.ops = []

    def value(self, array, dtype, operands=(), adjoint=None):
        result = _Value(ROUNDING[dtype](array), dtype)
        self.ops.append((result, operands, adjoint))
        return result

    def gradients(self, result, wrt):
        """Cotangents of `wrt` from a seed of 1.0 at the rank-0 `result`."""
        active = set(map(id, wrt))
        for value, operands, _ in self.ops:
            if any(id(o) in active for o in operands):
                active.add(id(value))
        cotangents = {id(result): np.ones_like(result.array)}
        for value, operands, adjoint in reversed(self.ops):
            cotangent = cotangents.get(id(value))
            if cotangent is None or adjoint is None:
                continue
            for operand, share in zip(operands, adjoint(cotangent)):
                if share is None or id(operand) not in active:
                    continue
                so_far = cotangents.get(id(operand))
                cotangents[id(operand)] = share if so_far is None else \
                    ROUNDING[operand.dtype](so_far + share)
        return [cotangents.get(id(w), np.zeros_like(w.array)) for w in wrt]


def _swap_last_two(a):
    return np.swapaxes(a, -1, -2)


class _Program:
    """The ops of gpt.train_source, recorded on a tape in program order,
    each rounding its result and its adjoint's ops in its type."""

    def __init__(self):
        self.tape = _Tape()

    def _made(self, dtype, array, operands, adjoint):
        return self.tape.value(array, dtype, operands, adjoint)

    def parameter(self, array, dtype):
        return self.tape.value(np.asarray(array, np.float64), dtype)

    def cast(self, x, dtype):
        back = ROUNDING[x.dtype]
        return self._made(dtype, x.array, (x,), lambda c: [back(c)])

    def literal(self, value, like, shape):
        """A weakly typed literal in `like`'s type, broadcast to `shape`."""
        scalar = self.tape.value(np.float64(value), like.dtype)
        return self.broadcast(scalar, shape)

    def broadcast(self, x, shape):
        offset = len(shape) - x.array.ndim
        stretched = [d for d in range(len(shape)) if d < offset or
                     x.array.shape[d - offset] != shape[d]]
        r = ROUNDING[x.dtype]

        def adjoint(c):
            for d in stretched:  # one sum per dim, each rounding
                c = r(c.sum(axis=d, keepdims=True))
            return [c.reshape(x.array.shape)]
        return self._made(x.dtype, np.broadcast_to(
            x.array.reshape((1,) * offset + x.array.shape), shape),
            (x,), adjoint)

    def reshape(self, x, shape):
        return self._made(x.dtype, x.array.reshape(shape), (x,),
                          lambda c: [c.reshape(x.array.shape)])

    def transpose(self, x, perm):
        inverse = np.argsort(perm)
        return self._made(x.dtype, x.array.transpose(perm), (x,),
                          lambda c: [c.transpose(inverse)])

    def gather(self, table, ids):
        r = ROUNDING[table.dtype]

        def adjoint(c):  # scatter-add: accumulate, round once
            rows = np.zeros_like(table.array)
            np.add.at(rows, ids, c)
            return [r(rows)]
        return self._made(table.dtype, table.array[ids], (table,), adjoint)

    def add(self, a, b):
        return self._made(a.dtype, a.array + b.array, (a, b),
                          lambda c: [c, c])

    def sub(self, a, b):
        return self._made(a.dtype, a.array - b.array, (a, b),
                          lambda c: [c, -c])

    def neg(self, a):
        return self._made(a.dtype, -a.array, (a,), lambda c: [-c])

    def mul(self, a, b):
        r = ROUNDING[a.dtype]
        return self._made(a.dtype, a.array * b.array, (a, b),
                          lambda c: [r(c * b.array), r(c * a.array)])

    def matmul(self, a, b):
        r = ROUNDING[a.dtype]
        return self._made(a.dtype, a.array @ b.array, (a, b), lambda c: [
            r(c @ _swap_last_two(b.array)), r(_swap_last_two(a.array) @ c)])

    def shared_matmul(self, x, w):
        """x @ broadcast(w), w of rank 2: w's gradient, the sum over the
        batch of the per-batch products, is one product over all the
        batch's rows, rounded once (as Kina contracts it)."""
        r = ROUNDING[x.dtype]
        rows = lambda a: a.reshape(-1, a.shape[-1])
        return self._made(x.dtype, x.array @ w.array, (x, w), lambda c: [
            r(c @ w.array.T), r(rows(x.array).T @ rows(c))])

    def sum(self, x, axis):
        return self._made(x.dtype, x.array.sum(axis=axis, keepdims=True),
                          (x,), lambda c: [np.broadcast_to(
                              c, x.array.shape)])

    def mean(self, x, axis):
        r, count = ROUNDING[x.dtype], x.array.shape[axis]
        return self._made(x.dtype, x.array.mean(axis=axis, keepdims=True),
                          (x,), lambda c: [np.broadcast_to(
                              r(c / count), x.array.shape)])

    def rsqrt(self, x):
        r = ROUNDING[x.dtype]
        y = self._made(x.dtype, 1 / np.sqrt(x.array), (x,), lambda c: [
            r(r(c * -0.5) * r(r(y.array * y.array) * y.array))])
        return y

    def tanh(self, x):
        r = ROUNDING[x.dtype]
        y = self._made(x.dtype, np.tanh(x.array), (x,), lambda c: [
            r(c * r(1.0 - r(y.array * y.array)))])
        return y

    def softmax(self, x, axis):
        r = ROUNDING[x.dtype]
        e = np.exp(x.array - x.array.max(axis=axis, keepdims=True))

        def adjoint(c):
            dot = r(r(c * y.array).sum(axis=axis, keepdims=True))
            return [r(y.array * r(c - dot))]
        y = self._made(x.dtype, e / e.sum(axis=axis, keepdims=True), (x,),
                       adjoint)
        return y

    def log_softmax(self, x, axis):
        r = ROUNDING[x.dtype]
        shifted = x.array - x.array.max(axis=axis, keepdims=True)

        def adjoint(c):
            total = r(c.sum(axis=axis, keepdims=True))
            return [r(c - r(r(np.exp(y.array)) * total))]
        y = self._made(x.dtype, shifted - np.log(
            np.exp(shifted).sum(axis=axis, keepdims=True)), (x,), adjoint)
        return y


def _linear(p, x, w, b):
    """x @ broadcast(w) + broadcast(b)."""
    y = p.shared_matmul(x, w)
    return p.add(y, p.broadcast(b, y.array.shape))


def _layer_norm(p, x, g, b):
    shape = x.array.shape
    mu = p.mean(x, 2)
    d = p.sub(x, p.broadcast(mu, shape))
    var = p.mean(p.mul(d, d), 2)
    r = p.rsqrt(p.add(var, p.literal(gpt.EPS, var, var.array.shape)))
    y = p.mul(p.mul(d, p.broadcast(r, shape)), p.broadcast(g, shape))
    return p.add(y, p.broadcast(b, shape))


def _gelu(p, u):
    """0.5 * u * (1.0 + tanh(c * (u + 0.044715 * u * u * u)))."""
    shape = u.array.shape
    half = p.mul(p.literal(0.5, u, shape), u)
    cube = p.mul(p.mul(p.mul(p.literal(0.044715, u, shape), u), u), u)
    inner = p.mul(p.literal(float(np.sqrt(2 / np.pi)), u, shape),
                  p.add(u, cube))
    return p.mul(half, p.add(p.literal(1.0, u, shape), p.tanh(inner)))


def _block(p, cfg, w, layer, x, mask):
    n = lambda name: w["%s_%d" % (name, layer)]
    b, t, h, dh = x.array.shape[0], cfg.t, cfg.heads, cfg.dh
    a = _layer_norm(p, x, n("ln1_g"), n("ln1_b"))
    q, k, v = (p.transpose(p.reshape(_linear(p, a, n("w" + m), n("b" + m)),
                                     (b, t, h, dh)), perm)
               for m, perm in (("q", (0, 2, 1, 3)), ("k", (0, 2, 3, 1)),
                               ("v", (0, 2, 1, 3))))
    scores = p.matmul(q, k)
    scores = p.mul(scores, p.literal(1 / np.sqrt(dh), scores,
                                     scores.array.shape))
    scores = p.add(scores, p.broadcast(mask, scores.array.shape))
    context = p.matmul(p.softmax(scores, 3), v)
    context = p.reshape(p.transpose(context, (0, 2, 1, 3)), (b, t, cfg.d))
    x = p.add(x, p.shared_matmul(context, n("wo")))
    x = p.add(x, p.broadcast(n("bo"), x.array.shape))
    u = _linear(p, _layer_norm(p, x, n("ln2_g"), n("ln2_b")), n("w_fc"),
                n("b_fc"))
    x = p.add(x, p.shared_matmul(_gelu(p, u), n("w_proj")))
    return p.add(x, p.broadcast(n("b_proj"), x.array.shape))


def bf16_loss_and_gradients(cfg, master, token_ids, targets):
    """The step's loss and the master weights' gradients {name: array}:
    the F32 weights cast to BF16, the forward in BF16, the cross-entropy
    on the logits cast to F32, the backward by the rules above."""
    p = _Program()
    names = gpt.weight_names(cfg, tied=True)
    params = [p.parameter(master[n], "f32") for n in names]
    w = {n: p.cast(param, "bf16") for n, param in zip(names, params)}
    mask = p.cast(p.parameter(gpt.causal_mask(cfg), "f32"), "bf16")
    ids = np.asarray(token_ids, dtype=np.int64)
    x = p.gather(w["wte"], ids)
    x = p.add(x, p.broadcast(w["wpe"], x.array.shape))
    for layer in range(cfg.layers):
        x = _block(p, cfg, w, layer, x, mask)
    f = _layer_norm(p, x, w["lnf_g"], w["lnf_b"])
    logits = p.cast(p.shared_matmul(f, p.transpose(w["wte"], (1, 0))), "f32")
    one_hot = np.eye(cfg.v)[np.asarray(targets, dtype=np.int64)]
    picked = p.mul(p.parameter(one_hot, "f32"), p.log_softmax(logits, 2))
    nll = p.neg(p.sum(picked, 2))
    loss = p.reshape(p.mean(p.mean(nll, 1), 0), ())
    grads = p.tape.gradients(loss, params)
    return float(loss.array), dict(zip(names, grads))


class RoundingTrainer:
    """The tied GPT's BF16 step with float64 master weights, trained by
    torch.optim.AdamW (weight decay on the 2-D weights only), as
    TorchTrainer is; the weights in Kina's names and layouts."""

    def __init__(self, cfg, w, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01):
        self.cfg = cfg
        self.master = {name: torch.tensor(np.asarray(w[name]),
                                          dtype=torch.float64)
                       for name in gpt.weight_names(cfg, tied=True)}
        decay = [p for p in self.master.values() if p.dim() == 2]
        rest = [p for p in self.master.values() if p.dim() != 2]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": weight_decay},
             {"params": rest, "weight_decay": 0.0}],
            lr=lr, betas=betas, eps=eps, foreach=True)

    def loss_and_gradients(self, token_ids, targets):
        return bf16_loss_and_gradients(
            self.cfg, {n: p.numpy() for n, p in self.master.items()},
            token_ids, targets)

    def step(self, token_ids, targets):
        """One AdamW step on the batch; returns the loss before it."""
        loss, grads = self.loss_and_gradients(token_ids, targets)
        for name, p in self.master.items():
            p.grad = torch.from_numpy(grads[name])
        self.optimizer.step()
        return loss

    def weights(self):
        """{Kina weight name: np.ndarray}."""
        return {name: w.numpy().copy() for name, w in self.master.items()}
