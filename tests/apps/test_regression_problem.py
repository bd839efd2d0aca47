"""The decomposed-vs-entire regression study on a problem's own components."""

import numpy as np
import pytest
import xarray as xr

from pp_decomp.apps.cli import main
from pp_decomp.apps.regression_problem import problem_regression_study
from pp_decomp.models import get_problem


def test_known_weights_make_the_decomposed_gp_more_accurate_on_tuberculosis():
    p = get_problem("tuberculosis")
    ds = problem_regression_study(p, sizes=(3, 8), trials=2, seed=3, n_test=60)
    assert list(ds["n_samples"].values) == [3, 8] and ds.sizes["trial"] == 2
    for name in ("rmse_decomposed", "rmse_entire", "mean_sd_decomposed", "mean_sd_entire"):
        assert ds[name].dims == ("trial", "n_samples") and np.all(np.isfinite(ds[name]))
    assert ds.attrs["problem"] == "tuberculosis" and ds.attrs["n_components"] == 20
    # the entire GP must learn how the policy scales every year's infections; the
    # decomposed one is given it
    assert np.all(ds["rmse_decomposed"] < ds["rmse_entire"])
    again = problem_regression_study(p, sizes=(3, 8), trials=2, seed=3, n_test=60)
    xr.testing.assert_identical(ds, again)


def test_the_study_refuses_bad_input_before_any_fit():
    p = get_problem("tuberculosis")
    with pytest.raises(ValueError, match="sizes must be increasing"):
        problem_regression_study(p, sizes=(5, 3))
    with pytest.raises(ValueError, match="sizes must be increasing"):
        problem_regression_study(p, sizes=(1, 3))
    with pytest.raises(ValueError, match="inference"):
        problem_regression_study(p, inference="true")
    with pytest.raises(ValueError, match="nonlinear composition"):
        problem_regression_study(get_problem("environmental"), sizes=(3,))
    with pytest.raises(TypeError, match="problem must be"):
        problem_regression_study("tuberculosis")


def test_cli_regression_on_a_problem_prints_each_size(tmp_path, capsys):
    out = tmp_path / "tb.nc"
    args = ["regression", "--problem", "tuberculosis", "--sizes", "3,5", "--trials", "2"]
    assert main([*args, "--test-points", "40", "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rows = [line.split() for line in text.splitlines() if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == ["3", "5"] and all(len(r) == 10 for r in rows)
    assert out.exists() and out.with_suffix(".png").exists()
    with pytest.raises(SystemExit, match="--sizes"):
        main(["regression", "--problem", "tuberculosis", "--sizes", "3,x", "--out", str(out)])
