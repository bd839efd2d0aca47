import numpy as np
import pytest
import xarray as xr

from pp_decomp.apps.cli import main
from pp_decomp.apps.regression import regression_study


def test_study_dataset_layout_and_reproducibility():
    ds = regression_study("se", n_components=3, trials=3, max_samples=8, seed=4, n_test=50)
    for name in ("rmse_decomposed", "rmse_entire", "mean_sd_decomposed", "mean_sd_entire"):
        assert ds[name].dims == ("trial", "n_samples")
        assert np.all(np.isfinite(ds[name]))
    assert list(ds["n_samples"].values) == list(range(2, 9))
    assert ds.attrs["kernel"] == "se" and ds.attrs["seed"] == 4
    # Theorem 6 with the true kernels: pointwise variance, hence mean sd, never larger.
    assert np.all(ds["mean_sd_decomposed"] <= ds["mean_sd_entire"] + 1e-9)
    again = regression_study("se", n_components=3, trials=3, max_samples=8, seed=4, n_test=50)
    xr.testing.assert_identical(ds, again)


def test_study_with_learned_hyperparameters():
    ds = regression_study(
        "matern", n_components=2, trials=1, max_samples=5, seed=0, inference="map", n_test=30
    )
    assert ds.attrs["inference"] == "map" and ds.attrs["kernel"] == "matern52"
    assert np.all(np.isfinite(ds["rmse_entire"]))


def test_study_rejects_bad_arguments():
    with pytest.raises(ValueError, match="max_samples must be >= 2"):
        regression_study(max_samples=1)
    with pytest.raises(ValueError, match="inference must be one of"):
        regression_study(inference="exact")
    with pytest.raises(ValueError, match="noise_sd must be a finite number > 0"):
        regression_study(noise_sd=float("nan"))


def test_cli_regression_writes_results_and_plot(tmp_path, capsys):
    out = tmp_path / "r.nc"
    code = main(
        [
            "regression",
            "--kernel",
            "rq",
            "--components",
            "2",
            "--trials",
            "2",
            "--max-samples",
            "6",
            "--seed",
            "1",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    ds = xr.load_dataset(out)
    assert ds.attrs["kernel"] == "rq" and ds.sizes["trial"] == 2
    assert out.with_suffix(".png").stat().st_size > 10_000
    assert "mean relative RMSE improvement" in capsys.readouterr().out


def test_cli_reports_bad_argument(capsys):
    assert main(["regression", "--components", "0", "--quiet"]) == 2
    assert "n_components must be >= 1" in capsys.readouterr().err
