"""Perceived temperature at real US weather stations (Wang et al. 2019, general decomposition).

Inputs are station locations ``(lat, lon)`` (a finite candidate set); the system
reports air temperature (°C), relative humidity (%) and wind speed (m/s); the
objective is the perceived temperature, maximised (find the station where it
feels warmest).

``g`` (variant ``"nws"``) follows the US National Weather Service:

* heat index (Rothfusz regression with the NWS adjustments) when ``T >= 80 °F``;
* wind chill (NWS 2001) when ``T <= 50 °F`` and wind ``>= 3 mph``;
* the air temperature otherwise.

Variant ``"steadman"``: the smooth apparent temperature of Steadman (1994), as
used by the Australian Bureau of Meteorology,
``AT = T + 0.33 e - 0.70 ws - 4.00`` with vapour pressure
``e = RH/100 · 6.105 exp(17.27 T / (237.7 + T))`` hPa.

Data, one file per day (:data:`DAYS`):

* ``"1995-03-18"`` (default, the paper's day): ``data/stations_950318_18Z.csv``,
  836 US stations of the 18 UTC hourly surface reports of 18 March 1995 from
  Debian's ``libncarg-data`` (UCAR 2013, BSD-4-clause); rebuilt by
  :mod:`pp_decomp.models.weather_build`. ``g`` is the air temperature at 70%
  of them;
* ``"2019-07-15"``, a warm-season evening: ``data/stations_190715_00Z.csv``,
  1494 ASOS/AWOS stations of the contiguous US, METARs of 15 July 2019 00 UTC
  shipped in MetPy 0.12.2's source distribution (BSD-3-Clause; NWS/WMO
  observations) with locations from ``airportsdata`` (MIT); rebuilt by
  :mod:`pp_decomp.models.metar_build`. 71% of the stations are at 80 °F or
  more, where the heat index applies, and ``g`` differs from the air
  temperature by more than 0.5 °C at 64% of them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from pp_decomp.components import KnownKernels
from pp_decomp.models.weather_build import relative_humidity
from pp_decomp.problem import Problem
from pp_decomp.space import CandidateSet
from pp_decomp.validate import check_choice

DATA_DIR = Path(__file__).parent / "data"
# day -> (station file, description, source)
DAYS = {
    "1995-03-18": (
        "stations_950318_18Z.csv",
        "18 March 1995 18Z",
        "Debian libncarg-data 95031818_sao.cdf (UCAR, BSD-4-clause)",
    ),
    "2019-07-15": (
        "stations_190715_00Z.csv",
        "15 July 2019 00Z",
        "METARs in MetPy 0.12.2's sdist (BSD-3-Clause; NWS/WMO), airportsdata (MIT)",
    ),
}
COMPONENTS = ("temperature_c", "relative_humidity_pct", "wind_speed_ms")
DEWPOINT_COMPONENTS = ("temperature_c", "dewpoint_c", "wind_speed_ms")
HUMIDITY = ("rh", "dewpoint")


@lru_cache(maxsize=len(DAYS))
def load_stations(day: str = "1995-03-18") -> dict[str, np.ndarray]:
    """The shipped station table of ``day`` as arrays (``station``, ``lat``, ``temp_c``, ...)."""
    check_choice(day, "day", tuple(DAYS))
    with open(DATA_DIR / DAYS[day][0]) as fh:
        lines = [line.rstrip("\n") for line in fh if not line.startswith("#")]
    header = lines[0].split(",")
    cols = list(zip(*[line.split(",") for line in lines[1:]], strict=True))
    out = {}
    for name, col in zip(header, cols, strict=True):
        out[name] = np.array(col) if name in ("station", "region") else np.array(col, dtype=float)
    return out


def _c_to_f(t):
    return t * 9.0 / 5.0 + 32.0


def _f_to_c(t):
    return (t - 32.0) * 5.0 / 9.0


def heat_index_f(t_f, rh):
    """NWS heat index (°F): Rothfusz regression with the low/high humidity adjustments."""
    t_f, rh = np.asarray(t_f, dtype=float), np.asarray(rh, dtype=float)
    # the regression in nested form: the same polynomial in fewer array passes
    hi = (
        -42.379
        + t_f * (2.04901523 - 6.83783e-3 * t_f)
        + rh * (10.14333127 - 5.481717e-2 * rh)
        + t_f * rh * (-0.22475541 + 1.22874e-3 * t_f + 8.5282e-4 * rh - 1.99e-6 * t_f * rh)
    )
    dry = (rh < 13) & (t_f >= 80) & (t_f <= 112)
    if dry.any():
        t, r = t_f[dry], rh[dry]
        hi[dry] -= (13 - r) / 4 * np.sqrt(np.clip((17 - np.abs(t - 95.0)) / 17, 0, None))
    wet = (rh > 85) & (t_f >= 80) & (t_f <= 87)
    if wet.any():
        hi[wet] += (rh[wet] - 85) / 10 * (87 - t_f[wet]) / 5
    return hi


def wind_chill_f(t_f, v_mph):
    """NWS (2001) wind chill (°F) for air temperature ``t_f`` and wind ``v_mph``."""
    v16 = np.power(np.maximum(v_mph, 0.0), 0.16)
    return 35.74 + 0.6215 * t_f - 35.75 * v16 + 0.4275 * t_f * v16


def perceived_nws(F, X=None):
    """NWS perceived temperature (°C) from ``F (..., 3)`` = (T °C, RH %, wind m/s)."""
    F = np.asarray(F, dtype=float)
    return _nws(F[..., 0], F[..., 1], F[..., 2])


def _nws(t_c, rh, wind_ms):
    t_f = np.asarray(_c_to_f(t_c))  # 0-d for one reading: still maskable
    out = t_f.copy()
    # each formula only where it applies: the Monte Carlo acquisition calls this
    # on (samples x candidates) arrays every step
    hot = t_f >= 80.0
    if hot.any():
        out[hot] = heat_index_f(t_f[hot], np.clip(rh[hot], 0.0, 100.0))
    v_mph = np.maximum(wind_ms, 0.0) * 2.236936
    cold = (t_f <= 50.0) & (v_mph >= 3.0)
    if cold.any():
        out[cold] = wind_chill_f(t_f[cold], v_mph[cold])
    return _f_to_c(out)


def apparent_steadman(F, X=None):
    """Steadman (1994) apparent temperature (°C), smooth in all three components."""
    F = np.asarray(F, dtype=float)
    return _steadman(F[..., 0], F[..., 1], F[..., 2])


def _steadman(t, rh, ws):
    e = rh / 100.0 * 6.105 * np.exp(17.27 * t / (237.7 + t))
    return t + 0.33 * e - 0.70 * ws - 4.00


VARIANTS = {"nws": perceived_nws, "steadman": apparent_steadman}
# each variant of (T, RH, wind) as separate arrays: g of (T, dew point, wind) passes
# the derived humidity without stacking the three again (a copy of every sample)
_READINGS = {"nws": _nws, "steadman": _steadman}


def _from_dewpoint(variant: str):
    """``g`` of (T, dew point, wind): the relative humidity by the Magnus formula, then ``g``."""
    g = _READINGS[variant]

    def composed(F, X=None):
        F = np.asarray(F, dtype=float)
        t = F[..., 0]
        return g(t, relative_humidity(t, F[..., 1]), F[..., 2])

    return composed


def split_stations(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a random third of stations (to learn kernels) and of the rest (to run on)."""
    perm = np.random.default_rng(np.random.SeedSequence(seed)).permutation(n)
    k = n // 3
    return np.sort(perm[:k]), np.sort(perm[k:])


