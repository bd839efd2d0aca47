"""Component GPs: PyMC models, hyperparameter draws and the batched posterior."""

# ComponentGP's variants (kernel expressions, a user's PyMC model) register on import
from pp_decomp.components import kernel_gp, pymc_gp  # noqa: F401, E402
from pp_decomp.components.coregion import CorrelatedComponents
from pp_decomp.components.coregion_posterior import CoregionDraws
from pp_decomp.components.draws import HyperDraws
from pp_decomp.components.gp import ComponentGP
from pp_decomp.components.known import KnownKernels
from pp_decomp.components.posterior import GPPosterior, mixture_moments
from pp_decomp.components.priors import Priors

__all__ = [
    "ComponentGP",
    "CoregionDraws",
    "CorrelatedComponents",
    "GPPosterior",
    "HyperDraws",
    "KnownKernels",
    "Priors",
    "mixture_moments",
]
