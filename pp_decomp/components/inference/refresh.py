"""A GP's hyperparameter posterior refreshed from its previous draws by importance sampling.

Between two refits of the fast path (:mod:`pp_decomp.loop.updaters.fast`) a few
observations arrive and the posterior moves little: the previous posterior's
draws, reweighted by those observations, already sit where the new one is.
A proposal built from them, an equal mixture of

* a kernel density estimate, a multivariate Student-t (``ν = 4``) around each
  of the ``S`` draws with the draws' covariance ``Σ`` times ``h²``
  (Silverman's factor ``h = (4 / (k + 2))^{1/(k + 4)} S^{-1/(k + 4)}``), which
  keeps every mode the draws hold, and
* one multivariate t with the draws' mean and covariance (defensive, wider),

gives ``M = 4096`` draws ``z_m`` in the sampler's unconstrained space, weighted
by ``w_m ∝ p(z_m | y) / q(z_m)`` with the exact posterior on all the data; a
systematic resample of them is a posterior sample (sampling importance
resampling, Rubin 1988), with no NUTS run.

It is used only where it is reliable, by the checks a NUTS fit whose chains are
weighed must pass (:mod:`pp_decomp.components.inference.reweight`): the Pareto ``k̂`` of
the weights at most 0.7 and their ESS at least the ESS a NUTS fit must reach
(:data:`~pp_decomp.components.diagnostics.CONVERGENCE`). Where the first ``M`` draws
fall short but their ESS is at least 20 (they have found where the posterior
is), the proposal is built again around a resample of them and ``M`` new draws
are weighed (one adaptation, as in population Monte Carlo, Cappé et al.
2004): the posterior has moved since the draws were made, and the first
weights show where to. Otherwise the refit runs NUTS. In flu's 100-step
perf run (``pp-decomp perf --case flu``) 29 refits were made so (worst ``k̂``
0.55) and 19 ran NUTS. A mode the previous draws never visited stays unknown;
the loop therefore runs NUTS at least every few refits
(``FastSettings.max_refreshes``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from pp_decomp.components.diagnostics import CONVERGENCE, FitDiagnostics
from pp_decomp.components.inference.reweight import N_PROPOSAL, importance_weights, reliable
from pp_decomp.components.posterior.incremental import resample
from pp_decomp.validate import check_positive_int

DF = 4.0
RIDGE = 1e-8  # keeps the covariance of near-identical draws positive definite
STAGES = 2  # the proposal, and once adapted to its own weights
ADAPT_ESS = 20.0  # weights this degenerate have not found the posterior: NUTS


def _t_log_norm(k: int, log_det: float) -> float:
    """The log normalising constant of a k-variate t with ``DF`` and ``log|shape|``."""
    return (
        math.lgamma((DF + k) / 2)
        - math.lgamma(DF / 2)
        - 0.5 * k * math.log(DF * math.pi)
        - 0.5 * log_det
    )


def draws_proposal(
    Z: np.ndarray, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` draws of the proposal built from draws ``Z (S, k)`` (module docstring)
    and their log densities: (n, k), (n,)."""
    S, k = Z.shape
    mean = Z.mean(0)
    L = np.linalg.cholesky(np.cov(Z.T).reshape(k, k) + RIDGE * np.eye(k))
    h = (4.0 / (k + 2)) ** (1.0 / (k + 4)) * S ** (-1.0 / (k + 4))
    n_kde = rng.binomial(n, 0.5)
    centres = np.vstack([Z[rng.integers(0, S, n_kde)], np.broadcast_to(mean, (n - n_kde, k))])
    width = np.r_[np.full(n_kde, h), np.ones(n - n_kde)][:, None]
    u = rng.standard_normal((n, k)) @ L.T / np.sqrt(rng.chisquare(DF, (n, 1)) / DF)
    Zq = centres + width * u

    log_det = 2.0 * np.log(np.diag(L)).sum()
    W = np.linalg.solve(L, Zq.T).T  # whitened proposal draws: (n, k)
    Wz = np.linalg.solve(L, Z.T).T  # whitened centres: (S, k)
    d2_pooled = ((W - np.linalg.solve(L, mean)) ** 2).sum(1)
    d2_kde = (W**2).sum(1)[:, None] - 2.0 * W @ Wz.T + (Wz**2).sum(1)[None, :]
    d2_kde = np.maximum(d2_kde, 0.0) / h**2
    log_pooled = _t_log_norm(k, log_det) - 0.5 * (DF + k) * np.log1p(d2_pooled / DF)
    log_kernel = _t_log_norm(k, log_det + 2 * k * math.log(h)) - 0.5 * (DF + k) * np.log1p(
        d2_kde / DF
    )
    log_kde = np.logaddexp.reduce(log_kernel, axis=1) - math.log(S)
    return Zq, np.logaddexp(log_pooled, log_kde) - math.log(2.0)


