"""The fast path on many points and with a GP of g: draws held within a memory
budget, and the ``-min`` strategies' GP of g updated as the components are."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pp_decomp import Box, Optimizer, Problem
from pp_decomp.loop import FastSettings
from pp_decomp.models import get_problem


def test_kept_draws_fall_with_the_data_within_the_memory_budget():
    s = FastSettings()
    assert [s.kept_at(n) for n in (5, 100, 362)] == [128, 128, 128]
    assert s.kept_at(500) == 2**27 // (8 * 500**2) == 67
    assert s.kept_at(1000) == s.kept_at(10**5) == 32  # PSIS's k̂ needs the floor
    assert FastSettings(kept_draws=8).kept_at(10**4) == 8  # asked for fewer: kept
    assert FastSettings(held_bytes=2**30).kept_at(1000) == 128
    with pytest.raises(ValueError, match="held_bytes.*0"):
        FastSettings(held_bytes=0)


def test_a_first_fit_on_data_brought_in_keeps_the_draws_its_budget_allows():
    problem = get_problem("synthetic", seed=5, n_components=2, n_points=120)
    rng = np.random.default_rng(0)
    X = problem.domain.X[rng.choice(120, 60, replace=False)]
    fs = FastSettings(held_bytes=8 * 60**2 * 40)  # 40 draws of 60 points
    opt = Optimizer(problem, inference="nuts", seed=1, fast_settings=fs)
    opt.tell(X, problem.evaluate(X, seed=rng))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.ask()
    held = {n: len(fc.post.logw) for n, fc in opt.updater.components.items()}
    assert held == {"f0": 40, "f1": 40}, held
    assert all(fc.gp.diagnostics.proposal == "laplace" for fc in opt.updater.components.values())


def _nonlinear():
    return Problem(
        Box([0, 0], [1, 1]),
        lambda X: np.c_[np.sin(3 * X[:, 0]), (X[:, 1] - 0.3) ** 2],
        2,
        g=lambda F: F[..., 0] * np.exp(-F[..., 1]),
        noise_sd=0.01,
        name="two-outputs",
    )


def test_a_min_strategy_updates_its_gp_of_g_on_the_fast_path_and_resumes_exactly(tmp_path):
    fs = FastSettings(draws=100, tune=150, chains=2, max_age=3, kept_draws=32, prior_draws=4096)
    kw = dict(inference="nuts", seed=3, n_init=3, mc_samples=64, fast_settings=fs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny NUTS settings: diagnostics may complain
        full = Optimizer(_nonlinear(), "d-gpucb-mc-min", **kw)
        ds = full.run(8)
        path = tmp_path / "min.nc"
        part = Optimizer(_nonlinear(), "d-gpucb-mc-min", checkpoint=path, **kw)
        part.run(6)
        part.close()
        resumed = Optimizer.resume(path, _nonlinear()).run(8)
    assert full.settings.inference.fast
    assert sorted(full.updater.components) == ["composed", "f0", "f1"]
    steps = ds["phase"].values == "acquisition"
    assert np.isfinite(ds["acq_value"].values[steps]).all()
    assert (ds["refit"].values[steps].sum(0) >= 1).all()  # max_age=3: every GP refit
    np.testing.assert_array_equal(resumed["x"].values, ds["x"].values)


def test_a_fits_factors_are_taken_over_not_computed_again(monkeypatch):
    """The incremental posterior built on a fit's draws takes the fit's own ``L⁻¹``
    (the same ``K``): the same numbers, one factorisation fewer."""
    from pp_decomp.components.posterior import incremental

    problem = get_problem("synthetic", seed=5, n_components=2, n_points=120)
    rng = np.random.default_rng(0)
    X = problem.domain.X[rng.choice(120, 40, replace=False)]
    Y = problem.evaluate(X, seed=rng)
    opt = Optimizer(problem, inference="nuts", seed=1)
    opt.tell(X, Y)
    calls = []
    real = incremental.cholesky_inverse
    monkeypatch.setattr(incremental, "cholesky_inverse", lambda K: calls.append(1) or real(K))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.ask()
    assert calls == []
    fc = opt.updater.components["f0"]
    Xs, ys = fc.gp.scale_X(X), (Y[:, 0] - fc.gp.y_mean) / fc.gp.y_std
    fresh = incremental.IncrementalPosterior(
        fc.gp.posterior_kernel, Xs, ys, fc.gp.draws, fc.Xc_scaled, fc.gp.mean_var
    )
    np.testing.assert_array_equal(fresh.L_inv, fc.post.L_inv)
    np.testing.assert_array_equal(fresh.mean, fc.post.mean)


def test_the_screen_thins_further_on_many_points(monkeypatch, rng):
    """A screen reads every kept draw's ``(n, n)`` factor per evaluation: on many
    points it uses fewer draws, within ``SCREEN_BYTES``, at least ``MIN_SCREEN``."""
    from pp_decomp import ComponentGP, HyperDraws
    from pp_decomp.components.posterior.incremental import IncrementalPosterior
    from pp_decomp.loop.updaters import fast_view

    class Comp:  # what FastGPView reads of a FastComponent
        gp = ComponentGP("se", 2, name="f")

    X = rng.uniform(size=(40, 2))
    d = HyperDraws(ls=rng.uniform(0.2, 0.8, (32, 2)), eta=np.ones(32), sigma=np.full(32, 0.1))
    Comp.gp.condition(X, np.sin(4 * X[:, 0]), d)
    comp = Comp()
    comp.post = IncrementalPosterior("se", Comp.gp.scale_X(X), np.sin(4 * X[:, 0]), d)
    view = fast_view.FastGPView(comp, None, np.random.default_rng(0))
    assert view.thinned(16).n_draws == 16  # 40 points: far within the budget
    monkeypatch.setattr(fast_view, "SCREEN_BYTES", 8 * 40**2 * 6)
    assert view.thinned(16).n_draws == 6 and view.thinned(4).n_draws == 4
    monkeypatch.setattr(fast_view, "SCREEN_BYTES", 8)
    assert view.thinned(16).n_draws == fast_view.MIN_SCREEN
