"""Every run criticises its GPs at every model-based step, and its diagnostics
describe the draws each fit uses."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp import Optimizer
from pp_decomp.components.diagnostics import CONVERGENCE, FitDiagnostics
from pp_decomp.loop.records import diagnostics_summary
from pp_decomp.models import get_problem
from pp_decomp.results import CRITICISM, criticism_summary


@pytest.fixture(scope="module")
def problem():
    return get_problem("synthetic", seed=3, n_components=3, n_points=150)


def _check_criticism(ds, n_init: int, map_fit: bool) -> None:
    for f in CRITICISM:
        assert ds[f].dims == ("iteration", "model"), f
        assert np.all(np.isnan(ds[f].values[:n_init])), f
    # MAP (one draw, exact LOO): every model-based step; weighted draws: at their refits
    model = ds["phase"].values == "acquisition"
    due = np.broadcast_to(model[:, None], ds["refit"].shape) if map_fit else ds["refit"].values
    assert due.any()
    for f in ("elpd_loo", "loo_pit_distance", "loo_coverage"):
        np.testing.assert_array_equal(np.isfinite(ds[f].values), due, err_msg=f)
    cov = ds["loo_coverage"].values[due]
    assert np.all((cov >= 0) & (cov <= 1))
    k = ds["loo_k_max"].values[due]
    assert np.all(np.isnan(k)) if map_fit else np.any(np.isfinite(k))


def test_a_map_run_records_each_gps_criticism_per_step(problem):
    ds = Optimizer(problem, "d-gpucb", n_init=4, seed=1).run(9)
    _check_criticism(ds, 4, map_fit=True)
    lines = criticism_summary(ds).splitlines()
    assert len(lines) == 3 and all("LOO coverage" in line for line in lines)


def test_a_composed_gp_is_criticised_too(problem):
    ds = Optimizer(problem, "gp-ucb", n_init=4, seed=1).run(7)
    assert ds["elpd_loo"].dims == ("iteration", "model")
    assert np.all(np.isfinite(ds["elpd_loo"].values[4:]))


def test_a_full_bayes_run_criticises_over_its_draws_and_its_verdicts_hold(problem):
    ds = Optimizer(problem, "d-gpucb", n_init=4, seed=1, inference="nuts").run(9)
    _check_criticism(ds, 4, map_fit=False)
    refit = ds["refit"].values
    assert refit.any()
    for i, j in zip(*np.nonzero(refit), strict=True):
        kind, ok = str(ds["fit_draws"].values[i, j]), bool(ds["converged"].values[i, j])
        rhat, ess = ds["rhat_max"].values[i, j], ds["ess_bulk_min"].values[i, j]
        k = ds["fit_pareto_k"].values[i, j]
        assert kind in ("chains", "reweighted chains", "prior importance", "posterior importance")
        if ok and kind == "chains":
            assert rhat <= CONVERGENCE.rhat_max and ess >= CONVERGENCE.ess_min
        elif ok:
            assert np.isnan(rhat) and k <= CONVERGENCE.pareto_k_max and ess >= 128


def _importance(ess: float, k: float, proposal: str) -> FitDiagnostics:
    return FitDiagnostics("importance", 128, ess_bulk_min=ess, pareto_k=k, proposal=proposal)


@pytest.mark.parametrize(
    ("diag", "converged"),
    [
        # chains that disagreed, weighed by importance sampling: r-hat is not theirs
        (FitDiagnostics("nuts", 1000, 1.106, 520.0, 520.0, reweighted=True, pareto_k=0.4), True),
        (FitDiagnostics("nuts", 1000, 1.106, 300.0, 300.0, reweighted=True, pareto_k=0.4), False),
        (FitDiagnostics("nuts", 1000, 1.02, 900.0, 900.0), False),
        (FitDiagnostics("nuts", 1000, 1.005, 350.0, 900.0), False),
        (FitDiagnostics("nuts", 1000, 1.005, 450.0, 450.0, divergences=2), False),
        (FitDiagnostics("nuts", 1000, 1.005, 450.0, 450.0), True),
        # importance draws of the prior: ESS at least the draws kept
        (
            _importance(168.0, 0.5, "prior"),
            True,
        ),
        (
            _importance(100.0, 0.5, "prior"),
            False,
        ),
        (
            _importance(900.0, 0.8, "prior"),
            False,
        ),
        (
            FitDiagnostics(
                "importance", 128, ess_bulk_min=300.0, pareto_k=0.3, proposal="posterior"
            ),
            False,
        ),
        (FitDiagnostics("map", 1), True),
    ],
)
def test_converged_means_the_thresholds_on_the_draws_used(diag, converged):
    rec = diagnostics_summary(diag)
    assert rec["converged"] is converged
    assert rec["converged"] is not bool(diag.problems())
    if diag.weighted:
        assert np.isnan(rec["rhat_max"])  # no chains behind the draws in use
    assert rec["fit_draws"] == diag.draws_used
