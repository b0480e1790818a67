#!/usr/bin/env python3
"""Writes the GPT-2-small-like forward in `.kina` (python/kina/models/gpt.py):
token and position embeddings, pre-norm blocks (layer norm, causal
multi-head attention, a tanh-GELU MLP, residuals), a final layer norm and
an lm_head. Defaults: 12 layers, D=768, H=12, T=128, V=32000 (about 110M
parameters), one sequence per call; smaller widths for tests. --shard
megatron adds @mesh([N]) and the Megatron placements (QKV and MLP-up
column-parallel, Wo and MLP-down row-parallel, lm_head vocab-parallel);
--shard data splits the batch instead (every weight replicated), and
--shard data+megatron does both on @mesh([2, N/2], axes=[dp, tp]).
--shard zero1 and zero3 are data parallelism on @mesh([N], axes=[dp])
with AdamW's moments split over dp (zero3: the weights too; fsdp: as
zero3, gathering them again in the backward); zero1+megatron,
zero3+megatron and fsdp+megatron do the same on data+megatron's mesh
(docs/gpt.md, "ZeRO plans").
--form train writes the training step instead: lm_head tied to wte, the
mean token cross-entropy, its reverseMode and one AdamW update
(docs/gpt.md, "Training").
--form pipeline writes the forward and loss as pipeline stages (untied
lm_head, F32 on the host), one function gpt_stage_K per virtual stage:
--stages S ranks, times 2 chunks for --schedule interleaved (--chunks
V), the blocks shared out equally; --batch is a microbatch's sequences,
--microbatches M per step. Its first lines give the command that runs it
on S MPI ranks (kina.mpi_pipeline; docs/gpt.md, "Pipeline stages")."""

import argparse
import pathlib
import sys

from kina.models import gpt

# --help says the whole docstring, its examples indented as written.
parser = argparse.ArgumentParser(
    description=__doc__,
    formatter_class=argparse.RawDescriptionHelpFormatter)
# The sizes by default (gpt.Config()) and with --tiny (gpt.Config.tiny());
# a size given on the command line wins over either.
SIZES = {"layers": "blocks", "d": "model width", "heads": "attention heads",
         "t": "context", "v": "vocabulary"}
for name, what in SIZES.items():
    parser.add_argument("--" + name, type=int, help="%s (default %d; --tiny: "
                        "%d)" % (what, getattr(gpt.Config(), name),
                                 getattr(gpt.Config.tiny(), name)))
parser.add_argument("--batch", type=int, default=1, help="sequences per call")
parser.add_argument("--form", choices=["forward", "loss", "train",
                                     "pipeline"],
                    default="forward",
                    help="the forward; with the loss and its gradients; "
                    "the whole training step (tied wte); pipeline stages")
parser.add_argument("--stages", type=int, default=2,
                    help="with --form pipeline: ranks (default 2)")
parser.add_argument("--schedule", default="1f1b",
                    choices=["gpipe", "1f1b", "interleaved", "zb-h1"],
                    help="with --form pipeline (default 1f1b)")
parser.add_argument("--chunks", type=int, default=0,
                    help="with --schedule interleaved: chunks per rank "
                    "(default 2)")
parser.add_argument("--microbatches", type=int, default=4,
                    help="with --form pipeline: microbatches per step "
                    "(default 4)")
parser.add_argument("--tiny", action="store_true",
                    help="the test sizes: 2 layers, D=64, H=4, T=16, V=512 "
                    "(sizes given explicitly still win)")
parser.add_argument("--shard", choices=gpt.PARALLEL,
                    help="Megatron placements, the batch split over the "
                    "devices (data parallel), or both on a 2 x N/2 mesh; "
                    "zero1/zero3/fsdp (and their +megatron forms): data "
                    "parallel with the moments (zero3, fsdp: and the "
                    "weights) split over the data axis")
parser.add_argument("--devices", type=int, default=2,
                    help="devices with --shard (default 2; the +megatron "
                    "plans: an even count, the mesh [2, N/2])")
parser.add_argument("--dtype", choices=gpt.DTYPES, default="f32",
                    help="bf16: mixed precision (F32 master weights cast to "
                    "BF16, activations and gradients in BF16, the loss and "
                    "AdamW in F32)")
parser.add_argument("-o", "--output")
args = parser.parse_args()
preset = gpt.Config.tiny() if args.tiny else gpt.Config()
cfg = gpt.Config(**{name: getattr(preset, name) if getattr(args, name) is None
                    else getattr(args, name) for name in SIZES},
                 b=args.batch)
if cfg.d % cfg.heads or min(cfg.layers, cfg.d, cfg.t, cfg.v, cfg.b) < 1:
    parser.error("need layers, d, t, v, batch >= 1 and heads dividing d")
mesh = args.devices if args.shard else None
if args.shard:
    try:
        gpt.check_split(cfg, args.devices, args.shard)
    except ValueError as error:
        parser.error(str(error))
parallel = args.shard or "megatron"
if args.form == "pipeline":
    if args.shard or args.dtype != "f32":
        parser.error("--form pipeline is F32 on the host: no --shard or "
                     "--dtype")
    import kina.pipeline
    try:
        schedule = kina.pipeline.schedule(args.schedule, args.stages,
                                          args.microbatches, args.chunks)
        functions = schedule.stages * schedule.chunks
        text = gpt.pipeline_source(cfg, functions)
    except (ValueError, kina.pipeline.ScheduleError) as error:
        parser.error(str(error))
    text = ("# Run one step on %d ranks (INPUTS.npz: every weight, the mask, "
            "and token_ids and targets of %d x %d sequences):\n"
            "#   mpirun -n %d python3 -m kina.mpi_pipeline THIS.kina "
            "INPUTS.npz OUTPUT.npz --pipeline %s "
            "--schedule %s --microbatches %d%s\n" % (
                schedule.stages, args.microbatches, cfg.b, schedule.stages,
                gpt.PIPELINE, args.schedule, args.microbatches,
                " --chunks %d" % schedule.chunks
                if args.schedule == "interleaved" else "")) + text
elif args.form == "train":
    text = gpt.train_source(cfg, mesh=mesh, parallel=parallel,
                            dtype=args.dtype)
elif args.form == "loss":
    text = gpt.loss_source(cfg, mesh=mesh, parallel=parallel, dtype=args.dtype)
else:
    text = gpt.source(cfg, mesh=mesh, parallel=parallel, dtype=args.dtype)
if args.output:
    pathlib.Path(args.output).write_text(text)
else:
    sys.stdout.write(text)
