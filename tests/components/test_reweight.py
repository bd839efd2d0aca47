"""NUTS chains weighed by importance sampling: the proportions of modes the
chains cannot, the checks that refuse a poor proposal, and a fit that uses it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from pp_decomp import ComponentGP
from pp_decomp.components.gp.density import constants, log_densities, log_density
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.inference.reweight import reweight_chains

A, B = np.array([0.0, 0.0]), np.array([3.0, 1.0])


def _two_modes(Z):
    """0.75 N(A, 0.2² I) + 0.25 N(B, 0.3² I)."""
    a = multivariate_normal(A, 0.04 * np.eye(2)).logpdf(Z) + np.log(0.75)
    b = multivariate_normal(B, 0.09 * np.eye(2)).logpdf(Z) + np.log(0.25)
    return np.logaddexp(a, b)


def _chains(centres, rng, draws=300):
    return np.stack([c + 0.2 * rng.standard_normal((draws, 2)) for c in centres])


def test_chains_in_two_modes_are_weighed_in_the_posteriors_proportions():
    rng = np.random.default_rng(0)
    # three chains in the minor mode, one in the major: pooled, they say 25% / 75%
    Z = _chains([B, B, B, A], rng)
    draws, ess, k = reweight_chains(Z, _two_modes, 4000, rng, 400.0)
    near_a = np.mean(np.linalg.norm(draws - A, axis=1) < 1.0)
    assert near_a == pytest.approx(0.75, abs=0.03)
    assert ess >= 400 and k <= 0.7


def test_a_poor_proposal_is_refused():
    rng = np.random.default_rng(1)
    # chains far from all the posterior's mass: the weights fail their checks
    far = _chains([A + 8.0, A + 9.0], rng)
    assert reweight_chains(far, _two_modes, 1000, rng, 400.0) is None
    # chains too short to fit a covariance to propose nothing
    assert reweight_chains(_chains([A, B], rng, draws=3), _two_modes, 6, rng, 1.0) is None
    # and so does a proposal that finds the posterior in too few of its draws
    assert reweight_chains(_chains([A, B], rng), _two_modes, 1000, rng, 4000.0) is None


@pytest.mark.parametrize("kernel", ["se", "matern52", "matern32", "rq"])
def test_the_weights_use_the_density_nuts_samples(kernel):
    rng = np.random.default_rng(2)
    X, y = rng.uniform(size=(9, 2)), rng.standard_normal(9)
    prm = constants(kernel, 2, Priors(), 0.5)
    Z = rng.normal(size=(6, 5 if kernel == "rq" else 4))
    Z[0, :2] = 12.0  # lengthscales e^12: every point alike, K still positive definite
    Z[1, 3] = -40.0  # noise e^-40 with identical inputs below: not positive definite
    X[1] = X[0]
    Z[1, :2] = 40.0
    ours = log_densities(Z, X, y, prm)
    for z, v in zip(Z, ours, strict=True):
        assert v == pytest.approx(log_density(z, X, y, prm, True)[0], rel=1e-12)


def test_a_fit_whose_chains_fall_short_is_reweighted_and_keeps_its_chains(rng):
    X = rng.uniform(size=(15, 1))
    y = np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(15)
    gp = ComponentGP("se", 1, name="f", max_draws=128)
    # 4 x 60 draws cannot reach an ESS of 400: the first repair weighs the chains
    gp.fit(X, y, "nuts", draws=60, tune=100, chains=4, repairs=2, seed=4)
    d = gp.diagnostics
    assert d.reweighted and d.converged and d.attempts == 1 and not d.first_ok
    assert d.pareto_k <= 0.7 and d.ess_bulk_min >= 400 and not d.problems()
    assert gp.idata.posterior.sizes["chain"] == 4  # the chains as NUTS ran them
    assert gp.idata["reweighted_posterior"].sizes["draw"] == 240
    assert gp.draws.n_draws == 128
    table = gp.summary()  # the columns of a NUTS fit's table, for the draws in use
    assert set(table.columns) >= {"mean", "sd", "r_hat", "ess_bulk", "ess_tail"}
    assert np.all(table["ess_bulk"] == d.ess_bulk_min) and table["r_hat"].isna().all()
    # the same posterior as a long converged run, to Monte Carlo error
    ref = ComponentGP("se", 1, name="f", max_draws=128)
    ref.fit(X, y, "nuts", draws=1000, tune=300, chains=4, repairs=0, seed=5)
    for name in ("ls", "eta", "sigma"):
        ours = np.log(getattr(gp.draws, name)).ravel()
        theirs = np.log(ref.idata.posterior[name].values).ravel()
        assert abs(ours.mean() - theirs.mean()) < 0.25 * theirs.std(), name
