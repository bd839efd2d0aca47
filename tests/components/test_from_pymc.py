"""``ComponentGP.from_pymc``: a user's own PyMC model as a component."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pymc as pm
import pytest

import pp_decomp as ppd
from pp_decomp import Prior, Priors
from pp_decomp import kernels as K


def build(X, y):
    with pm.Model() as model:
        ls = pm.LogNormal("ls", mu=1.76, sigma=1.73, shape=2)
        eta = pm.Gamma("eta", alpha=2.0, beta=2.0)
        sigma = pm.LogNormal("sigma", mu=-4.0, sigma=1.5)
        gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.Matern52(2, ls=ls))
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma)
    return model, gp


def same_through_kernels():
    kernel = K.Matern52(
        ls=Prior("LogNormal", mu=1.76, sigma=1.73), eta=Prior("Gamma", alpha=2.0, beta=2.0)
    )
    return ppd.ComponentGP(
        kernel,
        bounds=[[0, 0], [1, 1]],
        priors=Priors(mean_sd=0.0),
        noise=Prior("LogNormal", mu=-4.0, sigma=1.5),
    )


@pytest.fixture
def data(rng):
    X = rng.random((20, 2))
    return X, np.sin(6 * X[:, 0]) + 0.3 * X[:, 1] + 0.05 * rng.normal(size=20)


def test_map_fit_and_predictions_are_the_same_model_through_kernels(data):
    X, y = data
    mine = ppd.ComponentGP.from_pymc(build, bounds=[[0, 0], [1, 1]])
    mine.fit(X, y, "map", seed=0, restarts=1)
    ref = same_through_kernels().fit(X, y, "map", seed=0, restarts=1)
    np.testing.assert_allclose(mine.draws.ls, ref.draws.ls, rtol=2e-3)
    np.testing.assert_allclose(mine.draws.sigma, ref.draws.sigma, rtol=2e-3)
    Xnew = np.random.default_rng(5).random((6, 2))
    for a, b in zip(mine.predict(Xnew), ref.predict(Xnew), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-6)
    # the batched covariance is PyMC's own
    cm = mine.model
    values = {n: mine.draws.values[n] for n in cm.names}
    K_pymc = build_cov(mine.draws)(Xnew[:3], Xnew).eval()
    np.testing.assert_allclose(cm.matrix(Xnew[:3], Xnew, values)[0], K_pymc, rtol=1e-10)


def build_cov(draws):
    return float(draws.eta[0]) ** 2 * pm.gp.cov.Matern52(2, ls=draws.ls[0])


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda X, y: pm.Model(), r"must return \(model, gp\)"),
        (lambda X, y: (pm.Model(), "gp"), "must return a pm.gp.Marginal second"),
        (lambda X, y: (pm.Model(), pm.gp.Latent()), "must return a pm.gp.Marginal second"),
    ],
)
def test_a_build_that_returns_no_marginal_gp_is_refused_naming_the_component(bad, match):
    calls = []

    def system(X):
        calls.append(1)
        return np.column_stack([X[:, 0], X[:, 1]])

    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=system,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        component_names=["a", "b"],
    )
    before = len(calls)
    with pytest.raises(
        (TypeError, ValueError), match=rf"component 'b': from_pymc\(build\) {match}"
    ):
        ppd.Optimizer(problem, components={"b": ppd.ComponentGP.from_pymc(bad)})
    assert len(calls) == before


def test_a_likelihood_on_other_data_is_refused():
    def elsewhere(X, y):
        with pm.Model() as model:
            gp = pm.gp.Marginal(cov_func=pm.gp.cov.ExpQuad(1, ls=0.3))
            gp.marginal_likelihood("y_obs", X=np.zeros((3, 1)), y=np.zeros(3), sigma=0.1)
        return model, gp

    gp = ppd.ComponentGP.from_pymc(elsewhere, name="r")
    with pytest.raises(ValueError, match="component 'r'.*on the X and y build was given"):
        gp.fit(np.random.default_rng(0).random((4, 1)), np.arange(4.0))


@pytest.mark.slow
def test_a_full_bayes_run_with_a_from_pymc_component_and_its_resume(tmp_path):
    def system(X):
        return np.column_stack([np.sin(5 * X[:, 0]) + X[:, 1], np.cos(3 * X[:, 1])])

    problem = ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=system,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        component_names=["a", "b"],
        name="pymc-two",
    )
    path = tmp_path / "run.nc"
    mine = {"a": ppd.ComponentGP.from_pymc(build)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small fits' diagnostics
        opt = ppd.Optimizer(
            problem, "d-gpucb-mc", inference="nuts", components=mine, checkpoint=path, seed=0
        )
        opt.run(15)
    assert opt.n == 15 and opt.settings.inference.fast
    recorded = json.loads(opt.results().attrs["settings"])["components"]["a"]
    assert (
        recorded["pymc"].endswith("test_from_pymc.build") and "ls ~ LogNormal" in recorded["model"]
    )
    with pytest.raises(ValueError, match=r"component\(s\) \['a'\] have their own PyMC models"):
        ppd.Optimizer.resume(path, problem)
    again = ppd.Optimizer.resume(path, problem, components=mine)
    assert again.n == 15
