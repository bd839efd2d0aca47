"""The decomposed bounds capped by GP-UCB's on one GP of g (``d-gpucb-*-min``)."""

import warnings

import numpy as np
import pytest

from pp_decomp import Box, Optimizer, Problem
from pp_decomp.loop import FastSettings
from pp_decomp.strategies import unsupported


def _problem():
    return Problem(
        Box([0, 0], [1, 1]),
        lambda X: np.c_[np.sin(3 * X[:, 0]), (X[:, 1] - 0.3) ** 2],
        2,
        g=lambda F: F[..., 0] * np.exp(-F[..., 1]),
        noise_sd=0.01,
        name="two-outputs",
    )


@pytest.mark.parametrize("strategy", ["d-gpucb-mc-min", "d-gpucb-local-min", "d-gpucb-box-min"])
def test_a_min_strategy_refits_a_gp_of_g_beside_the_components(strategy):
    ds = Optimizer(_problem(), strategy, seed=0, n_init=3).run(5)
    assert list(ds["model"].values) == ["f0", "f1", "composed"]
    steps = ds["phase"].values == "acquisition"
    assert ds["refit"].values[steps].all()
    assert np.isfinite(ds["acq_value"].values[steps]).all()


def test_a_min_strategy_asks_a_batch_with_both_models_hallucinated():
    opt = Optimizer(_problem(), "d-gpucb-mc-min", seed=1, n_init=3)
    opt.run(3)
    X = opt.ask(2)
    assert X.shape == (2, 2) and not np.allclose(X[0], X[1])


def test_a_min_strategy_is_refused_where_its_gp_of_g_cannot_be_built():
    with pytest.raises(ValueError, match="d-gpucb-mc-min.*also fits one GP of g"):
        Optimizer(_problem(), "d-gpucb-mc-min", seed=0, correlated=True)
    why = unsupported("d-gpucb-box-min", _problem(), inference="fixed", known_kernels=None)
    assert why is not None and "known" in why


def test_a_min_strategy_updates_its_gp_of_g_on_the_fast_path_and_resumes_exactly(tmp_path):
    fs = FastSettings(draws=100, tune=150, chains=2, max_age=3, kept_draws=32, prior_draws=4096)
    kw = dict(inference="nuts", seed=3, n_init=3, mc_samples=64, fast_settings=fs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny NUTS settings: diagnostics may complain
        full = Optimizer(_problem(), "d-gpucb-mc-min", **kw)
        ds = full.run(8)
        path = tmp_path / "min.nc"
        part = Optimizer(_problem(), "d-gpucb-mc-min", checkpoint=path, **kw)
        part.run(6)
        part.close()
        resumed = Optimizer.resume(path, _problem()).run(8)
    assert full.settings.inference.fast
    assert sorted(full.updater.components) == ["composed", "f0", "f1"]
    steps = ds["phase"].values == "acquisition"
    assert np.isfinite(ds["acq_value"].values[steps]).all()
    assert (ds["refit"].values[steps].sum(0) >= 1).all()  # max_age=3: every GP refit
    np.testing.assert_array_equal(resumed["x"].values, ds["x"].values)


def test_a_resumed_min_run_makes_the_choices_of_an_uninterrupted_one(tmp_path):
    # refit every second step: the GP of g's draws in between come from the checkpoint
    kw = dict(seed=2, n_init=3, refit_every=2)
    full = Optimizer(_problem(), "d-gpucb-box-min", **kw).run(8)
    path = tmp_path / "ck.nc"
    Optimizer(_problem(), "d-gpucb-box-min", checkpoint=path, **kw).run(6)
    resumed = Optimizer.resume(path, _problem()).run(8)
    np.testing.assert_array_equal(resumed["x"].values, full["x"].values)


def test_a_min_strategys_step_is_criticised_on_its_components_and_its_own_bound():
    """Calibration reads a ``-min`` step as decomposed: every component scored, and the
    bound checked is the smaller one the strategy maximised, not GP-UCB's alone."""
    from pp_decomp.acquisition import UCB, ComposedSurrogate
    from pp_decomp.apps.calibration import step_coverage
    from pp_decomp.loop.step_bound import ucb_bound

    opt = Optimizer(_problem(), "d-gpucb-mc-min", seed=2, n_init=3, copula=False)
    opt.run(6)
    opt.ask()
    X = opt.problem.domain.sample(32, seed=3)
    cov = step_coverage(opt.setup, opt.state, opt.models, opt.n + 1, X, n_samples=200, seed=4)
    assert np.isfinite(cov["component"]).all() and np.isfinite(cov["objective"]).all()
    beta = float(opt.settings.acquisition.beta(opt.n + 1))
    h = np.full((2, len(X)), 1e6)  # a fallback bound from these samples would be 1e6
    capped = ucb_bound(
        opt.setup, opt.state, opt.models, opt.n + 1, X, h, beta, np.random.default_rng(5)
    )
    gp_ucb = UCB(ComposedSurrogate(opt.models["composed"]), beta)(X)
    assert np.all(capped <= gp_ucb + 1e-12) and np.any(capped < gp_ucb - 1e-9)


class _Draws:
    """A model of ``k`` draws that can be thinned (as the fast path's GP views)."""

    def __init__(self, k=128, thin=True):
        self.k, self.thin = k, thin

    def thinned(self, k):
        return _Draws(min(k, self.k)) if self.thin and k < self.k else self


class _Bound:
    def __init__(self, model):
        self.model = model


def test_a_min_bound_screens_on_both_its_parts_thinned():
    """A maximiser screens many inputs on a cheaper copy of the acquisition: for a
    ``-min`` bound, both the decomposed bound and GP-UCB's on fewer draws."""
    from pp_decomp.acquisition import SmallerUCB
    from pp_decomp.acquisition.surrogate import SCREEN_DRAWS, with_screen

    acq = with_screen(SmallerUCB(_Bound(_Draws()), _Draws(), beta=4.0))
    assert acq.screen.decomposed.model.k == acq.screen.composed.model.k == SCREEN_DRAWS
    assert acq.decomposed.model.k == acq.composed.model.k == 128  # itself untouched
    assert acq.screen.screen is None
    one = with_screen(SmallerUCB(_Bound(_Draws(thin=False)), _Draws(), beta=4.0))
    assert one.screen.decomposed is one.decomposed and one.screen.composed.model.k == SCREEN_DRAWS
    none = SmallerUCB(_Bound(_Draws(thin=False)), _Draws(thin=False), beta=4.0)
    assert not hasattr(with_screen(none), "screen")
