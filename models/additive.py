"""Kandasamy et al. (2015) additive trimodal functions.

``f(x) = Σ_{m=1}^{M'} f_{d'}(x^{(m)})`` over ``M'`` disjoint groups of ``d'``
coordinates of ``x`` (the other ``D - d'M'`` coordinates do not matter), with
(eq. 7, a log mixture density of three Gaussians)

``f_{d'}(z) = max(-700, log Σ_k w_k N(z; v_k, s² I))``, ``w = (0.1, 0.8, 0.1)``.

Two variants:

* ``"reference"`` (default): the function of the authors' released code
  (``get3ModalFunction.m`` and ``getAdditiveFunction.m`` in
  github.com/kirthevasank/add-gp-bandits), which produced the paper's figures.
  Every coordinate lies in ``[-1, 1]``; the paper's ``h_{d'} = 0.01 d'^{0.1}`` is
  the Gaussians' *variance* ``s²``; the centres are
  ``v_1 = (0.62, -0.38, -0.66, …)``, ``v_2 = (0.18, 0.58, -0.19, …)``,
  ``v_3 = (-0.58, -0.56, 0.62, …)`` (first two coordinates as written, the
  third value repeated in the others), the heavy mode ``v_2`` is the maximum,
  and the log density is clipped below at -700.
* ``"narrow"``: this package's first reading of the paper's text, which does not
  print the centres: ``[0, 1]`` coordinates, ``s = h_{d'}`` (a standard deviation,
  ten times narrower), centres ``0.2·1``, ``0.8·1``, ``0.5·1`` (in the order of
  ``w``), no clipping. Its bowls are ~21x steeper on the unit scale, so simple
  regrets are ~21x larger; kept so earlier results can be re-measured.

Groups are drawn at random from ``seed``. The system reports each group's value,
so the problem is also a linear decomposition (``g ≡ 1``) with ``J = M'``
components; additive methods use only the sum.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from pp_decomp.problem import Problem
from pp_decomp.space import Box
from pp_decomp.validate import check_choice, check_positive_int

WEIGHTS = np.array([0.1, 0.8, 0.1])
LOWER_CLIP = -700.0  # the reference code's FUNC_LB
VARIANTS = ("reference", "narrow")


def centres(d: int, variant: str = "reference") -> np.ndarray:
    """The modes ``v_k`` of ``f_{d'}`` in ``d`` dimensions: (3, d), ordered as ``WEIGHTS``."""
    if variant == "narrow":
        return np.array([0.2, 0.8, 0.5])[:, None] * np.ones(d)
    first_two = np.array([[0.62, -0.38], [0.18, 0.58], [-0.58, -0.56]])
    rest = np.array([-0.66, -0.19, 0.62])[:, None] * np.ones(max(d - 2, 0))
    return np.concatenate([first_two, rest], axis=1)[:, :d]


def trimodal(Z: np.ndarray, variant: str = "reference") -> np.ndarray:
    """``f_{d'}`` at the rows of ``Z (n, d')``: (n,)."""
    d = Z.shape[-1]
    s2 = 0.01 * d**0.1 if variant == "reference" else (0.01 * d**0.1) ** 2
    d2 = ((Z[..., None, :] - centres(d, variant)) ** 2).sum(-1)  # (n, 3)
    logpdf = -d2 / (2 * s2) - 0.5 * d * np.log(2 * np.pi * s2)
    value = logsumexp(logpdf, b=WEIGHTS, axis=-1)
    return np.maximum(value, LOWER_CLIP) if variant == "reference" else value


def kandasamy(seed: int = 0, D: int = 10, d: int = 3, M: int = 3, variant: str = "reference"):
    """The additive trimodal problem of dimension ``D`` with ``M`` groups of size ``d``."""
    D, d, M = (check_positive_int(v, n) for v, n in ((D, "D"), (d, "d"), (M, "M")))
    check_choice(variant, "variant", VARIANTS)
    if d * M > D:
        raise ValueError(f"d * M must be <= D; got d={d}, M={M}, D={D}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, D, d, M]))
    groups = rng.permutation(D)[: d * M].reshape(M, d)

    def components(X):
        X = np.asarray(X, dtype=float)
        return np.stack([trimodal(X[:, g], variant) for g in groups], axis=1)

    lo = -1.0 if variant == "reference" else 0.0
    best = float(trimodal(centres(d, variant)[1][None], variant)[0])
    prefix = "kandasamy" if variant == "reference" else "kandasamy-narrow"
    return Problem(
        domain=Box(np.full(D, lo), np.ones(D)),
        components=components,
        n_components=M,
        weights=np.ones(M),
        lipschitz=np.ones(M),
        maximize=True,
        optimum=M * best,
        name=f"{prefix}-{D}-{d}-{M}",
        component_names=[f"group{m}" for m in range(M)],
        description=f"additive trimodal f_{d}' over {M} groups in {D} dims "
        f"(Kandasamy 2015, {variant})",
        metadata={
            "groups": groups.tolist(),
            "source": "Kandasamy et al. 2015, eq. 7; "
            + ("the authors' released code" if variant == "reference" else "narrow reading"),
        },
    )
