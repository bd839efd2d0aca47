"""One suite run against every GP model class (pp_decomp.components.gp.protocol.GPModel):
ComponentGP, AdditiveGP, EntireGP, the fast path's FastGPView and a batch's
HallucinatedGP (pending inputs conditioned on)."""

from types import SimpleNamespace

import numpy as np
import pytest

from pp_decomp import ComponentGP, EntireGP, HyperDraws, LinearComposition
from pp_decomp.additive import AdditiveDraws, AdditiveGP
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.gp.protocol import GPModel
from pp_decomp.loop import FastSettings
from pp_decomp.loop.settings import InferenceSettings, ModelSettings
from pp_decomp.loop.updaters.fast import FastComponent, FastGPView, candidate_index
from pp_decomp.space import CandidateSet

RNG = np.random.default_rng(7)
X = RNG.uniform(size=(14, 2))
Y = np.c_[np.sin(4 * X[:, 0]), X[:, 1] ** 2 + 0.1 * RNG.standard_normal(14)]
XC = RNG.uniform(size=(40, 2))  # candidate set (the fast view predicts only there)
DRAWS = HyperDraws(RNG.uniform(0.2, 0.6, (3, 2)), RNG.uniform(0.6, 1.4, 3), [0.1, 0.2, 0.15])


def component():
    return ComponentGP("matern52", 2, name="f").condition(X, Y[:, 0], DRAWS)


def additive():
    draws = AdditiveDraws(DRAWS.ls, RNG.uniform(0.3, 0.9, (3, 2)), DRAWS.sigma)
    return AdditiveGP([(0,), (1,)], 2, name="a").condition(X, Y[:, 0], draws)


def entire():
    comps = [
        ComponentGP("se", 2, name=f"f{j}", standardize=False).condition(X, Y[:, j], DRAWS)
        for j in range(2)
    ]
    return EntireGP(comps, LinearComposition([1.0, 2.0])).condition(X, Y)


def fast_view():
    settings = SimpleNamespace(
        inference=InferenceSettings(method="nuts", fast=True, fast_path=FastSettings()),
        model=ModelSettings(kernel="se", priors=Priors()),
    )
    problem = SimpleNamespace(dim=2, domain=CandidateSet(XC))
    fc = FastComponent("f", settings, problem)
    fc.rebuild(X[:10], Y[:10, 0], DRAWS, float(Y[:, 0].mean()), float(Y[:, 0].std()))
    fc.update(X, Y[:, 0])  # four reweighted appends
    return FastGPView(fc, candidate_index(XC), np.random.default_rng(0))


def hallucinated():
    from pp_decomp.acquisition.surrogate import HallucinatedGP

    return HallucinatedGP(component(), XC[:3])


MODELS = {
    "component": component,
    "additive": additive,
    "entire": entire,
    "fast": fast_view,
    "hallucinated": hallucinated,
}


@pytest.fixture(params=sorted(MODELS))
def model(request):
    return request.param, MODELS[request.param]()


def test_obeys_the_protocol(model):
    _, gp = model
    assert isinstance(gp, GPModel) and isinstance(gp.name, str) and gp.n_draws >= 1


def test_per_draw_shapes_and_noise(model):
    _, gp = model
    mean_s, var_s = gp.predict_per_draw(XC[:5])
    assert mean_s.shape == var_s.shape == (gp.n_draws, 5)
    assert np.all(var_s >= 0)
    mean_n, var_n = gp.predict_per_draw(XC[:5], pred_noise=True)
    np.testing.assert_allclose(mean_n, mean_s)
    assert np.all(var_n > var_s)


def test_predict_is_the_mixture_of_the_draws(model):
    name, gp = model
    mean, var = gp.predict(XC[:6])
    assert mean.shape == var.shape == (6,)
    mean_s, var_s = gp.predict_per_draw(XC[:6])
    w = np.full(len(mean_s), 1 / len(mean_s))
    if name == "fast":  # importance-weighted moments over all draws; per-draw is a resample
        post = gp.comp.post
        m, v = post.per_draw(np.arange(len(post.logw)))
        mean_s, var_s = gp.y_mean + gp.y_std * m[:, :6], gp.y_std**2 * v[:, :6]
        w = post.weights
    np.testing.assert_allclose(mean, w @ mean_s, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(var, w @ (var_s + mean_s**2) - (w @ mean_s) ** 2, rtol=1e-8)


@pytest.mark.parametrize("joint", [False, True])
def test_samples_follow_the_posterior(model, joint):
    _, gp = model
    Xs = XC[:4]
    draws = gp.sample(Xs, 4000, seed=1, joint=joint)
    assert draws.shape == (4000, 4)
    mean_s, var_s = gp.predict_per_draw(Xs)
    mix_mean, mix_var = mean_s.mean(0), var_s.mean(0) + mean_s.var(0)
    se = np.sqrt(mix_var / 4000)
    assert np.all(np.abs(draws.mean(0) - mix_mean) < 5 * se + 1e-9)
    np.testing.assert_allclose(draws.var(0), mix_var, rtol=0.15, atol=1e-9)
    again = gp.sample(Xs, 4000, seed=1, joint=joint)
    np.testing.assert_array_equal(draws, again)  # explicit seeds reproduce


def test_joint_samples_are_correlated_like_the_posterior(model):
    _, gp = model
    Xs = np.vstack([XC[0], XC[0] + 1e-3]) if model[0] != "fast" else XC[[0, 0]]
    if model[0] == "fast":
        return  # candidates only: two copies of one candidate are trivially identical
    draws = gp.sample(Xs, 2000, seed=2, joint=True)
    assert np.corrcoef(draws.T)[0, 1] > 0.95  # nearby points move together
    marginal = gp.sample(Xs, 2000, seed=2, joint=False)
    assert abs(np.corrcoef(marginal.T)[0, 1]) < 0.3


def test_bad_inputs_name_the_argument(model):
    name, gp = model
    with pytest.raises(ValueError, match="Xnew|candidates|column"):
        gp.predict(np.zeros((2, 3)))
    with pytest.raises((ValueError, TypeError), match="n_samples"):
        gp.sample(XC[:2], 0)
