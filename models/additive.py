"""Kandasamy et al. (2015) additive trimodal functions.

``f(x) = Σ_{m=1}^{M'} f_{d'}(x^{(m)})`` over ``M'`` disjoint groups of ``d'``
coordinates of ``x ∈ [0, 1]^D`` (the other ``D - d'M'`` coordinates do not
matter), with (eq. 7, the Gaussians' exponents negative as in a mixture density)

``f_{d'}(z) = log( Σ_k w_k h^{-d'} exp(-‖z - v_k‖² / (2h²)) )``,
``w = (0.1, 0.1, 0.8)``, ``h = 0.01 d'^{0.1}``.

The paper does not print ``v_1, v_2, v_3``; this module uses ``0.2·1``,
``0.5·1`` and ``0.8·1`` (the 0.8-weight mode at ``0.8·1``), so the maximum is
``M' f_{d'}(0.8·1)`` (to within the other modes' negligible tails). Groups are
drawn at random from ``seed``. The system reports each group's value, so the
problem is also a linear decomposition (``g ≡ 1``) with ``J = M'`` components;
additive methods use only the sum.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from pp_decomp.problem import Problem
from pp_decomp.space import Box
from pp_decomp.validate import check_positive_int

WEIGHTS = np.array([0.1, 0.1, 0.8])
MODES = np.array([0.2, 0.5, 0.8])


def trimodal(Z: np.ndarray) -> np.ndarray:
    """``f_{d'}`` at the rows of ``Z (n, d')``: (n,)."""
    d = Z.shape[-1]
    h = 0.01 * d**0.1
    V = MODES[:, None] * np.ones(d)  # (3, d')
    d2 = ((Z[..., None, :] - V) ** 2).sum(-1)  # (n, 3)
    return logsumexp(-d2 / (2 * h**2) - d * np.log(h), b=WEIGHTS, axis=-1)


def kandasamy(seed: int = 0, D: int = 10, d: int = 3, M: int = 3) -> Problem:
    """The additive trimodal problem of dimension ``D`` with ``M`` groups of size ``d``."""
    D, d, M = (check_positive_int(v, n) for v, n in ((D, "D"), (d, "d"), (M, "M")))
    if d * M > D:
        raise ValueError(f"d * M must be <= D; got d={d}, M={M}, D={D}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, D, d, M]))
    groups = rng.permutation(D)[: d * M].reshape(M, d)

    def components(X):
        X = np.asarray(X, dtype=float)
        return np.stack([trimodal(X[:, g]) for g in groups], axis=1)

    best = float(trimodal(np.full((1, d), MODES[2]))[0])
    return Problem(
        domain=Box(np.zeros(D), np.ones(D)),
        components=components,
        n_components=M,
        weights=np.ones(M),
        lipschitz=np.ones(M),
        maximize=True,
        optimum=M * best,
        name=f"kandasamy-{D}-{d}-{M}",
        component_names=[f"group{m}" for m in range(M)],
        description=f"additive trimodal f_{d}' over {M} groups in {D} dims (Kandasamy 2015)",
        metadata={"groups": groups.tolist(), "source": "Kandasamy et al. 2015, eq. 7"},
    )
