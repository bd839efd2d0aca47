"""Additive GPs over (possibly overlapping) groups of input dimensions.

One observed output ``y = f(x) + ε`` with ``f = Σ_j f_j(x^(j))`` (Kandasamy et
al. 2015; Rolland et al. 2018), as opposed to decomposed feedback where every
``f_j`` is observed. Every group posterior uses the full ``K⁻¹``.
"""

from pp_decomp.additive.acquisition import (
    AdditiveSettings,
    add_gp_ucb_maximize,
    g_add_gp_ucb_maximize,
)
from pp_decomp.additive.gp import AdditiveDraws, AdditiveGP, AdditivePosterior
from pp_decomp.additive.structure import (
    correct_connections,
    correct_separations,
    gibbs_structure,
    graph_groups,
    learn_decomposition,
    log_marginal_likelihood,
    random_decomposition,
)

__all__ = [
    "AdditiveDraws",
    "AdditiveGP",
    "AdditivePosterior",
    "AdditiveSettings",
    "add_gp_ucb_maximize",
    "correct_connections",
    "correct_separations",
    "g_add_gp_ucb_maximize",
    "gibbs_structure",
    "graph_groups",
    "learn_decomposition",
    "log_marginal_likelihood",
    "random_decomposition",
]
