"""Component GPs, by concept:

* :mod:`~pp_decomp.components.gp`: the GP classes (``ComponentGP`` and its engines for
  kernel expressions and a user's PyMC model), their PyMC models, priors, densities;
* :mod:`~pp_decomp.components.inference`: MAP, NUTS (nutpie) and importance sampling of
  the hyperparameters;
* :mod:`~pp_decomp.components.posterior`: the draws and the batched posterior over them;
* :mod:`~pp_decomp.components.correlated`: J correlated outputs as one GP.
"""

from pp_decomp.components.correlated.model import CorrelatedComponents
from pp_decomp.components.correlated.posterior import CoregionDraws

# ComponentGP's variants (kernel expressions, a user's PyMC model, a learned output
# warp) register on import
from pp_decomp.components.gp import kernel_gp, pymc_gp, warped  # noqa: F401, E402
from pp_decomp.components.gp.gp import ComponentGP
from pp_decomp.components.gp.known import KnownKernels
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.posterior.batched import GPPosterior, mixture_moments
from pp_decomp.components.posterior.draws import HyperDraws

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
