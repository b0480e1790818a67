#!/usr/bin/env python3
"""Validates examples/storylm0_tp_heads.kina (Section 6): head-parallel
attention against the unsharded forward, each head's context, and the
causal non-leak."""

from validation import (Report, attention_head, check_forward,
                        compile_example)

report = Report("StoryLM-0, 2-way head-parallel attention (Section 6)")
module = compile_example("storylm0_tp_heads")
args, reference = check_forward(report, module, "storylm0_tp_heads")
scale, mask = args[7], args[8]
q, k_t, v = reference["q"], reference["k_t"], reference["v"]
context = module.tp_heads(q, k_t, v, scale, mask)
report.close("tp_heads(q, k_t, v, scale, mask) == batched-head context",
             context, reference["context"], atol=1e-6)
for head in range(2):
    h = slice(head, head + 1)
    report.close("head %d: context[:, %d] == its own attention" % (head, head),
                 context[:, h], attention_head(q[:, h], k_t[:, h], v[:, h],
                                               scale, mask), atol=1e-6)
report.finish()
