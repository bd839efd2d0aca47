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

Data: ``data/stations_950318_18Z.csv``, 836 US stations of the 18 UTC hourly
surface reports of 18 March 1995 from Debian's ``libncarg-data``
(UCAR 2013, BSD-4-clause); rebuilt by :mod:`pp_decomp.models.weather_build`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from pp_decomp.components import KnownKernels
from pp_decomp.problem import Problem
from pp_decomp.space import CandidateSet
from pp_decomp.validate import check_choice

DATA = Path(__file__).parent / "data" / "stations_950318_18Z.csv"
COMPONENTS = ("temperature_c", "relative_humidity_pct", "wind_speed_ms")


@lru_cache(maxsize=1)
def load_stations() -> dict[str, np.ndarray]:
    """The shipped station table as arrays (``station``, ``lat``, ``lon``, ``temp_c``, ...)."""
    with open(DATA) as fh:
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
    hi = (
        -42.379
        + 2.04901523 * t_f
        + 10.14333127 * rh
        - 0.22475541 * t_f * rh
        - 6.83783e-3 * t_f**2
        - 5.481717e-2 * rh**2
        + 1.22874e-3 * t_f**2 * rh
        + 8.5282e-4 * t_f * rh**2
        - 1.99e-6 * t_f**2 * rh**2
    )
    dry = (rh < 13) & (t_f >= 80) & (t_f <= 112)
    adj_dry = (13 - rh) / 4 * np.sqrt(np.clip((17 - np.abs(t_f - 95.0)) / 17, 0, None))
    wet = (rh > 85) & (t_f >= 80) & (t_f <= 87)
    adj_wet = (rh - 85) / 10 * (87 - t_f) / 5
    return hi - np.where(dry, adj_dry, 0.0) + np.where(wet, adj_wet, 0.0)


def wind_chill_f(t_f, v_mph):
    """NWS (2001) wind chill (°F) for air temperature ``t_f`` and wind ``v_mph``."""
    v16 = np.power(np.maximum(v_mph, 0.0), 0.16)
    return 35.74 + 0.6215 * t_f - 35.75 * v16 + 0.4275 * t_f * v16


def perceived_nws(F, X=None):
    """NWS perceived temperature (°C) from ``F (..., 3)`` = (T °C, RH %, wind m/s)."""
    F = np.asarray(F, dtype=float)
    t_f = _c_to_f(F[..., 0])
    rh = np.clip(F[..., 1], 0.0, 100.0)
    v_mph = np.maximum(F[..., 2], 0.0) * 2.236936
    hot = t_f >= 80.0
    cold = (t_f <= 50.0) & (v_mph >= 3.0)
    out = np.where(hot, heat_index_f(t_f, rh), np.where(cold, wind_chill_f(t_f, v_mph), t_f))
    return _f_to_c(out)


def apparent_steadman(F, X=None):
    """Steadman (1994) apparent temperature (°C), smooth in all three components."""
    F = np.asarray(F, dtype=float)
    t, rh, ws = F[..., 0], F[..., 1], F[..., 2]
    e = rh / 100.0 * 6.105 * np.exp(17.27 * t / (237.7 + t))
    return t + 0.33 * e - 0.70 * ws - 4.00


VARIANTS = {"nws": perceived_nws, "steadman": apparent_steadman}


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


def perceived_temperature(
    seed: int = 0, variant: str = "nws", split: str = "all", known_kernels: bool = False
) -> Problem:
    """Maximise perceived temperature over the stations.

    Parameters
    ----------
    seed : int
        Chooses the learn/run split when ``split="run"``.
    variant : {"nws", "steadman"}
    split : {"all", "run"}
        ``"run"``: the candidate set is the two thirds of stations not in the
        kernel-learning third (``metadata["learn_X"]``, ``metadata["learn_Y"]``),
        as in the paper.
    known_kernels : bool
        With ``split="run"``: fit SE kernels by MAP on the learning third, one per
        component and one for the perceived temperature itself (for GP-UCB), and
        attach them as the problem's ``known_kernels`` (the paper's protocol, for
        ``inference="fixed"``; about 2 s).
    """
    check_choice(variant, "variant", tuple(VARIANTS))
    check_choice(split, "split", ("all", "run"))
    if known_kernels and split != "run":
        raise ValueError(
            f"known_kernels=True learns the kernels on a third of the stations and runs on "
            f"the rest: it needs split='run'; got split={split!r}"
        )
    st = load_stations()
    X_all = np.c_[st["lat"], st["lon"]]
    Y_all = np.c_[st["temp_c"], st["rh_pct"], st["wind_ms"]]
    learn, run = split_stations(seed, len(X_all))
    idx = np.arange(len(X_all)) if split == "all" else run
    X, Y = X_all[idx], Y_all[idx]
    g = VARIANTS[variant]
    values = g(Y)
    domain = CandidateSet(X, labels=st["station"][idx])
    kernels = None
    if known_kernels:
        kernels = KnownKernels.fit(
            X_all[learn], Y_all[learn], domain.bounds, composed_y=g(Y_all[learn]), seed=seed
        )
    return Problem(
        domain=domain,
        components=_station_readings(X, Y),
        n_components=3,
        g=lambda F, Z: g(F),
        maximize=True,
        optimum=float(values.max()),
        name="perceived-temperature-run" if known_kernels else "perceived-temperature",
        component_names=list(COMPONENTS),
        description=f"{variant} perceived temperature at {len(X)} US stations, 18 March 1995 18Z",
        metadata={
            "learn_X": X_all[learn],
            "learn_Y": Y_all[learn],
            "variant": variant,
            "source": "Debian libncarg-data 95031818_sao.cdf (UCAR, BSD-4-clause)",
        },
        known_kernels=kernels,
    )
