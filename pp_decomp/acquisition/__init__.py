"""Acquisition rules (one small class each) and exploration schedules."""

from pp_decomp.acquisition.gpmi import GPMI
from pp_decomp.acquisition.improvement import ExpectedImprovement, ProbabilityOfImprovement
from pp_decomp.acquisition.surrogate import ComposedSurrogate, DecomposedSurrogate
from pp_decomp.acquisition.ucb import (
    DGPUCB,
    UCB,
    BetaConstant,
    BetaContinuous,
    BetaDiscrete,
    BetaKandasamy,
    BetaRolland,
    CredibleBoxUCB,
    LipschitzUCB,
    LocalLipschitzUCB,
    MonteCarloUCB,
    SmallerUCB,
    beta_from_description,
    numeric_lipschitz,
)

__all__ = [
    "DGPUCB",
    "GPMI",
    "UCB",
    "BetaConstant",
    "BetaContinuous",
    "BetaDiscrete",
    "BetaKandasamy",
    "BetaRolland",
    "CredibleBoxUCB",
    "ComposedSurrogate",
    "DecomposedSurrogate",
    "ExpectedImprovement",
    "LipschitzUCB",
    "LocalLipschitzUCB",
    "MonteCarloUCB",
    "ProbabilityOfImprovement",
    "SmallerUCB",
    "beta_from_description",
    "numeric_lipschitz",
]
