"""Known kernels (``inference="fixed"``): Wang et al.'s protocol for the bandit experiments."""

import dataclasses

import numpy as np
import pytest
import xarray as xr

from pp_decomp import ComponentGP, EntireGP, HyperDraws, KnownKernels, LinearComposition, Optimizer
from pp_decomp.apps.bench import BenchSpec
from pp_decomp.components.gp.priors import Priors
from pp_decomp.kernels import kernel_matrix
from pp_decomp.loop.records import FitNotes
from pp_decomp.loop.updaters import loop_data
from pp_decomp.models import get_problem


def _models(opt):
    """The GPs the next ask would use (known kernels: no inference, no randomness)."""
    return opt.updater.update(loop_data(opt.setup, opt.state), opt.n + 1, None, FitNotes())


@pytest.fixture(scope="module")
def small_synthetic():
    return get_problem("synthetic", seed=3, n_components=3, n_points=150)


def _exact_posterior(K, Ks, kss, y, noise_var):
    """Textbook zero-mean GP posterior: mean (m,), variance (m,)."""
    A = K + noise_var * np.eye(len(K))
    mean = Ks.T @ np.linalg.solve(A, y)
    var = kss - np.einsum("nm,nm->m", Ks, np.linalg.solve(A, Ks))
    return mean, var


def test_known_kernels_validates_and_round_trips():
    se = HyperDraws(ls=[[0.2]], eta=[1.5], sigma=[1e-3])
    with pytest.raises(TypeError, match="draws must be a sequence of HyperDraws"):
        KnownKernels("se", se)
    with pytest.raises(TypeError, match=r"draws\[1\] must be a HyperDraws"):
        KnownKernels("se", (se, {"ls": 1}))
    with pytest.raises(ValueError, match=r"draws\[0\].alpha must be given exactly for kernel 'rq'"):
        KnownKernels("rq", (se,))
    with pytest.raises(ValueError, match="kernel must be one of"):
        KnownKernels("linear", (se,))
    known = KnownKernels("expquad", (se, se))
    assert known.kernel == "se" and known.n_components == 2
    with pytest.raises(ValueError, match=r"has 2 kernel\(s\) but the problem has 3 component"):
        known.check(3, 1)
    with pytest.raises(ValueError, match=r"draws\[0\].ls has 1 column\(s\) but the problem has 2"):
        known.check(2, 2)
    back = KnownKernels.from_description(known.describe())
    assert back.kernel == "se"
    for a, b in zip(back.draws, known.draws, strict=True):
        for f in dataclasses.fields(a):
            np.testing.assert_array_equal(getattr(a, f.name), getattr(b, f.name))


def test_synthetic_known_kernels_generated_its_functions():
    p = get_problem("synthetic", seed=5, n_components=2, n_points=300)
    assert p.known_kernels.kernel == "se" and p.known_kernels.n_components == 2
    # a function drawn from k_j has (up to sampling error) the variance eta_j^2
    F = p.components(p.domain.X)
    eta = np.array([d.eta[0] for d in p.known_kernels.draws])
    assert np.all(np.isfinite(F)) and F.shape == (300, 2) and np.all(eta > 0)
    np.testing.assert_array_equal(p.known_kernels.draws[0].sigma, [p.noise_sd[0]])


def test_fixed_decomposed_posterior_is_the_exact_gp_posterior(small_synthetic):
    p = small_synthetic
    opt = Optimizer(p, "d-gpucb", inference="fixed", n_init=4, seed=0)
    opt.run(7)
    gps = _models(opt)
    X, Xs = opt.X, p.domain.X[::10]
    for j, name in enumerate(p.component_names):
        d = p.known_kernels.draws[j]
        K = kernel_matrix("se", X, X, d.ls, d.eta)[0]
        Ks = kernel_matrix("se", X, Xs, d.ls, d.eta)[0]
        mean, var = _exact_posterior(K, Ks, d.eta[0] ** 2, opt.Y[:, j], d.sigma[0] ** 2 + 1e-6)
        got_mean, got_var = gps[name].predict(Xs)
        np.testing.assert_allclose(got_mean, mean, atol=1e-8)
        np.testing.assert_allclose(got_var, var, atol=1e-8)
    ds = opt.results()
    assert ds.attrs["strategy"] == "d-gpucb"
    assert '"inference": "fixed"' in ds.attrs["settings"]


