"""Criticism of a GP's fit: PSIS-LOO and LOO-PIT of its own observations.

For one hyperparameter draw ``θ_s`` the GP's leave-one-out predictive of
observation ``i`` is Gaussian and exact (Sundararajan & Keerthi 2001; Bürkner,
Gabry & Vehtari 2021 for non-factorised normal models): with
``K_s = L_s L_sᵀ`` (noise on the diagonal), ``α_s = K_s⁻¹ r`` and
``c_{s,i} = (K_s⁻¹)_{ii}``,

* ``y_i | y_{-i}, θ_s ~ N(y_i - α_{s,i} / c_{s,i}, 1 / c_{s,i})``,
* ``log p(y_i | y_{-i}, θ_s) = -½ log 2π + ½ log c_{s,i} - ½ α_{s,i}² / c_{s,i}``,
* its PIT is ``Φ(α_{s,i} / √c_{s,i})``.

Over the hyperparameter posterior (draws with weights ``w_s``) the draws are
moved from ``θ | y`` to ``θ | y_{-i}`` by Pareto-smoothed importance sampling
(arviz-stats' ``psislw``) with ratios ``w_s / p(y_i | y_{-i}, θ_s)``; its
Pareto ``k̂`` per observation says where that move is unreliable. A plug-in fit
(MAP, one draw) is exact given its ``θ̂`` and has no ``k̂``.

Example
-------
>>> import numpy as np, pp_decomp as ppd
>>> from pp_decomp.components.criticism import criticise
>>> X = np.linspace(0, 1, 12)[:, None]
>>> gp = ppd.ComponentGP("matern52").fit(X, np.sin(6 * X[:, 0]), "map", seed=0)
>>> c = criticise(gp)
>>> round(c.loo_coverage, 2) >= 0.5
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp
from scipy.stats import kstest, norm

LOO_LEVEL = 0.95  # the central LOO interval whose coverage is reported


class LooData(NamedTuple):
    """What a GP exposes for its criticism: ``L_inv (S, n, n)`` of each draw's
    ``K = L Lᵀ``, the standardised data ``r (n,)``, the draws' log weights
    ``(S,)`` or ``None`` (equal), ``log_jacobian`` (float or (n,)) from the
    model's data to ``r``, and that data ``y (n,)`` (``r = (y - ȳ) / s_y``)."""

    L_inv: np.ndarray
    r: np.ndarray
    log_w: np.ndarray | None
    log_jacobian: np.ndarray | float
    y: np.ndarray


def marginal_loo_data(gp) -> LooData | None:
    """A fitted marginal GP's :class:`LooData`: its posterior's factors and
    standardised data, equal weights, the Jacobian of its standardisation (and of
    its log transform, where it has one); ``None`` before a fit or where the
    posterior keeps no factors."""
    post = gp._posterior
    L_inv = getattr(post, "L_inv", None)
    if L_inv is None:
        return None
    jacobian = -np.log(gp.y_std)  # ỹ = (t(y) - ȳ) / s_y
    if getattr(gp, "transform", None) == "log":
        jacobian = jacobian - gp.y_train  # t(y) = log y: dt/dy = 1/y
    return LooData(L_inv, post.y, None, jacobian, gp.y_mean + gp.y_std * post.y)


@dataclass(frozen=True)
class Criticism:
    """How well a GP predicts each of its own observations left out.

    ``elpd_loo``: ``Σ_i log p(y_i | y_{-i})`` in the observations' own units
    (the transforms' Jacobians added), with its standard error ``elpd_se`` and
    its terms ``elpd_i (n,)``;
    ``pareto_k_max``: the largest PSIS ``k̂`` (NaN for one draw; above 0.7 the
    estimate for that observation is unreliable); ``pit (n,)``: the LOO-PIT
    values; ``pit_distance``: ``max_u |F_n(u) - u|`` of their ECDF against
    the uniform (0 is perfect, about ``1.36/√n`` is the 5% Kolmogorov-Smirnov
    critical value for independent values); ``pit_p``: arviz-stats'
    uniformity test p-value of the PIT values; ``loo_coverage``: the share of
    observations inside their central 95% LOO interval.
    """

    elpd_loo: float
    elpd_se: float
    elpd_i: np.ndarray
    pareto_k_max: float
    pit: np.ndarray
    pit_distance: float
    pit_p: float
    loo_coverage: float

    def record(self) -> dict:
        """The summary numbers as a step records them (without the PIT values)."""
        return {
            "elpd_loo": self.elpd_loo,
            "loo_k_max": self.pareto_k_max,
            "loo_pit_distance": self.pit_distance,
            "loo_pit_p": self.pit_p,
            "loo_coverage": self.loo_coverage,
        }


