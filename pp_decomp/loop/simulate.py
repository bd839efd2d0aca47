"""Asynchronous evaluation in simulated time: what ``q`` workers would gain.

A discrete-event simulation of ``Optimizer.run(n, workers=q)``: evaluation
``i`` (in the order asked) takes ``durations[i]`` time units, ``q`` run at once,
and as each finishes it is told and one new input is asked with the others
pending. The clock is the evaluations' time only (a user's simulator or
experiment), so runs with different ``q`` on the same durations compare their
wall-clock fairly, whatever this machine's speed.
"""

from __future__ import annotations

import heapq

import numpy as np
import xarray as xr

from pp_decomp.loop.ask import in_flight
from pp_decomp.loop.setup import RunSetup, Steps
from pp_decomp.loop.state import LoopState
from pp_decomp.validate import check_positive_int


def simulate_async(
    setup: RunSetup, state: LoopState, steps: Steps, n_iter: int, q: int, durations: np.ndarray
) -> xr.Dataset:
    """Run a run (its ``setup``, ``state`` and ``steps``: ``Optimizer.setup``,
    ``.state``, ``.steps``) to ``n_iter`` evaluations with ``q`` in flight; results
    with ``finish_time (iteration)``, the simulated time each evaluation was told.

    ``durations (>= n_iter,)`` are the evaluations' times in the order asked.
    """
    n_iter, q = check_positive_int(n_iter, "n_iter"), check_positive_int(q, "q")
    durations = np.asarray(durations, dtype=float)
    if durations.ndim != 1 or len(durations) < n_iter or np.any(durations < 0):
        raise ValueError(
            f"durations must hold at least n_iter={n_iter} non-negative times; "
            f"got shape {durations.shape}"
        )
    clock, started, events, finish = 0.0, 0, [], []
    while state.n < n_iter:
        flying = {x.tobytes() for _, _, x in events}
        for x in steps.ask(in_flight(state, q, n_iter)):
            if x.tobytes() not in flying:
                heapq.heappush(events, (clock + durations[started], started, x))
                started += 1
        clock, _, x = heapq.heappop(events)
        steps.tell(x, setup.problem.evaluate(x[None], seed=state.noise_rng(x))[0])
        finish.append(clock)
    ds = steps.results()
    ds["finish_time"] = ("iteration", np.array(finish))
    ds["finish_time"].attrs["long_name"] = "simulated time when the evaluation was told"
    return ds.assign_attrs(workers=q)
