#!/usr/bin/env python3
"""Writes the GPT-2-small-like forward in `.kina` (python/kina/gpt.py):
token and position embeddings, pre-norm blocks (layer norm, causal
multi-head attention, a tanh-GELU MLP, residuals), a final layer norm and
an lm_head. Defaults: 12 layers, D=768, H=12, T=128, V=32000 (about 110M
parameters); smaller widths for tests. --shard megatron adds @mesh([N])
and the Megatron placements (QKV and MLP-up column-parallel, Wo and
MLP-down row-parallel, lm_head vocab-parallel)."""

import argparse
import pathlib
import sys

# gpt.py alone (pure Python): no build needed to write the program.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"
                       / "kina"))
import gpt  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--layers", type=int, default=12)
parser.add_argument("--d", type=int, default=768)
parser.add_argument("--heads", type=int, default=12)
parser.add_argument("--t", type=int, default=128)
parser.add_argument("--v", type=int, default=32000)
parser.add_argument("--tiny", action="store_true",
                    help="2 layers, D=64, H=4, T=16, V=512 (tests)")
parser.add_argument("--shard", choices=["megatron"])
parser.add_argument("--devices", type=int, default=2,
                    help="mesh size with --shard (default 2)")
parser.add_argument("-o", "--output")
args = parser.parse_args()
cfg = gpt.Config.tiny() if args.tiny else gpt.Config(
    layers=args.layers, d=args.d, heads=args.heads, t=args.t, v=args.v)
if cfg.d % cfg.heads or min(cfg.layers, cfg.d, cfg.t, cfg.v) < 1:
    parser.error("need layers, d, t, v >= 1 and heads dividing d")
text = gpt.source(cfg, mesh=args.devices if args.shard else None)
if args.output:
    pathlib.Path(args.output).write_text(text)
else:
    sys.stdout.write(text)
