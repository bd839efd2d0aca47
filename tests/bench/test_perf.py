"""pp_decomp.perf: the convergence shares it reports."""

import numpy as np
import xarray as xr

from pp_decomp.perf import refit_convergence


def test_refit_convergence_counts_first_run_and_repaired_shares():
    dims = ("iteration", "component")
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
        }
    )
    r = refit_convergence(ds)
    assert r["refits"] == 4 and r["repairs"] == 3 and r["divergences"] == 3
    assert r["share_first_run"] == 0.5  # two converged without repair
    assert r["share_after_repair"] == 0.75  # one more after its repair
    assert r["rhat_max"] == 1.02 and r["ess_bulk_min"] == 90.0
    assert r["importance_fits"] == 2 and r["importance_ess_min"] == 150.0
    map_run = ds.assign(rhat_max=(dims, np.full((4, 2), nan)))
    assert refit_convergence(map_run) == {"refits": 6}


def test_an_unknown_case_is_refused_before_any_run():
    import pytest

    from pp_decomp.perf import run_perf

    with pytest.raises(ValueError, match=r"cases must be one of .*got 'fluu'"):
        run_perf(cases=("fluu",))
