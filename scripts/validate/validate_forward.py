#!/usr/bin/env python3
"""Validates examples/storylm0_forward.kina, the unsharded reference:
its logits against NumPy and PyTorch, and the causal non-leak."""

from validation import Report, check_forward, compile_example

report = Report("StoryLM-0 unsharded forward (docs/language.md, StoryLM-0)")
module = compile_example("storylm0_forward")
check_forward(report, module, "storylm0_forward")
report.finish()