def test_fixed_composed_strategy_uses_the_entire_gp_and_theorem6_holds():
    p = get_problem("synthetic", seed=4, n_components=3, n_points=120)
    # minimise so that the sign of the composed model matters
    p = dataclasses.replace(p, maximize=False, optimum=float(p.objective(p.domain.X).min()))
    opt = Optimizer(p, "gp-ucb", inference="fixed", n_init=5, seed=1)
    opt.run(8)
    entire = _models(opt)["composed"]
    assert isinstance(entire, EntireGP)
    X, Xs = opt.X, p.domain.X
    K = sum(kernel_matrix("se", X, X, d.ls, d.eta)[0] for d in p.known_kernels.draws)
    Ks = sum(kernel_matrix("se", X, Xs, d.ls, d.eta)[0] for d in p.known_kernels.draws)
    kss = sum(d.eta[0] ** 2 for d in p.known_kernels.draws)
    noise = sum(d.sigma[0] ** 2 + 1e-6 for d in p.known_kernels.draws)
    mean, var = _exact_posterior(K, Ks, kss, -opt.Y.sum(1), noise)
    got_mean, got_var = entire.predict(Xs)
    np.testing.assert_allclose(got_mean, mean, atol=1e-7)
    np.testing.assert_allclose(got_var, var, atol=1e-7)
    dec = Optimizer(p, "d-gpucb", inference="fixed", n_init=5, seed=1)
    dec.tell(opt.X, opt.Y)
    dec_var = sum(gp.predict(Xs)[1] for gp in _models(dec).values())
    assert np.all(dec_var <= got_var + 1e-9)  # Theorem 6 with the true kernels


def test_entire_gp_joint_samples_match_its_moments(small_synthetic):
    p = small_synthetic
    X = p.domain.X[::25]
    Y = p.evaluate(X, seed=0)
    comps = [
        ComponentGP("se", 1, standardize=False).condition(X, Y[:, j], d)
        for j, d in enumerate(p.known_kernels.draws)
    ]
    entire = EntireGP(comps, LinearComposition.ones(3)).condition(X, Y)
    Xs = p.domain.X[3:40:3]
    draws = entire.sample(Xs, 4000, seed=0, joint=True)
    mean, var = entire.predict(Xs)
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * np.sqrt(var / 4000) + 1e-9)
    np.testing.assert_allclose(draws.var(0), var, rtol=0.15)
    # joint: neighbouring grid points are strongly correlated, not independent
    marginal = entire.sample(Xs, 4000, seed=0, joint=False)
    assert np.corrcoef(draws[:, 0], draws[:, 1])[0, 1] > 0.5
    assert abs(np.corrcoef(marginal[:, 0], marginal[:, 1])[0, 1]) < 0.1


def test_fixed_run_resumes_with_the_same_choices(small_synthetic, tmp_path):
    full = Optimizer(small_synthetic, "gp-mi", inference="fixed", n_init=3, seed=4).run(9)
    path = tmp_path / "ck.nc"
    Optimizer(small_synthetic, "gp-mi", inference="fixed", n_init=3, seed=4, checkpoint=path).run(6)
    # the kernels travel in the checkpoint: a problem without them still resumes
    bare = dataclasses.replace(small_synthetic, known_kernels=None)
    resumed = Optimizer.resume(path, bare)
    assert resumed.settings.model.known_kernels.n_components == 3
    np.testing.assert_array_equal(resumed.run(9)["x"], full["x"])


