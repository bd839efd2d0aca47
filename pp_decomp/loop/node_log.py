"""Partial evaluations as a run keeps them: rows evaluated one node at a time, and
every node evaluation (:class:`NodeLog`, part of the checkpoint).

A *row* is an input ``x`` with the node values known there so far, NaN for the
rest. Its values are observations of the nodes at ``x``, except parent values a
user *gave* to evaluate a child at (``given``): those are the child's inputs,
not data of the parent's GP, and such a row never completes. A row whose every
node has been observed becomes an evaluation of the run (``X``, ``Y``) and
stays in the log, marked with its evaluation number (``became``); the node GPs
learn from the evaluations and from the rows still open.

Example
-------
>>> import numpy as np
>>> log = NodeLog(dim=1, n_nodes=2)
>>> r = log.start(np.array([0.5]), {"phase": "user"})
>>> log.observe(r, 0, 1.5, cost=1.0, record={"phase": "user"})
>>> log.open_rows().tolist(), log.Y[r].tolist(), log.spent
([0], [1.5, nan], 1.0)
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from pp_decomp.loop.records import jsonable


class NodeLog:
    """The rows in progress and every node evaluation of a run (module docstring).

    ``X (r, d)``, ``Y (r, K)`` (NaN: not known), ``given (r, K)``; ``starts``: each row's
    step record (its phase and key); ``became (r,)``: the evaluation number (from 1) a
    completed row became (or the input told whole), -1 where it failed, 0 while open;
    ``entries``: every node evaluation as a dict (``row``, ``node`` index, ``value``,
    ``cost`` and its ``record``); ``pending``: the node asked and not yet told (``row``,
    ``node``, ``record``), or ``None``.
    """

    def __init__(self, dim: int, n_nodes: int):
        self.dim, self.n_nodes = dim, n_nodes
        self.X = np.empty((0, dim))
        self.Y = np.empty((0, n_nodes))
        self.given = np.zeros((0, n_nodes), dtype=bool)
        self.starts: list[dict] = []
        self.became: list[int] = []
        self.entries: list[dict] = []
        self.pending: dict | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def start(self, x: np.ndarray, record: dict, given: dict[int, float] | None = None) -> int:
        """Open a row at ``x (d,)`` with its step ``record`` and the parent values a user
        ``given`` (node index -> value); its index."""
        y, g = np.full(self.n_nodes, np.nan), np.zeros(self.n_nodes, dtype=bool)
        for k, v in (given or {}).items():
            y[k], g[k] = float(v), True
        self.X = np.vstack([self.X, np.asarray(x, dtype=float)[None]])
        self.Y, self.given = np.vstack([self.Y, y]), np.vstack([self.given, g])
        self.starts.append(dict(record))
        self.became.append(0)
        return len(self.starts) - 1

    def observe(self, row: int, k: int, value: float, cost: float, record: dict) -> None:
        """Record node ``k``'s ``value`` in ``row`` at ``cost``, with its step ``record``."""
        self.Y[row, k] = float(value)
        self.entries.append(
            {"row": int(row), "node": int(k), "value": float(value), "cost": float(cost),
             "record": dict(record)}
        )  # fmt: skip

    def complete(self, row: int) -> bool:
        """Whether every node of ``row`` is observed (none given)."""
        return bool(np.all(np.isfinite(self.Y[row])) and not self.given[row].any())

    def close(self, x: np.ndarray, became: int) -> dict | None:
        """Close the open row at ``x`` (the input was told whole, as evaluation ``became``,
        or failed, -1) and drop its node ask; its start record, or ``None`` without one."""
        row = self.row_at(x)
        if row is None:
            return None
        self.became[row] = int(became)
        if self.pending is not None and self.pending["row"] == row:
            self.pending = None
        return self.starts[row]

    def open_rows(self) -> np.ndarray:
        """Indices of the rows not yet become evaluations: (k,)."""
        return np.flatnonzero(np.asarray(self.became, dtype=np.int64) == 0)

    def continuable(self) -> np.ndarray:
        """Open rows the loop may go on evaluating: none of their values given."""
        rows = self.open_rows()
        return rows[~self.given[rows].any(axis=1)]

    def row_at(self, x: np.ndarray) -> int | None:
        """The open row at ``x (d,)`` (to 1e-12) with no value given, or ``None``."""
        for r in self.continuable():
            if np.allclose(self.X[r], x, rtol=0, atol=1e-12):
                return int(r)
        return None

    def open_phase(self, phase: str) -> list[int]:
        """Open rows started in ``phase`` (``init``: the design's, which are finished first)."""
        return [int(r) for r in self.continuable() if self.starts[r].get("phase") == phase]

    @property
    def spent(self) -> float:
        """The cost of every node evaluation so far."""
        return float(sum(e["cost"] for e in self.entries))

    def state(self) -> dict:
        """JSON-serialisable form for the checkpoint."""
        return jsonable(
            {
                "X": self.X,
                "Y": np.where(np.isfinite(self.Y), self.Y, None),
                "given": self.given,
                "starts": self.starts,
                "became": self.became,
                "entries": self.entries,
                "pending": self.pending,
            }
        )

    def restore(self, state: dict) -> None:
        """Inverse of :meth:`state`."""
        K = self.n_nodes
        self.X = np.asarray(state.get("X", []), dtype=float).reshape(-1, self.dim)
        Y = np.asarray(state.get("Y", []), dtype=object).reshape(-1, K)
        self.Y = np.where(Y == None, np.nan, Y).astype(float)  # noqa: E711 (elementwise)
        self.given = np.asarray(state.get("given", []), dtype=bool).reshape(-1, K)
        self.starts = list(state.get("starts", []))
        self.became = [int(b) for b in state.get("became", [])]
        self.entries = list(state.get("entries", []))
        self.pending = state.get("pending")

    def to_dataset(self, names: list[str]) -> xr.Dataset:
        """The log in a run's results: over ``node_evaluation`` (from 1), each node
        evaluation's ``node_evaluation_node``, ``_row``, ``_value``, ``_cost``, ``_phase``;
        over ``partial_row`` (from 0), ``partial_x``, ``partial_y`` (NaN: not known),
        ``partial_given`` and ``partial_became`` (the evaluation a row became, 0: open,
        -1: failed)."""
        e = self.entries
        col = lambda key: [x[key] for x in e]  # noqa: E731
        ds = xr.Dataset(
            {
                "node_evaluation_node": ("node_evaluation", [names[k] for k in col("node")]),
                "node_evaluation_row": ("node_evaluation", np.array(col("row"), dtype=np.int64)),
                "node_evaluation_value": ("node_evaluation", np.array(col("value"), dtype=float)),
                "node_evaluation_cost": ("node_evaluation", np.array(col("cost"), dtype=float)),
                "node_evaluation_phase": (
                    "node_evaluation", [x["record"].get("phase", "") for x in e]
                ),
                "partial_x": (("partial_row", "dim"), self.X),
                "partial_y": (("partial_row", "component"), self.Y),
                "partial_given": (("partial_row", "component"), self.given),
                "partial_became": ("partial_row", np.array(self.became, dtype=np.int64)),
            },
            coords={
                "node_evaluation": np.arange(1, len(e) + 1),
                "partial_row": np.arange(len(self.starts)),
            },
        )  # fmt: skip
        return ds
