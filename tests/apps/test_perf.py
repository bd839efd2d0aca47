"""pp_decomp.apps.perf: the convergence shares it reports."""

import numpy as np
import xarray as xr

from pp_decomp.apps.perf import ask_latency, refit_convergence


def test_refit_convergence_counts_first_run_and_repaired_shares():
    dims = ("iteration", "model")
    refit = np.array([[True, True], [False, True], [True, False], [True, True]])
    nan = np.nan
    ds = xr.Dataset(  # the last row: two fits by importance sampling (no r-hat)
        {
            "refit": (dims, refit),
            "rhat_max": (dims, [[1.0, 1.02], [nan, 1.0], [1.0, nan], [nan, nan]]),
            "ess_bulk_min": (dims, [[500.0, 90.0], [nan, 450.0], [420.0, nan], [300.0, 150.0]]),
            "divergences": (dims, [[0, 3], [0, 0], [0, 0], [0, 0]]),
            "repairs": (dims, [[0, 2], [0, 1], [0, 0], [0, 0]]),
            "converged": (dims, [[True, False], [False, True], [True, False], [True, True]]),
            "reweighted": (dims, np.zeros((4, 2), bool)),
            "fit_pareto_k": (dims, np.full((4, 2), nan)),
        }
    )
    r = refit_convergence(ds)
    assert r["refits"] == 4 and r["repairs"] == 3 and r["divergences"] == 3
    assert r["share_first_run"] == 0.5  # two converged without repair
    assert r["share_after_repair"] == 0.75  # one more after its repair
    assert r["rhat_max"] == 1.02 and r["ess_bulk_min"] == 90.0
    # a fit whose chains (r-hat 1.4) were weighed: converged, not at the first run,
    # and its r-hat reported apart from the fits used as NUTS ran them
    weighed = ds.assign(
        rhat_max=(dims, [[1.4, 1.02], [nan, 1.0], [1.0, nan], [nan, nan]]),
        reweighted=(dims, [[True, False], [False, False], [False, False], [False, False]]),
        fit_pareto_k=(dims, [[0.3, nan], [nan, nan], [nan, nan], [nan, nan]]),
    )
    r = refit_convergence(weighed)
    assert r["share_first_run"] == 0.25 and r["share_after_repair"] == 0.75
    assert r["reweighted"] == 1 and r["pareto_k_max"] == 0.3
    assert r["rhat_max"] == 1.02 and r["rhat_max_reweighted"] == 1.4
    assert r["importance_fits"] == 2 and r["importance_ess_min"] == 150.0
    assert r["refreshes"] == 0 and r["share_all_fits"] == 5 / 6
    # a fit by importance sampling with its k̂ recorded refreshed the previous draws
    refreshed = weighed.assign(
        fit_pareto_k=(dims, [[0.3, nan], [nan, nan], [nan, nan], [0.45, nan]]),
        ess_bulk_min=(dims, [[500.0, 90.0], [nan, 450.0], [420.0, nan], [600.0, 150.0]]),
    )
    r = refit_convergence(refreshed)
    assert r["importance_fits"] == 1 and r["importance_ess_min"] == 150.0
    assert r["refreshes"] == 1 and r["refresh_pareto_k_max"] == 0.45
    assert r["refresh_ess_min"] == 600.0 and r["share_all_fits"] == 5 / 6
    # the results keep no r-hat for weighed chains: still a NUTS fit, not a refresh
    no_rhat = refreshed.assign(rhat_max=(dims, [[nan, 1.02], [nan, 1.0], [1.0, nan], [nan, nan]]))
    r = refit_convergence(no_rhat)
    assert r["refits"] == 4 and r["reweighted"] == 1 and r["refreshes"] == 1
    assert r["share_first_run"] == 0.25 and r["pareto_k_max"] == 0.3
    map_run = ds.assign(rhat_max=(dims, np.full((4, 2), nan)))
    assert refit_convergence(map_run) == {"refits": 6}


def test_ask_latency_sets_the_first_ask_apart_and_names_the_longest_other():
    ds = xr.Dataset(
        {
            "phase": ("iteration", ["initial"] * 2 + ["acquisition"] * 5),
            "ask_seconds": ("iteration", [0.0, 0.0, 3.0, 0.2, 0.4, 1.5, 0.3]),
        },
        coords={"iteration": np.arange(1, 8)},  # as a run's results number them
    )
    a = ask_latency(ds)
    assert a["first"] == 3.0 and a["max"] == 3.0 and a["p50"] == 0.4
    assert a["next_max"] == 1.5 and a["next_max_iteration"] == 6
    assert a["line"] == 2 * 0.4 + 1
    one = ask_latency(ds.isel(iteration=slice(0, 3)))
    assert one["first"] == one["max"] == 3.0 and "next_max" not in one


def test_an_unknown_case_is_refused_before_any_run():
    import pytest

    from pp_decomp.apps.perf import run_perf

    with pytest.raises(ValueError, match=r"cases must be one of .*got 'fluu'"):
        run_perf(cases=("fluu",))


def test_the_machine_record_names_the_code_timed():
    import os
    import subprocess

    import pp_decomp
    from pp_decomp.apps.perf import machine_info

    code = machine_info()["code"]
    assert code["path"] == os.path.dirname(os.path.abspath(pp_decomp.__file__))
    head = subprocess.run(["git", "-C", code["path"], "rev-parse", "HEAD"], capture_output=True)
    assert code["commit"] == (head.stdout.decode().strip() if head.returncode == 0 else None)
