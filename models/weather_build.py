"""Rebuild ``models/data/stations_950318_18Z.csv`` from Debian's ``libncarg-data``.

Source: ``/usr/share/ncarg/data/cdf/95031818_sao.cdf``, hourly surface airways
reports of 18 March 1995, 18 UTC, shipped by Debian package ``libncarg-data``
(NCAR Graphics example data; Copyright 2013 UCAR, BSD-4-clause). Run::

    apt-get install libncarg-data
    python -m pp_decomp.models.weather_build [--hour 18] [--out PATH]

Only US stations (region code ending in ``US``) are kept. Rows with a missing
latitude, longitude, temperature, dew point or wind speed (fill value -9999)
are dropped, as are repeated station ids (the first report is kept). Relative
humidity comes from temperature and dew point by the Magnus formula with the
Alduchov & Eskridge (1996) coefficients.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SOURCE_DIR = Path("/usr/share/ncarg/data/cdf")
DATA_DIR = Path(__file__).parent / "data"
FIELDS = ("station", "region", "lat", "lon", "elev_m", "temp_c", "dewpoint_c", "wind_ms", "rh_pct")


def relative_humidity(temp_c, dewpoint_c):
    """Magnus formula, ``a = 17.625``, ``b = 243.04 °C`` (Alduchov & Eskridge 1996), in %."""
    a, b = 17.625, 243.04
    return 100.0 * np.exp(a * dewpoint_c / (b + dewpoint_c) - a * temp_c / (b + temp_c))


def read_reports(path: Path) -> list[tuple]:
    """Station rows ``(id, region, lat, lon, elev, T, RH, wind)`` of one hourly report file.

    Rows with a missing temperature, dew point or wind speed are dropped, and a
    station reported twice keeps its first report.
    """
    from scipy.io import netcdf_file

    with netcdf_file(path, "r", mmap=False) as f:
        v = f.variables

        def text(name):
            return ["".join(c.decode() for c in row).strip("\x00 ") for row in v[name][:]]

        ids, regions = text("id"), text("region")
        cols = {
            k: np.asarray(v[k][:], dtype=float) for k in ("lat", "lon", "elev", "T", "TD", "SPD")
        }
    rows, seen = [], set()
    for i, sid in enumerate(ids):
        vals = [cols[k][i] for k in ("lat", "lon", "elev", "T", "TD", "SPD")]
        core = vals[:2] + vals[3:]
        us = regions[i].split()[-1:] == ["US"]
        if not us or not sid or sid in seen or any(x <= -9998 or not np.isfinite(x) for x in core):
            continue
        if not (-90 <= vals[0] <= 90 and -180 <= vals[1] <= 180 and vals[4] <= vals[3] + 0.05):
            continue
        seen.add(sid)
        rh = float(min(100.0, relative_humidity(vals[3], vals[4])))
        elev = vals[2] if vals[2] > -9998 else float("nan")
        rows.append((sid, regions[i], vals[0], vals[1], elev, vals[3], vals[4], vals[5], rh))
    return rows


def write_stations(out, rows, source: str, how: str, latlon_decimals: int) -> None:
    """The station CSV: two comment lines (source, how it was built), the header
    :data:`FIELDS`, one row per station."""
    k = latlon_decimals
    with open(out, "w") as fh:
        fh.write(f"# source: {source}\n# built by: {how}\n")
        fh.write(",".join(FIELDS) + "\n")
        for r in rows:
            fh.write(
                f"{r[0]},{r[1]},{r[2]:.{k}f},{r[3]:.{k}f},{r[4]:.0f},{r[5]:.1f},{r[6]:.1f},"
                f"{r[7]:.1f},{r[8]:.2f}\n"
            )


def main(argv=None) -> None:
    """Rebuild the station CSV from Debian's ``libncarg-data`` files."""
    p = argparse.ArgumentParser(description="rebuild the perceived-temperature station CSV")
    p.add_argument("--hour", type=int, default=18)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    src = SOURCE_DIR / f"950318{a.hour:02d}_sao.cdf"
    if not src.exists():
        raise SystemExit(f"{src} not found: apt-get install libncarg-data")
    rows = read_reports(src)
    out = Path(a.out) if a.out else DATA_DIR / f"stations_950318_{a.hour:02d}Z.csv"
    source = f"Debian libncarg-data {src} (UCAR 2013, BSD-4-clause)"
    how = (
        f"python -m pp_decomp.models.weather_build --hour {a.hour}; "
        "rh_pct by Magnus formula from temp_c and dewpoint_c"
    )
    write_stations(out, rows, source, how, latlon_decimals=2)
    print(f"{len(rows)} stations -> {out}")


if __name__ == "__main__":
    main()
