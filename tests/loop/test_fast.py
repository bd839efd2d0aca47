import numpy as np
import pytest

from pp_decomp import ComponentGP, HyperDraws
from pp_decomp.components import GPPosterior
from pp_decomp.components.posterior.incremental import IncrementalPosterior
from pp_decomp.kernels import kernel_matrix


def _draws(rng, S=6, d=2, kernel="se"):
    return HyperDraws(
        ls=rng.uniform(0.2, 0.8, (S, d)),
        eta=rng.uniform(0.5, 1.5, S),
        sigma=rng.uniform(0.05, 0.3, S),
        alpha=rng.uniform(0.5, 3, S) if kernel == "rq" else None,
    )


def _log_ml(kernel, X, y, draws):
    K = kernel_matrix(kernel, X, X, draws.ls, draws.eta, draws.alpha)
    K += (draws.sigma**2 + 1e-6)[:, None, None] * np.eye(len(X))
    sign, logdet = np.linalg.slogdet(K)
    alpha = np.linalg.solve(K, np.broadcast_to(y, (len(K), len(y)))[..., None])[..., 0]
    quad = alpha @ y
    return -0.5 * (logdet + quad + len(y) * np.log(2 * np.pi))


@pytest.mark.parametrize("kernel", ["se", "matern32", "rq"])
def test_appends_match_a_fresh_posterior_and_exact_reweighting(kernel, rng):
    X, Xc = rng.uniform(size=(12, 2)), rng.uniform(size=(300, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    draws = _draws(rng, kernel=kernel)
    inc = IncrementalPosterior(kernel, X[:8], y[:8], draws, Xc)
    for i in range(8, 12):
        inc.append(X[i], y[i])
    fresh = GPPosterior(kernel, X, y, draws)
    mean_s, var_s = fresh.per_draw(Xc)
    np.testing.assert_allclose(inc.mean, mean_s, atol=1e-8)
    np.testing.assert_allclose(np.maximum(draws.eta[:, None] ** 2 - inc.qsum, 0), var_s, atol=1e-8)
    # log-weights are exactly log p(y_9..12 | θ_s, y_1..8)
    expected = _log_ml(kernel, X, y, draws) - _log_ml(kernel, X[:8], y[:8], draws)
    np.testing.assert_allclose(inc.logw, expected, rtol=1e-8)
    w = np.exp(expected - expected.max())
    w /= w.sum()
    mean, var = inc.moments()
    np.testing.assert_allclose(mean, w @ mean_s, atol=1e-8)
    np.testing.assert_allclose(var, w @ (var_s + mean_s**2) - (w @ mean_s) ** 2, atol=1e-8)
    assert inc.ess == pytest.approx(1 / np.sum(w**2))


class _FrozenScale(ComponentGP):
    """A GP standardising ``y`` with given statistics, as the fast path does between
    refits: the priors act on the standardised scale, so the reweighted draws
    target the posterior under the old standardisation."""

    def __init__(self, y_mean, y_std, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._frozen = (y_mean, y_std)

    def _set_data(self, X, y, min_rows=2, mean=0.0):
        Xs, _ = super()._set_data(X, y, min_rows, mean)
        self.y_mean, self.y_std = self._frozen
        return Xs, (np.asarray(y, dtype=float) - self.y_mean) / self.y_std


@pytest.mark.slow
def test_reweighted_draws_match_a_fresh_nuts_fit(rng):
    """Hyperparameter and predictive moments after 4 reweighted points vs fresh NUTS."""
    X = rng.uniform(size=(24, 1))
    y = np.sin(6 * X[:, 0]) + 0.1 * rng.standard_normal(24)
    Xc = np.linspace(0, 1, 50)[:, None]
    old = ComponentGP("se", 1, max_draws=4000).fit(X[:20], y[:20], "nuts", draws=1000, seed=1)
    inc = IncrementalPosterior("se", X[:20], (y[:20] - old.y_mean) / old.y_std, old.draws, Xc)
    for i in range(20, 24):
        inc.append(X[i], (y[i] - old.y_mean) / old.y_std)
    w = inc.weights
    new = _FrozenScale(old.y_mean, old.y_std, "se", 1, max_draws=4000)
    new.fit(X, y, "nuts", draws=1000, seed=2)
    # the weighted draws are as good as inc.ess independent ones only if the old draws
    # were independent: scale by the old fit's own ESS per draw
    ess_old = inc.ess * old.diagnostics.ess_bulk_min / len(w)
    for name in ("ls", "eta", "sigma"):
        a = np.ravel(getattr(old.draws, name))
        b = np.ravel(getattr(new.draws, name))
        tol = 4 * b.std() * np.sqrt(1 / ess_old + 1 / new.diagnostics.ess_bulk_min)
        assert abs(w @ a - b.mean()) < tol, name
        for q in (0.1, 0.5, 0.9):
            order = np.argsort(a)
            qa = a[order][np.searchsorted(np.cumsum(w[order]), q)]
            assert abs(qa - np.quantile(b, q)) < 2 * tol, (name, q)
    mean, var = inc.moments()
    mean = old.y_mean + old.y_std * mean
    var = old.y_std**2 * var
    mean_new, var_new = new.predict(Xc)
    np.testing.assert_allclose(mean, mean_new, atol=4 * np.sqrt(var_new.max() / ess_old) + 0.02)
    np.testing.assert_allclose(np.sqrt(var), np.sqrt(var_new), rtol=0.25, atol=0.02)


# max_age=3 forces refits within an 11-step run
FAST = dict(draws=100, tune=150, chains=2, max_age=3, lag=2, kept_draws=64)


@pytest.mark.slow
@pytest.mark.parametrize("domain", ["candidates", "box"])
def test_background_refits_resume_exactly_and_report_ess(domain, tmp_path):
    """A run killed while refits are in flight resumes with the same choices."""
    import warnings

    from pp_decomp import Optimizer, Priors
    from pp_decomp.loop import FastSettings
    from pp_decomp.models import get_problem

    if domain == "candidates":
        problem, strategy = (
            get_problem("synthetic", seed=5, n_components=2, n_points=120),
            "d-gpucb",
        )
    else:
        problem, strategy = _box_problem(), "d-gpucb-mc"
    kw = dict(inference="nuts", seed=4, n_init=4, mc_samples=64)
    kw["fast_settings"] = FastSettings(**FAST, prior_draws=0 if domain == "candidates" else 4096)
    if domain == "box":  # a wide prior: importance sampling from it stops passing within the run
        kw["priors"] = Priors(ls_family="lognormal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny NUTS settings: diagnostics may complain
        full = Optimizer(problem, strategy, **kw).run(11)
        path = tmp_path / "fast.nc"
        part = Optimizer(problem, strategy, checkpoint=path, **kw)
        part.run(8)
        in_flight = [fc.job for fc in part.updater.components.values() if fc.job is not None]
        part.close()
        ds = Optimizer.resume(path, problem).run(11)
    assert in_flight, "the checkpoint should hold a refit in flight"
    np.testing.assert_array_equal(ds["x"], full["x"])
    assert full.attrs["settings"].count('"fast": true') == 1
    ess = full["ess"].values[4:]
    assert np.all((ess > 0) & (ess <= 64 + 1e-9))
    # collapsed draws are refit before a decision uses them
    assert np.all(ess >= FastSettings().ess_collapse * 64), ess.min()
    refits = full["refit"].values[4:].sum(0)
    assert np.all(refits >= 2)  # max_age=3 forces refits within the run
    # every refit says whether it converged and how many repairs it took
    assert full["converged"].dtype == bool and full["repairs"].dtype.kind == "i"
    assert not full["converged"].values[~full["refit"].values].any()
    # on the box the first fits are by importance sampling from the prior; on the
    # candidates the prior proposal is off: the first fit is by NUTS. Later refits
    # refresh the draws by importance sampling (k̂ recorded, no r-hat) or run NUTS
    refit, rhat, k = full["refit"].values, full["rhat_max"].values, full["fit_pareto_k"].values
    kind = full["fit_draws"].values
    prior = (kind == "prior importance").sum(0)
    refresh = (kind == "posterior importance").sum(0)
    nuts = np.isin(kind, ["chains", "reweighted chains"]).sum(0)
    assert np.array_equal(kind != "", refit)
    weighted = np.isin(kind, ["prior importance", "posterior importance", "reweighted chains"])
    assert np.all(np.isnan(rhat[weighted])) and np.all(k[weighted] <= 0.7)
    assert np.all(np.isfinite(rhat[kind == "chains"]))
    if domain == "box":
        assert np.all(prior >= 1) and np.all(refresh + nuts >= 1), (prior, refresh, nuts)
    else:
        assert np.all(prior == 0) and np.all(nuts >= 1), (prior, refresh, nuts)
    assert refresh.sum() >= 1, (prior, refresh, nuts)


@pytest.mark.slow
def test_collapsed_draws_are_replaced_before_a_decision_uses_them(monkeypatch):
    """Collapsed draws wait for the refit in flight, or for a refit made at once."""
    import warnings

    from pp_decomp import Optimizer
    from pp_decomp.loop import FastSettings
    from pp_decomp.loop.updaters.fast import FastUpdater
    from pp_decomp.models import get_problem

    seen = {"in flight": 0, "made at once": 0}
    refit_collapsed = FastUpdater._refit_collapsed

    def spy(self, data, t, seeds, rec):
        for fc in self.components.values():
            if fc.collapsed:
                seen["in flight" if fc.job is not None else "made at once"] += 1
        refit_collapsed(self, data, t, seeds, rec)
        assert not any(fc.collapsed for fc in self.components.values())

    monkeypatch.setattr(FastUpdater, "_refit_collapsed", spy)
    problem = get_problem("synthetic", seed=5, n_components=2, n_points=120)
    fs = FastSettings(**FAST, prior_draws=0, max_in_flight=1, ess_collapse=0.3)
    kw = dict(inference="nuts", seed=4, n_init=4, fast_settings=fs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny NUTS settings: diagnostics may complain
        first = Optimizer(problem, "d-gpucb", **kw).run(11)
        again = Optimizer(problem, "d-gpucb", **kw).run(11)
    assert seen["in flight"] >= 1 and seen["made at once"] >= 1, seen
    assert np.all(first["ess"].values[4:] >= 0.3 * 64)
    np.testing.assert_array_equal(first["x"], again["x"])  # still independent of timing


def _box_problem():
    from pp_decomp import Box, Problem

    return Problem(
        Box([0, 0], [1, 1], A=[[1, 1]], b=[1.5]),
        lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 1] ** 2],
        2,
        g=lambda F: F[..., 0] * (1 + F[..., 1]),
        optimum=None,
        name="box2",
    )


def test_fast_path_rejects_unsupported_settings():
    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem

    problem = get_problem("synthetic", seed=0, n_components=2, n_points=50)
    with pytest.raises(ValueError, match="needs inference='nuts'"):
        Optimizer(problem, "d-gpucb", fast=True)
    with pytest.raises(ValueError, match="strategy 'random' cannot run.*fast path"):
        Optimizer(problem, "random", fast=True, inference="nuts")
    assert Optimizer(problem, "d-gpucb", inference="nuts").settings.inference.fast  # the default
    assert not Optimizer(problem, "d-gpucb", inference="nuts", fast=False).settings.inference.fast


def test_fast_path_refuses_nuts_sizes_and_passes_the_sampler_settings_through():
    from pp_decomp import Optimizer
    from pp_decomp.loop.updaters.fast import FastComponent
    from pp_decomp.models import get_problem

    problem = get_problem("synthetic", seed=0, n_components=2, n_points=50)
    with pytest.raises(ValueError, match=r"nuts_kwargs=\{'draws': 1000\}.*fast_settings"):
        Optimizer(problem, "d-gpucb", inference="nuts", nuts_kwargs={"draws": 1000})
    slow = Optimizer(problem, "d-gpucb", inference="nuts", fast=False, nuts_kwargs={"draws": 99})
    assert slow.settings.inference.nuts.draws == 99  # the straightforward path fits with them
    opt = Optimizer(
        problem,
        "d-gpucb",
        inference="nuts",
        nuts_kwargs={"target_accept": 0.95, "low_rank_mass_matrix": True},
    )
    nuts = FastComponent("f0", opt.settings, problem).nuts
    assert nuts["target_accept"] == 0.95 and nuts["low_rank_mass_matrix"] is True
    assert nuts["draws"] == opt.settings.inference.fast_path.draws


def test_incremental_posterior_on_a_box_matches_a_fresh_one(rng):
    X, Xs = rng.uniform(size=(12, 2)), rng.uniform(size=(30, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    draws = _draws(rng)
    inc = IncrementalPosterior("se", X[:7], y[:7], draws, None, mean_var=0.5)
    some = np.array([3, 0, 3, 5])  # a resample's: draw 3 repeated
    before = inc.at(Xs, some)
    np.testing.assert_array_equal(before[1][0], before[1][2])
    for i in range(7, 12):
        inc.append(X[i], y[i])
    fresh = GPPosterior("se", X, y, draws, mean_var=0.5)
    mean_s, var_s = fresh.per_draw(Xs)
    m, v = inc.at(Xs)
    np.testing.assert_allclose(m, mean_s, atol=1e-8)
    np.testing.assert_allclose(v, var_s, atol=1e-8)
    np.testing.assert_array_equal(inc.at(Xs, some)[1], v[some])  # each draw on its own
    m, v = inc.at(Xs, some)
    np.testing.assert_allclose(m, mean_s[some], atol=1e-8)
    np.testing.assert_allclose(v, var_s[some], atol=1e-8)
    assert not np.allclose(v, before[1])  # read from the factors as appended
    mean_j, cov_j = fresh.joint_per_draw(Xs[:4])
    mj, cj = inc.joint(np.arange(draws.n_draws), Xs=Xs[:4])
    np.testing.assert_allclose(mj, mean_j, atol=1e-8)
    np.testing.assert_allclose(cj, cov_j, atol=1e-8)


def test_pareto_k_flags_a_heavy_weight_tail_the_ess_misses(rng):
    from pp_decomp.loop import FastSettings

    X = rng.uniform(size=(6, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    inc = IncrementalPosterior("se", X, y, _draws(rng, S=128), None)
    assert inc.pareto_k == -np.inf  # no observation since the fit: equal weights
    inc.logw = 0.1 * rng.standard_normal(128)  # benign weights
    assert inc.pareto_k < 0.3 and inc.ess > 120
    # a few draws with far larger weights than the rest: the ESS still looks fine
    # (over half the draws), the Pareto tail does not
    inc.logw = np.r_[np.zeros(124), np.log([3.0, 4.0, 5.0, 6.0])] + 1e-3 * rng.random(128)
    assert inc.ess > 0.5 * 128 and inc.pareto_k > FastSettings().k_threshold(128)


def test_fast_settings_refit_triggers_are_checked_by_name():
    from pp_decomp.loop import FastSettings

    s = FastSettings()
    assert s.max_age is None  # no age-forced refits by default
    assert s.k_threshold(128) == pytest.approx(1 - 1 / np.log10(128))  # 0.525
    assert s.k_threshold(10**6) == 0.7 and s.k_threshold(4) == 0.0
    assert FastSettings(pareto_k_max=0.9).k_threshold(128) == 0.9
    with pytest.raises(ValueError, match=r"fast_settings.pareto_k_max must lie in \(0, 1\].*1.5"):
        FastSettings(pareto_k_max=1.5)
    with pytest.raises(ValueError, match="fast_settings.max_age"):
        FastSettings(max_age=0)
    with pytest.raises(ValueError, match="fast_settings.prior_draws.*-1"):
        FastSettings(prior_draws=-1)
    with pytest.raises(ValueError, match=r"fast_settings.ess_collapse.*0.6.*ess_refit=0.5"):
        FastSettings(ess_collapse=0.6)
    assert FastSettings(ess_collapse=0.0).ess_collapse == 0.0  # off
    assert FastSettings(prior_draws=0).prior_draws == 0  # every fit by NUTS


def test_refit_sizes_follow_the_last_fits_efficiency_and_the_lag_the_data():
    from pp_decomp.loop import FastSettings

    s = FastSettings()  # 4 chains, 400 draws at most, 150 at least, margin 1.5, ESS 400
    assert s.draws_for(None) == 400 and s.draws_for(float("nan")) == 400
    assert s.draws_for(0.25) == 400  # needs 600 per chain: capped
    assert s.draws_for(0.5) == 300 and s.draws_for(1.0) == 150 and s.draws_for(3.0) == 150
    assert [s.lag_at(n) for n in (5, 30, 50, 100)] == [2, 2, 3, 6]
    with pytest.raises(ValueError, match="fast_settings.draws_margin.*0.5"):
        FastSettings(draws_margin=0.5)
    with pytest.raises(ValueError, match="fast_settings.lag_fraction.*1.5"):
        FastSettings(lag_fraction=1.5)


def test_a_refit_is_due_on_ess_pareto_k_or_age(rng):
    from types import SimpleNamespace

    from pp_decomp.loop import FastSettings
    from pp_decomp.loop.updaters.fast import FastComponent

    fc = FastComponent.__new__(FastComponent)
    fc.n_at_refit = 10
    fc.post = SimpleNamespace(logw=np.zeros(128), ess=128.0, pareto_k=0.1)
    fc.settings = FastSettings()
    assert not fc.needs_refit(1000)  # healthy weights never age out by default
    fc.post.pareto_k = 0.6
    assert not fc.needs_refit(11)  # k̂ of nearly equal weights (ESS 128 of 128) is noise
    fc.post.ess = 100.0  # below 0.95 of the draws: k̂ counts
    assert fc.needs_refit(11)
    fc.post.pareto_k, fc.post.ess = 0.1, 60.0
    assert fc.needs_refit(11)
    fc.post.ess, fc.settings = 128.0, FastSettings(max_age=5)
    assert not fc.needs_refit(14) and fc.needs_refit(15)
    fc.settings = FastSettings()  # collapsed: below 0.15 of the draws
    fc.post.ess = 19.0
    assert fc.collapsed and fc.needs_refit(11)
    fc.post.ess = 20.0
    assert not fc.collapsed


def _component(rng, S, n):
    """What :class:`FastGPView` reads of a FastComponent: a GP and the incremental
    posterior of ``S`` draws on ``n`` points."""

    class Comp:
        gp = ComponentGP("se", 2, name="f")

    X = rng.uniform(size=(n, 2))
    draws = HyperDraws(
        ls=rng.uniform(0.2, 0.8, (S, 2)), eta=rng.uniform(0.5, 1.5, S), sigma=np.full(S, 0.1)
    )
    Comp.gp.condition(X, np.sin(4 * X[:, 0]), draws)
    comp = Comp()
    comp.post = IncrementalPosterior("se", Comp.gp.scale_X(X), rng.standard_normal(n), draws)
    return comp


def test_mixture_moments_of_the_thinned_fast_view_are_its_draws_equal_mix(rng):
    from pp_decomp.loop.updaters.fast_view import FastGPView

    comp = _component(rng, S=64, n=10)
    comp.post.logw = rng.normal(size=64)  # unequal weights
    view = FastGPView(comp, None, np.random.default_rng(0))
    thin = view.thinned(16)
    assert thin.n_draws == 16 and view.thinned(64) is view and view.n_draws == 64
    kept = thin.posterior.draw_idx
    assert set(kept) <= set(view.posterior.draw_idx) and np.all(np.diff(kept) >= 0)
    Xs = rng.uniform(size=(7, 2))
    mean_s, var_s = comp.post.at(comp.gp.scale_X(Xs), kept)
    m, v = thin.predict(Xs)
    mix_m = mean_s.mean(0)
    mix_v = (var_s + mean_s**2).mean(0) - mix_m**2
    np.testing.assert_allclose(m, comp.gp.y_mean + comp.gp.y_std * mix_m, rtol=1e-10)
    np.testing.assert_allclose(v, comp.gp.y_std**2 * mix_v, rtol=1e-8)


def test_the_screen_thins_further_on_many_points(monkeypatch, rng):
    """A screen reads every kept draw's ``(n, n)`` factor per evaluation: on many
    points it uses fewer draws, within ``SCREEN_BYTES``, at least ``MIN_SCREEN``."""
    from pp_decomp.loop.updaters import fast_view

    view = fast_view.FastGPView(_component(rng, S=32, n=40), None, np.random.default_rng(0))
    assert view.thinned(16).n_draws == 16  # 40 points: far within the budget
    monkeypatch.setattr(fast_view, "SCREEN_BYTES", 8 * 40**2 * 6)
    assert view.thinned(16).n_draws == 6 and view.thinned(4).n_draws == 4
    monkeypatch.setattr(fast_view, "SCREEN_BYTES", 8)
    assert view.thinned(16).n_draws == fast_view.MIN_SCREEN


def test_rescaled_moves_only_what_the_data_decide(rng):
    from pp_decomp.components import ComponentGP, Priors
    from pp_decomp.loop.updaters.fast import rescaled

    S = 4000
    priors = Priors()  # η ~ Gamma(400, 400), σ ~ LogNormal(-4, 1.5)
    # η as tight as its prior, σ well determined by the data: only σ moves, by the factor
    tight = HyperDraws(
        ls=np.full((S, 1), 0.3),
        eta=rng.gamma(400, size=S) / 400,
        sigma=np.exp(rng.normal(-2.0, 0.05, S)),
    )
    moved = rescaled(tight, 1.3, ComponentGP(priors=priors))
    np.testing.assert_allclose(moved.eta, tight.eta, rtol=0.02)
    np.testing.assert_allclose(moved.sigma / tight.sigma, 1.3**0.999, rtol=1e-3)
    np.testing.assert_array_equal(moved.ls, tight.ls)
    # under the earlier loose amplitude prior a well-determined η moves with the factor,
    # and a noise spread like its prior (below the jitter: unresolved) stays
    loose = Priors(eta_alpha=5, eta_beta=4)
    draws = HyperDraws(
        ls=np.full((S, 1), 0.3),
        eta=np.exp(rng.normal(0.1, 0.05, S)),
        sigma=np.exp(rng.normal(-4.0, 1.5, S)),
    )
    moved = rescaled(draws, 0.8, ComponentGP(priors=loose))
    np.testing.assert_allclose(moved.eta / draws.eta, 0.8, rtol=0.01)
    np.testing.assert_allclose(moved.sigma, draws.sigma, rtol=0.02)


def test_a_fast_run_imports_the_sampler_when_built_not_in_a_refit_beside_an_ask():
    """The first background NUTS refit used to import nutpie (and dask.array, arro3)
    in its thread, whose Python-level imports held the GIL against the asks."""
    import subprocess
    import sys

    probe = """
import sys
from pp_decomp import Box, Optimizer, Problem
import numpy as np
problem = Problem(Box([[0, 1]]), lambda X: np.sin(X), n_components=1, weights=[1.0])
assert "nutpie" not in sys.modules
Optimizer(problem, "d-gpucb", inference="map")
assert "nutpie" not in sys.modules  # MAP runs pay nothing for it
Optimizer(problem, "d-gpucb", inference="nuts")
print(sorted(m for m in ("nutpie", "dask.array", "arro3.core") if m in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['arro3.core', 'dask.array', 'nutpie']"


def test_a_first_model_ask_imports_nothing_under_map_or_nuts():
    """The first fits, inside the first model-based ask, used to import numba and load
    the one-pass correlations from its cache: the run now does that when it is built
    (compile_kernels; docs/performance.md, "The compiled correlations built with the run")."""
    import subprocess
    import sys

    probe = """
import sys, warnings
import numpy as np
from pp_decomp import Box, Optimizer, Problem
warnings.simplefilter("ignore")
problem = Problem(Box([[0, 1], [0, 1]]), lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 1] ** 2],
                  n_components=2, weights=[1.0, 1.0])
out = {}
for inference in ("map", "nuts"):
    opt = Optimizer(problem, "d-gpucb", inference=inference, seed=0, n_init=4)
    for _ in range(4):
        x = opt.ask()
        opt.tell(x, problem.evaluate(x[None], seed=0)[0])
    before = set(sys.modules)
    opt.ask()
    out[inference] = sorted(set(sys.modules) - before)
print(out)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'map': [], 'nuts': []}"
