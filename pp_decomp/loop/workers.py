"""``Optimizer.run(n, workers=K)``: K evaluations in flight on a Dask cluster.

As each result arrives it is told (checkpointed) and one new input is asked
with the other in-flight inputs pending, so K workers never wait for each
other (asynchronous batch BO). Evaluations run where Dask puts them: an
embedded ``LocalCluster`` of ``workers`` processes, or an existing cluster at
``scheduler``. A worker that dies mid-evaluation has its task rescheduled on
another worker by Dask (up to the scheduler's ``allowed-failures``); an
evaluation that raises follows ``on_error`` as in the sequential loop. The
checkpoint holds the in-flight inputs as pending, so a killed driver resumes
by submitting them again: nothing told is lost and nothing in flight is
forgotten.
"""

from __future__ import annotations

import numpy as np

from pp_decomp._dask import dask_client
from pp_decomp.loop.ask import in_flight
from pp_decomp.loop.evaluate import evaluate_with_policy
from pp_decomp.loop.records import NOISE_STREAM


def evaluate_task(
    problem, x, seed: int, key: int, on_error: str, retries: int, transform: str = "none"
):
    """One evaluation on a worker: ``(y, None)`` or ``(None, reason)``; the noise
    draws from the same stream as the sequential loop's."""
    seq = np.random.SeedSequence(seed, spawn_key=(key, NOISE_STREAM))
    rng = np.random.default_rng(seq)
    return evaluate_with_policy(problem, x, rng, on_error, retries, transform)


def run_workers(opt, n_iter: int, workers, scheduler, on_error: str, retries: int, outcomes):
    """Keep up to ``min(workers, evaluations still needed)`` inputs in flight
    (:func:`~pp_decomp.loop.ask.in_flight`: fewer while the model is young) until
    ``n_iter`` evaluations succeeded (``workers=None`` on an existing cluster: as
    many as it has workers); ``outcomes`` (:class:`~pp_decomp.loop.evaluate.Outcomes`)
    tells the results as they arrive."""
    from dask.distributed import as_completed
    from distributed import KilledWorker

    with dask_client(scheduler, workers) as client:
        workers = workers or max(1, len(client.scheduler_info()["workers"]))
        flying: dict = {}  # future -> input
        done = as_completed()

        def refill() -> None:
            need = in_flight(opt, workers, n_iter)
            if need <= 0:
                return
            keys = {x.tobytes() for x in flying.values()}
            for x in opt.ask(need):
                if x.tobytes() not in keys:
                    key = opt.pending.record(x)["key"]
                    # the problem travels with each task, not scattered once: scattered
                    # data lives only on the workers, so losing them all would lose it
                    fut = client.submit(
                        evaluate_task,
                        opt.problem,
                        x,
                        opt.settings.seed,
                        key,
                        on_error,
                        retries,
                        opt.settings.model.outcome_transform,
                        pure=False,
                    )
                    flying[fut] = x
                    done.add(fut)

        refill()
        for fut in done:
            x = flying.pop(fut)
            try:
                y, reason = fut.result()
            except KilledWorker as err:
                if on_error == "raise":
                    raise
                y, reason = None, f"KilledWorker: {err}"
            outcomes.tell(x, y, reason)
            refill()