def sampler_density(gp):
    """``(log_posterior, to_draws)`` of ``gp``'s sampler in its unconstrained space,
    or ``None`` where its structure has no numpy density: ``log_posterior(Z, Xs,
    ys)`` is the log density NUTS samples at the rows of ``Z (M, k)`` on scaled
    data, ``to_draws(Z)`` the draws those rows are. A GP class with a density of
    its own gives it as ``numpy_density()`` (the additive GP)."""
    if hasattr(gp, "numpy_density"):
        return gp.numpy_density()
    cm = gp._compiled()
    if not hasattr(cm, "log_posterior"):
        return None

    def to_draws(Z):
        parts = cm.unflatten(np.atleast_2d(Z)).items()
        named = {
            n.removesuffix("_log__"): np.exp(v) if n.endswith("_log__") else v for n, v in parts
        }
        return gp.draws_type(**named)

    return cm.log_posterior, to_draws


def _weighed(log_posterior, Zq, log_q, Xs, ys, grow) -> tuple[np.ndarray, float, float]:
    """Importance weights, ESS and ``k̂`` of the proposal draws ``Zq``: all of them,
    or (``grow=(first, step)``) of the shortest prefix of ``first + i · step``
    draws whose weights pass, else of all."""
    if grow is None:
        return importance_weights(log_posterior(Zq, Xs, ys), log_q)
    first, step = grow
    log_p = np.empty(0)
    for m in [*range(min(first, len(Zq)), len(Zq), step), len(Zq)]:
        log_p = np.concatenate([log_p, log_posterior(Zq[len(log_p) : m], Xs, ys)])
        logw, ess_, k = importance_weights(log_p, log_q[:m])
        if reliable(ess_, k, CONVERGENCE.ess_min):
            break
    return logw, ess_, k


def refresh_fit(
    gp,
    X,
    y,
    previous,
    n_keep: int,
    rng: np.random.Generator,
    n_proposal: int = N_PROPOSAL,
    proposal: str = "posterior",
    grow: tuple[int, int] | None = None,
) -> bool:
    """Condition ``gp`` on ``n_keep`` draws of its posterior on ``(X, y)`` by
    importance sampling from a proposal around ``previous`` (draws of an earlier
    posterior, on the model scale of ``gp`` fitted to ``(X, y)``), if the weights
    pass the checks (module docstring); returns whether they did.

    ``gp.diagnostics`` then has ``inference="importance"``, ``proposal`` (what
    ``previous`` are: ``"posterior"`` draws, or ``"laplace"`` ones), the weights'
    ESS (of the draws weighed: ``n_proposal``, or fewer under ``grow``) and their ``k̂``.

    ``grow=(first, step)``: weigh the first ``first`` proposal draws, then
    ``step`` more at a time, and stop as soon as the weights pass (every density
    costs a factorisation of ``K``: on many points that is the fit's cost).
    """
    if grow is not None:
        grow = (check_positive_int(grow[0], "grow[0]"), check_positive_int(grow[1], "grow[1]"))
    start = time.perf_counter()
    density = sampler_density(gp)
    if density is None:
        return False
    log_posterior, to_draws = density
    Xs, ys = gp._set_data(X, y)
    Z = gp._unconstrained(previous, gp._compiled())
    for _ in range(STAGES):
        Zq, log_q = draws_proposal(Z, n_proposal, rng)
        if grow is not None:  # in random order, so that every prefix is a sample of q
            order = rng.permutation(n_proposal)
            Zq, log_q = Zq[order], log_q[order]
        logw, ess_, k = _weighed(log_posterior, Zq, log_q, Xs, ys, grow)
        Zq = Zq[: len(logw)]
        if reliable(ess_, k, CONVERGENCE.ess_min):
            break
        if ess_ < ADAPT_ESS:
            return False
        Z = Zq[resample(logw, rng, len(Z))]  # the next proposal's centres
    else:
        return False
    gp.condition(X, y, to_draws(Zq[resample(logw, rng, n_keep)]))
    gp.diagnostics = FitDiagnostics(
        "importance",
        n_keep,
        ess_bulk_min=ess_,
        ess_tail_min=ess_,
        pareto_k=k,
        proposal=proposal,
        seconds=time.perf_counter() - start,
    )
    return True
