"""The hyperparameter-uncertainty study (issue 70): counterfactual choices that replay
exactly, its records, its refusals before any fit, and the command."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from pp_decomp import Optimizer
from pp_decomp.apps.cli import main
from pp_decomp.apps.hyper_study import counterfactual, hyper_study, weighted_log_sd
from pp_decomp.apps.hyper_summary import study_tables
from pp_decomp.loop import checkpoint as ckpt
from pp_decomp.models import get_problem


def _problem(seed: int):
    return get_problem("synthetic", seed=seed, n_components=2)


STRATEGY = "d-gpucb-mc"  # its choices draw random numbers: a wrong key would show


@pytest.fixture(scope="module")
def study():
    return hyper_study(
        _problem,
        STRATEGY,
        seeds=[1],
        iterations=7,
        n_init=4,
        n_points=16,
        n_samples=64,
        mc_samples=64,
    )


@pytest.mark.parametrize("inference", ["map", "fixed"])
def test_a_step_replayed_from_the_checkpoint_makes_the_runs_choice(inference, tmp_path):
    problem, path = _problem(2), tmp_path / "run.nc"
    kw = dict(inference=inference, seed=2, n_init=4, mc_samples=64)
    if inference == "map":
        kw["warm_start"] = False  # the counterfactual fits afresh from the history
    opt = Optimizer(problem, STRATEGY, checkpoint=path, **kw)
    opt.run(8)
    opt.close()
    ds, _ = ckpt.read(path)
    X, Y = ds["x"].values, ds["y"].values
    for t in (5, 8):  # the first model-based step and the last
        replay = counterfactual(problem, STRATEGY, X[: t - 1], Y[: t - 1], **kw)
        assert replay.pending.items[0][1]["key"] == opt.state.records[t - 1]["key"]
        np.testing.assert_array_equal(replay.pending.X[0], X[t - 1])
    # another key draws other random numbers, and here another choice
    shifted = counterfactual(problem, STRATEGY, X[:7], Y[:7], **{**kw, "seed": 3})
    assert not np.array_equal(shifted.pending.X[0], X[7])


def test_the_studys_counterfactual_choices_replay_from_the_full_bayes_history(study):
    problem = _problem(1)
    X = study["x"].sel(seed=1, inference="nuts").values
    Y = study["y"].sel(seed=1, inference="nuts").values
    known = problem.known_kernels
    for t in study["step"].values:
        for a, kw in (("map", {}), ("fixed", {"known_kernels": known})):
            replay = counterfactual(
                problem, STRATEGY, X[: t - 1], Y[: t - 1], 1, 4, inference=a, mc_samples=64, **kw
            )
            recorded = study["choice"].sel(seed=1, step=t, inference=a).values
            np.testing.assert_array_equal(replay.pending.X[0], recorded)
        # full Bayes's own choice is the one its run evaluated next
        np.testing.assert_array_equal(
            study["choice"].sel(seed=1, step=t, inference="nuts").values, X[t - 1]
        )


def test_the_study_records_what_it_says(study):
    assert list(study["inference"].values) == ["fixed", "map", "nuts"]
    assert list(study["step"].values) == [5, 6, 7]
    nuts = study.sel(inference="nuts")
    assert np.all(nuts["distance"] == 0) and np.all(nuts["disagree"] == 0)
    assert set(np.unique(study["disagree"])) <= {0.0, 1.0}
    # the synthetic domain is finite: a disagreement is another candidate
    moved = study["distance"] > 0
    np.testing.assert_array_equal(moved.values, study["disagree"].values == 1)
    # each acquisition rates its own choice at least as high as the other's
    own, other = study["acq_own"], study["acq_at_nuts_choice"]
    assert np.all(own >= other - 1e-9 * np.abs(own))
    assert np.all((study["bound_coverage"] >= 0) & (study["bound_coverage"] <= 1))
    assert np.all(study["choice_regret"] >= 0)
    sd = study["hyper_sd"]
    assert list(study["gp"].values) == ["f0", "f1"]
    assert np.all(sd >= 0) and float(sd.max()) > 0  # full Bayes has draws of some width
    simple = study["simple_regret"].values
    assert np.all(np.diff(simple, axis=-1) <= 0)
    table = study_tables(study)
    assert "disagree map" in table and "minus nuts" in table


def test_weighted_log_sd_is_the_weighted_sd_of_the_log():
    v, lw = np.array([1.0, np.e, np.e**2]), np.log([0.25, 0.5, 0.25])
    assert weighted_log_sd(v, lw) == pytest.approx(np.sqrt(0.5))
    assert weighted_log_sd(np.array([3.0]), np.zeros(1)) == 0.0
    assert weighted_log_sd(v, np.zeros(3)) == pytest.approx(np.std(np.log(v)))


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(iterations=4), "iterations=4 must exceed n_init=4"),
        (dict(inferences=("map", "fixed")), "holding 'nuts'"),
        (dict(inferences=("nuts", "laplace")), "holding 'nuts'"),
        (dict(strategy="d-thompson"), "strategy 'd-thompson' chooses without an acquisition"),
        (dict(strategy="gp-mi"), "strategy 'gp-mi' carries a state from choice to choice"),
        (dict(strategy="d-gpucb-sc"), "inference='fixed' has one draw"),
        (dict(checkpoint="x.nc"), "checkpoint= is set by the study"),
        (dict(inference="map"), "inference= is set by the study"),
        (dict(n_points=0), "n_points"),
    ],
)
def test_bad_arguments_are_refused_before_any_fit(kw, match, monkeypatch):
    from pp_decomp.apps import hyper_study as module

    def no_fit(*a, **k):
        raise AssertionError("a run or a fit started")

    monkeypatch.setattr(Optimizer, "ask", no_fit)
    monkeypatch.setattr(module, "_fixed_kernels", no_fit)
    kw = {"iterations": 6, "n_init": 4, **kw}
    with pytest.raises(ValueError, match=match):
        hyper_study(_problem, seeds=[0], **kw)


def test_fixed_kernels_that_cannot_run_are_refused_before_they_are_fitted(monkeypatch):
    from pp_decomp.apps import hyper_study as module

    monkeypatch.setattr(module, "_fixed_kernels", lambda *a: pytest.fail("fitted first"))
    problem = get_problem("flu", seed=0)  # no true kernels: they would be fitted
    with pytest.raises(ValueError, match="outcome_transform"):
        hyper_study(problem, seeds=[0], iterations=6, n_init=4, outcome_transform="log")


def test_a_composed_strategys_study_reports_its_gp_of_g(monkeypatch):
    from pp_decomp.models import get_problem as get

    ds = hyper_study(
        lambda s: get("synthetic", seed=s, n_components=2),
        "gp-ucb",
        seeds=[0],
        iterations=6,
        n_init=4,
        inferences=("map", "nuts"),
        n_points=8,
        n_samples=32,
    )
    assert list(ds["gp"].values) == ["composed"] and list(ds["component"].values) == ["f0", "f1"]
    assert float(ds["hyper_sd"].max()) > 0


def test_a_problem_without_an_optimum_is_refused_naming_it():
    problem = _problem(0)
    problem.optimum = None
    with pytest.raises(ValueError, match="'synthetic' has no known optimum"):
        hyper_study(problem, seeds=[0], iterations=6, n_init=4)


def test_the_command_writes_the_results_tables_and_pictures(tmp_path, capsys):
    out = tmp_path / "new-folder" / "study.nc"
    args = ["study", "hyper", "--problem", "synthetic"]
    args += ["--seeds", "1", "--iterations", "6", "--init", "4", "--points", "8"]
    assert main([*args, "--inferences", "map,nuts", "--out", str(out)]) == 0
    ds = xr.load_dataset(out)
    assert list(ds["inference"].values) == ["map", "nuts"]
    assert out.with_suffix(".png").stat().st_size > 0
    text = out.with_suffix(".md").read_text()
    assert text.startswith("Command: `pp-decomp study hyper") and "disagree map" in text
    assert "simple regret at T=6" in capsys.readouterr().out


def test_table_cells_round_to_the_standard_errors_second_digit():
    from pp_decomp.apps.hyper_summary import format_mean_se, mean_se

    assert mean_se(np.array([1.0, 3.0]))[1] == pytest.approx(1.0)
    assert format_mean_se(np.array([2.5, 2.8, 2.7])) == "2.667 ± 0.088"
    assert format_mean_se(np.array([4.0, 4.0])) == "4"  # no spread: three digits
    assert format_mean_se(np.array([1e-12, 2e-12])) == "1.50e-12 ± 5.0e-13"
    assert format_mean_se(np.array([np.nan, 0.5])) == "0.5"  # one seed left: no SE


def test_a_study_run_again_reads_its_finished_seeds_and_refuses_anothers(tmp_path, monkeypatch):
    from pp_decomp.apps import hyper_study as module

    kw = dict(seeds=[0], iterations=6, n_init=4, inferences=("map", "nuts"), n_points=8)
    first = hyper_study(_problem, seed_dir=tmp_path, n_samples=32, **kw)
    assert (tmp_path / "seed0.nc").exists() and not list(tmp_path.glob("*.tmp"))
    monkeypatch.setattr(module, "_study_seed", lambda *a: pytest.fail("seed 0 ran again"))
    again = hyper_study(_problem, seed_dir=tmp_path, n_samples=32, **kw)
    for name in ("choice", "acq_own", "bound_coverage", "hyper_sd", "cumulative_regret"):
        np.testing.assert_array_equal(again[name].values, first[name].values)
    with pytest.raises(ValueError, match="seed0.nc holds a study with other settings"):
        hyper_study(_problem, seed_dir=tmp_path, n_samples=64, **kw)