def _station_readings(X: np.ndarray, Y: np.ndarray):
    """The components at stations ``Z (m, 2)``: the readings ``Y`` of the rows of ``X``."""
    lookup = {tuple(x): i for i, x in enumerate(X)}

    def components(Z):
        try:
            rows = [lookup[tuple(z)] for z in np.asarray(Z, dtype=float)]
        except KeyError as err:
            raise ValueError(f"perceived-temperature: {err.args[0]} is not a station") from err
        return Y[rows]

    return components


def _check_arguments(variant, split, known_kernels, day, humidity) -> None:
    check_choice(variant, "variant", tuple(VARIANTS))
    check_choice(day, "day", tuple(DAYS))
    check_choice(split, "split", ("all", "run"))
    check_choice(humidity, "humidity", HUMIDITY)
    if known_kernels and split != "run":
        raise ValueError(
            f"known_kernels=True learns the kernels on a third of the stations and runs on "
            f"the rest: it needs split='run'; got split={split!r}"
        )


def _readings(day: str, humidity: str):
    """Station ids (N,), locations ``(lat, lon)`` (N, 2) and the three components (N, 3)."""
    st = load_stations(day)
    hum = st["rh_pct"] if humidity == "rh" else st["dewpoint_c"]
    return st["station"], np.c_[st["lat"], st["lon"]], np.c_[st["temp_c"], hum, st["wind_ms"]]


