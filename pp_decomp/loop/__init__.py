"""The ask/tell loop: optimiser, run settings, model updaters and checkpoints."""

from pp_decomp.components.inference.nuts import NutsSettings
from pp_decomp.loop.optimizer import Optimizer
from pp_decomp.loop.settings import FastSettings, RunSettings

__all__ = ["FastSettings", "NutsSettings", "Optimizer", "RunSettings"]
