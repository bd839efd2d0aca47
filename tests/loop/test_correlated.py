"""The loop with correlated components (``Optimizer(correlated=True)``)."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp import Optimizer
from pp_decomp.acquisition.surrogate import CorrelatedSurrogate, decomposed_surrogate
from pp_decomp.loop import FastSettings
from pp_decomp.models import get_problem
from pp_decomp.strategies import STRATEGIES


@pytest.fixture(scope="module")
def problem():
    return get_problem("synthetic", seed=3, n_components=3, n_points=150)


def test_a_correlated_run_resumes_with_the_same_choices(problem, tmp_path):
    path = tmp_path / "r.nc"
    full = Optimizer(problem, "d-gpucb", n_init=4, seed=1, correlated=True).run(9)
    part = Optimizer(problem, "d-gpucb", n_init=4, seed=1, correlated=True, checkpoint=path)
    part.run(7)
    resumed = Optimizer.resume(path, problem)
    assert resumed.settings.model.correlated
    ds = resumed.run(9)
    np.testing.assert_array_equal(ds["x"].values, full["x"].values)
    assert np.all(np.isfinite(ds["ls_mean"].values[4:]))


def test_the_step_uses_one_joint_posterior(problem):
    opt = Optimizer(problem, "d-gpucb-mc", n_init=4, seed=2, correlated=True)
    opt.run(6)
    comps = [opt.models[n] for n in problem.component_names]
    surrogate = decomposed_surrogate(comps, problem)
    assert isinstance(surrogate, CorrelatedSurrogate)
    X = problem.domain.X[:5]
    # the linear composition's variance is wᵀ Σ w, Σ the components' covariance
    mean, var = surrogate.linear_per_draw(X)
    rng = np.random.default_rng(0)
    z = rng.standard_normal((20000, 3))
    h = surrogate.h(surrogate.marginal_samples(X, np.zeros((20000, 3), int), z), X)
    np.testing.assert_allclose(h.mean(0), mean[0], atol=5 * h.std(0).max() / np.sqrt(20000))
    np.testing.assert_allclose(h.var(0), var[0], rtol=0.05)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(strategy="gp-ucb"), "strategy 'gp-ucb' models 'composed'"),
        (dict(inference="fixed"), "inference"),
        (dict(kernel="rq"), "kernel"),
        (dict(inference="nuts", fast=True), "fast=True"),
    ],
)
def test_settings_that_cannot_correlate_are_refused(problem, kw, match):
    strategy = kw.pop("strategy", "d-gpucb")
    with pytest.raises(ValueError, match=match):
        Optimizer(problem, strategy, correlated=True, **kw)


def test_one_component_is_refused():
    one = get_problem("synthetic", seed=0, n_components=1, n_points=50)
    with pytest.raises(ValueError, match="at least 2 components"):
        Optimizer(one, "d-gpucb", correlated=True)


def test_pending_inputs_are_refused_after_the_design(problem):
    opt = Optimizer(problem, "d-gpucb", n_init=3, seed=0, correlated=True)
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, problem.evaluate(x[None], seed=0)[0])
    first = opt.ask()
    with pytest.raises(ValueError, match="one input at a time after the design"):
        opt.ask(2)
    np.testing.assert_array_equal(opt.pending.X, first[None])  # nothing asked is lost


def test_full_bayes_reweights_between_refits_and_resumes_exactly(problem, tmp_path):
    kw = dict(
        n_init=4,
        seed=5,
        correlated=True,
        inference="nuts",
        nuts_kwargs={"draws": 40, "tune": 40, "chains": 2},
        max_draws=40,
        # reweight often: the path under test
        fast_settings=FastSettings(ess_refit=0.1, ess_collapse=0.0),
    )
    full = Optimizer(problem, "d-gpucb", **kw).run(10)
    refits = full["refit"].values[4:].any(1)
    assert refits[0] and not refits.all()  # reweighted draws were used in between
    path = tmp_path / "b.nc"
    Optimizer(problem, "d-gpucb", checkpoint=path, **kw).run(7)
    resumed = Optimizer.resume(path, problem).run(10)
    np.testing.assert_array_equal(resumed["x"].values, full["x"].values)


@pytest.mark.parametrize(
    "strategy",
    # the -min strategies also fit one GP of g: refused with correlated=True (their tests)
    sorted(
        s for s, st in STRATEGIES.items() if st.surrogate == "decomposed" and not st.with_composed
    ),
)
def test_every_decomposed_strategy_runs_on_correlated_components(problem, strategy):
    from pp_decomp.strategies import unsupported

    if unsupported(strategy, problem, inference="map", n_init=4) is not None:
        pytest.skip(f"{strategy} does not run on this problem")
    ds = Optimizer(problem, strategy, n_init=4, seed=0, correlated=True).run(6)
    assert np.all(np.isfinite(ds["objective"].values))


def test_parallel_workers_and_bad_flags_are_refused_before_any_evaluation(problem):
    opt = Optimizer(problem, "d-gpucb", n_init=3, seed=0, correlated=True)
    with pytest.raises(ValueError, match="workers=2: correlated=True"):
        opt.run(6, workers=2)
    assert opt.n == 0
    with pytest.raises(TypeError, match="correlated must be True or False"):
        Optimizer(problem, "d-gpucb", correlated="no")
