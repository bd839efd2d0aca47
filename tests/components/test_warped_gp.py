"""The learned sinh-arcsinh output warp: its density, fits, predictions and bad input."""

import json
from dataclasses import replace

import numpy as np
import pytest
from scipy.special import ndtr

import pp_decomp as ppd
from pp_decomp.components.criticism import criticise
from pp_decomp.components.gp.density import constants, log_density
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.gp.warped import WarpedGP, simulate
from pp_decomp.components.gp.warped_density import warped_log_densities, warped_log_density
from pp_decomp.components.inference.refresh import sampler_density
from pp_decomp.components.output_warps import sinh_arcsinh, sinh_arcsinh_inverse
from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.loop.component_models import model_from_dict
from pp_decomp.prior import Prior


def _warp_prm():
    lognormal = Prior("LogNormal", mu=0.0, sigma=0.5).encoded()
    return np.array([lognormal, lognormal, Prior("Normal", mu=0.0, sigma=1.0).encoded(), lognormal])


def _data(seed=0, n=12, d=2):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(n, d)), rng.standard_normal(n)


def warped_gp_data(rng, n: int, skew: float, tail: float, noise: float = 0.2):
    """``y = w⁻¹(f + ε)`` at ``n`` uniform inputs on ``[0, 1]`` (:func:`simulate`)."""
    X = rng.uniform(size=(n, 1))
    return X, simulate(X, rng, skew=skew, tail=tail, noise=noise)


@pytest.mark.parametrize("jacobian", [False, True])
def test_the_warped_density_gradient_matches_finite_differences(jacobian):
    X, u = _data()
    prm = constants("matern52", 2, Priors(), 1.0)
    z = np.array([-1.0, -0.5, 0.1, -2.0, 0.4, -0.3, -0.7, 0.2])
    value, grad = warped_log_density(z, X, u, prm, _warp_prm(), jacobian)
    h = 1e-6
    for k in range(len(z)):
        e = np.zeros_like(z)
        e[k] = h
        up = warped_log_density(z + e, X, u, prm, _warp_prm(), jacobian)[0]
        down = warped_log_density(z - e, X, u, prm, _warp_prm(), jacobian)[0]
        assert grad[k] == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-6)
    assert warped_log_densities(z[None], X, u, prm, _warp_prm()) == pytest.approx(
        warped_log_density(z, X, u, prm, _warp_prm(), True)[0]
    )


def test_at_the_identity_warp_the_density_is_the_built_in_ones_plus_the_warp_priors():
    X, u = _data(1)
    prm = constants("se", 2, Priors(), 1.0)
    theta = np.array([-1.0, -0.5, 0.1, -2.0])
    plain = log_density(theta, X, u, prm, False)[0]
    warped = warped_log_density(np.r_[theta, np.zeros(4)], X, u, prm, _warp_prm(), False)[0]
    lognormal_at_1 = -np.log(0.5) - 0.5 * np.log(2 * np.pi)  # log p(θ = 1), no Jacobian
    normal_at_0 = -0.5 * np.log(2 * np.pi)
    assert warped == pytest.approx(plain + 3 * lognormal_at_1 + normal_at_0)


def test_each_draw_conditions_on_its_own_warped_data():
    X, y = warped_gp_data(np.random.default_rng(2), 30, 2.0, 0.7)
    gp = ppd.ComponentGP("matern52", warp="sinh-arcsinh").fit(X, y, seed=0)
    post, d = gp.posterior, gp.draws
    u = (y - gp.y_mean) / gp.y_std
    assert post.y.shape == (1, 30)
    v = (u - d.warp_loc[0]) / d.warp_scale[0]
    assert post.y[0] == pytest.approx(sinh_arcsinh(v, np.log(d.warp_skew[0]), d.warp_tail[0]))


def test_the_sampler_density_maps_its_rows_back_to_the_draws_with_a_real_warp_loc():
    # warp_loc is the one real parameter: exponentiating it would turn c < 0 into c > 0
    X, y = warped_gp_data(np.random.default_rng(3), 20, 1.5, 0.8)
    gp = ppd.ComponentGP("se", warp="sinh-arcsinh").fit(X, y, seed=0)
    draws = replace(gp.draws, warp_loc=np.array([-0.7]))
    _, to_draws = sampler_density(gp)
    back = to_draws(gp._unconstrained(draws, gp._compiled()))
    for name in gp.hyper_names():
        assert getattr(back, name) == pytest.approx(getattr(draws, name)), name


