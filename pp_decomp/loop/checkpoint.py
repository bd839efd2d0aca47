"""Checkpoint files: a run's results plus the state that resumes it exactly.

A checkpoint is a netCDF file (h5netcdf). Its root group is the user-facing
results Dataset (:func:`pp_decomp.results.build_dataset`); the group
``checkpoint`` holds the loop's state as JSON, apart from the results' own
attributes. Files are written atomically: a temporary file in the same folder,
fsync, then ``os.replace``, so a kill at any moment leaves the previous complete
file (or none).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import xarray as xr

FORMAT_VERSION = 2
GROUP = "checkpoint"


def write(path, results: xr.Dataset, state: dict) -> None:
    """Write ``results`` and the loop ``state`` to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        results.to_netcdf(tmp, engine="h5netcdf")
        ck = xr.Dataset(
            {"state": ((), json.dumps(state))}, attrs={"format_version": FORMAT_VERSION}
        )
        ck.to_netcdf(tmp, mode="a", group=GROUP, engine="h5netcdf")
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def read(path) -> tuple[xr.Dataset, dict]:
    """The results Dataset and the loop state stored at ``path``."""
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        results = ds.load()
    with xr.open_dataset(path, engine="h5netcdf", group=GROUP) as ck:
        state = json.loads(str(ck["state"].values))
    return results, state


def observations(results: xr.Dataset, dim: int, n_components: int):
    """The stored inputs ``X (n, d)`` and components ``Y (n, J)``."""
    X = np.asarray(results["x"].values, dtype=float).reshape(-1, dim)
    Y = np.asarray(results["y"].values, dtype=float).reshape(-1, n_components)
    return X, Y
