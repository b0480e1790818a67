#!/usr/bin/env python3
"""Writes the unsharded StoryLM-0 forward (docs/language.md, "StoryLM-0") at any
width, with an @main entry, to stdout or -o FILE.

    scripts/gen_storylm.py                       # the toy widths of section 5
    scripts/gen_storylm.py --realistic -o big.kina   # T=128 H=12 Dh=64 D=768 V=32000
"""

import argparse
import sys

REALISTIC = dict(T=128, H=12, DH=64, D=768, V=32000)
TOY = dict(T=4, H=2, DH=2, D=4, V=8)


def program(T, H, DH, D, V):
    HD = H * DH
    f32 = lambda *dims: "Tensor[F32, [%s], @host]" % ", ".join(map(str, dims))
    params = [("token_ids", "Tensor[I64, [1, %d], @host]" % T),
              ("embed", f32(V, D)), ("wq", f32(D, HD)), ("wk", f32(D, HD)),
              ("wv", f32(D, HD)), ("wo", f32(HD, D)), ("lm_head", f32(D, V)),
              ("scale", f32()), ("mask", f32(T, T))]
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
    out = ["# StoryLM-0 forward at T=%d H=%d Dh=%d D=%d V=%d "
           "(scripts/gen_storylm.py)" % (T, H, DH, D, V), ""]
    out.append("fn storylm0_forward(")
    out.append(",\n".join("    %s: %s" % p for p in params) +
               ") -> %s {" % f32(1, T, V))
    width = max(len(e) for _, e, _ in body)
    for name, expr, shape in body:
        out.append("  %-9s= %-*s : %s" % (name, width, expr, shape))
    out.append("  return logits\n}\n")
    out.append("@main\nfn main() -> %s {" % f32(1, T, V))
    for name, t in params:
        out.append("  %-9s= placeholder : %s" % (name, t))
    out.append("  return storylm0_forward(%s)\n}" %
               ", ".join(n for n, _ in params))
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for key, value in TOY.items():
        parser.add_argument("--" + key.lower(), type=int, default=value)
    parser.add_argument("--realistic", action="store_true",
                        help="T=128 H=12 Dh=64 D=768 V=32000")
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    widths = REALISTIC if args.realistic else {
        k: getattr(args, k.lower()) for k in TOY}
    text = program(**widths)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
