"""The posterior by importance sampling from the prior: the likelihood it weights
by, when it is used, and that it is the posterior NUTS samples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from pp_decomp import ComponentGP
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.inference.importance import prior_importance_fit
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.components.posterior.incremental import log_likelihood
from pp_decomp.kernels import kernel_matrix


def _data(n, seed=0, d=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    return X, np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(n)


def test_the_weights_are_each_draws_gp_likelihood():
    rng = np.random.default_rng(0)
    X, y = _data(6, d=2)
    draws = Priors().sample("matern52", 2, 5, rng)
    ours = log_likelihood("matern52", X, y, draws, 1.0)
    for s in range(5):
        K = kernel_matrix("matern52", X, X, draws.ls[s : s + 1], draws.eta[s : s + 1], None)[0]
        K += 1.0 + (draws.sigma[s] ** 2 + JITTER) * np.eye(6)
        # the prior's small noise draws make K ill-conditioned: agreement to 1e-10, not 1e-12
        assert ours[s] == pytest.approx(multivariate_normal(np.zeros(6), K).logpdf(y), rel=1e-10)


def test_used_on_a_few_points_and_refused_where_the_prior_is_a_poor_proposal():
    gp = ComponentGP("se", 1, name="f", max_draws=128)
    X, y = _data(5)
    assert prior_importance_fit(gp, X, y, 32768, 128, 0.7, np.random.default_rng(1))
    d = gp.diagnostics
    assert d.inference == "importance" and d.n_draws == 128 and d.ess_bulk_min >= 128
    assert gp.draws.n_draws == 128 and not d.problems()
    X, y = _data(60)
    wide = Priors(ls_family="lognormal")  # the inverse gamma's mass is close enough at 60
    other = ComponentGP("se", 1, name="g", priors=wide)
    assert not prior_importance_fit(other, X, y, 32768, 128, 0.7, np.random.default_rng(1))


def test_it_is_the_posterior_nuts_samples():
    X, y = _data(5, seed=3)
    sir = ComponentGP("se", 1, max_draws=2000)
    # the weights' ESS is about 2800 of 2**17 here
    assert prior_importance_fit(sir, X, y, 2**17, 2000, 0.7, np.random.default_rng(2))
    nuts = ComponentGP("se", 1, max_draws=4000).fit(X, y, "nuts", draws=1000, seed=4)
    assert nuts.diagnostics.converged
    for name in ("ls", "eta", "sigma"):
        a, b = np.log(getattr(sir.draws, name)).ravel(), np.log(getattr(nuts.draws, name)).ravel()
        # Monte Carlo error: about 0.05 sd for an ESS of ~400 on either side
        assert abs(a.mean() - b.mean()) < 0.15 * b.std(), (name, a.mean(), b.mean(), b.std())
        assert 0.8 < a.std() / b.std() < 1.25, name


def test_a_draw_whose_covariance_is_not_positive_definite_weighs_nothing():
    from pp_decomp.components.posterior.batched import gaussian_log_likelihood

    X, y = _data(4)
    good = np.eye(4) + 0.5
    batch = np.stack([good, -np.eye(4), 2.0 * good])
    values = gaussian_log_likelihood(batch, y)
    assert values[1] == -np.inf
    assert values[0] == pytest.approx(gaussian_log_likelihood(good, y), rel=1e-12)
    assert values[2] == pytest.approx(multivariate_normal(np.zeros(4), 2.0 * good).logpdf(y))


def test_log_likelihood_after_is_the_conditional_likelihood(rng):
    """``log p(y[n0:] | y[:n0])`` from one factor of all rows equals the difference
    of the two marginal likelihoods, per draw."""
    from pp_decomp.components.posterior.batched import (
        factorise,
        gaussian_log_likelihood,
        log_likelihood_after,
    )

    X = rng.uniform(size=(9, 2))
    y = np.sin(3 * X[:, 0]) + rng.normal(0, 0.1, 9)
    d2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    K = np.stack([np.exp(-0.5 * d2 / ls**2) + 0.01 * np.eye(9) for ls in (0.2, 0.5, 1.3)])
    L_inv, _, log_ml = factorise(K, y)
    for n0 in (0, 4, 9):
        want = log_ml - gaussian_log_likelihood(K[:, :n0, :n0], y[:n0]) if n0 else log_ml
        np.testing.assert_allclose(log_likelihood_after(L_inv, y, n0), want, rtol=1e-10, atol=1e-9)
    with pytest.raises(ValueError, match="n0 must lie in 0..9; got 10"):
        log_likelihood_after(L_inv, y, 10)


def test_the_weights_in_chunks_are_the_weights_at_once_and_a_short_pilot_stops_early(
    monkeypatch,
):
    from pp_decomp.components.inference import importance

    gp = ComponentGP("matern32", 2, name="f")
    X, y = _data(30, d=2)
    Xs, ys = gp._set_data(X, y)
    prior = gp.sample_prior(3000, np.random.default_rng(2))
    whole = log_likelihood(gp.posterior_kernel, Xs, ys, prior, gp.mean_var)
    monkeypatch.setattr(importance, "CHUNK_BYTES", 8 * 30 * 30 * 100)  # chunks of 100 draws
    chunked = importance.prior_log_weights(gp, Xs, ys, prior, 3000, n_keep=1)
    np.testing.assert_allclose(chunked, whole, rtol=1e-13)  # batch sizes move the last bit
    calls = []
    real = importance.draw_log_likelihood
    monkeypatch.setattr(importance, "draw_log_likelihood", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(importance, "PILOT", 500)
    # 30 points: the posterior is far narrower than the prior, its ESS nowhere near 2900
    assert importance.prior_log_weights(gp, Xs, ys, prior, 3000, n_keep=2900) is None
    assert len(calls) == 5  # the pilot's chunks only
