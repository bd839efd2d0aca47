"""Optima of the simulated problems, computed once and cached in ``models/data/optima.json``.

Each entry is keyed by the problem's name and parameters, so that other parameters
get an optimum of their own; a read-only install keeps a computed value for the
process only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import optimize

OPTIMA_FILE = Path(__file__).parent / "data" / "optima.json"


def cached_optimum(key: str, compute: Callable[[], dict]) -> dict:
    """The stored ``{"x": [...], "value": v}`` under ``key``, or ``compute()``'s, then stored."""
    table = _read()
    if key not in table:
        table[key] = compute()
        _write(table)
    return table[key]


def improve_optimum(key: str, found: dict, lower: bool) -> bool:
    """Store ``found`` (``{"x": [...], "value": v, ...}``) under ``key`` if it is better
    than the stored optimum (``lower``: a minimum); whether it was."""
    table = _read()
    stored = table.get(key)
    if stored is not None and (found["value"] >= stored["value"]) == lower:
        return False
    table[key] = found
    _write(table)
    return True


def unit_grid(points: int, dim: int) -> np.ndarray:
    """The ``points^dim`` grid of the unit cube, ``(points^dim, dim)`` (the first input
    varies slowest)."""
    axis = np.linspace(0.0, 1.0, points)
    return np.stack(np.meshgrid(*[axis] * dim, indexing="ij"), -1).reshape(-1, dim)


def grid_maximum(g: Callable, dim: int, points: int, polish: int = 5) -> float:
    """``max g`` over the unit cube: on :func:`unit_grid`, refined by L-BFGS-B from the
    best ``polish`` grid points; ``g`` maps ``(m, dim)`` inputs to ``(m,)`` values.

    Example
    -------
    >>> abs(grid_maximum(lambda X: -((X - 0.3) ** 2).sum(1), dim=2, points=11)) < 1e-12
    True
    """
    G = unit_grid(points, dim)
    values = g(G)
    best = float(values.max())
    for i in np.argsort(values)[-polish:]:
        res = optimize.minimize(
            lambda x: -float(g(x[None])[0]), G[i], method="L-BFGS-B", bounds=[(0.0, 1.0)] * dim
        )
        best = max(best, -float(res.fun))
    return best


def _read() -> dict:
    return json.loads(OPTIMA_FILE.read_text()) if OPTIMA_FILE.exists() else {}


def _write(table: dict) -> None:
    tmp = OPTIMA_FILE.with_name(f".{OPTIMA_FILE.name}.{os.getpid()}.tmp")
    try:  # atomically: parallel runs may read the file while one writes it
        tmp.write_text(json.dumps(table, indent=1, sort_keys=True))
        os.replace(tmp, OPTIMA_FILE)
    except OSError:
        tmp.unlink(missing_ok=True)
