import re

import numpy as np
import pytest

from pp_decomp import ComponentGP, HyperDraws
from pp_decomp.apps.calibration import ucb_coverage
from pp_decomp.components.samples import sample_function


def test_gp_from_its_own_prior_is_calibrated():
    """Functions drawn from the GP prior, predicted with the true kernel: coverage = nominal."""
    rng = np.random.default_rng(0)
    draws = HyperDraws(ls=[[0.2]], eta=[1.0], sigma=[0.1])
    means, sds, truths = [], [], []
    for _ in range(200):
        X = rng.uniform(size=(40, 1))
        f = sample_function("se", X, draws, rng)
        train, test = slice(0, 10), slice(10, 40)
        y = f[train] + 0.1 * rng.standard_normal(10)
        gp = ComponentGP("se", 1, standardize=False).condition(X[train], y, draws)
        m, v = gp.predict(X[test])
        means.append(m)
        sds.append(np.sqrt(v))
        truths.append(f[test])
    cov = ucb_coverage(means, sds, truths)
    # points within a function are correlated: allow 4 binomial SEs on the pooled count x 3
    assert np.all(np.abs(cov["empirical"] - cov["nominal"]) < 12 * cov["stderr"])
    assert np.all(np.abs(cov["empirical"] - cov["nominal"]) < 0.03)


def test_overconfident_bounds_undercover():
    rng = np.random.default_rng(1)
    truth = rng.standard_normal(20_000)
    cov = ucb_coverage(np.zeros_like(truth), np.full_like(truth, 0.5), truth, levels=[0.9])
    assert float(cov["empirical"][0]) < 0.8


def test_validation():
    with pytest.raises(ValueError, match="one shape"):
        ucb_coverage([0, 1], [1, 1], [0])
    with pytest.raises(ValueError, match=r"levels must lie in \(0, 1\)"):
        ucb_coverage([0], [1], [0], levels=[1.0])
    with pytest.raises(ValueError, match="truth must be finite"):
        ucb_coverage([0], [1], [np.nan])


def test_sample_coverage_of_a_calibrated_posterior_is_the_nominal_level():
    from pp_decomp.apps.calibration import LEVELS, sample_coverage

    rng = np.random.default_rng(0)
    mean, sd = rng.normal(size=4000), rng.uniform(0.5, 2.0, 4000)
    truth = mean + sd * rng.standard_normal(4000)
    samples = mean + sd * rng.standard_normal((2000, 4000))
    cov = sample_coverage(samples, truth)
    np.testing.assert_allclose(cov[:, 0], LEVELS, atol=0.03)  # central intervals
    np.testing.assert_allclose(cov[:, 1], LEVELS, atol=0.03)  # upper bounds
    # an overconfident posterior (sd halved) covers less than it claims
    narrow = mean + 0.5 * sd * rng.standard_normal((2000, 4000))
    assert np.all(sample_coverage(narrow, truth)[:, 0] < np.asarray(LEVELS) - 0.1)