def test_predictions_are_in_the_outputs_units_and_agree_with_each_other():
    X, y = warped_gp_data(np.random.default_rng(3), 40, 2.0, 0.7)
    gp = ppd.ComponentGP("matern52", warp="sinh-arcsinh").fit(X, y, seed=0)
    Xt = np.linspace(0.05, 0.95, 5)[:, None]
    q = gp.quantiles(Xt, [0.025, 0.5, 0.975])
    assert q.shape == (3, 5) and np.all(np.diff(q, axis=0) > 0)
    # one draw (MAP): the median is w⁻¹ of the latent mean, exactly
    mean, var = gp.posterior.per_draw(gp.scale_X(Xt))
    d = gp.draws
    v = sinh_arcsinh_inverse(mean[0], np.log(d.warp_skew[0]), d.warp_tail[0])
    median = gp.y_mean + gp.y_std * (d.warp_loc[0] + d.warp_scale[0] * v)
    assert q[1] == pytest.approx(median, rel=1e-6)
    samples = gp.sample(Xt, 20000, seed=1)
    m, v = gp.predict(Xt)
    assert samples.mean(0) == pytest.approx(m, rel=0.02, abs=0.02 * np.sqrt(v).max())
    assert np.quantile(samples, 0.975, axis=0) == pytest.approx(q[2], abs=0.03 * np.sqrt(v).max())
    with pytest.raises(NotImplementedError, match="warped scale"):
        gp.predict_per_draw(Xt)


def test_a_mixture_quantile_solves_the_mixtures_cdf():
    X, y = warped_gp_data(np.random.default_rng(4), 30, 1.5, 0.8)
    gp = ppd.ComponentGP("matern52", warp="sinh-arcsinh")
    gp.fit(X, y, "nuts", seed=0, draws=100, tune=200, chains=2)
    Xt = np.array([[0.3], [0.7]])
    v = gp.quantiles(Xt, [0.1])[0]
    mean, var = gp.posterior.per_draw(gp.scale_X(Xt))
    d = gp.draws
    u = ((v - gp.y_mean) / gp.y_std - d.warp_loc[:, None]) / d.warp_scale[:, None]
    z = sinh_arcsinh(u, np.log(d.warp_skew)[:, None], d.warp_tail[:, None])
    assert ndtr((z - mean) / np.sqrt(var)).mean(0) == pytest.approx(0.1, abs=1e-6)
    names = {"warp_skew", "warp_tail", "warp_loc", "warp_scale"}
    assert names <= set(gp.idata.posterior.data_vars)


def _held_out_coverage(gp, Xt, yt):
    """Whether each held-out ``yt`` lies in its 95% central interval, noise included."""
    lo, hi = gp.quantiles(Xt, [0.025, 0.975], pred_noise=True)
    return (yt > lo) & (yt < hi)


def _interval_holds(post, truth: dict) -> dict:
    """Whether each of ``truth``'s values lies in its posterior's 95% central interval."""
    out = {}
    for name, value in truth.items():
        lo, hi = np.quantile(post[name].values, [0.025, 0.975])
        out[name] = bool(lo < value < hi)
    return out


def test_full_bayes_recovers_a_known_warp_and_covers_where_the_unwarped_gp_misses_its_tail():
    # y = w⁻¹(f + ε) with κ = 3, δ = 0.5: a right tail that grows as (f + ε)²
    skew, tail, settings = 3.0, 0.5, {"draws": 200, "tune": 300, "chains": 2}
    inside, plain, top, held = [], [], [], []
    for seed in range(3):
        X, y = warped_gp_data(np.random.default_rng(seed), 400, skew, tail, noise=0.3)
        fit, (Xt, yt) = (X[:100], y[:100]), (X[100:], y[100:])
        warped = ppd.ComponentGP("matern52", warp="sinh-arcsinh").fit(
            *fit, "nuts", seed=seed, **settings
        )
        unwarped = ppd.ComponentGP("matern52").fit(*fit, "nuts", seed=seed, **settings)
        inside.append(_held_out_coverage(warped, Xt, yt))
        plain.append(_held_out_coverage(unwarped, Xt, yt))
        top.append(yt > np.quantile(yt, 0.8))
        group = "reweighted_posterior" if warped.diagnostics.reweighted else "posterior"
        # the raw-scale warp on the model's u = (y - ȳ) / s_y: c = -ȳ / s_y, s = 1 / s_y
        truth = {"warp_skew": skew, "warp_tail": tail}
        truth.update(warp_loc=-warped.y_mean / warped.y_std, warp_scale=1.0 / warped.y_std)
        held.append(_interval_holds(warped.idata[group], truth))
    inside, plain, top = map(np.concatenate, (inside, plain, top))
    # 95% intervals: 10 or more of the 12 hold but with probability ~0.02
    assert sum(sum(h.values()) for h in held) >= 10, held
    # 0.934 ± 0.009 over 10 datasets (benchmarks/studies/warped_recovery.py); 3 vary more
    assert inside.mean() >= 0.90, inside.mean()
    # the unwarped GP's one noise level is too small for the high outputs
    assert inside[top].mean() >= plain[top].mean() + 0.05, (inside[top].mean(), plain[top].mean())
    assert plain[top].mean() < 0.90, plain[top].mean()


