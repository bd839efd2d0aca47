"""Rebuild ``models/data/stations_190715_00Z.csv``: a warm-season day of real METARs.

Source: ``examples/plots/metar_20190715_0000.txt`` in the MetPy 0.12.2 source
distribution on PyPI (BSD-3-Clause; the reports themselves are NWS/WMO
surface observations, public domain in the US): raw METAR bulletins of
15 July 2019 around 00 UTC, the early evening of 14 July in the US. Station
locations and elevations come from the ``airportsdata`` package on PyPI (MIT).
Run::

    pip download --no-deps --no-binary :all: --no-build-isolation metpy==0.12.2
    tar xzf MetPy-0.12.2.tar.gz && pip install airportsdata
    python -m pp_decomp.models.metar_build MetPy-0.12.2/examples/plots/metar_20190715_0000.txt

(``--no-build-isolation`` needs ``setuptools``, ``setuptools_scm`` and ``wheel``.)

Kept: stations of the contiguous US (``airportsdata`` country ``US``, 24-50 °N,
125-66 °W) whose report carries the remarks group ``TsTTTsTTT``, temperature
and dew point in tenths of a degree, which the automated ASOS/AWOS stations
send; per station the report nearest 00:00 UTC within 30 minutes. Dropped:
reports with a dew point above the temperature or a (sustained) wind above
30 m/s, which no station measured that evening. Relative humidity by the
Magnus formula (:func:`pp_decomp.models.weather_build.relative_humidity`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from pp_decomp.models.weather_build import relative_humidity, write_stations

DATA_DIR = Path(__file__).parent / "data"
OUT = DATA_DIR / "stations_190715_00Z.csv"
KNOT = 0.514444  # m/s
FOOT = 0.3048  # m
CONUS = (24.0, 50.0, -125.0, -66.0)  # south, north, west, east
MAX_WIND_MS = 30.0
WINDOW_MIN = 30

_HEAD = re.compile(r"\b([A-Z][A-Z0-9]{3}) (\d\d)(\d\d)(\d\d)Z\b")
_WIND = re.compile(r"\b(?:\d{3}|VRB)(\d{2,3})(?:G\d{2,3})?(KT|MPS)\b")
_TENTHS = re.compile(r"\bT([01])(\d{3})([01])(\d{3})\b")


def parse_report(text: str):
    """``(station, minutes from 15th 00:00 UTC, T °C, dew point °C, wind m/s)`` or None.

    Temperature and dew point come from the remarks' tenths group; a report
    without it, or without a wind group, gives None.
    """
    head, wind, tenths = _HEAD.search(text), _WIND.search(text), _TENTHS.search(text)
    if not (head and wind and tenths):
        return None
    day, hour, minute = (int(g) for g in head.groups()[1:])
    minutes = (day - 15) * 1440 + hour * 60 + minute
    s_t, t, s_d, d = tenths.groups()
    temp = (-1 if s_t == "1" else 1) * int(t) / 10
    dew = (-1 if s_d == "1" else 1) * int(d) / 10
    speed = int(wind.group(1)) * (KNOT if wind.group(2) == "KT" else 1.0)
    return head.group(1), minutes, temp, dew, speed


def build(path: Path) -> list[tuple]:
    """Station rows in :data:`~pp_decomp.models.weather_build.FIELDS` order."""
    import airportsdata

    airports = airportsdata.load("ICAO")
    south, north, west, east = CONUS
    best: dict[str, tuple] = {}
    for raw in Path(path).read_text(encoding="latin-1").split("="):
        report = parse_report(" ".join(raw.split()))
        if report is None:
            continue
        sid, minutes, temp, dew, speed = report
        ap = airports.get(sid)
        if ap is None or ap["country"] != "US" or abs(minutes) > WINDOW_MIN:
            continue
        if not (south <= ap["lat"] <= north and west <= ap["lon"] <= east):
            continue
        if dew > temp or speed > MAX_WIND_MS:
            continue
        if sid not in best or abs(minutes) < abs(best[sid][0]):
            best[sid] = (minutes, ap, temp, dew, speed)
    rows = []
    for sid in sorted(best):
        _, ap, temp, dew, speed = best[sid]
        rh = float(min(100.0, relative_humidity(temp, dew)))
        region = ap["subd"].replace(",", " ")
        rows.append(
            (sid, region, ap["lat"], ap["lon"], ap["elevation"] * FOOT, temp, dew, speed, rh)
        )
    return rows


def main(argv=None) -> None:
    """Rebuild the July station CSV from MetPy 0.12.2's METAR file."""
    p = argparse.ArgumentParser(description="rebuild the warm-season station CSV")
    p.add_argument("metar_file", help="examples/plots/metar_20190715_0000.txt of MetPy 0.12.2")
    p.add_argument("--out", default=str(OUT))
    a = p.parse_args(argv)
    rows = build(Path(a.metar_file))
    source = (
        "MetPy 0.12.2 sdist (PyPI, BSD-3-Clause) examples/plots/metar_20190715_0000.txt, "
        "METARs of 2019-07-15 00 UTC (NWS/WMO, public domain); locations and elevations: "
        "airportsdata (PyPI, MIT)"
    )
    how = (
        "python -m pp_decomp.models.metar_build <metar file>; CONUS ASOS/AWOS reports with "
        "tenths, nearest 00 UTC; rh_pct by Magnus formula"
    )
    write_stations(a.out, rows, source, how, latlon_decimals=4)
    print(f"{len(rows)} stations -> {a.out}")


if __name__ == "__main__":
    main()
