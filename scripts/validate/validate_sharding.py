#!/usr/bin/env python3
"""Validates the annotated examples (examples/storylm0_sharded_*.kina): each
is the unsharded forward with placements only, compiled through propagation
and the host form. Each equals the NumPy forward, keeps the causal
non-leak, and equals, bit for bit, the hand-written shards of its design
section (or the unsharded program); the row-parallel sum equals it to
float32 rounding."""

from validation import Report, check_forward, compile_example

report = Report("StoryLM-0 annotated once, partitioned by the compiler")
unsharded = compile_example("storylm0_forward")
# Each annotated example, and the program whose bits it must reproduce.
SAME_BITS = [
    ("storylm0_sharded_vocab", "storylm0_tp_vocab", "storylm0_tp_vocab"),
    ("storylm0_sharded_proj", "storylm0_tp_proj", "storylm0_tp_proj"),
    ("storylm0_sharded_heads", "storylm0_tp_heads", "storylm0_tp_heads"),
    ("storylm0_sharded_vocab4", "storylm0_forward", "storylm0_forward"),
    ("storylm0_sharded_2d", "storylm0_forward", "storylm0_forward"),
]
for example, by_hand, entry in SAME_BITS:
    module = compile_example(example)
    args, _ = check_forward(report, module, "storylm0_forward")
    hand_written = (unsharded if by_hand == "storylm0_forward"
                    else compile_example(by_hand))
    report.exact("%s == %s.%s, bit for bit" % (example, by_hand, entry),
                 module.storylm0_forward(*args),
                 getattr(hand_written, entry)(*args))

row = compile_example("storylm0_sharded_row")
args, _ = check_forward(report, row, "storylm0_forward")
report.close("storylm0_sharded_row == storylm0_forward to float32 rounding",
             row.storylm0_forward(*args), unsharded.storylm0_forward(*args),
             rtol=1e-5, atol=1e-6)
report.finish()
