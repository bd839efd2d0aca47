"""``warm_start=True``: MAP refits from the last fit's mode, one start."""

import json
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from pp_decomp import Optimizer
from pp_decomp.apps.bench import BenchSpec
from pp_decomp.components.inference import compiled
from pp_decomp.models import get_problem


@pytest.fixture(scope="module")
def small_synthetic():
    return get_problem("synthetic", seed=3, n_components=2, n_points=120)


@pytest.fixture
def searches(monkeypatch):
    """Every MAP search of the run: its starts, and the mode it found."""
    calls = []
    real = compiled.MapSearch.best

    def recorded(self, results=None):
        best = real(self, results)
        calls.append((self.name, [np.array(z) for z in self.starts], best.x.copy()))
        return best

    monkeypatch.setattr(compiled.MapSearch, "best", recorded)
    return calls


def test_refits_start_once_at_the_last_mode(small_synthetic, searches):
    Optimizer(small_synthetic, "d-gpucb", n_init=3, seed=1, warm_start=True).run(7)
    by_gp = {}
    for name, starts, mode in searches:
        by_gp.setdefault(name, []).append((starts, mode))
    assert len(by_gp) == 2  # one GP per component, 4 fits each
    for fits in by_gp.values():
        assert len(fits) == 4
        assert len(fits[0][0]) == 3  # the first fit searches from three starts
        for (_, last_mode), (starts, _) in zip(fits, fits[1:], strict=False):
            assert len(starts) == 1
            np.testing.assert_allclose(starts[0], last_mode, atol=1e-12)  # exp then log


def test_without_it_every_refit_searches_afresh(small_synthetic, searches):
    Optimizer(small_synthetic, "d-gpucb", n_init=3, seed=1).run(6)
    assert [len(starts) for _, starts, _ in searches] == [3] * 6


def test_the_gp_of_g_is_warm_started_too(small_synthetic, searches):
    Optimizer(small_synthetic, "d-gpucb-box-min", n_init=3, seed=1, warm_start=True).run(6)
    composed = [starts for name, starts, _ in searches if "composed" in name]
    assert [len(s) for s in composed] == [3, 1, 1]


def test_resumed_warm_started_run_makes_the_same_choices(small_synthetic, tmp_path):
    kw = dict(n_init=3, seed=2, warm_start=True)
    full = Optimizer(small_synthetic, "d-gpucb", **kw).run(9)
    path = tmp_path / "ck.nc"
    Optimizer(small_synthetic, "d-gpucb", checkpoint=path, **kw).run(6)
    resumed = Optimizer.resume(path, small_synthetic)
    assert resumed.settings.inference.warm_start
    ds = resumed.run(9)
    np.testing.assert_array_equal(ds["x"], full["x"])
    np.testing.assert_allclose(ds["ls_mean"], full["ls_mean"], rtol=1e-12)


def test_warm_start_is_refused_by_name_where_nothing_would_use_it(small_synthetic):
    with pytest.raises(ValueError, match="warm_start=True .* needs inference='map', got 'nuts'"):
        Optimizer(small_synthetic, "d-gpucb", inference="nuts", warm_start=True)
    with pytest.raises(TypeError, match="warm_start must be True or False; got 'yes'"):
        Optimizer(small_synthetic, "d-gpucb", warm_start="yes")


def test_additive_strategies_refuse_warm_start():
    problem = get_problem("kandasamy-10-3-3", seed=0)
    with pytest.raises(ValueError, match="strategy 'add-gp-ucb' learns an additive structure"):
        Optimizer(problem, "add-gp-ucb", warm_start=True)


def test_a_misspelt_setting_is_refused_by_name(small_synthetic):
    with pytest.raises(TypeError, match=r"unknown setting\(s\) \['warm_strat'\]"):
        Optimizer(small_synthetic, "d-gpucb", warm_strat=True)


def test_bench_gives_warm_start_to_the_gp_strategies_only():
    spec = BenchSpec(
        problems=["synthetic"], strategies=["d-gpucb", "gp-ucb", "random"], trials=1,
        warm_start=True,
    )  # fmt: skip
    got = {t.strategy: t.warm_start for t in spec.tasks()}
    assert got == {"d-gpucb": True, "gp-ucb": True, "random": False}
    with pytest.raises(ValueError, match="warm_start=True .* needs inference='map', got 'nuts'"):
        BenchSpec(problems=["synthetic"], strategies=["d-gpucb"], inference="nuts", warm_start=True)


def test_run_command_stores_warm_start(tmp_path):
    out = tmp_path / "run.nc"
    cmd = [sys.executable, "-m", "pp_decomp.apps.cli", "run", "--problem", "synthetic"]
    cmd += ["--strategy", "gp-ucb", "--iterations", "7", "--warm-start", "--out", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        assert json.loads(ds.attrs["settings"])["warm_start"] is True


def test_correlated_components_are_warm_started_too(small_synthetic, monkeypatch):
    starts = []
    real = compiled.map_search

    def recorded(f, s, bounds, name, **kw):
        starts.append(len(s))
        return real(f, s, bounds, name, **kw)

    monkeypatch.setattr("pp_decomp.components.correlated.model.map_search", recorded)
    kw = dict(n_init=4, seed=1, correlated=True, warm_start=True)
    Optimizer(small_synthetic, "d-gpucb", **kw).run(7)
    assert starts == [3, 1, 1]