def test_calibration_run_with_the_true_kernels_is_calibrated(tmp_path):
    from pp_decomp.apps.calibration import calibration_run, reliability
    from pp_decomp.apps.plots import plot_reliability
    from pp_decomp.models import get_problem

    ds = calibration_run(
        lambda s: get_problem("synthetic", seed=s, n_components=3, n_points=200),
        "d-gpucb",
        seeds=range(4),
        iterations=14,
        every=2,
        n_points=100,
        n_samples=400,
        inference="fixed",
        n_init=2,
    )
    assert ds["objective_coverage"].dims == ("seed", "step", "level", "bound")
    assert ds.sizes["component"] == 3 and ds.sizes["seed"] == 4
    rel = reliability(ds)
    # the functions are draws from these very kernels: calibrated up to sampling error
    err = np.abs(rel["component_coverage"].sel(bound="central") - rel["nominal"])
    assert float(err.mean()) < 0.1
    assert float(np.abs(rel["objective_coverage"] - rel["nominal"]).mean()) < 0.12
    # and so are their leave-one-out predictions of their own observations
    assert ds["loo_coverage"].dims == ("seed", "step", "component")
    assert abs(float(rel["loo_coverage"].mean()) - 0.95) < 0.05
    # and they miss on both sides alike, near the data and far from it
    from pp_decomp.apps.coverage_diagnosis import diagnosis

    diag = diagnosis(ds, 0.9)
    assert np.all(np.abs(diag["miss"] - 0.05) < 0.05), diag["miss"].values
    near_far = diag["by_distance"].values  # 4 seeds of correlated inputs: loose per cell
    assert np.abs(near_far - 0.9).mean() < 0.08 and near_far.min() > 0.7, near_far
    with pytest.raises(ValueError, match=r"level must be one of the run's levels .*; got 0\.97"):
        diagnosis(ds, 0.97)
    plot_reliability(rel, tmp_path / "rel.png")
    assert (tmp_path / "rel.png").stat().st_size > 0


def test_calibration_refuses_what_it_cannot_score():
    from pp_decomp import Box, Problem
    from pp_decomp.apps.calibration import calibration_run
    from pp_decomp.models import get_problem

    blind = Problem(Box([[0, 1]]), n_components=2, weights=[1, 1])
    with pytest.raises(ValueError, match="no components function"):
        calibration_run(blind, seeds=[0])
    small = get_problem("synthetic", seed=0, n_components=2, n_points=50)
    with pytest.raises(ValueError, match="levels must lie in"):
        calibration_run(small, seeds=[0], levels=[0.5, 1.0])
    with pytest.raises(ValueError, match="iterations=5 must exceed the initial design"):
        calibration_run(small, seeds=[0], iterations=5, n_init=5, inference="map")


def test_calibration_command_writes_the_results_and_the_diagram(tmp_path, capsys):
    import xarray as xr

    from pp_decomp.apps.cli import main

    out = tmp_path / "cal.nc"
    args = ["calibration", "--problem", "synthetic", "--seeds", "1", "--iterations", "9"]
    args += ["--init", "4", "--every", "2", "--points", "40", "--out", str(out)]
    args += ["--prior", "ls_family=inverse-gamma", "--prior", "ls_beta=0.3", "--kernel", "matern32"]
    assert main([*args, "--first-seed", "3"]) == 0
    printed = capsys.readouterr().out
    assert "| nominal | objective, central |" in printed
    assert "| LOO coverage, 0.95 (own observations) |" in printed
    ds = xr.load_dataset(out)
    assert ds.sizes["step"] == 3 and out.with_suffix(".png").exists()
    assert ds["seed"].values.tolist() == [3]  # an instance the defaults were not chosen on
    assert "ls_family='inverse-gamma'" in ds.attrs["priors"] and "ls_beta=0.3" in ds.attrs["priors"]
    assert ds.attrs["kernel"] == "matern32"
    assert "| nominal |" in out.with_suffix(".md").read_text()
    assert "| 0.95 central interval | coverage | miss below | miss above | near third |" in printed
    table = printed[printed.index("| 0.95 central interval") :].splitlines()
    assert table[0].count("|") == table[1].count("|") == table[2].count("|") == 10
    for row in ("f0", "f1", "objective"):
        assert re.search(rf"\| {row} \| [01]\.\d{{3}} ± \d\.\d{{3}} \|", printed), row
    assert ds["component_miss"].dims == ("seed", "step", "component", "level", "side")