def test_fixed_inference_rejects_what_it_cannot_do(small_synthetic):
    known = small_synthetic.known_kernels
    with pytest.raises(ValueError, match="known_kernels is used only with inference='fixed'"):
        Optimizer(small_synthetic, known_kernels=known)
    flu = get_problem("flu")
    with pytest.raises(
        ValueError, match="needs known_kernels=, and problem 'flu' has no known_kernels"
    ):
        Optimizer(flu, inference="fixed")
    with pytest.raises(ValueError, match="kernel='matern52' differs from the known kernels"):
        Optimizer(small_synthetic, inference="fixed", kernel="matern52")
    with pytest.raises(ValueError, match=r"has 3 kernel\(s\) but the problem has 2"):
        Optimizer(
            get_problem("synthetic", seed=0, n_components=2, n_points=50),
            inference="fixed",
            known_kernels=known,
        )
    pt = get_problem("perceived-temperature")
    fake = KnownKernels("se", (HyperDraws([[0.3, 0.3]], [1.0], [0.1]),) * 3)
    with pytest.raises(ValueError, match=r"g is not linear.*KnownKernels\(composed=\.\.\.\)"):
        Optimizer(pt, "gp-ucb", inference="fixed", known_kernels=fake)
    Optimizer(pt, "d-gpucb-mc", inference="fixed", known_kernels=fake)  # decomposed is fine
    box = get_problem("kandasamy-10-3-3")
    kk = KnownKernels("se", (HyperDraws([[0.3] * 10], [1.0], [0.1]),) * box.n_components)
    with pytest.raises(ValueError, match="learns its own kernels"):
        Optimizer(box, "add-gp-ucb", inference="fixed", known_kernels=kk)


def test_bench_skips_problems_without_known_kernels():
    spec = BenchSpec(["synthetic", "flu"], ["d-gpucb", "gp-ucb"], trials=1, inference="fixed")
    tasks = spec.tasks()
    assert {t.problem for t in tasks} == {"synthetic"}
    assert {(p, s) for p, s, _ in spec.skipped} == {("flu", "d-gpucb"), ("flu", "gp-ucb")}
    assert all("no known_kernels" in why for *_, why in spec.skipped)


@pytest.mark.parametrize("strategy", ["d-gpucb", "gp-ucb"])
def test_no_initial_design_starts_from_the_prior(small_synthetic, strategy):
    # Wang Algs. 1 and 3 start at t = 1 with no data: the UCB is the prior's,
    # sqrt(beta_1) * sqrt(sum_j eta_j^2) for the decomposed and the entire GP alike
    ds = Optimizer(small_synthetic, strategy, inference="fixed", n_init=0, seed=0).run(4)
    eta2 = sum(float(d.eta[0] ** 2) for d in small_synthetic.known_kernels.draws)
    assert ds["phase"].values.tolist() == ["acquisition"] * 4
    np.testing.assert_allclose(ds["acq_value"][0], np.sqrt(ds["beta"][0] * eta2), rtol=1e-9)
    assert len(np.unique(ds["x"].values)) == 4  # observing a point moves the next choice


def test_n_init_zero_needs_known_kernels_and_an_incumbent_free_strategy(small_synthetic):
    with pytest.raises(ValueError, match="n_init must be >= 2"):
        Optimizer(small_synthetic, n_init=0)
    with pytest.raises(ValueError, match="'ei' cannot run.*improves on the best observation"):
        Optimizer(small_synthetic, "ei", inference="fixed", n_init=0)
    ds = Optimizer(small_synthetic, "ei", inference="fixed", n_init=1, seed=0).run(3)
    assert np.all(np.isfinite(ds["acq_value"].values[1:]))


def test_cli_runs_the_papers_protocol(tmp_path, capsys):
    from pp_decomp.apps.cli import main

    out = tmp_path / "known.nc"
    argv = ["run", "--problem", "synthetic", "--strategy", "d-gpucb", "--inference", "fixed"]
    assert main(argv + ["--init", "0", "--iterations", "6", "--out", str(out), "--quiet"]) == 0
    ds = xr.load_dataset(out)
    assert ds.sizes["iteration"] == 6 and '"inference": "fixed"' in ds.attrs["settings"]
    assert (
        main(["run", "--problem", "flu", "--inference", "fixed", "--out", str(tmp_path / "f.nc")])
        == 2
    )
    assert "problem 'flu' has no known_kernels" in capsys.readouterr().err


