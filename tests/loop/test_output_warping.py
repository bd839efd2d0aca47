"""A learned output warp in the loop: a warped component is sampled in its own units
through each draw's warp, its gradients by the chain rule, its run resumes to the
same choices, and the runs that cannot take it are refused before any evaluation."""

from __future__ import annotations

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.acquisition.surrogate import DecomposedSurrogate, hallucinate
from pp_decomp.components.gp.warped import WarpedGP, simulate
from pp_decomp.loop.updaters.fast_warped import FastWarpedGPView


def _system(calls=None):
    def components(X):
        if calls is not None:
            calls.append(X)
        X = np.atleast_2d(X)
        rate = np.exp(2.0 * np.sin(5 * X[:, 0]) + X[:, 1])  # positive, skewed
        return np.column_stack([rate, np.cos(4 * X[:, 1]) + X[:, 0]])

    return ppd.Problem(
        domain=ppd.Box([0, 0], [1, 1]),
        components=components,
        n_components=2,
        g=lambda F: F[..., 0] + F[..., 1],
        name="rate-plus-level",
        component_names=["rate", "level"],
    )


def _warped():
    return ppd.ComponentGP("matern52", warp="sinh-arcsinh")


@pytest.fixture(scope="module")
def fitted():
    """A warped and a plain GP on their own data, and the surrogate of both."""
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(30, 2))
    y = simulate(X, rng, skew=2.5, tail=0.7, noise=0.2)
    settings = {"draws": 60, "tune": 150, "chains": 2}
    bent = _warped().fit(X, y, "nuts", seed=1, **settings)
    plain = ppd.ComponentGP("matern52").fit(X, np.sin(4 * X[:, 0]), seed=1)
    return bent, DecomposedSurrogate([bent, plain], _system())


def test_the_surrogates_samples_of_a_warped_component_are_its_own_in_its_units(fitted):
    bent, surrogate = fitted
    X = np.array([[0.1, 0.2], [0.5, 0.9], [0.8, 0.4]])
    rng = np.random.default_rng(0)
    n = 40_000
    draw_idx = rng.integers(0, 2**31 - 1, size=(n, 2))
    F = surrogate.marginal_samples(X, draw_idx, rng.standard_normal((n, 2)))
    q = np.array([0.05, 0.5, 0.95])
    exact = bent.quantiles(X, q)
    # the samples' distribution function at the exact quantiles: each level, to
    # within 0.015 (its standard error at 40 000 samples is at most 0.0025)
    below = (F[:, None, :, 0] <= exact[None]).mean(0)  # (3 levels, 3 inputs)
    np.testing.assert_allclose(below, np.broadcast_to(q[:, None], below.shape), atol=0.015)
    plain = surrogate.components[1]
    mean, var = plain.predict(X)
    np.testing.assert_allclose(F[..., 1].mean(0), mean, atol=4 * np.sqrt(var.max() / n) + 1e-6)


def test_a_warped_components_sample_gradients_are_the_chain_rule(fitted):
    _, surrogate = fitted
    X = np.array([[0.3, 0.6], [0.7, 0.2]])
    rng = np.random.default_rng(1)
    draw_idx = rng.integers(0, 2**31 - 1, size=(16, 2))
    z = rng.standard_normal((16, 2))
    F, dF = surrogate.samples_and_gradients(X, draw_idx, z)
    np.testing.assert_allclose(F, surrogate.marginal_samples(X, draw_idx, z), rtol=1e-10)
    k = np.broadcast_to(np.arange(16)[:, None], (16, 2))
    grad = dF(k)  # (16, 2 inputs, 2 components, 2 dims)
    h = 1e-6
    for a in range(2):
        up, down = X.copy(), X.copy()
        up[:, a] += h
        down[:, a] -= h
        fd = (
            surrogate.marginal_samples(up, draw_idx, z)
            - surrogate.marginal_samples(down, draw_idx, z)
        ) / (2 * h)
        np.testing.assert_allclose(grad[..., a], fd, rtol=1e-4, atol=1e-4)


