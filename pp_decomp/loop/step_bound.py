"""What a run's last choice saw at given inputs: the components' joint posterior
samples, the signed objective's, and the upper bound its strategy maximised (used by
:meth:`~pp_decomp.loop.Optimizer.predict`, :mod:`pp_decomp.apps.calibration` and
:mod:`pp_decomp.apps.hyper_study`)."""

from __future__ import annotations

import numpy as np

from pp_decomp.acquisition import DGPUCB, UCB, ComposedSurrogate
from pp_decomp.acquisition.surrogate import draw_moments, to_outputs
from pp_decomp.components.correlated.view import shared_joint
from pp_decomp.composition.core import coupled_normals, draw_samples, residual_correlation, ucb
from pp_decomp.loop.ask import build_context
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.network import NetworkSurrogate
from pp_decomp.problem import inverse
from pp_decomp.strategies import decomposed_bound
from pp_decomp.validate import as_generator


def component_samples(
    models: list, X: np.ndarray, n_samples: int, rng, copula: bool = False
) -> np.ndarray:
    """Pointwise posterior samples of every component at ``X``: (n_samples, m, J);
    correlated across components when they are views of one correlated model, or
    by the copula (:mod:`pp_decomp.composition.core`)."""
    joint = shared_joint(models)
    if joint is not None:
        return joint.sample(X, n_samples, rng)
    if copula:  # one joint draw per sample, normals correlated by C
        chol = np.linalg.cholesky(residual_correlation(models))
        J = len(models)
        draw = np.broadcast_to(rng.integers(0, 2**31 - 1, (n_samples, 1)), (n_samples, J))
        z = coupled_normals(rng.standard_normal((n_samples, len(X), J)), chol)
        out = np.empty(z.shape)  # (n, m, J), as the callers index it
        per_draw = [draw_moments(m, X, grad=False) for m in models]
        to_outputs(models, draw_samples(per_draw, draw, z, out=out.transpose(2, 0, 1)), draw)
        return out
    return np.stack([m.sample(X, n_samples, seed=rng) for m in models], axis=-1)


def objective_samples(
    setup: RunSetup, models: dict, X: np.ndarray, n_samples: int, rng, shared: int | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Pointwise posterior samples at ``X (m, d)`` under a run's GPs by name
    ``models``: of the signed objective ``h = sign · g``, ``(n_samples, m)``, and of the
    components in the system's units (the outcome transform inverted),
    ``(n_samples, m, J)``.

    The components are sampled jointly (:func:`component_samples`: a correlated
    model's views, or the copula) and pushed through ``g``; a network strategy
    samples each node at its parents' samples
    (:class:`~pp_decomp.network.NetworkSurrogate`; its copula, if any, estimated on
    the ``shared`` evaluations every node was fitted at first, the run's ``n``); a
    strategy with one GP of ``h`` samples it, and has no component samples (``None``)."""
    if setup.strategy.surrogate == "composed":
        return models["composed"].sample(X, n_samples, seed=rng), None
    problem = setup.model_problem
    if setup.strategy.surrogate == "network":
        m = setup.settings.model
        surrogate = NetworkSurrogate.of(problem, models, m.copula, shared, m.outcome_transform)
        F = surrogate.sample(X, n_samples, rng)  # its nodes in the system's units
        return problem.sign * problem.compose(F, X), F
    comps = [models[n] for n in problem.component_names]
    F = component_samples(comps, X, n_samples, rng, setup.settings.model.copula)
    h = problem.sign * problem.compose(F, X)  # g composed with the inverse transform
    return h, inverse(setup.settings.model.outcome_transform, F)


def ucb_bound(
    setup: RunSetup,
    state: LoopState,
    models: dict,
    t: int,
    X: np.ndarray,
    h: np.ndarray,
    beta: float,
    rng=None,
) -> np.ndarray:
    """The upper bound of ``h`` at ``X (m, d)`` that the strategy maximises: GP-UCB's
    on one GP of ``h``, or a decomposed UCB strategy's own acquisition (D-GPUCB's,
    the Lipschitz bounds, ``d-gpucb-mc``'s Monte Carlo quantile of its
    ``mc_samples`` drawn from ``rng``, the ``-min`` strategies' smaller of such a
    bound and GP-UCB's), each averaged over hyperparameter draws as the strategy
    does. For another strategy: D-GPUCB's bound for a linear ``g``, else the
    Gaussian bound ``mean + √β sd`` of the samples ``h (n, m)``. ``models``: the
    GPs by name of step ``t`` of the run (``setup``, ``state``), whose pending
    inputs are not hallucinated here."""
    if setup.strategy.surrogate == "composed":
        return UCB(ComposedSurrogate(models["composed"]), beta)(X)
    rng = as_generator(rng)
    ctx = build_context(setup, state, models, t, rng, beta=beta, hallucinate=False)
    bound = decomposed_bound(setup.strategy, ctx)
    if bound is not None:
        return bound(X)
    if setup.model_problem.linear is not None:
        return DGPUCB(ctx.decomposed, beta)(X)
    return ucb(h.mean(0), beta, sd=h.std(0))
