"""benchmarks/speed/scale.py and benchmarks/speed/checkpoint_cost.py at tiny sizes."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import pp_decomp

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "speed"))

import scale  # noqa: E402


def test_the_scale_benchmark_prints_a_line_per_configuration_with_its_figures():
    lines = []
    out = scale.run([12], [2], ["map"], 1, peer=False, timeout=600, log=lines.append)
    (r,) = out
    assert r["strategy"] == "d-gpucb-mc-min" and r["T"] == 12 and len(r["next_ask_s"]) == 1
    assert 0 < r["first_ask_s"] and 0 < r["peak_gb"] < 24
    assert 0.0 <= r["coverage_95"] <= 1.0 and np.isfinite(r["coverage_95"])
    assert lines[0].startswith("T=   12 J= 2 MAP") and "95% coverage" in lines[0]
    assert r["code"] == pp_decomp.__file__  # the parent's code, whatever the working directory


def test_the_scale_benchmark_times_its_own_pp_decomp_whatever_pythonpath_says(
    tmp_path, monkeypatch
):
    (tmp_path / "pp_decomp").mkdir()
    (tmp_path / "pp_decomp" / "__init__.py").write_text("raise ImportError('another checkout')")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # as a relative entry resolved elsewhere
    (r,) = scale.run([8], [2], ["map"], 0, peer=False, timeout=600, log=lambda line: None)
    assert "error" not in r and r["code"] == pp_decomp.__file__


def test_the_scale_benchmark_holds_the_draws_its_memory_budget_allows():
    r = scale.one(40, 2, "nuts", None, 0, seed=0, held_mib=1)
    assert r["kept_draws"] == {"f0": 81, "f1": 81, "composed": 81}  # 2**20 / (8 * 40**2)


def test_the_checkpoint_cost_benchmark_measures_every_writer_with_and_without_draws():
    import checkpoint_cost

    rows = checkpoint_cost.measure(
        steps=7, inference="map", repeats=1, engines=["netcdf4", "h5netcdf"]
    )
    by = {(r["engine"], r["draws"]): r for r in rows}
    assert set(by) == {(e, d) for e in ("netcdf4", "h5netcdf") for d in ("with", "without")}
    for e in ("netcdf4", "h5netcdf"):
        assert by[e, "with"]["bytes"] >= by[e, "without"]["bytes"] > 0  # netCDF-C: whole blocks
        assert all(
            by[e, d]["write_seconds"] > 0 < by[e, d]["read_seconds"] for d in ("with", "without")
        )


def test_the_scale_benchmark_meets_refits_and_says_whether_an_ask_waited_on_one():
    r = scale.one(30, 2, "nuts", None, 5, seed=0, fast=scale.fast_settings("max_age=1"))
    assert len(r["next_ask_s"]) == 5 and r["next_ask_max_s"] == max(r["next_ask_s"])
    kinds = {k: v for k, v in r["refits"].items() if k != "longest_s"}
    assert sum(kinds.values()) >= 2 and r["refits"]["longest_s"] > 0, r["refits"]
    r["label"] = "full Bayes"
    text = scale.line(r)
    assert "longest next ask" in text and "2x median + 1 s" in text and "refits " in text


def test_the_scale_benchmark_refuses_a_fast_setting_it_does_not_know():
    assert scale.fast_settings("max_age=10,ess_refit=0.4") == {"max_age": 10, "ess_refit": 0.4}
    with pytest.raises(ValueError, match="--fast: 'max_ages=10' is not FIELD=VALUE"):
        scale.fast_settings("max_ages=10")
