#!/usr/bin/env python3
"""Validates examples/storylm0_tp_vocab.kina, the design's column-parallel
lm_head (the vocabulary split of docs/storylm0.md, with its checks): the
sharded logits against the unsharded forward, each lm_head shard's
[1, 4, 4] columns, and the causal non-leak."""

from validation import Report, check_forward, compile_example

report = Report("StoryLM-0, 2-way column-parallel lm_head (Section 5)")
module = compile_example("storylm0_tp_vocab")
args, reference = check_forward(report, module, "storylm0_tp_vocab")
lm_head = args[6]
residual = reference["residual"]
logits = module.tp_logits(residual, lm_head)
report.close("tp_logits(residual, lm_head) == residual @ lm_head", logits,
             reference["logits"])
for shard in range(2):
    columns = slice(4 * shard, 4 * shard + 4)
    report.close("shard %d: logits[..., %d:%d] == residual @ lm_head[:, %d:%d]"
                 % (shard, columns.start, columns.stop, columns.start,
                    columns.stop), logits[..., columns],
                 residual @ lm_head[:, columns])
report.finish()
