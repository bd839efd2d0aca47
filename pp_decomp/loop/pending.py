"""Inputs asked for and not yet told: part of the checkpoint, so a resumed run keeps them."""

from __future__ import annotations

import numpy as np

from pp_decomp.loop.records import jsonable


class Pending:
    """Asked inputs ``(x, record)`` in the order they were asked."""

    def __init__(self, dim: int):
        self.dim = dim
        self.items: list[tuple[np.ndarray, dict]] = []

    def __len__(self) -> int:
        return len(self.items)

    @property
    def X(self) -> np.ndarray:
        """The pending inputs: (k, d)."""
        return np.array([x for x, _ in self.items]).reshape(-1, self.dim)

    def add(self, x: np.ndarray, rec: dict) -> None:
        """Add an asked input and its step record."""
        self.items.append((np.asarray(x, dtype=float), rec))

    def _index(self, x: np.ndarray) -> int | None:
        for i, (xp, _) in enumerate(self.items):
            if np.allclose(x, xp, rtol=0, atol=1e-12):
                return i
        return None

    def record(self, x: np.ndarray) -> dict:
        """The step record of the pending input equal to ``x`` (to 1e-12)."""
        i = self._index(x)
        if i is None:
            raise KeyError(f"x={np.asarray(x).tolist()} is not pending")
        return self.items[i][1]

    def take(self, x: np.ndarray) -> dict | None:
        """Remove the pending input equal to ``x`` (to 1e-12); its record, or ``None``."""
        i = self._index(x)
        return None if i is None else self.items.pop(i)[1]

    def state(self) -> list:
        """JSON-serialisable form for the checkpoint."""
        return [{"x": x.tolist(), "record": jsonable(rec)} for x, rec in self.items]

    def restore(self, state: list) -> None:
        """Inverse of :meth:`state`."""
        self.items = [(np.asarray(p["x"], dtype=float), p["record"]) for p in state]