def loo_per_draw(L_inv: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-draw LOO log densities and PIT values of ``r`` from ``L⁻¹`` of
    ``K = L Lᵀ``: ``L_inv (S, n, n)``, ``r (n,)`` or one row per draw ``(S, n)``
    → ``(S, n)`` each."""
    z = L_inv @ r if r.ndim == 1 else (L_inv @ r[..., None])[..., 0]
    alpha = np.einsum("sji,sj->si", L_inv, z)  # K⁻¹ r
    c = np.einsum("sji,sji->si", L_inv, L_inv)  # diag K⁻¹: column sums of squares
    log_p = -0.5 * np.log(2 * np.pi) + 0.5 * np.log(c) - 0.5 * alpha**2 / c
    return log_p, norm.cdf(alpha / np.sqrt(c))


def loo_gaussian(
    L_inv: np.ndarray, r: np.ndarray, log_w: np.ndarray | None = None, log_jacobian=0.0
) -> Criticism:
    """PSIS-LOO and LOO-PIT of a GP's observations from its per-draw factors.

    Parameters
    ----------
    L_inv : (S, n, n) array
        ``L⁻¹`` of each draw's ``K = L Lᵀ`` (kernel, noise and jitter).
    r : (n,) array, or (S, n)
        The observations as the factors model them (standardised residuals; a row
        per draw where each draw has its own, as under a learned output warp).
    log_w : (S,) array, optional
        Log weights of the draws (unnormalised; default equal).
    log_jacobian : float, (n,) or (S, n) array
        ``log |dr_i / dy_i|``: adds to each ``log p(y_i | y_{-i})`` so that
        ``elpd_loo`` is in the units of ``y`` (``-log s_y`` for standardisation);
        per draw, it enters each draw's density before the draws are mixed.
    """
    log_p, pit_s = loo_per_draw(np.asarray(L_inv, dtype=float), np.asarray(r, dtype=float))
    S, n = log_p.shape
    if np.ndim(log_jacobian) == 2:
        log_p, log_jacobian = log_p + log_jacobian, 0.0
    if S == 1:
        elpd_i, pit, k_max = log_p[0], pit_s[0], float("nan")
    else:
        lw = np.zeros(S) if log_w is None else np.asarray(log_w, dtype=float)
        log_p, pit_s, lw = _merged(log_p, pit_s, lw - logsumexp(lw))
        smoothed, k = _psis(log_p - lw[:, None])
        elpd_i = logsumexp(smoothed + log_p.T, axis=1)
        pit = np.sum(np.exp(smoothed) * pit_s.T, axis=1)
        k_max = float(np.max(k))
    elpd_i = elpd_i + np.broadcast_to(np.asarray(log_jacobian, dtype=float), (n,))
    pit = np.clip(pit, 0.0, 1.0)
    tail = (1 - LOO_LEVEL) / 2
    return Criticism(
        elpd_loo=float(elpd_i.sum()),
        elpd_se=float(np.sqrt(n * np.var(elpd_i))),
        elpd_i=elpd_i,
        pareto_k_max=k_max,
        pit=pit,
        pit_distance=pit_distance(pit),
        pit_p=uniformity_p(pit),
        loo_coverage=float(np.mean((pit >= tail) & (pit <= 1 - tail))),
    )


def _merged(log_p, pit_s, lw):
    """Draws repeated by a resample (identical rows) as one draw with their summed
    weight: ``(log_p, pit_s, lw)`` over the distinct draws."""
    _, first, inverse = np.unique(log_p, axis=0, return_index=True, return_inverse=True)
    if len(first) == len(lw):
        return log_p, pit_s, lw
    summed = np.full(len(first), -np.inf)
    np.logaddexp.at(summed, np.ravel(inverse), lw)
    return log_p[first], pit_s[first], summed


def _psis(log_ratio_lik: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normalised PSIS log weights (n, S) and ``k̂`` (n,) for log-likelihood-like
    values ``log p_{s,i} - log w_s`` laid out (S, n): the ratios are their negation.

    An observation whose largest ratios are all equal has no tail to smooth:
    its raw weights are used and its ``k̂`` is NaN.
    """
    import warnings

    from arviz_stats.base import array_stats

    ary = np.ascontiguousarray(log_ratio_lik.T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arviz-stats warns above 0.7; k̂ is reported
        try:
            lw, k = array_stats.psislw(ary, r_eff=1.0)
        except ValueError:  # "All tail values are the same" for some observation
            lw, k = -ary.copy(), np.full(len(ary), np.nan)
            for i, row in enumerate(ary):
                try:
                    lw[i], k[i] = array_stats.psislw(row, r_eff=1.0)
                except ValueError:
                    pass
    lw = np.asarray(lw, dtype=float)
    return lw - logsumexp(lw, axis=1, keepdims=True), np.asarray(k, dtype=float)


def pit_distance(pit: np.ndarray) -> float:
    """``max_u |F_n(u) - u|`` of the ECDF of ``pit`` against the uniform (scipy's
    Kolmogorov-Smirnov statistic); NaN for no values."""
    pit = np.asarray(pit, dtype=float)
    return float(kstest(pit, "uniform").statistic) if len(pit) else float("nan")


def uniformity_p(pit: np.ndarray) -> float:
    """arviz-stats' pointwise uniformity test p-value of ``pit`` (its default method);
    NaN for fewer than 2 values."""
    import warnings

    from arviz_stats.base import array_stats

    pit = np.asarray(pit, dtype=float)
    if len(pit) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = array_stats.uniformity_test(pit, axis=-1)[0]
    return float(p)


def criticise(model, outcome_log: bool = False) -> Criticism | None:
    """:func:`loo_gaussian` of a fitted GP (``ComponentGP``, a loop's fast-path GP)
    on its training data, in its data's own units; ``None`` for a model that
    does not expose its factors (correlated and additive models).

    ``outcome_log``: the model's data are ``log y`` of the system's ``y`` (a
    loop's ``outcome_transform="log"``); ``elpd_loo`` is then in ``y``'s units.
    """
    data = loo_data_of(model)
    return None if data is None else criticise_data(data, outcome_log)


def loo_data_of(model) -> LooData | None:
    """``model.loo_data()``, or ``None`` for a model without it or before its fit."""
    loo_data = getattr(model, "loo_data", None)
    return None if loo_data is None else loo_data()


def criticise_data(data: LooData, outcome_log: bool = False) -> Criticism:
    """:func:`criticise` of a model's :class:`LooData`."""
    jacobian = np.asarray(data.log_jacobian, dtype=float) - (data.y if outcome_log else 0.0)
    # data.y (n,) broadcasts against a per-draw (S, n) Jacobian
    return loo_gaussian(data.L_inv, data.r, data.log_w, jacobian)
