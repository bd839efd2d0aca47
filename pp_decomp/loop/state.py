"""The loop's state: what was told, what failed, what is in flight (:class:`Pending`,
part of the checkpoint, so a resumed run keeps it), and the random streams.

:class:`LoopState` is the one object a step's parts read (which inputs to avoid,
how much of the initial design is left, the random numbers of step ``k``) and a
``tell`` writes. ``Optimizer`` owns it and hands it to the parts explicitly;
the models (the updater) and the choice (the strategy) are the step's other
parts, each with its own state (docs/architecture.md).

Failed evaluations
------------------
Failed evaluations are first-class data (:class:`FailureLog`). A system that
fails at an input (a simulator crash, a lost sample, a non-finite output) is
told with ``Optimizer.tell_failure(x, reason)``. The failure is kept in the
results (dimension ``failure``) and the checkpoint, and the strategy does not
ask that input again once it has failed more than ``max_retries`` times: on a
candidate set it is masked, on a box the acquisition is ``-inf`` within 0.1% of
the domain's extent of it in every coordinate
(:data:`pp_decomp.optim.maximizers.BOX_RADIUS`). A run stops with an error after
``max_failures_in_a_row`` failures in a row (``Optimizer.run``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from pp_decomp.loop.node_log import NodeLog
from pp_decomp.loop.records import INIT_STREAM, NOISE_STREAM, jsonable
from pp_decomp.optim import TOL, exclusion_radius, within
from pp_decomp.space import Box, CandidateSet


class FailureLog:
    """The failed evaluations of a run, in the order they were told."""

    def __init__(self, dim: int, max_retries: int = 0):
        self.dim, self.max_retries = dim, int(max_retries)
        self.X = np.empty((0, dim))
        self.reasons: list[str] = []
        self.after: list[int] = []  # successful evaluations before each failure
        self.phases: list[str] = []  # "init" or "acquisition": where the input came from

    def __len__(self) -> int:
        return len(self.reasons)

    def record(self, x: np.ndarray, reason: str, n_done: int, phase: str) -> None:
        """Add a failure at ``x (d,)`` after ``n_done`` successful evaluations."""
        self.X = np.vstack([self.X, np.asarray(x, dtype=float)[None]])
        self.reasons.append(str(reason))
        self.after.append(int(n_done))
        self.phases.append(str(phase))

    def excluded(self, scale: np.ndarray, radius: float = 10 * TOL) -> np.ndarray:
        """Inputs with more than ``max_retries`` failures within ``radius × scale``
        of them (``scale`` (d,) the domain's extent; see
        :func:`~pp_decomp.optim.maximizers.exclusion_radius`): (k, d)."""
        if not len(self) or self.max_retries == 0:
            return self.X
        return self.X[within(self.X, self.X, scale, radius).sum(axis=1) > self.max_retries]

    def state(self) -> dict:
        """JSON-serialisable form for the checkpoint."""
        return {
            "X": self.X.tolist(),
            "reasons": self.reasons,
            "after": self.after,
            "phases": self.phases,
        }

    def restore(self, state: dict) -> None:
        """Inverse of :meth:`state`."""
        self.X = np.asarray(state.get("X", []), dtype=float).reshape(-1, self.dim)
        self.reasons = list(state.get("reasons", []))
        self.after = [int(a) for a in state.get("after", [])]
        self.phases = list(state.get("phases", []))

    def to_dataset(self) -> xr.Dataset:
        """``failed_x(failure, dim)``, ``failure_reason``, ``failed_after`` (successful
        evaluations before it) and ``failed_phase`` over ``failure``."""
        ds = xr.Dataset(
            {
                "failed_x": (("failure", "dim"), self.X),
                "failure_reason": ("failure", np.array(self.reasons, dtype=str)),
                "failed_after": ("failure", np.array(self.after, dtype=np.int64)),
                "failed_phase": ("failure", np.array(self.phases, dtype=str)),
            },
            coords={"failure": np.arange(1, len(self) + 1)},
        )
        for name, (long_name, description) in _ATTRS.items():
            ds[name].attrs.update(long_name=long_name, description=description)
        ds["failed_x"].attrs["units"] = "the problem's input units"
        ds["failed_after"].attrs["units"] = "1"
        return ds


_ATTRS = {
    "failure": ("failed evaluation number", "failures in the order they were told"),
    "failed_x": ("failed input", "an input whose evaluation failed"),
    "failure_reason": ("failure reason", "the error or non-finite output that was told"),
    "failed_after": ("evaluations before the failure", "successful evaluations told before it"),
    "failed_phase": ("phase of the failed input", "init (design) or acquisition"),
}


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


class LoopState:
    """Observations ``X (n, d)``, ``Y (n, J)`` with one step record each, the failures,
    the pending inputs, GP-MI's ``gamma``, the initial design and the random streams.

    Every random number of step ``key`` comes from
    ``SeedSequence(seed, spawn_key=(key, stream))``, where a step's key counts every
    input asked before it (told, failed or pending) plus one, so that a run resumed
    from its checkpoint draws the numbers the uninterrupted run draws.

    Parameters
    ----------
    domain : Box or CandidateSet
    n_components : int
        ``J``, the columns of ``Y``.
    seed : int
        Root seed of every random choice.
    n_init : int
        Size of the space-filling initial design, drawn here from step 0's stream.
    max_retries : int
        How many times a failed input may be asked again (:class:`FailureLog`).

    Examples
    --------
    >>> from pp_decomp.space import Box
    >>> s = LoopState(Box([0, 0], [1, 1]), n_components=2, seed=0, n_init=3, max_retries=0)
    >>> s.init_design.shape, s.n, s.next_key, s.design_left
    ((3, 2), 0, 1, 3)
    """

    def __init__(
        self,
        domain: Box | CandidateSet,
        n_components: int,
        seed: int,
        n_init: int,
        max_retries: int,
    ):
        self.domain, self.seed, self.n_init = domain, int(seed), int(n_init)
        self.X = np.empty((0, domain.dim))
        self.Y = np.empty((0, n_components))
        self.records: list[dict] = []
        self.failures = FailureLog(domain.dim, max_retries)
        self.pending = Pending(domain.dim)
        self.nodes = NodeLog(domain.dim, n_components)  # a network's partial evaluations
        self.gamma = 0.0
        first = self.rng(0, INIT_STREAM)
        self.init_design = domain.sample(n_init, seed=first) if n_init else self.X.copy()

    def rng(self, key: int, stream: int) -> np.random.Generator:
        """The generator of stream ``stream`` (:mod:`pp_decomp.loop.records`) at step ``key``."""
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(key, stream)))

    @property
    def n(self) -> int:
        """Evaluations told (failures not counted)."""
        return self.X.shape[0]

    @property
    def next_key(self) -> int:
        """Key of the next input asked with none pending: told and failed inputs, plus one."""
        # failures count, so that the step after a failure draws new numbers
        return self.n + len(self.failures) + 1

    def noise_rng(self, x: np.ndarray) -> np.random.Generator:
        """The generator a simulated evaluation of the pending input ``x`` draws its noise from."""
        return self.rng(self.pending.record(x).get("key", self.next_key), NOISE_STREAM)

    def add(self, x: np.ndarray, y: np.ndarray, rec: dict) -> None:
        """Append one observation ``y (J,)`` at ``x (d,)`` and its step record."""
        self.X, self.Y = np.vstack([self.X, x]), np.vstack([self.Y, y])
        # GP-MI's γ only grows: with results told out of order it is the latest asked's
        self.gamma = max(self.gamma, float(rec["gamma_next"]))
        self.records.append(rec)

    def take_asked(self, x: np.ndarray, became: int) -> dict | None:
        """The record of the asked input at ``x (d,)``, no longer in flight: a pending
        input's, or the start record of a row being evaluated node by node, which is
        closed (told whole as evaluation ``became``, or failed, -1); ``None`` if neither."""
        rec = self.pending.take(x)
        if rec is None and self.nodes.starts:
            return self.nodes.close(x, became)
        return rec

    def logs_dataset(self, names: list[str]) -> xr.Dataset:
        """The failures (:meth:`FailureLog.to_dataset`) and, where a network was evaluated
        node by node, the node log (:meth:`~pp_decomp.loop.node_log.NodeLog.to_dataset`;
        ``names``: the nodes') as one Dataset for the results."""
        ds = self.failures.to_dataset()
        if self.nodes.starts:
            ds = ds.merge(self.nodes.to_dataset(names))
        return ds

    @property
    def gamma_asked(self) -> float:
        """GP-MI's state after every input asked so far: the last pending one's, else ``gamma``."""
        return float(self.pending.items[-1][1]["gamma_next"]) if len(self.pending) else self.gamma

    def busy(self) -> np.ndarray:
        """Inputs not to ask: failed for good, pending, or a row being evaluated node by
        node: ``(k, d)``."""
        radius = exclusion_radius(self.domain)
        busy = [self.failures.excluded(self.domain.widths, radius), self.pending.X]
        if self.nodes.starts:  # a network evaluated node by node
            busy.append(self.nodes.X[self.nodes.continuable()])
        return np.vstack(busy)

    @property
    def asked_init(self) -> int:
        """Initial-design inputs asked so far: told, failed, pending or being evaluated
        node by node."""
        told = sum(r["phase"] == "init" for r in self.records)
        failed = sum(p == "init" for p in self.failures.phases)
        pending = sum(rec["phase"] == "init" for _, rec in self.pending.items)
        rows = len(self.nodes.open_phase("init")) if self.nodes.starts else 0
        return told + failed + pending + rows

    @property
    def design_left(self) -> int:
        """Initial-design inputs still to ask: ``n_init`` less those asked and the results
        told unasked (data a user brings count, so they are not followed by a random design)."""
        told_unasked = sum(r["phase"] == "user" for r in self.records)
        return max(self.n_init - self.asked_init - told_unasked, 0)
