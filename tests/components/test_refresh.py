"""A posterior refreshed from the previous draws by importance sampling: the
proposal's density, when a refresh is used, and that it is the posterior NUTS samples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pp_decomp import ComponentGP
from pp_decomp.components.inference.refresh import DF, _weighed, draws_proposal, refresh_fit


def _data(n, seed=0, d=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    return X, np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(n)


def test_the_proposal_density_is_the_mixture_it_draws_from():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(12, 3)) @ np.diag([1.0, 0.3, 2.0])
    Zq, log_q = draws_proposal(Z, 50, np.random.default_rng(1))
    S, k = Z.shape
    C = np.cov(Z.T) + 1e-8 * np.eye(k)
    h = (4.0 / (k + 2)) ** (1.0 / (k + 4)) * S ** (-1.0 / (k + 4))
    kde = np.mean([stats.multivariate_t(loc=z, shape=h**2 * C, df=DF).pdf(Zq) for z in Z], axis=0)
    pooled = stats.multivariate_t(loc=Z.mean(0), shape=C, df=DF).pdf(Zq)
    np.testing.assert_allclose(log_q, np.log(0.5 * kde + 0.5 * pooled), rtol=1e-10)


def test_the_proposal_draws_follow_its_density():
    # a one-dimensional check of the sampler against the density it reports
    Z = np.array([[-2.0], [0.0], [0.5], [3.0]])
    Zq, log_q = draws_proposal(Z, 200_000, np.random.default_rng(2))
    edges = np.linspace(-4, 5, 10)
    counts = np.histogram(Zq[:, 0], edges)[0] / len(Zq)
    order = np.argsort(Zq[:, 0])
    x, q = Zq[order, 0], np.exp(log_q[order])
    for i in range(len(edges) - 1):
        inside = (x >= edges[i]) & (x < edges[i + 1])
        mass = np.trapezoid(q[inside], x[inside])
        assert counts[i] == pytest.approx(mass, abs=0.01)


def _previous(seed=5):
    """A NUTS posterior on 30 points, and 6 more points it has not seen."""
    X, y = _data(36, seed=seed)
    gp = ComponentGP("se", 1, max_draws=128).fit(X[:30], y[:30], "nuts", seed=seed)
    return gp, X, y


def test_a_refresh_is_used_where_its_weights_pass_and_records_them():
    prev, X, y = _previous()
    gp = ComponentGP("se", 1, name="f", max_draws=128)
    gp._set_data(X, y)
    assert prev.y_std == pytest.approx(gp.y_std, rel=0.2)  # same scale, no rescaling needed
    assert refresh_fit(gp, X, y, prev.draws, 128, np.random.default_rng(3))
    d = gp.diagnostics
    assert (d.inference, d.proposal, d.n_draws) == ("importance", "posterior", 128)
    assert d.ess_bulk_min >= 400 and d.pareto_k <= 0.7 and not d.problems()
    assert gp.draws.n_draws == 128 and len(gp.X_train) == 36


def test_a_refresh_from_draws_far_from_the_posterior_is_refused():
    prev, X, y = _previous()
    far = type(prev.draws)(ls=prev.draws.ls * 50, eta=prev.draws.eta, sigma=prev.draws.sigma * 20)
    gp = ComponentGP("se", 1, max_draws=128)
    assert not refresh_fit(gp, X, y, far, 128, np.random.default_rng(3))
    assert gp.diagnostics is None or gp.diagnostics.proposal != "posterior"


def test_it_is_the_posterior_nuts_samples():
    prev, X, y = _previous()
    refreshed = ComponentGP("se", 1, max_draws=4000)
    assert refresh_fit(refreshed, X, y, prev.draws, 4000, np.random.default_rng(4))
    nuts = ComponentGP("se", 1, max_draws=4000).fit(X, y, "nuts", draws=1000, seed=6)
    assert nuts.diagnostics.converged
    for name in ("ls", "eta", "sigma"):
        a = np.log(getattr(refreshed.draws, name)).ravel()
        b = np.log(getattr(nuts.draws, name)).ravel()
        # Monte Carlo error: about 0.05 sd for an ESS of ~400 on either side
        assert abs(a.mean() - b.mean()) < 0.15 * b.std(), (name, a.mean(), b.mean(), b.std())
        assert 0.8 < a.std() / b.std() < 1.25, name


def test_growing_weighs_the_fewest_draws_that_pass_and_all_where_none_do():
    rng = np.random.default_rng(0)
    Zq = rng.standard_normal((1024, 2))
    log_q = -0.5 * (Zq**2).sum(1)
    rows = []

    def target(scale):
        def log_p(Z, Xs, ys):
            rows.append(len(Z))
            return -0.5 * (Z**2).sum(1) / scale**2

        return log_p

    logw, ess_, k = _weighed(target(1.0), Zq, log_q, None, None, (512, 128))
    assert rows == [512] and len(logw) == 512 and ess_ == pytest.approx(512)  # q is p
    rows.clear()
    logw, ess_, k = _weighed(target(1.3), Zq, log_q, None, None, (300, 128))
    assert rows[0] == 300 and set(rows[1:]) <= {128} and 400 <= ess_ and len(logw) < 1024
    rows.clear()
    logw, ess_, k = _weighed(target(0.05), Zq, log_q, None, None, (512, 128))
    assert sum(rows) == 1024 and len(logw) == 1024 and ess_ < 400  # weighed all, failing
    full = _weighed(target(0.05), Zq, log_q, None, None, None)
    np.testing.assert_array_equal(full[0], logw)


def test_a_growth_that_is_not_two_positive_counts_is_refused_by_name():
    gp = ComponentGP("se", 1)
    X = np.linspace(0, 1, 6)[:, None]
    with pytest.raises(ValueError, match=r"grow\[1\] must be >= 1; got 0"):
        refresh_fit(gp, X, np.sin(X[:, 0]), None, 4, np.random.default_rng(0), grow=(8, 0))
