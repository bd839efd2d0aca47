"""First fits around the posterior's mode (components/inference/laplace.py)."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp.components import ComponentGP
from pp_decomp.components.inference import laplace
from pp_decomp.components.inference.importance import prior_log_weights
from pp_decomp.components.inference.laplace import (
    hessian,
    laplace_covariance,
    laplace_fit,
    laplace_mode,
    prior_ess_fraction,
)
from pp_decomp.components.posterior.incremental import ess
from pp_decomp.loop.updaters.fast import _refit

BOUNDS = np.array([[0.0, 0.0], [1.0, 1.0]])


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    return X, np.sin(4 * X[:, 0]) + 0.5 * X[:, 1] + 0.05 * rng.normal(size=n)


def test_hessian_of_a_quadratic_is_its_matrix():
    A = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 3.0]])

    def log_posterior(Z, Xs, ys):
        return -0.5 * np.einsum("mi,ij,mj->m", Z - 1.0, A, Z - 1.0)

    H = hessian(log_posterior, np.array([0.2, -0.1, 0.4]), None, None)
    np.testing.assert_allclose(H, -A, atol=1e-5)
    np.testing.assert_allclose(laplace_covariance(H), np.linalg.inv(A), rtol=1e-5)


def test_a_flat_direction_gets_a_bounded_variance():
    H = -np.diag([4.0, 0.0])
    assert np.all(np.diag(laplace_covariance(H)) <= 100.0 + 1e-9)


def test_the_prior_can_serve_few_points_not_many():
    n_keep, n_prior = 128, 8192
    fraction = {}
    for n in (5, 200):
        gp = ComponentGP("matern32", 2, bounds=BOUNDS)
        mode = laplace_mode(gp, *_data(n), np.random.default_rng(0))
        fraction[n] = prior_ess_fraction(gp, mode, np.random.default_rng(1))
    assert fraction[200] * n_prior < n_keep < fraction[5] * n_prior


@pytest.mark.parametrize("n", [8, 40, 120])
def test_the_prior_ess_estimate_follows_the_likelihood_weights(n):
    # the attempt it gates weighs prior draws by their likelihood: its ESS per draw
    # is what the estimate must follow, above the threshold and below it (a Gaussian
    # prior's closed form, used before, was far above it on 40 and 120 points)
    gp = ComponentGP("matern32", 2, bounds=BOUNDS)
    X, y = _data(n)
    mode = laplace_mode(gp, X, y, np.random.default_rng(0))
    estimate = prior_ess_fraction(gp, mode, np.random.default_rng(1))
    Xs, ys = gp._set_data(X, y)
    prior = gp.sample_prior(4096, np.random.default_rng(2))
    actual = ess(prior_log_weights(gp, Xs, ys, prior, 4096, 0)) / 4096
    assert actual / 4 <= max(estimate, 1 / 4096) <= 4 * max(actual, 1 / 4096), (estimate, actual)


def test_mode_draws_agree_with_nuts_on_many_points():
    X, y = _data(150)
    lap = ComponentGP("matern32", 2, bounds=BOUNDS)
    assert laplace_fit(lap, X, y, n_keep=256, rng=np.random.default_rng(0))
    d = lap.diagnostics
    assert d.inference == "importance" and d.proposal == "laplace" and d.pareto_k <= 0.7
    nuts = ComponentGP("matern32", 2, bounds=BOUNDS).fit(
        X, y, "nuts", seed=0, draws=300, tune=300, chains=2
    )
    for name in ("ls", "eta", "sigma"):
        a = np.log(getattr(lap.draws, name)).reshape(lap.draws.n_draws, -1)
        b = np.log(getattr(nuts.draws, name)).reshape(nuts.draws.n_draws, -1)
        # means within a quarter of a posterior sd, sds within 30%
        assert np.all(np.abs(a.mean(0) - b.mean(0)) <= 0.25 * b.std(0)), name
        np.testing.assert_allclose(a.std(0), b.std(0), rtol=0.3, err_msg=name)


def test_a_model_without_a_numpy_density_is_left_at_its_mode(monkeypatch):
    monkeypatch.setattr(laplace, "sampler_density", lambda gp: None)
    gp = ComponentGP("matern32", 2, bounds=BOUNDS)
    assert not laplace_fit(gp, *_data(60), n_keep=64, rng=np.random.default_rng(0))
    assert gp.diagnostics.inference == "map"


def test_a_fast_first_fit_on_many_points_runs_no_nuts():
    X, y = _data(40)
    args = dict(kernel="matern32", input_dim=2, bounds=BOUNDS, name="f", max_draws=128)
    gp = _refit(args, X, y, 0, None, (0.0, 1.0), {}, (4096, 128, 0.7), False)
    assert gp.diagnostics.inference == "importance"


def test_a_failed_mode_search_leaves_the_gp_unfitted_for_nuts(monkeypatch):
    def no_start(*args, **kwargs):
        raise RuntimeError("MAP optimisation failed from every start")

    gp = ComponentGP("matern32", 2, bounds=BOUNDS)
    monkeypatch.setattr(gp, "fit", no_start)
    assert laplace_mode(gp, *_data(60), np.random.default_rng(0)) is None
    assert gp.draws is None
