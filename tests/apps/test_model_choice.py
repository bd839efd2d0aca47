"""A component's model compared by PSIS-LOO and stacked (pp_decomp.apps.model_choice)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

import pp_decomp as ppd
from pp_decomp.apps.calibration import sample_coverage
from pp_decomp.apps.model_choice import choose_model, default_candidates, stacking_weights


def _rough_truth(seed: int, n_train=50, n_test=200, ls=0.5, noise=0.01):
    """A Matérn 1/2 (Ornstein-Uhlenbeck) sample path on [0, 1], observed with noise
    at ``n_train`` random inputs and held out at ``n_test`` others."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n_train + n_test, 1))
    K = np.exp(-np.abs(X - X.T) / ls) + 1e-8 * np.eye(len(X))
    f = np.linalg.cholesky(K) @ rng.standard_normal(len(X))
    y = f[:n_train] + noise * rng.standard_normal(n_train)
    return X[:n_train], y, X[n_train:], f[n_train:]


def _coverage(samples, truth) -> float:
    return float(sample_coverage(samples, truth, (0.95,))[0, 0])


def test_a_rough_truth_gets_a_rough_model_and_its_held_out_coverage_recovers():
    chosen, stacked, default = [], [], []
    for seed in range(8):
        X, y, Xt, ft = _rough_truth(seed)
        choice = choose_model(X, y, seed=seed)
        chosen.append(choice.best.split("/")[0])
        stacked.append(_coverage(choice.sample(Xt, 1000, seed=1), ft))
        smooth = ppd.ComponentGP().fit(X, y, "map", seed=seed)  # the default: Matérn 3/2
        default.append(_coverage(smooth.sample(Xt, 1000, seed=1), ft))
    # measured: Matern12 chosen on 7 of 8; coverage 0.94 stacked, 0.79 default
    assert chosen.count("Matern12") >= 6, chosen
    assert np.mean(stacked) >= 0.92, stacked
    assert np.mean(default) <= 0.85, default
    assert np.mean(stacked) - np.mean(default) >= 0.1


def test_a_smooth_truth_is_not_given_the_roughest_model():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(30, 1))
    choice = choose_model(X, np.sin(6 * X[:, 0]) + 0.01 * rng.standard_normal(30), seed=0)
    ds = choice.to_dataset()
    assert not choice.best.startswith("Matern12")
    assert ds.weight.sel(model=["Matern12/inverse-gamma", "Matern12/lognormal"]).sum() < 0.2
    assert float(ds.elpd_diff.sel(model=choice.best)) == 0.0
    assert set(ds.data_vars) >= {"elpd_loo", "elpd_se", "diff_se", "pareto_k_max", "weight"}


def test_stacking_weights_maximise_the_log_score_over_the_simplex():
    rng = np.random.default_rng(0)
    elpd_i = rng.normal(size=(3, 40)) - np.array([[0.0], [0.2], [3.0]])
    w = stacking_weights(elpd_i)

    def score(v):
        return np.log(np.exp(elpd_i).T @ v).sum()

    simplex = {"type": "eq", "fun": lambda v: v.sum() - 1}
    ref = minimize(lambda v: -score(v), np.full(3, 1 / 3), bounds=[(0, 1)] * 3,
                   constraints=simplex).x  # fmt: skip
    assert w.sum() == pytest.approx(1.0)
    assert score(w) >= score(ref) - 1e-5
    assert w[2] < 0.01  # the clearly worse model gets no weight
    np.testing.assert_allclose(stacking_weights(elpd_i + 1000.0), w, atol=1e-6)  # no overflow


def test_stacked_moments_match_its_draws():
    X, y, Xt, _ = _rough_truth(0, n_train=20, n_test=5)
    cands = {k: v for k, v in default_candidates(1).items() if k.endswith("inverse-gamma")}
    choice = choose_model(X, y, cands, seed=0)
    mean, var = choice.predict(Xt)
    draws = choice.sample(Xt, 20000, seed=2)
    np.testing.assert_allclose(draws.mean(0), mean, atol=4 * np.sqrt(var.max() / 20000))
    np.testing.assert_allclose(draws.var(0), var, rtol=0.1)


def test_bad_candidates_are_refused_by_name():
    X = np.linspace(0, 1, 6)[:, None]
    with pytest.raises(ValueError, match="candidates"):
        choose_model(X, X[:, 0], {})
    with pytest.raises(ValueError, match="kernel"):
        choose_model(X, X[:, 0], {"mine": "cosine"})
