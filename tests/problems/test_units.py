"""Problem(input_names=, units=): what the numbers are, carried into the results."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.models import get_problem


def _problem(**kw) -> ppd.Problem:
    return ppd.Problem(
        ppd.Box([0, 0], [1, 2]),
        lambda X: np.c_[X[:, 0], X[:, 1] ** 2],
        2,
        g=lambda F: F[..., 0] - F[..., 1],
        component_names=["power", "loss"],
        **kw,
    )


def test_a_results_file_opened_without_the_package_names_inputs_and_units(tmp_path):
    p = _problem(
        input_names=["flow", "depth"],
        units={"inputs": ["m3 s-1", "m"], "components": "W", "objective": "W"},
    )
    opt = ppd.Optimizer(p, n_init=3, seed=0, checkpoint=tmp_path / "run.nc")
    opt.run(5)
    opt.close()
    script = (
        "import sys, xarray as xr\n"
        "assert 'pp_decomp' not in sys.modules\n"
        f"ds = xr.open_dataset({str(tmp_path / 'run.nc')!r}, engine='h5netcdf')\n"
        "print(ds.input_name.values.tolist(), ds.input_units.values.tolist(), ds.x.attrs['units'],"
        " ds.y.attrs['units'], ds.objective.attrs['units'], 'hyper_posterior' in ds)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == (
        "['flow', 'depth'] ['m3 s-1', 'm'] per item: see input_units W W True"
    )


def test_undeclared_units_say_so_and_inputs_get_default_names():
    ds = ppd.Optimizer(_problem(), n_init=3, seed=0).run(4)
    assert list(ds["input_name"].values) == ["x0", "x1"]
    assert ds["objective"].attrs["units"] == "the problem's own (not declared)"
    assert list(ds["component_units"].values) == ["the problem's own (not declared)"] * 2


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(input_names=["a"]), "input_names has 1 names but the domain has 2 inputs"),
        (dict(input_names=["a", "a"]), r"input_names must be distinct; \['a'\]"),
        (dict(units={"x": "m"}), r"units keys must be among .*; got \['x'\]"),
        (dict(units={"inputs": ["m"]}), r"units\['inputs'\] must be a string or 2 strings"),
        (dict(units={"objective": 3}), r"units\['objective'\] must be a string; got 3"),
    ],
)
def test_bad_labels_are_refused_by_name(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _problem(**kw)


def test_the_older_metadata_units_still_count():
    p = _problem(metadata={"units": {"y": "W", "objective": "kW"}})
    assert p.units == {"inputs": [None, None], "components": ["W", "W"], "objective": "kW"}


def test_shipped_problems_declare_their_inputs():
    flu = get_problem("flu", seed=0)
    assert flu.input_names[0] == "vaccinated_0-19" and flu.units["objective"] == "days per person"
    july = get_problem("perceived-temperature-july", seed=0)
    assert july.input_names == ["latitude", "longitude"] and july.units["components"][2] == "m s-1"
    settings = json.loads(ppd.Optimizer(flu, seed=0).results().attrs["settings"])
    assert settings["problem"] == "flu"
