import warnings

import numpy as np
import pytest
from scipy.stats import norm

from pp_decomp import ComponentGP, HyperDraws
from pp_decomp.components.diagnostics import DiagnosticsWarning, FitDiagnostics, warn_if_bad
from pp_decomp.components.gp.pymc_model import compiled_model


def _data(rng, n=25, d=2, noise=0.05):
    X = rng.uniform(size=(n, d))
    f = np.sin(5 * X[:, 0]) + (X[:, 1] if d > 1 else 0.0)
    return X, f + noise * rng.standard_normal(n), f


def test_map_fit_predicts_and_is_reproducible(rng):
    X, y, _ = _data(rng)
    gp = ComponentGP("matern52", 2, name="temp").fit(X, y, "map", seed=0)
    again = ComponentGP("matern52", 2).fit(X, y, "map", seed=0)
    np.testing.assert_array_equal(gp.draws.ls, again.draws.ls)
    assert gp.draws.n_draws == 1 and gp.diagnostics.inference == "map"
    Xt = rng.uniform(size=(200, 2))
    mean, var = gp.predict(Xt)
    truth = np.sin(5 * Xt[:, 0]) + Xt[:, 1]
    assert np.sqrt(np.mean((mean - truth) ** 2)) < 0.15
    assert np.all(var > 0)
    # The noise prior keeps σ away from zero (docs/design.md, "Stack facts").
    assert gp.draws.sigma[0] > 1e-3
    assert "sigma" in gp.idata.posterior


def test_quantiles_solve_the_mixture_over_draws_in_the_outputs_units(rng):
    X, y, _ = _data(rng)
    draws = HyperDraws(
        ls=[[0.3, 1.0], [0.8, 2.0], [0.2, 0.5]], eta=[1.0, 0.5, 2.0], sigma=[0.1] * 3
    )
    gp = ComponentGP("matern52", 2).condition(10.0 + 3.0 * X, 5.0 * y, draws)
    Xt = 10.0 + 3.0 * rng.uniform(size=(7, 2))
    q = [0.025, 0.5, 0.975]
    for noise in (False, True):
        x = gp.quantiles(Xt, q, pred_noise=noise)
        mean, var = gp.predict_per_draw(Xt, pred_noise=noise)
        cdf = norm.cdf((x[:, None, :] - mean) / np.sqrt(var)).mean(1)
        np.testing.assert_allclose(cdf, np.broadcast_to(np.array(q)[:, None], cdf.shape), atol=1e-8)
    assert np.all(np.diff(gp.quantiles(Xt, q), axis=0) > 0)
    one = ComponentGP("matern52", 2).condition(X, y, draws.subset([0]))
    mean, var = one.predict(Xt)
    lo, hi = one.quantiles(Xt, [0.025, 0.975])
    np.testing.assert_allclose(hi, mean + norm.ppf(0.975) * np.sqrt(var), rtol=1e-8)
    with pytest.raises(ValueError, match=r"q must lie in \(0, 1\); got \[0.5, 1.0\]"):
        gp.quantiles(Xt, [0.5, 1.0])


def test_map_fit_respects_bounds_scaling(rng):
    X, y, _ = _data(rng, d=1)
    unit = ComponentGP("se", 1).fit(X, y, seed=0)
    shifted = ComponentGP("se", 1, bounds=[[10.0], [20.0]]).fit(10 + 10 * X, y, seed=0)
    Xt = np.linspace(0, 1, 11)[:, None]
    np.testing.assert_allclose(unit.predict(Xt)[0], shifted.predict(10 + 10 * Xt)[0], atol=1e-5)


@pytest.mark.slow
def test_nuts_fit_reuses_compiled_model_and_reports_diagnostics(rng):
    X, y, _ = _data(rng, n=20, d=1)
    gp = ComponentGP("se", 1, name="humidity", max_draws=64)
    gp.fit(X, y, "nuts", draws=200, tune=200, chains=2, repairs=0, seed=1)
    cm = compiled_model("se", 1, gp.priors)
    first = cm.nutpie_model
    X2, y2, _ = _data(rng, n=23, d=1)  # a different number of points: data swap, no recompile
    gp.fit(X2, y2, "nuts", draws=200, tune=200, chains=2, repairs=0, seed=2)
    assert cm.nutpie_model is first
    d = gp.diagnostics
    assert d.inference == "nuts" and d.n_draws == 400
    assert np.isfinite(d.rhat_max) and d.rhat_max < 1.1
    assert d.ess_bulk_min > 50 and d.divergences >= 0
    assert gp.draws.n_draws == 64
    assert gp.idata.posterior.sizes["draw"] == 200
    summary = gp.summary()
    assert {"r_hat", "ess_bulk"} <= set(summary.columns)
    mean, var = gp.predict(X2[:3])
    np.testing.assert_allclose(mean, y2[:3], atol=0.3)