def test_calibration_command_names_a_bad_prior_before_any_run(tmp_path, capsys):
    from pp_decomp.apps.cli import main

    base = [
        "calibration",
        "--problem",
        "synthetic",
        "--seeds",
        "1",
        "--out",
        str(tmp_path / "c.nc"),
    ]
    assert main([*base, "--prior", "ls_scal=2"]) == 2
    assert "--prior must be NAME=VALUE" in capsys.readouterr().err
    assert main([*base, "--prior", "ls_family=gamma"]) == 2
    assert "Priors.ls_family must be one of" in capsys.readouterr().err
    assert main([*base, "--component-kernel", "g1=se"]) == 2
    assert "NAME one of ['f0'" in capsys.readouterr().err
    assert main([*base, "--component-kernel", "f0=matern7"]) == 2
    assert "got 'matern7'" in capsys.readouterr().err
    assert main([*base, "--first-seed", "-1"]) == 2
    assert "--first-seed must be >= 0; got -1" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # refused before any run


def test_the_bound_used_by_d_gpucb_mc_is_its_monte_carlo_quantile():
    """On a linear g the Monte Carlo quantile of Σ w_j f_j is D-GPUCB's Gaussian bound
    up to sampling error; on a nonlinear g it is the quantile, not mean + √β sd."""
    from pp_decomp import Optimizer
    from pp_decomp.acquisition import DGPUCB
    from pp_decomp.acquisition.surrogate import decomposed_surrogate
    from pp_decomp.loop.step_bound import ucb_bound
    from pp_decomp.models import get_problem

    p = get_problem("synthetic", seed=1, n_components=3, n_points=120)
    opt = Optimizer(p, "d-gpucb-mc", n_init=4, seed=0, mc_samples=20000)
    opt.run(8)
    opt.ask()
    X = p.domain.X[:40]
    comps = [opt.models[n] for n in p.component_names]
    surrogate = decomposed_surrogate(comps, p, copula=opt.settings.model.copula)
    exact = DGPUCB(surrogate, 4.0)(X)
    h = np.zeros((2, 40))
    got = ucb_bound(
        opt.setup, opt.state, opt.models, opt.n + 1, X, h, 4.0, np.random.default_rng(0)
    )
    _, var = surrogate.linear_per_draw(X)
    np.testing.assert_allclose(got, exact, atol=float(0.05 * np.sqrt(var).max()))
    assert not np.allclose(
        got, ucb_bound(opt.setup, opt.state, opt.models, opt.n + 1, X, h, 9.0, 0)
    )


def test_misses_are_told_apart_by_side_and_by_distance_to_the_data():
    from pp_decomp.apps.coverage_diagnosis import distance_bands, interval_misses

    rng = np.random.default_rng(0)
    X_obs = np.array([[0.0, 0.0]])
    X = rng.uniform(size=(3000, 2)) * [2.0, 1.0]
    band = distance_bands(X, X_obs, widths=np.array([2.0, 1.0]))
    d = np.hypot(X[:, 0] / 2, X[:, 1])
    assert np.bincount(band).tolist() == [1000, 1000, 1000]
    assert d[band == 0].max() <= d[band == 1].min() and d[band == 1].max() <= d[band == 2].min()
    # sd right near the data, a third of it far away: the far third under-covers
    sd = np.where(band == 2, 1.0, 0.3)
    truth = rng.standard_normal(3000) * np.where(band == 2, 3.0, 0.3)
    samples = rng.standard_normal((2000, 3000)) * sd
    miss, by_band = interval_misses(samples, truth, [0.9], band)
    assert abs(by_band[0, 0] - 0.9) < 0.04 and abs(by_band[0, 1] - 0.9) < 0.04
    assert by_band[0, 2] < 0.5 and abs(miss[0, 0] - miss[0, 1]) < 0.05  # too narrow: both sides
    # a posterior too high misses below only
    miss, _ = interval_misses(samples + 1.0, rng.standard_normal(3000) * sd, [0.9], band)
    assert miss[0, 0] > 0.2 and miss[0, 1] < 0.02
    with pytest.raises(ValueError, match="X_obs must hold at least one observation"):
        distance_bands(X, np.empty((0, 2)), np.ones(2))
