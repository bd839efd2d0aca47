"""Maximising additive UCB acquisitions: group by group, or by max-sum on a junction tree.

With group posteriors ``μ_j, σ_j`` of an additive GP and ``β_t``:

* Add-GP-UCB (Kandasamy et al. 2015, eq. 6, Alg. 1): ``φ̃(x) = Σ_j φ_j(x^(j))``,
  ``φ_j = μ_j + √β_t σ_j``; for disjoint groups each ``φ_j`` is maximised on its
  own ``d_j``-dimensional box.
* G-Add-GP-UCB (Rolland et al. 2018, eq. 5-7, Alg. 1-2): the same sum over the
  maximal cliques of a dependency graph, whose groups overlap; on a grid of
  ``L`` levels per variable its exact maximiser is found by max-sum message
  passing on a junction tree (:func:`pp_decomp.optim.maxsum.maximize_factors`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from pp_decomp.additive.structure import DECOMPOSITION_SEARCHES
from pp_decomp.composition.core import ucb
from pp_decomp.optim import maximize_box
from pp_decomp.optim.maxsum import maximize_factors
from pp_decomp.space import Box
from pp_decomp.validate import (
    SeedLike,
    as_generator,
    check_choice,
    check_nonnegative,
    check_positive_int,
)

_MAX_TABLE = 2_000_000  # grid points of one clique's table


@dataclass(frozen=True)
class AdditiveSettings:
    """Settings of the additive strategies (``add-gp-ucb*``, ``g-add-gp-ucb*``).

    Parameters
    ----------
    max_group_size : int, optional
        ``d`` of Add-GP-UCB's random decompositions (default ``min(D, 3)``).
    n_cyc : int
        Relearn the structure (and hyperparameters) every ``n_cyc`` steps
        (Kandasamy: 25; Rolland: 30).
    n_decompositions : int, optional
        Random decompositions scored per relearning (default ``D``).
    levels : int
        Grid levels per variable for message passing.
    gibbs_evals : int
        Likelihood evaluations per Gibbs run (Rolland's ``N_Gibbs``).
    edge_prob : float
        Prior probability ``p`` of an edge.
    max_clique : int
        Largest group the Gibbs sampler may create.
    ls_grid, sigma_grid : tuple of float
        Discrete lengthscales (unit-scaled inputs) and noise sds (standardised
        outputs) for the Gibbs sampler.
    decomposition_search : {"swap", "random"}
        Add-GP-UCB's search over decompositions at each relearning: the best of
        ``n_decompositions`` random partitions followed by a hill-climb over
        swaps of two dimensions (``"swap"``, default; :func:`learn_decomposition`),
        or the best random partition alone (``"random"``, the paper's, which the
        ``kandasamy2015`` preset keeps). Why: docs/design.md, "Why these defaults".
    shared_hyperparameters : bool
        Add-GP-UCB fits one lengthscale and one amplitude for every group, as
        Kandasamy et al. (2015, §5) do; ``False`` fits a lengthscale per
        dimension and an amplitude per group (``D + M + 1`` hyperparameters,
        which the data of a learnt decomposition cannot pin down). Rolland's
        Gibbs sampler always samples one lengthscale per dimension.
    reweight : bool
        Under full Bayes (Add-GP-UCB), weigh the hyperparameter draws of the last
        fit by every observation since, refit them (by importance sampling
        around them, else NUTS) when the weights fail their checks, and
        integrate the acquisition over a resample of 32
        (:mod:`pp_decomp.loop.updaters.additive`); ``False`` uses a relearning's
        NUTS draws, all and unweighed, until the next relearning.
    """

    max_group_size: int | None = None
    n_cyc: int = 25
    n_decompositions: int | None = None
    levels: int = 25
    gibbs_evals: int = 200
    edge_prob: float = 0.5
    max_clique: int = 3
    ls_grid: tuple = (0.05, 0.1, 0.2, 0.4, 0.8)
    sigma_grid: tuple = (0.01, 0.03, 0.1, 0.3)
    shared_hyperparameters: bool = True
    decomposition_search: str = "swap"
    reweight: bool = True

    def __post_init__(self):
        check_positive_int(self.n_cyc, "n_cyc")
        check_positive_int(self.levels, "levels", minimum=2)
        check_positive_int(self.gibbs_evals, "gibbs_evals")
        check_positive_int(self.max_clique, "max_clique")
        if self.max_group_size is not None:
            check_positive_int(self.max_group_size, "max_group_size")
        if not 0.0 < self.edge_prob < 1.0:
            raise ValueError(f"edge_prob must lie in (0, 1); got {self.edge_prob!r}")
        if not isinstance(self.shared_hyperparameters, bool | np.bool_):
            raise ValueError(
                f"shared_hyperparameters must be True or False; got {self.shared_hyperparameters!r}"
            )
        object.__setattr__(self, "shared_hyperparameters", bool(self.shared_hyperparameters))
        if not isinstance(self.reweight, bool | np.bool_):
            raise ValueError(f"reweight must be True or False; got {self.reweight!r}")
        object.__setattr__(self, "reweight", bool(self.reweight))
        check_choice(self.decomposition_search, "decomposition_search", DECOMPOSITION_SEARCHES)
        for name in ("ls_grid", "sigma_grid"):
            values = np.asarray(getattr(self, name), dtype=float)
            if values.ndim != 1 or len(values) == 0 or np.any(~np.isfinite(values) | (values <= 0)):
                raise ValueError(f"{name} must be a non-empty sequence of numbers > 0")
            object.__setattr__(self, name, tuple(float(v) for v in values))


def _check_box(domain) -> Box:
    if not isinstance(domain, Box):
        raise ValueError("additive strategies need a Box domain (continuous inputs)")
    if domain.A is not None:
        raise ValueError(
            "additive strategies maximise group by group, which linear constraints "
            "coupling the groups would break: give a box without A, b"
        )
    return domain


def _embed(Z: np.ndarray, dims, D: int, fill: np.ndarray) -> np.ndarray:
    X = np.broadcast_to(fill, (len(Z), D)).copy()
    X[:, list(dims)] = Z
    return X


def add_gp_ucb_maximize(model, beta: float, domain, seed: SeedLike = None, method: str = "auto"):
    """Maximise Add-GP-UCB group by group (Kandasamy Alg. 1; groups must be disjoint).

    Parameters
    ----------
    model : AdditiveGP (fitted)
    beta : float
    domain : Box without linear constraints

    Returns
    -------
    x : (D,) array
        Each group's coordinates maximise ``μ_j + √β σ_j`` on the group's box;
        coordinates in no group (which do not affect the model) are drawn uniformly.
    value : float
        ``Σ_j max φ_j``.
    """
    box = _check_box(domain)
    beta = check_nonnegative(beta, "beta")
    rng = as_generator(seed)
    D = box.dim
    seen = [v for g in model.groups for v in g]
    if len(seen) != len(set(seen)):
        raise ValueError("add_gp_ucb_maximize needs disjoint groups; use g_add_gp_ucb_maximize")
    x = box.lower + rng.uniform(size=D) * (box.upper - box.lower)
    total = 0.0
    for j, g in enumerate(model.groups):
        dims = list(g)

        def phi(Z, j=j, dims=dims):
            mean, var = model.predict_groups(_embed(Z, dims, D, x), groups=[j])
            return ucb(mean[0], beta, var=var[0])

        sub = Box(box.lower[dims], box.upper[dims])
        z, v = maximize_box(phi, sub, seed=rng, method=method, n_raw=512, n_starts=4)
        x[dims] = z
        total += v
    return x, total


def g_add_gp_ucb_maximize(model, beta: float, domain, levels: int = 25):
    """Exact maximiser of ``Σ_c μ_c + √β σ_c`` over a grid, by max-sum message passing.

    Each group (a maximal clique of the dependency graph) contributes one table
    over its variables' ``levels`` grid values; :func:`pp_decomp.optim.maxsum.maximize_factors`
    triangulates, builds the junction tree, assigns each table to exactly one
    clique (Rolland eq. 7) and passes max-marginals.

    Returns
    -------
    x : (D,) array on the grid, value : float (the maximum of the summed acquisition)
    """
    box = _check_box(domain)
    beta = check_nonnegative(beta, "beta")
    L = check_positive_int(levels, "levels", minimum=2)
    D = box.dim
    grids = [np.linspace(lo, hi, L) for lo, hi in zip(box.lower, box.upper, strict=True)]
    fill = (box.lower + box.upper) / 2
    factors = {}
    for j, g in enumerate(model.groups):
        if L ** len(g) > _MAX_TABLE:
            raise ValueError(
                f"group {g} needs a table of {L}^{len(g)} points; lower levels or max_clique"
            )
        Z = np.array(list(itertools.product(*[grids[v] for v in g])))
        vals = np.empty(len(Z))
        for s in range(0, len(Z), 4096):
            mean, var = model.predict_groups(_embed(Z[s : s + 4096], g, D, fill), groups=[j])
            vals[s : s + 4096] = ucb(mean[0], beta, var=var[0])
        factors[tuple(g)] = vals.reshape((L,) * len(g))
    idx, value = maximize_factors(factors, [L] * D)
    return np.array([grids[d][i] for d, i in enumerate(idx)]), float(value)
