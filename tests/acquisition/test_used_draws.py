"""The Monte Carlo acquisitions predict only the hyperparameter draws their samples use,
and give the same values and gradients as from every draw."""

from types import SimpleNamespace

import numpy as np
import pytest

from pp_decomp import Box, ComponentGP, HyperDraws, Problem
from pp_decomp.acquisition.improvement import ExpectedImprovement
from pp_decomp.acquisition.surrogate import CopulaSurrogate, DecomposedSurrogate
from pp_decomp.acquisition.ucb import MonteCarloUCB
from pp_decomp.components.posterior.incremental import IncrementalPosterior
from pp_decomp.loop.updaters.fast_view import FastGPView

RNG = np.random.default_rng(5)
X = RNG.uniform(size=(14, 2))
Y = np.c_[np.sin(3 * X[:, 0]), X[:, 1] ** 2 - X[:, 0], np.cos(2 * X.sum(1))]
S = 16
DRAWS = HyperDraws(
    ls=RNG.uniform(0.3, 0.9, (S, 2)), eta=RNG.uniform(0.6, 1.4, S), sigma=np.full(S, 0.1)
)
XQ = RNG.uniform(0.05, 0.95, size=(6, 2))


class Counted(IncrementalPosterior):
    """An incremental posterior that records the draws each prediction reads."""

    read: list

    def at(self, Xs, idx=None):
        self.read.append(np.unique(idx))
        return super().at(Xs, idx)

    def at_grad(self, Xs, idx):
        self.read.append(np.unique(idx))
        return super().at_grad(Xs, idx)


def _view(j: int) -> FastGPView:
    gp = ComponentGP("matern52", 2, name=f"f{j}", bounds=(np.zeros(2), np.ones(2)))
    gp.condition(X, Y[:, j], DRAWS)
    ys = (Y[:, j] - Y[:, j].mean()) / Y[:, j].std()
    post = Counted("matern52", X, ys, DRAWS)
    post.read = []
    post.logw = RNG.normal(scale=0.3, size=S)  # weights: the resample repeats some draws
    return FastGPView(SimpleNamespace(gp=gp, post=post), None, np.random.default_rng(j))


class EveryDraw:
    """A view without ``predict_draws``: predicted for all its draws."""

    def __init__(self, view):
        self.view, self.name, self.n_draws = view, view.name, view.n_draws
        self.posterior = getattr(view, "posterior", None)  # the copula reads its residuals
        self.predict_per_draw = view.predict_per_draw
        if hasattr(view, "predict_per_draw_grad"):  # pending inputs have none
            self.predict_per_draw_grad = view.predict_per_draw_grad


def _problem() -> Problem:
    return Problem(
        Box(np.zeros(2), np.ones(2)),
        n_components=3,
        g=lambda F, X: F[..., 0] * F[..., 1] - F[..., 2] ** 2,
    )


@pytest.mark.parametrize("surrogate", [DecomposedSurrogate, CopulaSurrogate])
@pytest.mark.parametrize("make", ["ucb", "ei"])
def test_monte_carlo_acquisitions_read_only_their_draws(surrogate, make):
    views = [_view(j) for j in range(3)]
    every = surrogate([EveryDraw(v) for v in views], _problem())
    used = surrogate(views, _problem())

    def acquisition(model):
        if make == "ucb":
            return MonteCarloUCB(model, beta=2.0, n_samples=256, seed=2)
        return ExpectedImprovement(model, best=0.1, n_samples=6, seed=2)  # 6 draws at most

    a_every, a_used = acquisition(every), acquisition(used)
    np.testing.assert_allclose(a_used(XQ), a_every(XQ), rtol=1e-12, atol=1e-14)
    (v1, g1), (v2, g2) = a_used.value_and_grad(XQ), a_every.value_and_grad(XQ)
    np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-12)
    for j, v in enumerate(views):
        picked = np.unique(v.posterior.draw_idx[np.unique(a_used.draw_idx[:, j] % S)])
        reads = v.comp.post.read  # used, every, used (gradient), every (gradient)
        assert len(reads) == 4
        for r in reads[0::2]:
            np.testing.assert_array_equal(r, picked)
        for r in reads[1::2]:
            np.testing.assert_array_equal(r, np.unique(v.posterior.draw_idx))
        assert len(picked) <= (4 if make == "ucb" else 6) < len(reads[1])  # UCB: 256 / 64 draws


def test_components_with_and_without_their_own_draws_mix_and_a_screen_thins_them(monkeypatch):
    from pp_decomp.acquisition import surrogate

    monkeypatch.setattr(surrogate, "SCREEN_DRAWS", 6)  # of the 16

    views = [_view(j) for j in range(3)]
    mixed = DecomposedSurrogate([views[0], EveryDraw(views[1]), views[2]], _problem())
    every = DecomposedSurrogate([EveryDraw(v) for v in views], _problem())
    a_mixed = MonteCarloUCB(mixed, beta=2.0, n_samples=256, seed=4)
    a_every = MonteCarloUCB(every, beta=2.0, n_samples=256, seed=4)
    np.testing.assert_allclose(a_mixed(XQ), a_every(XQ), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        a_mixed.value_and_grad(XQ)[1], a_every.value_and_grad(XQ)[1], rtol=1e-10, atol=1e-12
    )
    screened = surrogate.with_screen(
        MonteCarloUCB(DecomposedSurrogate(views, _problem()), 2.0, 256, 4)
    )
    thin = screened.screen.model.components
    assert all(c.n_draws == 6 for c in thin)
    every_thin = DecomposedSurrogate([EveryDraw(c) for c in thin], _problem())
    reference = MonteCarloUCB(every_thin, 2.0, 256, 4)
    reference.draw_idx, reference.z = screened.screen.draw_idx, screened.screen.z
    np.testing.assert_allclose(screened.screen(XQ), reference(XQ), rtol=1e-12, atol=1e-14)


def test_pending_inputs_keep_the_saving_and_the_values():
    from pp_decomp.acquisition.surrogate import HallucinatedGP

    views = [_view(j) for j in range(3)]
    P = RNG.uniform(size=(2, 2))
    used = DecomposedSurrogate([HallucinatedGP(v, P) for v in views], _problem())
    every = DecomposedSurrogate([EveryDraw(HallucinatedGP(v, P)) for v in views], _problem())
    a_used = MonteCarloUCB(used, beta=2.0, n_samples=256, seed=3)
    a_every = MonteCarloUCB(every, beta=2.0, n_samples=256, seed=3)
    for v in views:
        v.comp.post.read = []
    np.testing.assert_allclose(a_used(XQ), a_every(XQ), rtol=1e-12, atol=1e-14)
    for j, v in enumerate(views):
        picked = np.unique(v.posterior.draw_idx[np.unique(a_used.draw_idx[:, j] % S)])
        np.testing.assert_array_equal(v.comp.post.read[0], picked)  # the means and variances
        assert len(picked) <= 4