def _problem_name(day: str, humidity: str, known_kernels: bool) -> str:
    """The registry name of the problem these arguments build."""
    july = "-july" if day == "2019-07-15" else ""
    return f"perceived-temperature{july}{'-rh' if humidity == 'rh' else ''}" + (
        "-run" if known_kernels else ""
    )


def _learnt(X, Y, bounds, g, seed: int) -> KnownKernels:
    """MAP kernels of the components and of ``g`` on the learning stations (the paper's)."""
    return KnownKernels.fit(X, Y, bounds, composed_y=g(Y), seed=seed)


def _units(humidity: str) -> dict:
    """Station coordinates, the three components' units, and the objective's (°C)."""
    moisture = "%" if humidity == "rh" else "degC"
    return {
        "inputs": ["degrees_north", "degrees_east"],
        "components": ["degC", moisture, "m s-1"],
        "objective": "degC",
    }


def perceived_temperature(
    seed: int = 0,
    variant: str = "nws",
    split: str = "all",
    known_kernels: bool = False,
    day: str = "1995-03-18",
    humidity: str = "dewpoint",
) -> Problem:
    """Maximise perceived temperature over the stations.

    Parameters
    ----------
    seed : int
        Chooses the learn/run split when ``split="run"``.
    variant : {"nws", "steadman"}
    split : {"all", "run"}
        ``"run"``: the candidate set is the two thirds of stations not in the
        kernel-learning third (``metadata["learn_X"]``, ``"learn_Y"``,
        ``"learn_stations"``), as in the paper.
    known_kernels : bool
        With ``split="run"``: fit SE kernels by MAP on the learning third, one per
        component and one for the perceived temperature itself (for GP-UCB), and
        attach them as the problem's ``known_kernels`` (the paper's protocol, for
        ``inference="fixed"``; about 2 s).
    day : {"1995-03-18", "2019-07-15"}
        The stations' day (:data:`DAYS`).
    humidity : {"dewpoint", "rh"}
        The humidity component: the dew point (°C, default), which stations
        measure and from which ``g`` derives the relative humidity (Magnus
        formula), or the relative humidity itself (%, as in the paper). RH's
        errors are anticorrelated with the temperature's, which independent
        component GPs cannot know (``docs/results.md``).
    """
    _check_arguments(variant, split, known_kernels, day, humidity)
    names, X_all, Y_all = _readings(day, humidity)
    learn, run = split_stations(seed, len(X_all))
    idx = np.arange(len(X_all)) if split == "all" else run
    X, Y = X_all[idx], Y_all[idx]
    g = VARIANTS[variant] if humidity == "rh" else _from_dewpoint(variant)
    domain = CandidateSet(X, labels=names[idx])
    kernels = _learnt(X_all[learn], Y_all[learn], domain.bounds, g, seed) if known_kernels else None
    about = {"variant": variant, "source": DAYS[day][2], "day": day, "humidity": humidity}
    learnt = {"learn_X": X_all[learn], "learn_Y": Y_all[learn], "learn_stations": names[learn]}
    return Problem(
        domain=domain,
        components=_station_readings(X, Y),
        n_components=3,
        g=lambda F, Z: g(F),
        maximize=True,
        optimum=float(g(Y).max()),
        name=_problem_name(day, humidity, known_kernels),
        component_names=list(COMPONENTS if humidity == "rh" else DEWPOINT_COMPONENTS),
        input_names=["latitude", "longitude"],
        units=_units(humidity),
        description=f"{variant} perceived temperature at {len(X)} US stations, {DAYS[day][1]}",
        metadata={**learnt, **about},
        known_kernels=kernels,
    )
