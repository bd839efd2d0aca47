"""The compiled density (MAP objective and NUTS density) is the PyMC model's, gradient included."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp import ComponentGP
from pp_decomp.components.gp.density import constants, log_density
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.gp.pymc_model import build_model
from pp_decomp.components.inference.compiled import map_searches
from pp_decomp.components.inference.map_objective import GPMapObjective

CASES = [
    ("se", Priors()),
    ("matern52", Priors(ls_family="inverse-gamma", sigma_family="lognormal")),
    ("matern32", Priors(sigma_family="gamma", mean_sd=0.0)),
    ("rq", Priors(sigma_family="lognormal", mean_sd=0.5)),
]


def _data(d=2, n=9, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    return X, (y - y.mean()) / y.std()


def _central_gradient(f, z, h=1e-5):
    """Central differences: the tied amplitude prior (curvature 400 e^z) is too
    curved for forward differences."""
    return np.array([(f(z + h * e) - f(z - h * e)) / (2 * h) for e in np.eye(z.size)])


def _pymc_logp(kernel, priors, X, y, jacobian=False):
    model = build_model(kernel, X.shape[1], priors)
    model["X"].set_value(X)
    model["y"].set_value(y)
    logp = model.compile_logp(jacobian=jacobian, mode="FAST_COMPILE")
    dlogp = model.compile_dlogp(jacobian=jacobian, mode="FAST_COMPILE")
    names = [v.name for v in model.value_vars]
    sizes = [int(np.prod(model.initial_point()[n].shape)) for n in names]

    def point(z):
        parts = np.split(z, np.cumsum(sizes)[:-1])
        return {
            n: (p if s > 1 or n == "ls_log__" else p[0])
            for n, p, s in zip(names, parts, sizes, strict=True)
        }

    return (lambda z: float(logp(point(z)))), (lambda z: np.asarray(dlogp(point(z)))), names


@pytest.mark.parametrize("kernel,priors", CASES, ids=[c[0] for c in CASES])
def test_value_and_gradient_match_the_pymc_model(kernel, priors):
    X, y = _data()
    objective = GPMapObjective(kernel, X, y, priors, priors.mean_var)
    logp, dlogp, names = _pymc_logp(kernel, priors, X, y)
    assert names[:3] == ["ls_log__", "eta_log__", "sigma_log__"]
    rng = np.random.default_rng(1)
    for _ in range(3):
        z = (
            rng.normal(0.0, 0.7, objective.size)
            + np.r_[np.zeros(2), 0.0, -2.0, np.zeros(objective.size - 4)]
        )
        value, grad = objective(z)
        # PyMC expands |x - x'|² as x² + x'² - 2xx': agreement to rounding, not bits
        assert value == pytest.approx(-logp(z), rel=1e-9)
        np.testing.assert_allclose(grad, -dlogp(z), rtol=1e-6, atol=1e-8)
        numeric = _central_gradient(lambda v: objective(v)[0], z)
        np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel,priors", CASES, ids=[c[0] for c in CASES])
def test_the_nuts_density_is_the_pymc_models_with_its_jacobian(kernel, priors):
    X, y = _data(d=3, n=11, seed=2)
    logp, dlogp, _ = _pymc_logp(kernel, priors, X, y, jacobian=True)
    prm = constants(kernel, 3, priors, priors.mean_var)
    rng = np.random.default_rng(3)
    for _ in range(3):
        z = (
            rng.normal(0.0, 0.7, 5 + (kernel == "rq"))
            + np.r_[0.0, 0.0, 0.0, 0.0, -2.0, 0.0][: 5 + (kernel == "rq")]
        )
        value, grad = log_density(z, X, y, prm, True)
        assert value == pytest.approx(logp(z), rel=1e-9)
        np.testing.assert_allclose(grad, dlogp(z), rtol=1e-6, atol=1e-8)


def test_not_positive_definite_is_a_finite_wall():
    X = np.zeros((4, 1))  # repeated inputs: K is singular without noise
    objective = GPMapObjective("se", X, np.array([1.0, -1.0, 1.0, -1.0]), Priors(), 0.0)
    value, grad = objective(np.array([0.0, 40.0, -40.0]))
    assert np.isfinite(value) and value > 1e9 and np.all(np.isfinite(grad))


def test_bounds_follow_the_kernel():
    X, y = _data(d=3)
    assert len(GPMapObjective("se", X, y, Priors(), 1.0).bounds()) == 5
    assert len(GPMapObjective("rq", X, y, Priors(), 1.0).bounds()) == 6


def test_map_fits_searched_at_once_are_the_fits_one_after_another():
    """``prepare_map`` draws the starts in order, so searching every start of
    several GPs on two threads (``map_searches``) fits exactly what ``fit`` does
    one GP after another."""
    X, y = _data(n=15)
    gps = lambda: [ComponentGP("matern32", 2, name="a"), ComponentGP("rq", 2, name="b")]  # noqa: E731
    rng = np.random.default_rng(5)
    one_by_one = [gp.fit(X, y + i, seed=rng) for i, gp in enumerate(gps())]
    rng, at_once = np.random.default_rng(5), gps()
    searches = [gp.prepare_map(X, y + i, seed=rng) for i, gp in enumerate(at_once)]
    assert all(len(s.starts) == 3 for s in searches)
    for gp, search, best in zip(at_once, searches, map_searches(searches, workers=2), strict=True):
        gp.adopt_map(search, best, 0.0)
    for a, b in zip(one_by_one, at_once, strict=True):
        for name in a.hyper_names():
            np.testing.assert_array_equal(getattr(a.draws, name), getattr(b.draws, name))
        np.testing.assert_array_equal(a.predict(X[:3])[1], b.predict(X[:3])[1])


def test_map_searches_refuse_a_worker_count_that_is_not_positive():
    search = ComponentGP("se", 2).prepare_map(*_data(n=6), seed=0)
    with pytest.raises(ValueError, match=r"workers must be >= 1; got 0"):
        map_searches([search], workers=0)