def test_a_run_with_a_warped_component_samples_it_and_resumes_to_the_same_choices(tmp_path):
    problem = _system()
    kw = {"components": {"rate": _warped()}, "seed": 3, "n_init": 5}
    full = ppd.Optimizer(problem, **kw).run(9)
    opt = ppd.Optimizer(problem, checkpoint=tmp_path / "w.nc", **kw)
    assert (opt.settings.strategy, opt.settings.inference.fast) == ("d-gpucb-mc-min", False)
    opt.run(7)
    resumed = ppd.Optimizer.resume(tmp_path / "w.nc", problem)
    ((name, template),) = resumed.settings.model.components
    assert name == "rate" and template.model_dict() == _warped().model_dict()
    np.testing.assert_array_equal(resumed.run(9)["x"].values, full["x"].values)
    rate = resumed.models["rate"]
    assert rate.draws.warp_skew is not None  # the loop's GP learned the warp
    ds = resumed.predict([[0.2, 0.3], [0.6, 0.6]], n_samples=400)
    np.testing.assert_allclose(
        ds["component_quantile"].values[..., 0],
        rate.quantiles([[0.2, 0.3], [0.6, 0.6]], ds["quantile"].values),
    )
    assert ds.attrs["objective_method"] == "monte carlo"
    # the copula's joint samples of the warped component, in its units: 400 samples
    # put its exact median within 0.1 of their middle (the standard error is 0.025)
    median = rate.quantiles([[0.2, 0.3], [0.6, 0.6]], [0.5])[0]
    below = (ds["component_draws"].values[..., 0] <= median).mean(0)
    np.testing.assert_allclose(below, 0.5, atol=0.1)


def test_full_bayes_runs_a_warped_component_by_nuts_and_resumes_to_the_same_choices(tmp_path):
    problem = _system()
    nuts = {"draws": 40, "tune": 60, "chains": 2}
    kw = {"components": {"rate": _warped()}, "inference": "nuts", "nuts_kwargs": nuts}
    kw.update(seed=5, n_init=5, fast=False)  # NUTS at every step (the fast path: test_fast_warped)
    full = ppd.Optimizer(problem, **kw).run(8)
    opt = ppd.Optimizer(problem, checkpoint=tmp_path / "n.nc", **kw)
    opt.run(6)
    resumed = ppd.Optimizer.resume(tmp_path / "n.nc", problem)
    np.testing.assert_array_equal(resumed.run(8)["x"].values, full["x"].values)
    rate = resumed.models["rate"]
    assert rate.diagnostics.inference == "nuts" and rate.n_draws > 1
    assert {"warp_skew", "warp_loc"} <= set(rate.idata.posterior.data_vars)


def test_a_warped_full_bayes_run_takes_the_fast_path_and_resumes_to_the_same_choices(tmp_path):
    problem = _system()
    kw = {"components": {"rate": _warped()}, "inference": "nuts", "seed": 5, "n_init": 5}
    full = ppd.Optimizer(problem, **kw).run(10)
    opt = ppd.Optimizer(problem, checkpoint=tmp_path / "f.nc", **kw)
    assert opt.settings.inference.fast
    opt.run(8)
    resumed = ppd.Optimizer.resume(tmp_path / "f.nc", problem)
    ds = resumed.run(10)
    np.testing.assert_array_equal(ds["x"].values, full["x"].values)
    rate = resumed.models["rate"]
    assert isinstance(rate, FastWarpedGPView)
    assert rate.comp.gp.draws.warp_skew is not None
    kinds = set(ds["fit_draws"].sel(model="rate").values.astype(str)) - {""}
    assert kinds - {"chains", "reweighted chains"}, kinds  # fits other than NUTS
    X = np.array([[0.2, 0.3], [0.6, 0.6]])
    post = resumed.predict(X, n_samples=400)
    np.testing.assert_allclose(
        post["component_quantile"].values[..., 0], rate.quantiles(X, post["quantile"].values)
    )
    lo, hi = rate.quantiles(X, [0.025, 0.975])
    assert np.all(lo < hi)
    with pytest.raises(NotImplementedError, match="warped scale"):
        rate.predict_per_draw(X)


