"""Labels that say what ran: the kind of draws each fit used, judged by its own threshold."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

from pp_decomp import Box, Optimizer, Problem  # noqa: E402
from pp_decomp.apps.report_pictures import _ess_thresholds, fit_kinds, paired_difference  # noqa: E402
from pp_decomp.components.diagnostics import CONVERGENCE, FitDiagnostics  # noqa: E402


@pytest.mark.parametrize(
    "diag,needed",
    [
        (FitDiagnostics("importance", 128, proposal="prior"), 128.0),
        (FitDiagnostics("importance", 128, proposal="posterior"), CONVERGENCE.ess_min),
        (FitDiagnostics("importance", 128, proposal="laplace"), CONVERGENCE.ess_min),
        (FitDiagnostics("nuts", 1600), CONVERGENCE.ess_min),
        (FitDiagnostics("nuts", 1600, reweighted=True), CONVERGENCE.ess_min),
    ],
)
def test_each_kind_of_draws_is_judged_by_its_own_ess(diag, needed):
    assert diag.ess_needed() == needed
    weak = FitDiagnostics(**{**diag.as_dict(), "ess_bulk_min": needed - 1, "pareto_k": 0.1})
    assert any("ESS" in p for p in weak.problems())
    assert np.isnan(FitDiagnostics("map", 1).ess_needed())


def _history(kinds, needed, ess):
    dims = ("iteration", "model")
    return xr.Dataset(
        {
            "fit_draws": (dims, np.array(kinds, dtype=str)),
            "fit_ess_needed": (dims, np.array(needed, dtype=float)),
            "ess_bulk_min": (dims, np.array(ess, dtype=float)),
        },
        coords={"iteration": [1, 2, 3], "model": ["a", "b"]},
    )


def test_the_diagnostics_picture_draws_the_threshold_of_the_draws_in_use():
    ds = _history(
        [["prior importance", "prior importance"], ["chains", ""], ["", "posterior importance"]],
        [[128, 128], [400, np.nan], [np.nan, 400]],
        [[150, 140], [420, np.nan], [np.nan, 500]],
    )
    fig, ax = plt.subplots()
    _ess_thresholds(ax, ds)
    drawn = sorted(float(line.get_ydata()[0]) for line in ax.lines)
    labels = sorted(t.get_text() for t in ax.texts)
    plt.close(fig)
    assert drawn == [128.0, 400.0]  # not 400 alone: prior importance fits pass at 128
    assert labels == ["128: prior importance", "400: chains, posterior importance"]
    assert fit_kinds(ds) == (
        "fits of 4 in all: 50% prior importance (2), 25% chains (1), 25% posterior importance (1)"
    )


def test_a_run_records_the_kind_and_threshold_of_every_fit():
    problem = Problem(
        domain=Box([0], [1]),
        components=lambda X: np.c_[np.sin(6 * X[:, 0])],
        n_components=1,
        weights=[1.0],
    )
    ds = Optimizer(problem, n_init=3, seed=0).run(5)
    refit = ds["refit"].values
    assert set(ds["fit_draws"].values[refit]) == {"map"}
    assert np.all(np.isnan(ds["fit_ess_needed"].values))
    assert fit_kinds(ds).startswith("fits of ") and "100% map" in fit_kinds(ds)


def test_a_paired_difference_says_when_it_is_within_noise():
    line = paired_difference([35.2, 30.1, 40.0], [36.5, 25.0, 47.9], "d-gpucb", "gp-ucb")
    assert "SE over 3 paired seeds" in line and line.endswith("within noise (|difference| < 2 SE)")
    assert paired_difference([1.0], [2.0], "a", "b").endswith("(one seed: no standard error)")


def test_observations_over_two_inputs_are_drawn_faded_by_distance_from_the_slice():
    from pp_decomp.apps.report_pictures import _observations, sweep

    problem = Problem(
        domain=Box([0, 0], [1, 1]),
        components=lambda X: np.c_[np.sin(6 * X[:, 0]) + X[:, 1]],
        n_components=1,
        weights=[1.0],
    )
    opt = Optimizer(problem, n_init=4, seed=0)
    opt.run(6)
    X, axis = sweep(opt.report_view())
    assert "the other inputs at the best observed" in axis
    fig, ax = plt.subplots()
    _observations(ax, opt.report_view(), X, opt.Y[:, 0], "observations")
    (dots,) = ax.collections
    plt.close(fig)
    assert len(dots.get_offsets()) == 6  # every observation, not none as before
    alpha = dots.get_facecolors()[:, 3]
    near = np.abs(opt.X[:, 1] - X[0, 1])
    assert alpha[np.argmin(near)] == pytest.approx(1.0)
    assert np.all(np.diff(alpha[np.argsort(near)]) <= 1e-12)  # farther, fainter


def test_a_map_runs_diagnostics_say_why_a_panel_is_empty_and_no_pending_input_is_said(
    tmp_path, monkeypatch
):
    from pp_decomp.apps.report_pictures import BAND, plot_diagnostics, plot_objective, sweep

    problem = Problem(
        domain=Box([0], [1]),
        components=lambda X: np.c_[np.sin(6 * X[:, 0])],
        n_components=1,
        weights=[1.0],
    )
    opt = Optimizer(problem, n_init=3, seed=0)
    opt.run(5)
    drawn = []
    real_savefig = plt.Figure.savefig

    def keep(fig, path, **kw):
        drawn.append(
            [t.get_text() for ax in fig.axes for t in ax.texts]
            + [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().texts]
        )
        return real_savefig(fig, path, **kw)

    monkeypatch.setattr(plt.Figure, "savefig", keep)  # the texts of each picture drawn
    plot_diagnostics(opt.results(), tmp_path / "d.png", "run")
    X, axis = sweep(opt.report_view())
    post = opt.predict(X, quantiles=BAND, n_samples=50)
    plot_objective(opt.report_view(), post, axis, opt.pending.X, tmp_path / "o.png")
    diagnostics, objective = drawn
    assert any("MAP fits are one point" in t for t in diagnostics)
    assert any("k̂ applies to importance weights" in t for t in diagnostics)
    assert len(opt.pending.X) == 0 and "no input pending: ask() for the next" in objective
