"""pp_decomp: Bayesian optimisation with decomposed feedback, on PyMC.

Each observed component ``f_j`` gets its own PyMC marginal GP with priors on its
hyperparameters (:class:`ComponentGP`); the components are composed into a
posterior for the objective ``f = g(f_1, ..., f_J)`` (:mod:`pp_decomp.composition`).
"""

from pp_decomp._threads import pin_threads

pin_threads()

from pp_decomp.components import (  # noqa: E402
    ComponentGP,
    GPPosterior,
    HyperDraws,
    KnownKernels,
    Priors,
)
from pp_decomp.composition import EntireGP, LinearComposition  # noqa: E402
from pp_decomp.data import Observations  # noqa: E402
from pp_decomp.loop import Optimizer  # noqa: E402
from pp_decomp.problem import Problem  # noqa: E402
from pp_decomp.space import Box, CandidateSet  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Box",
    "CandidateSet",
    "Optimizer",
    "Problem",
    "ComponentGP",
    "EntireGP",
    "GPPosterior",
    "HyperDraws",
    "KnownKernels",
    "LinearComposition",
    "Observations",
    "Priors",
    "__version__",
]
