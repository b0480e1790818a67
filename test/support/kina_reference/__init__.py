"""PyTorch references for Kina's models: the tests' support code, which the
benchmark and the notebooks use too. Importing it needs PyTorch (Debian's
python3-torch); `import kina` never imports it. The build copies it beside
the `kina` package (build/python/kina_reference).

    from kina_reference import TorchGPT, TorchTrainer, TrainableGPT
    from kina_reference import storylm0_forward
    from kina_reference import RoundingTrainer, bf16_round  # BF16 step
"""

from .torch_gpt import TorchGPT, TorchTrainer, TrainableGPT, named_gradients
from .bf16_gpt import RoundingTrainer, bf16_round
from .torch_storylm0 import storylm0_forward

__all__ = ["TorchGPT", "TorchTrainer", "TrainableGPT", "named_gradients",
           "RoundingTrainer", "bf16_round", "storylm0_forward"]
