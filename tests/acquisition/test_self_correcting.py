"""The self-correcting D-GPUCB (issue 70): its bonus's formula, limits and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp import ComponentGP, Optimizer
from pp_decomp.acquisition import DGPUCB
from pp_decomp.acquisition.self_correcting import SelfCorrectingUCB, hyperparameter_variance
from pp_decomp.acquisition.surrogate import decomposed_surrogate
from pp_decomp.models import get_problem
from pp_decomp.strategies.compat import UnsupportedSetting


def test_the_bonus_variance_is_the_mixture_variance_less_the_geometric_mean():
    rng = np.random.default_rng(0)
    mu, var = rng.normal(size=(8, 5)), rng.gamma(2.0, size=(8, 5))
    mixture = var.mean(0) + mu.var(0)
    expected = mixture - np.exp(np.log(var).mean(0))
    np.testing.assert_allclose(hyperparameter_variance(mu, var), expected)
    # as the mutual information: T = v̄ (1 − exp(−2 I)), I = ½ log v̄ − ½ E log v
    info = 0.5 * np.log(mixture) - 0.5 * np.log(var).mean(0)
    np.testing.assert_allclose(hyperparameter_variance(mu, var), mixture * (1 - np.exp(-2 * info)))
    # draws that agree carry no information about the hyperparameters
    same = np.repeat(mu[:1], 8, 0), np.repeat(var[:1], 8, 0)
    np.testing.assert_allclose(hyperparameter_variance(*same), 0.0, atol=1e-12)
    assert np.all(hyperparameter_variance(mu, var) > 0)


@pytest.fixture(scope="module")
def fitted():
    p = get_problem("synthetic", seed=1, n_components=2, n_points=80)
    X = p.domain.X[::10]
    Y = p.evaluate(X, seed=0)
    gps = [
        ComponentGP(bounds=p.domain.bounds).fit(X, Y[:, j], "nuts", seed=j, draws=200, tune=300)
        for j in range(2)
    ]
    return p, decomposed_surrogate(gps, p)


def test_under_full_bayes_the_bonus_is_added_to_d_gpucb_and_weighted_by_g(fitted):
    p, model = fitted
    Xq = p.domain.X
    a, base = SelfCorrectingUCB(model, 2.0), DGPUCB(model, 2.0)
    bonus = a(Xq) - base(Xq)
    G = model.linear.weights(Xq)
    T = np.stack([hyperparameter_variance(m, v) for m, v in model.per_draw(Xq)], -1)
    np.testing.assert_allclose(bonus, np.sqrt(2.0) * np.sqrt(np.sum(G**2 * T, -1)), rtol=1e-10)
    assert bonus.max() > 0 and np.all(bonus >= 0)


def test_it_is_refused_where_there_is_one_draw():
    p = get_problem("synthetic", seed=0, n_components=2)
    for inference in ("map", "fixed"):
        with pytest.raises(UnsupportedSetting, match=f"inference='{inference}' has one draw"):
            Optimizer(p, "d-gpucb-sc", inference=inference)
    Optimizer(p, "d-gpucb-sc", inference="nuts")
