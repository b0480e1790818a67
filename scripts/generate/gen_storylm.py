#!/usr/bin/env python3
"""Writes the unsharded StoryLM-0 forward (docs/language.md, "StoryLM-0") at any
width, with an @main entry, to stdout or -o FILE.

    scripts/generate/gen_storylm.py                       # the toy widths (B=1 T=4 H=2 Dh=2 D=4 V=8)
    scripts/generate/gen_storylm.py --realistic -o big.kina   # T=128 H=12 Dh=64 D=768 V=32000
    scripts/generate/gen_storylm.py --shard vocab         # the same forward, annotated: lm_head split

With --shard, the forward's parameters carry mesh placements (the others
@replicated) and it returns @replicated logits; @main keeps its host
placeholders. Schemes:
    vocab    @mesh([2]): lm_head split on the vocabulary (the vocabulary split, docs/storylm0.md)
    vocab4   @mesh([4]): the same, 4 ways
    proj     @mesh([2]): wq, wk, wv split on their columns (the projection split)
    heads    @mesh([2]): q, k_t, v constrained to a head split (the head split)
    row      @mesh([2]): proj, and wo split on its rows (row-parallel Wo)
    both     @mesh([2, 2], axes=[heads, vocab]): proj over heads, vocab over vocab
"""

import argparse
import sys

REALISTIC = dict(T=128, H=12, DH=64, D=768, V=32000)
TOY = dict(T=4, H=2, DH=2, D=4, V=8)

# Each scheme: the mesh, the placements of the forward's parameters (the
# others @replicated) and of values of its body (ascriptions).
COLUMNS = "@sharded(axis=1)"
HEADS = {"q": COLUMNS, "k_t": COLUMNS, "v": COLUMNS}
SCHEMES = {
    "vocab": ("@mesh([2])", {"lm_head": COLUMNS}, {}),
    "vocab4": ("@mesh([4])", {"lm_head": COLUMNS}, {}),
    "proj": ("@mesh([2])", {"wq": COLUMNS, "wk": COLUMNS, "wv": COLUMNS}, {}),
    "heads": ("@mesh([2])", {}, HEADS),
    "row": ("@mesh([2])", {"wq": COLUMNS, "wk": COLUMNS, "wv": COLUMNS,
                           "wo": "@sharded(axis=0)"}, HEADS),
    "both": ("@mesh([2, 2], axes=[heads, vocab])",
             {"wq": "@sharded(axis=1, over=heads)",
              "wk": "@sharded(axis=1, over=heads)",
              "wv": "@sharded(axis=1, over=heads)",
              "lm_head": "@sharded(axis=1, over=vocab)"}, {}),
}


def program(T, H, DH, D, V, shard=None):
    HD = H * DH
    tensor = lambda element, dims, placement="@host": "Tensor[%s, [%s], %s]" % (
        element, ", ".join(map(str, dims)), placement)
    f32 = lambda *dims: tensor("F32", dims)
    shapes = [("token_ids", "I64", (1, T)), ("embed", "F32", (V, D)),
              ("wq", "F32", (D, HD)), ("wk", "F32", (D, HD)),
              ("wv", "F32", (D, HD)), ("wo", "F32", (HD, D)),
              ("lm_head", "F32", (D, V)), ("scale", "F32", ()),
              ("mask", "F32", (T, T))]
    params = [(name, tensor(element, dims)) for name, element, dims in shapes]
    mesh, placements, ascribed = SCHEMES[shard] if shard else (None, {}, {})
    forward_params = [
        (name, tensor(element, dims,
                      placements.get(name, "@replicated") if shard else "@host"))
        for name, element, dims in shapes]
    result = tensor("F32", (1, T, V), "@replicated" if shard else "@host")
    s = lambda *dims: "[%s]" % ", ".join(map(str, dims))
    body = [
        ("x", "gather embed token_ids", s(1, T, D)),
        ("q_flat", "x @ broadcast(wq)", s(1, T, HD)),
        ("q", "q_flat.reshape(%s).transpose([0, 2, 1, 3])" % s(1, T, H, DH),
         s(1, H, T, DH)),
        ("k_flat", "x @ broadcast(wk)", s(1, T, HD)),
        ("k_t", "k_flat.reshape(%s).transpose([0, 2, 3, 1])" % s(1, T, H, DH),
         s(1, H, DH, T)),
        ("v_flat", "x @ broadcast(wv)", s(1, T, HD)),
        ("v", "v_flat.reshape(%s).transpose([0, 2, 1, 3])" % s(1, T, H, DH),
         s(1, H, T, DH)),
        ("scores", "q @ k_t * broadcast(scale) + broadcast(mask)",
         s(1, H, T, T)),
        ("probs", "softmax(scores, axis=3)", s(1, H, T, T)),
        ("context", "probs @ v", s(1, H, T, DH)),
        ("attn", "context.transpose([0, 2, 1, 3]).reshape(%s)" % s(1, T, HD),
         s(1, T, HD)),
        ("residual", "x + attn @ broadcast(wo)", s(1, T, D)),
        ("logits", "residual @ broadcast(lm_head)", s(1, T, V)),
    ]
    out = ["# StoryLM-0 forward at T=%d H=%d Dh=%d D=%d V=%d%s "
           "(scripts/generate/gen_storylm.py)" % (T, H, DH, D, V,
                                          ", sharded: " + shard if shard else ""),
           ""]
    if mesh:
        out += [mesh, ""]
    out.append("fn storylm0_forward(")
    out.append(",\n".join("    %s: %s" % p for p in forward_params) +
               ") -> %s {" % result)
    width = max(len(e) for _, e, _ in body)
    for name, expr, shape in body:
        if name in ascribed:
            shape = "Tensor[F32, %s, %s]" % (shape, ascribed[name])
        out.append("  %-9s= %-*s : %s" % (name, width, expr, shape))
    out.append("  return logits\n}\n")
    out.append("@main\nfn main() -> %s {" % f32(1, T, V))
    for name, t in params:
        out.append("  %-9s= placeholder : %s" % (name, t))
    out.append("  return storylm0_forward(%s)\n}" %
               ", ".join(n for n, _ in params))
    return "\n".join(out) + "\n"


def main():
    # --help says the whole docstring, its examples indented as written.
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for key, value in TOY.items():
        parser.add_argument("--" + key.lower(), type=int, default=value)
    parser.add_argument("--realistic", action="store_true",
                        help="T=128 H=12 Dh=64 D=768 V=32000")
    parser.add_argument("--shard", choices=sorted(SCHEMES),
                        help="annotate the forward with mesh placements")
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    widths = REALISTIC if args.realistic else {
        k: getattr(args, k.lower()) for k in TOY}
    text = program(**widths, shard=args.shard)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
