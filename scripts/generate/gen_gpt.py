#!/usr/bin/env python3
"""Writes the GPT-2-small-like forward in `.kina` (python/kina/gpt.py):
token and position embeddings, pre-norm blocks (layer norm, causal
multi-head attention, a tanh-GELU MLP, residuals), a final layer norm and
an lm_head. Defaults: 12 layers, D=768, H=12, T=128, V=32000 (about 110M
parameters), one sequence per call; smaller widths for tests. --shard
megatron adds @mesh([N]) and the Megatron placements (QKV and MLP-up
column-parallel, Wo and MLP-down row-parallel, lm_head vocab-parallel);
--shard data splits the batch instead (every weight replicated).
--form train writes the training step instead: lm_head tied to wte, the
mean token cross-entropy, its reverseMode and one AdamW update
(docs/gpt.md, "Training")."""

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
parser.add_argument("--batch", type=int, default=1, help="sequences per call")
parser.add_argument("--form", choices=["forward", "loss", "train"],
                    default="forward",
                    help="the forward; with the loss and its gradients; "
                    "the whole training step (tied wte)")
parser.add_argument("--tiny", action="store_true",
                    help="2 layers, D=64, H=4, T=16, V=512 (tests)")
parser.add_argument("--shard", choices=["megatron", "data"],
                    help="Megatron placements, or the batch split over the "
                    "devices (data parallel)")
parser.add_argument("--devices", type=int, default=2,
                    help="mesh size with --shard (default 2)")
parser.add_argument("-o", "--output")
args = parser.parse_args()
cfg = gpt.Config.tiny() if args.tiny else gpt.Config(
    layers=args.layers, d=args.d, heads=args.heads, t=args.t, v=args.v)
cfg = gpt.Config(**dict(vars(cfg), b=args.batch))
if cfg.d % cfg.heads or min(cfg.layers, cfg.d, cfg.t, cfg.v, cfg.b) < 1:
    parser.error("need layers, d, t, v, batch >= 1 and heads dividing d")
mesh = args.devices if args.shard else None
if args.form == "train":
    text = gpt.train_source(cfg, mesh=mesh, parallel=args.shard or "megatron")
elif args.form == "loss":
    text = gpt.loss_source(cfg, mesh=mesh, parallel=args.shard or "megatron")
else:
    text = gpt.source(cfg, mesh=mesh, parallel=args.shard or "megatron")
if args.output:
    pathlib.Path(args.output).write_text(text)
else:
    sys.stdout.write(text)