def test_kernels_fitted_on_earlier_runs_become_known_kernels():
    rng = np.random.default_rng(0)
    bounds = np.array([[0.0, -1.0], [2.0, 1.0]])
    X = bounds[0] + rng.uniform(size=(40, 2)) * (bounds[1] - bounds[0])
    Y = np.c_[np.sin(2 * X[:, 0]) + 5.0, 3.0 * X[:, 1] ** 2 - 1.0]
    Y = Y + 0.01 * rng.standard_normal(Y.shape)
    fixed_mean = Priors(mean_sd=0.0)  # a known kernel has no uncertain mean to carry
    fitted = [
        ComponentGP("se", 2, bounds=bounds, name=f"f{j}", priors=fixed_mean).fit(X, Y[:, j], seed=j)
        for j in range(2)
    ]
    known = KnownKernels.from_components(fitted, bounds)
    assert known.kernel == "se"
    np.testing.assert_allclose(known.mean, Y.mean(0))
    Xs = bounds[0] + rng.uniform(size=(25, 2)) * (bounds[1] - bounds[0])
    for j, gp in enumerate(fitted):
        again = ComponentGP("se", 2, bounds=bounds, standardize=False)
        again.condition(X, Y[:, j], known.draws[j], mean=known.mean[j])
        m0, v0 = gp.predict(Xs)
        m1, v1 = again.predict(Xs)
        # the same GP: the known noise carries the standardised GP's jitter
        np.testing.assert_allclose(m1, m0, atol=1e-6 * Y[:, j].std())
        np.testing.assert_allclose(v1, v0, atol=1e-6 * Y[:, j].var())
    back = KnownKernels.from_description(known.describe())
    assert back.mean == known.mean
    with pytest.raises(ValueError, match=r"components\[0\] \('f0'\) was fitted with bounds"):
        KnownKernels.from_components(fitted, [[0, 0], [1, 1]])
    with pytest.raises(ValueError, match=r"components\[1\] \('g'\) is not fitted"):
        KnownKernels.from_components([fitted[0], ComponentGP("se", 2, name="g")], bounds)
    with pytest.raises(ValueError, match="mean must hold one finite value per component"):
        KnownKernels("se", known.draws, mean=(1.0, np.nan))


def test_fixed_run_uses_the_known_prior_mean():
    # with a large known mean, the entire GP's prior mean is the signed sum of the means
    p = get_problem("synthetic", seed=2, n_components=2, n_points=80)
    shifted = KnownKernels("se", p.known_kernels.draws, mean=(10.0, -4.0))
    opt = Optimizer(p, "gp-ucb", inference="fixed", n_init=0, seed=0, known_kernels=shifted)
    mean, _ = _models(opt)["composed"].predict(p.domain.X[:3])
    np.testing.assert_allclose(mean, 6.0)
    dec = Optimizer(p, "d-gpucb", inference="fixed", n_init=0, seed=0, known_kernels=shifted)
    gps = _models(dec)
    np.testing.assert_allclose(gps["f0"].predict(p.domain.X[:3])[0], 10.0)


def _perceived_known():
    """Perceived temperature on the run stations, with known kernels for its three
    components and for g (``comp``, mean 11)."""
    pt = get_problem("perceived-temperature", split="run", seed=1)
    comp = HyperDraws([[0.1, 0.08]], [15.0], [3.0])
    known = KnownKernels(
        "se",
        (HyperDraws([[0.1, 0.07]], [14.0], [2.0]),) * 3,
        mean=(12.0, 57.0, 4.0),
        composed=comp,
        composed_mean=11.0,
    )
    return pt, comp, known


def test_known_composed_kernel_serves_the_composed_strategies_on_a_nonlinear_g():
    pt, comp, known = _perceived_known()
    back = KnownKernels.from_description(known.describe())
    assert back.composed_mean == 11.0 and np.array_equal(back.composed.ls, comp.ls)
    opt = Optimizer(pt, "gp-ucb", inference="fixed", n_init=6, seed=0, known_kernels=known)
    opt.run(8)
    gp = _models(opt)["composed"]
    Xs = pt.domain.X[::50]
    scale = (pt.domain.bounds[1] - pt.domain.bounds[0])[None, :]
    K = kernel_matrix("se", opt.X / scale, opt.X / scale, comp.ls, comp.eta)[0]
    Ks = kernel_matrix("se", opt.X / scale, Xs / scale, comp.ls, comp.eta)[0]
    h = opt.signed_objective()  # maximised as is: sign +1
    mean, var = _exact_posterior(K, Ks, 15.0**2, h - 11.0, 3.0**2 + 1e-6)
    got_mean, got_var = gp.predict(Xs)
    np.testing.assert_allclose(got_mean, 11.0 + mean, atol=1e-7)
    np.testing.assert_allclose(got_var, var, atol=1e-7)
    with pytest.raises(ValueError, match=r"composed.ls has 1 column\(s\) but the problem has 2"):
        KnownKernels("se", known.draws, composed=HyperDraws([[0.1]], [1.0], [1.0])).check(3, 2)


