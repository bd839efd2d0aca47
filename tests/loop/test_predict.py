"""opt.predict: the posterior of the components and of the objective, any g."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

import pp_decomp as ppd
from pp_decomp.components.posterior.batched import mixture_quantiles
from pp_decomp.composition.core import residual_correlation
from pp_decomp.models import get_problem


def _ratio_problem() -> ppd.Problem:
    """Three positive components of a 2-D box and ``g = F0·F1/F2``."""

    def components(X):
        X = np.atleast_2d(X)
        return np.c_[1 + X[:, 0], 2 + np.sin(3 * X[:, 1]), 1.5 + X[:, 0] * X[:, 1]]

    return ppd.Problem(
        ppd.Box([0, 0], [1, 1]),
        components,
        3,
        g=lambda F, X: F[..., 0] * F[..., 1] / F[..., 2],
        name="ratio",
    )


def test_a_nonlinear_objective_matches_brute_force_and_the_strategys_bound():
    p = _ratio_problem()
    opt = ppd.Optimizer(p, "d-gpucb-mc", n_init=4, seed=0)
    opt.run(8)
    x_next = opt.ask()
    rec = opt.pending.record(x_next)
    q_t = float(norm.cdf(np.sqrt(rec["beta"])))
    X = np.vstack([p.domain.sample(6, seed=1), x_next])
    n = 40000
    ds = opt.predict(X, n_samples=n, quantiles=(0.1, 0.5, 0.9, q_t), seed=3)
    assert ds.attrs["objective_method"] == "monte carlo" and opt.settings.model.copula
    # brute force: per point, the components jointly normal with the copula's correlation
    models = [opt.models[c] for c in p.component_names]
    C = residual_correlation(models)
    rng = np.random.default_rng(7)
    brute = np.empty((n, len(X)))
    for i, x in enumerate(X):
        mean = np.array([m.predict(x[None])[0][0] for m in models])
        sd = np.sqrt([m.predict(x[None])[1][0] for m in models])
        F = rng.multivariate_normal(mean, C * np.outer(sd, sd), size=n)
        brute[:, i] = p.g(F, x[None])
    sd = ds["objective_sd"].values
    for k, level in enumerate(ds["quantile"].values[:3]):
        want = np.quantile(brute, level, axis=0)
        np.testing.assert_allclose(ds["objective_quantile"].values[k], want, atol=0.05 * sd.max())
    # the strategy's own bound at its chosen input: the q_t quantile of g
    assert ds["objective_quantile"].values[3, -1] == pytest.approx(
        rec["acq_value"], abs=0.15 * sd[-1]
    )
    assert ds["bound"].values[-1] == pytest.approx(rec["acq_value"], abs=0.15 * sd[-1])
    assert ds["component_draws"].shape == (n, len(X), 3)
    np.testing.assert_allclose(
        ds["component_mean"], ds["component_draws"].mean("sample"), atol=0.02
    )


def test_a_linear_objective_is_analytic_and_its_draws_agree():
    p = get_problem("synthetic", seed=0, n_components=3, n_points=120)
    opt = ppd.Optimizer(p, n_init=4, seed=0)
    opt.run(8)
    X = p.domain.X[:10]
    ds = opt.predict(X, n_samples=40000, seed=1)
    assert ds.attrs["objective_method"] == "analytic" == ds.attrs["component_method"]
    draws = ds["objective_draws"].values
    sd = ds["objective_sd"].values
    np.testing.assert_allclose(ds["objective_mean"], draws.mean(0), atol=0.03 * sd.max())
    np.testing.assert_allclose(sd, draws.std(0), rtol=0.03)
    want = np.quantile(draws, ds["quantile"].values, axis=0)
    np.testing.assert_allclose(ds["objective_quantile"], want, atol=0.05 * sd.max())
    # f = Σ_j w_j f_j: its mean is the weighted sum of the components' means
    w = p.linear.weights(X)
    np.testing.assert_allclose(ds["objective_mean"], (w * ds["component_mean"].values).sum(1))


def test_a_composed_strategy_predicts_its_one_gp_of_the_objective():
    p = get_problem("synthetic", seed=0, n_components=3, n_points=120)
    opt = ppd.Optimizer(p, "gp-ucb", n_init=4, seed=0)
    opt.run(7)
    ds = opt.predict(p.domain.X[:5], n_samples=100)
    assert "component_mean" not in ds and ds["objective_quantile"].shape == (3, 5)
    mean, _ = opt.models["composed"].predict(p.domain.X[:5])
    np.testing.assert_allclose(ds["objective_mean"], p.sign * mean)


def test_mixture_quantiles_invert_the_mixture_distribution():
    mean_s, sd_s = np.array([[0.0, 1.0], [3.0, 1.0]]), np.array([[1.0, 0.5], [0.5, 0.5]])
    q = np.array([0.02, 0.3, 0.5, 0.97])
    x = mixture_quantiles(mean_s, sd_s, q)
    cdf = norm.cdf((x[:, None, :] - mean_s) / sd_s).mean(1)
    np.testing.assert_allclose(cdf, np.broadcast_to(q[:, None], cdf.shape), atol=1e-9)


def test_bad_arguments_are_refused_before_any_work():
    p = get_problem("synthetic", seed=0, n_components=3, n_points=120)
    opt = ppd.Optimizer(p, n_init=4, seed=0)
    with pytest.raises(ValueError, match="a model fitted on the initial design.*0 evaluation"):
        opt.predict(p.domain.X[:2])
    opt.run(6)
    with pytest.raises(ValueError, match=r"quantiles must lie in \(0, 1\); got \(0.5, 1.0\)"):
        opt.predict(p.domain.X[:2], quantiles=(0.5, 1.0))
    with pytest.raises(ValueError, match="X"):
        opt.predict(np.zeros((2, p.dim + 1)))
    with pytest.raises(ValueError, match="n_samples"):
        opt.predict(p.domain.X[:2], n_samples=1)


def test_a_resumed_run_predicts_without_changing_its_choices(tmp_path):
    p = get_problem("synthetic", seed=0, n_components=3, n_points=120)
    full = ppd.Optimizer(p, n_init=4, seed=0).run(9)
    with ppd.Optimizer(p, n_init=4, seed=0, checkpoint=tmp_path / "r.nc") as part:
        part.run(6)
    opt = ppd.Optimizer.resume(tmp_path / "r.nc", p)
    assert opt.predict(p.domain.X[:3])["objective_mean"].shape == (3,)  # fitted afresh
    assert set(opt.posterior()) == set(p.component_names)
    np.testing.assert_array_equal(opt.run(9)["x"], full["x"])