def test_at_the_identity_warp_loo_is_the_unwarped_gps():
    X, y = warped_gp_data(np.random.default_rng(6), 25, 2.0, 0.7)
    plain = ppd.ComponentGP("matern52").fit(X, y, seed=0)
    d = plain.draws
    identity = dict(warp_skew=[1.0], warp_tail=[1.0], warp_loc=[0.0], warp_scale=[1.0])
    draws = HyperDraws(ls=d.ls, eta=d.eta, sigma=d.sigma, **identity)
    warped = ppd.ComponentGP("matern52", 1, warp="sinh-arcsinh").condition(X, y, draws)
    a, b = criticise(warped), criticise(plain)
    assert a.elpd_i == pytest.approx(b.elpd_i) and a.pit == pytest.approx(b.pit)


def test_loo_compares_warped_and_unwarped_fits_on_the_outputs_own_scale():
    X, y = warped_gp_data(np.random.default_rng(7), 60, 3.0, 0.5, noise=0.3)
    settings = {"draws": 150, "tune": 250, "chains": 2}
    warped = ppd.ComponentGP("matern52", warp="sinh-arcsinh").fit(X, y, "nuts", seed=0, **settings)
    plain = ppd.ComponentGP("matern52").fit(X, y, "nuts", seed=0, **settings)
    a, b = criticise(warped), criticise(plain)
    # the per-draw Jacobian enters each draw before PSIS mixes them
    assert a.elpd_i.shape == (60,) and np.isfinite(a.elpd_loo)
    gain = a.elpd_i - b.elpd_i  # paired by observation, as arviz-stats' compare does
    assert gain.sum() > 2 * np.sqrt(len(gain) * gain.var()), (gain.sum(), len(gain) * gain.var())


def test_a_warp_is_refused_where_it_cannot_run():
    with pytest.raises(ValueError, match="warp must be one of"):
        ppd.ComponentGP("matern52", warp="box-cox", name="rate")
    with pytest.raises(ValueError, match="component 'rate': loc must be a real prior"):
        ppd.ComponentGP("se", warp="sinh-arcsinh", loc=Prior("HalfNormal", sigma=1), name="rate")
    with pytest.raises(ValueError, match="component 'rate': skew must be a positive prior"):
        ppd.ComponentGP(
            "matern52", warp="sinh-arcsinh", skew=Prior("Normal", mu=0, sigma=1), name="rate"
        )
    with pytest.raises(ValueError, match="standardised outputs"):
        ppd.ComponentGP("matern52", warp="sinh-arcsinh", transform=None, name="rate")
    with pytest.raises(ValueError, match="built-in kernels"):
        ppd.ComponentGP(ppd.kernels.Matern12() + ppd.kernels.ExpQuad(), warp="sinh-arcsinh")
    with pytest.raises(ValueError, match="not a from_pymc model"):
        ppd.ComponentGP(build=lambda X, y: None, warp="sinh-arcsinh")


def test_a_warped_component_is_a_component_gp_with_its_warp_recorded():
    gp = ppd.ComponentGP("se", warp="sinh-arcsinh", tail=Prior("LogNormal", mu=0.0, sigma=0.3))
    assert isinstance(gp, WarpedGP) and isinstance(gp, ppd.ComponentGP)
    assert gp.model_dict()["warp"] == {
        "family": "sinh-arcsinh",
        "skew": None,
        "tail": {"dist": "LogNormal", "kwargs": {"mu": 0.0, "sigma": 0.3}},
        "loc": None,
        "scale": None,
    }
    warp = ["warp_skew", "warp_tail", "warp_loc", "warp_scale"]
    assert gp.hyper_names() == ["ls", "eta", "sigma", *warp]


def test_a_warped_components_description_rebuilds_it_with_its_warp_and_priors():
    tail = Prior("LogNormal", mu=0.0, sigma=0.3)
    gp = ppd.ComponentGP("matern32", warp="sinh-arcsinh", tail=tail)
    back = model_from_dict(json.loads(json.dumps(gp.model_dict())))
    assert isinstance(back, WarpedGP)
    assert back.model_dict() == gp.model_dict()
    assert back.warp_prm == pytest.approx(gp.warp_prm)