def test_known_kernels_fit_on_earlier_runs_and_the_paper_protocol_problem():
    with pytest.raises(ValueError, match="it needs split='run'; got split='all'"):
        get_problem("perceived-temperature", known_kernels=True)
    p = get_problem("perceived-temperature-run", seed=2)
    k = p.known_kernels
    assert p.name == "perceived-temperature-run" and k.composed is not None
    learn_Y = p.metadata["learn_Y"]
    np.testing.assert_allclose(k.mean, learn_Y.mean(0))  # the learning third's means
    np.testing.assert_allclose(k.composed_mean, p.compose(learn_Y, p.metadata["learn_X"]).mean())
    # no learning-third station is among the run stations
    run = {tuple(x) for x in p.domain.X}
    assert not any(tuple(x) in run for x in p.metadata["learn_X"])
    ds = Optimizer(p, "gp-ucb", inference="fixed", n_init=0, seed=0).run(3)
    assert ds.sizes["iteration"] == 3


def test_known_kernels_fit_checks_every_argument_before_fitting():
    X, Y = np.random.default_rng(0).uniform(size=(10, 2)), np.ones((10, 3))
    bounds = [[0, 0], [1, 1]]
    with pytest.raises(ValueError, match="composed_y has 9 value"):
        KnownKernels.fit(X, Y, bounds, composed_y=np.ones(9))
    with pytest.raises(ValueError, match="composed_y must be finite"):
        KnownKernels.fit(X, Y, bounds, composed_y=np.r_[np.ones(9), np.nan])
    with pytest.raises(ValueError, match="X must be finite"):
        KnownKernels.fit(np.r_[X[:9], [[np.inf, 0.0]]], Y, bounds)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        KnownKernels.fit(X, Y, bounds, seed=-1)
    with pytest.raises(ValueError, match="kernel must be one of"):
        KnownKernels.fit(X, Y, bounds, kernel="linear")
    with pytest.raises(ValueError, match="c must be finite"):
        LinearComposition.ones(2).scaled(np.nan)


def test_known_kernels_give_a_min_strategy_the_components_and_the_known_gp_of_g():
    pt, comp, known = _perceived_known()
    opt = Optimizer(pt, "d-gpucb-box-min", inference="fixed", n_init=6, seed=0, known_kernels=known)
    opt.run(7)
    gps = _models(opt)
    assert list(gps) == [*pt.component_names, "composed"]
    np.testing.assert_array_equal(gps["composed"].draws.eta, comp.eta)
    np.testing.assert_array_equal(gps[pt.component_names[0]].draws.eta, [14.0])


def test_a_noise_free_fit_of_small_outputs_becomes_known_kernels():
    # y spread below 1 and no noise: the fit's noise in output units falls under
    # the jitter, and the known kernel keeps the jitter alone instead of refusing
    X = np.linspace(0.0, 1.0, 30)[:, None]
    y = 0.3 * np.sin(6 * X[:, 0])
    gp = ComponentGP("se", 1, bounds=[[0.0], [1.0]], priors=Priors(mean_sd=0.0))
    gp.fit(X, y, seed=0)
    known = KnownKernels.from_components([gp], [[0.0], [1.0]])
    assert 0 < known.draws[0].sigma[0] < 1e-6
    again = ComponentGP("se", 1, bounds=[[0.0], [1.0]], standardize=False)
    again.condition(X, y, known.draws[0], mean=known.mean[0])
    Xs = np.linspace(0.0, 1.0, 7)[:, None]
    np.testing.assert_allclose(again.predict(Xs)[0], gp.predict(Xs)[0], atol=1e-3 * y.std())
