"""The models Kina's examples, tests and benchmark build: StoryLM-0 (the
tiny causal LM of docs/storylm0.md) and a GPT-2-like model whose
forward, loss and training step are written as `.kina` programs.

    from kina.models import gpt, storylm0
"""