def test_bad_diagnostics_warn_with_component_name():
    bad = FitDiagnostics(
        "nuts", 100, rhat_max=1.3, ess_bulk_min=12, ess_tail_min=300, divergences=4, chains=2
    )
    with pytest.warns(DiagnosticsWarning, match="GP 'wind'.*r-hat 1.300.*4 divergent"):
        warn_if_bad(bad, "wind")
    good = FitDiagnostics(
        "nuts", 1000, rhat_max=1.001, ess_bulk_min=800, ess_tail_min=700, chains=4
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_bad(good, "wind")


def test_constant_output_does_not_divide_by_zero(rng):
    X = rng.uniform(size=(5, 1))
    gp = ComponentGP("se", 1).fit(X, np.full(5, 3.0), seed=0)
    mean, _ = gp.predict([[0.5]])
    np.testing.assert_allclose(mean, 3.0, atol=1e-6)


def test_map_survives_repeated_inputs(rng):
    # UCB on a finite set often re-evaluates a point: K then has duplicate rows.
    X = np.repeat(rng.uniform(size=(4, 1)), 5, axis=0)
    y = np.sin(6 * X[:, 0]) + 1e-4 * rng.standard_normal(20)
    gp = ComponentGP("se", 1).fit(X, y, "map", seed=0, restarts=5)
    assert np.all(np.isfinite(gp.predict(X)[0]))


@pytest.mark.slow
def test_a_bad_fit_is_repaired_or_reported_at_the_users_line(rng, monkeypatch):
    import pp_decomp.components.inference.nuts as nuts

    # the repairs by rerunning NUTS, where weighing the chains fails its checks
    # (tests/components/test_reweight.py tests the weighing)
    monkeypatch.setattr(nuts, "reweighted", lambda *args: None)
    X, y, _ = _data(rng, n=15, d=1)
    gp = ComponentGP("se", 1, name="humidity")
    # far too short to converge, and no repair allowed: the warning names the GP,
    # the numbers that failed and this file's line
    with pytest.warns(DiagnosticsWarning) as caught:
        gp.fit(X, y, "nuts", draws=15, tune=5, chains=2, repairs=0, seed=3)
    (w,) = [w for w in caught if issubclass(w.category, DiagnosticsWarning)]
    assert "GP 'humidity'" in str(w.message) and (
        "r-hat" in str(w.message) or "ESS" in str(w.message)
    )
    assert w.filename == __file__
    assert not gp.diagnostics.converged and gp.diagnostics.attempts == 1
    # with repairs (longer adaptation, pooled chains) a fit started as badly converges
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiagnosticsWarning)
        gp.fit(X, y, "nuts", draws=200, tune=5, chains=4, repairs=4, seed=3)
    d = gp.diagnostics
    assert d.converged and not d.first_ok and d.attempts > 1
    assert d.rhat_max <= 1.01 and d.ess_bulk_min >= 400 and d.divergences == 0


def test_a_warm_start_puts_every_chain_at_a_draw_of_the_previous_posterior(rng):
    """nutpie ignores ``init_mean`` for PyMC models; the warm start must not."""
    from pp_decomp.components.inference.nuts import NutsSettings

    X, y, _ = _data(rng, n=12, d=1)
    gp = ComponentGP("se", 1, name="f")
    Xs, ys = gp._set_data(X, y)
    init = HyperDraws(
        ls=np.array([[0.05], [0.07]]), eta=np.array([2.5, 3.0]), sigma=np.array([0.01, 0.02])
    )
    starts = gp._unconstrained(init, gp._compiled())
    np.testing.assert_allclose(starts, np.log([[0.05, 2.5, 0.01], [0.07, 3.0, 0.02]]))
    run = gp._sample(Xs, ys, NutsSettings(draws=5, tune=1, chains=4), 7, starts)
    log_ls = np.log(run.warmup_posterior["ls"].isel(draw=0).values.ravel())
    # one transition from log ls -3.0 or -2.7, far below the prior's centre (1.4,
    # jittered by at most 1), where nutpie would start the chains without it
    assert np.all(log_ls < -1.0), log_ls


def test_repair_plan_extends_agreeing_chains_and_reruns_the_others():
    from dataclasses import replace

    from pp_decomp.components.inference.nuts import NutsSettings, repair_plan

    s = NutsSettings(draws=400, tune=200)

    def diag(rhat, ess, div=0):
        return FitDiagnostics("nuts", 1600, rhat, ess, ess, div, chains=4)

    # chains agree, a little short: run s again and pool (one run, not a doubled one)
    assert repair_plan(s, s, diag(1.02, 300)) == (s, True)
    # divergences: discard, rerun with longer adaptation and smaller steps, same draws
    r, pool = repair_plan(s, s, diag(1.004, 900, div=3))
    assert not pool and (r.tune, r.draws, r.target_accept) == (400, 400, 0.9)
    # ... and again smaller steps, but never more than twice the first run's sizes
    r, pool = repair_plan(s, r, diag(1.004, 900, div=1))
    assert not pool and (r.tune, r.draws, r.target_accept) == (400, 400, 0.95)
    # a chain elsewhere: new starts, longer adaptation
    r, pool = repair_plan(s, s, diag(1.3, 900))
    assert not pool and (r.tune, r.draws) == (400, 400)
    # agreeing chains far short of the ESS: twice the draws, from the first run's
    bigger = replace(s, tune=400, draws=800)
    r, pool = repair_plan(s, bigger, diag(1.004, 150))
    assert not pool and (r.tune, r.draws) == (400, 800)
