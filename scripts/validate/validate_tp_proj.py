#!/usr/bin/env python3
"""Validates examples/storylm0_tp_proj.kina, the design's column-parallel
Q/K/V projections (the projection split of docs/storylm0.md, with its
checks): the column-parallel Q/K/V model against the unsharded forward, proj_q0 against
the first head's query, tp_proj against the concatenated context, and the
causal non-leak."""

from validation import Report, check_forward, compile_example

report = Report("StoryLM-0, 2-way column-parallel Q/K/V (Section 7)")
module = compile_example("storylm0_tp_proj")
args, reference = check_forward(report, module, "storylm0_tp_proj")
wq, wk, wv, scale, mask = args[2], args[3], args[4], args[7], args[8]
x = reference["x"]
report.close("proj_q0(x, wq) == first-head query q[:, 0:1]",
             module.proj_q0(x, wq), reference["q"][:, 0:1], atol=1e-6)
report.close("tp_proj(x, wq, wk, wv, scale, mask) == concatenated context",
             module.tp_proj(x, wq, wk, wv, scale, mask), reference["context"],
             atol=1e-6)
report.finish()