@pytest.mark.parametrize(
    "strategy, kw, match",
    [
        ("d-gpucb-lipschitz", {}, r"warp='sinh-arcsinh' needs a strategy that samples"),
        ("d-gpucb", {}, r"needs a strategy that samples the components through g \(d-gpucb-mc"),
        ("d-gpucb-box-min", {}, r"got strategy .d-gpucb-box-min."),
    ],
)
def test_a_run_that_cannot_take_a_warped_component_is_refused_before_any_evaluation(
    strategy, kw, match
):
    calls = []
    problem = _system(calls)
    calls.clear()  # the problem probes its function once, at construction
    with pytest.raises(ValueError, match=match):
        ppd.Optimizer(problem, strategy, components={"rate": _warped()}, seed=0, **kw)
    assert calls == []


def test_pending_inputs_shrink_a_warped_components_spread_on_its_warped_scale(fitted):
    bent, _ = fitted
    P = np.array([[0.4, 0.4]])
    hall = hallucinate(DecomposedSurrogate([bent], _system()), P).components[0]
    X = np.array([[0.4, 0.4], [0.45, 0.4], [0.9, 0.1]])
    mean0, var0 = bent.latent_per_draw(X)
    mean, var = hall.latent_per_draw(X)
    np.testing.assert_array_equal(mean, mean0)  # GP-BUCB: the means stay
    assert np.all(var <= var0 + 1e-12) and np.all(var[:, 0] < 0.5 * var0[:, 0])
    # its samples are in the outputs' units, by each draw's warp: their mean is the
    # quadrature's (4 000 samples: within 4 standard errors)
    draws = hall.sample(X, 4000, seed=0)
    mu, v = hall.predict(X)
    assert np.all(np.abs(draws.mean(0) - mu) < 4 * np.sqrt(v / 4000) + 1e-9)
    with pytest.raises(NotImplementedError, match="warped scale"):
        hall.predict_per_draw(X)


@pytest.mark.parametrize("strategy", ["d-gpucb-mc-min", "d-gpucb-mc", "d-ei", "d-pi", "d-thompson"])
def test_every_strategy_that_takes_a_warped_component_runs_it_and_asks_a_batch(strategy):
    opt = ppd.Optimizer(_system(), strategy, components={"rate": _warped()}, seed=0, n_init=5)
    opt.run(7)
    batch = opt.ask(3)
    assert batch.shape == (3, 2) and len(np.unique(batch.round(6), axis=0)) == 3
    opt.run(10)  # evaluates the pending inputs and goes on
    assert opt.n == 10 and not len(opt.pending.X)


def test_output_warp_gives_every_component_without_its_own_model_the_warp(tmp_path):
    problem = _system()
    own = ppd.ComponentGP("se")
    opt = ppd.Optimizer(
        problem,
        output_warp="sinh-arcsinh",
        components={"level": own},
        seed=1,
        n_init=5,
        checkpoint=tmp_path / "o.nc",
    )
    opt.run(7)
    assert opt.settings.model.output_warp == "sinh-arcsinh"
    assert isinstance(opt.models["rate"], WarpedGP) and opt.models["rate"].kernel == "matern32"
    assert not isinstance(opt.models["level"], WarpedGP)  # its own model, as given
    assert not isinstance(opt.models["composed"], WarpedGP)  # the GP of g is not a component
    resumed = ppd.Optimizer.resume(tmp_path / "o.nc", problem)
    assert resumed.settings.model.output_warp == "sinh-arcsinh"


@pytest.mark.parametrize(
    "kw, match",
    [
        (
            {"output_warp": "box-cox"},
            r"output_warp must be None or one of \('sinh-arcsinh',\); got 'box-cox'",
        ),
        (
            {"output_warp": "sinh-arcsinh", "input_warping": True},
            r"input_warping=True .* choose one",
        ),
        (
            {"output_warp": "sinh-arcsinh", "strategy": "d-gpucb-lipschitz"},
            r"got strategy 'd-gpucb-lipschitz'",
        ),
        ({"output_warp": "sinh-arcsinh", "correlated": True}, r"correlated=True"),
    ],
)
def test_a_bad_output_warp_is_refused_naming_it_before_any_evaluation(kw, match):
    calls = []
    problem = _system(calls)
    calls.clear()
    with pytest.raises(ValueError, match=match):
        ppd.Optimizer(problem, seed=0, **kw)
    assert calls == []
