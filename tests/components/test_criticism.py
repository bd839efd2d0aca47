"""Criticism of a GP's fit: PSIS-LOO and LOO-PIT against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

import pp_decomp as ppd
from pp_decomp.components.criticism import criticise, loo_gaussian, pit_distance
from pp_decomp.components.posterior.batched import cholesky_inverse
from pp_decomp.kernels import kernel_matrix


def _cov(X, ls, eta=1.0, sigma=0.1):
    K = kernel_matrix("matern52", X, X, np.array([[ls]]), np.array([eta]), None)[0]
    return K + sigma**2 * np.eye(len(X))


def _brute_loo(K, r):
    """log p(r_i | r_-i) and PIT by conditioning on the other rows."""
    lp, pit = [], []
    for i in range(len(r)):
        m = np.arange(len(r)) != i
        k, Kmm = K[i, m], K[np.ix_(m, m)]
        mu = k @ np.linalg.solve(Kmm, r[m])
        sd = np.sqrt(K[i, i] - k @ np.linalg.solve(Kmm, k))
        lp.append(norm.logpdf(r[i], mu, sd))
        pit.append(norm.cdf((r[i] - mu) / sd))
    return np.array(lp), np.array(pit)


def _data(n=14, seed=0):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(size=(n, 1)), axis=0)
    return X, np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=n)


def test_one_draw_is_exact_leave_one_out():
    X, r = _data()
    K = _cov(X, 0.3)
    lp, pit = _brute_loo(K, r)
    c = loo_gaussian(cholesky_inverse(K[None]), r)
    assert c.elpd_loo == pytest.approx(lp.sum(), rel=1e-9)
    np.testing.assert_allclose(c.pit, pit, atol=1e-10)
    assert np.isnan(c.pareto_k_max)
    tail = (pit >= 0.025) & (pit <= 0.975)
    assert c.loo_coverage == pytest.approx(tail.mean())


def test_weighted_draws_move_to_the_posterior_without_each_observation():
    """Hyperparameter draws on a grid weighted by their posterior: PSIS-LOO matches
    the exact leave-one-out mixture over the grid (prior times p(y_-i | θ))."""
    X, r = _data(n=12, seed=1)
    grid = np.linspace(0.1, 0.8, 64)
    Ks = np.stack([_cov(X, ls) for ls in grid])
    log_ml = np.array(
        [-0.5 * r @ np.linalg.solve(K, r) - 0.5 * np.linalg.slogdet(K)[1] for K in Ks]
    )
    exact = []
    for i in range(len(r)):
        m = np.arange(len(r)) != i
        lp_i = np.array([_brute_loo(K, r)[0][i] for K in Ks])
        log_ml_i = np.array(
            [
                -0.5 * r[m] @ np.linalg.solve(K[np.ix_(m, m)], r[m])
                - 0.5 * np.linalg.slogdet(K[np.ix_(m, m)])[1]
                for K in Ks
            ]
        )
        exact.append(logsumexp(log_ml_i + lp_i) - logsumexp(log_ml_i))
    c = loo_gaussian(cholesky_inverse(Ks), r, log_w=log_ml)
    assert c.elpd_loo == pytest.approx(np.sum(exact), abs=0.05)
    assert c.pareto_k_max < 0.7


def test_elpd_is_in_the_data_units_and_pit_is_not_moved_by_them():
    X, y = _data()
    a = ppd.ComponentGP("matern52").fit(X, y, "map", seed=0)
    b = ppd.ComponentGP("matern52").fit(X, 10 * y + 3, "map", seed=0)
    ca, cb = criticise(a), criticise(b)
    assert cb.elpd_loo == pytest.approx(ca.elpd_loo - len(y) * np.log(10), abs=1e-4)
    np.testing.assert_allclose(ca.pit, cb.pit, atol=1e-6)


def test_an_overconfident_model_is_found_out():
    """A rough truth fitted with a smooth kernel whose lengthscale is held long and
    noise small: its LOO intervals miss; the Matérn 1/2 fit's do not."""
    from pp_decomp import Prior
    from pp_decomp import kernels as K

    rng = np.random.default_rng(3)
    X = np.sort(rng.uniform(size=(30, 1)), axis=0)
    C = np.exp(-np.abs(X - X.T) / 0.1) + 1e-4 * np.eye(30)  # Matérn 1/2, ℓ = 0.1
    y = np.linalg.cholesky(C) @ rng.standard_normal(30)
    smooth = K.ExpQuad(ls=0.5)
    over = ppd.ComponentGP(smooth, noise=Prior("LogNormal", mu=np.log(0.01), sigma=0.05))
    over.fit(X, y, "map", seed=0)
    rough = ppd.ComponentGP(K.Matern12()).fit(X, y, "map", seed=0)
    bad, good = criticise(over), criticise(rough)
    assert bad.loo_coverage < 0.7 < 0.85 < good.loo_coverage
    assert bad.pit_distance > 0.2 > good.pit_distance
    assert good.elpd_loo > bad.elpd_loo + 10


def test_pit_distance_is_the_kolmogorov_smirnov_statistic():
    from scipy.stats import kstest

    u = np.random.default_rng(0).uniform(size=25) ** 1.5
    assert pit_distance(u) == pytest.approx(kstest(u, "uniform").statistic)


def test_a_model_without_factors_is_not_criticised():
    assert criticise(object()) is None
