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
forgotten. A finished evaluation whose result cannot be fetched within
:data:`GATHER_TIMEOUT` (its worker died holding it, and distributed's own
rescheduling of it can wait forever) is submitted again, up to
:data:`MAX_RESUBMITS` times; a cluster left with no worker for
:data:`NO_WORKER_LIMIT` seconds stops the run with an error that says so, an
embedded cluster whose nannies all closed given new workers before that
(:class:`WorkerWatch`).
"""

from __future__ import annotations

import time

import numpy as np

from pp_decomp._runtime import dask_client, warn
from pp_decomp.loop.ask import in_flight
from pp_decomp.loop.evaluate import ErrorPolicy, Outcomes, evaluate_with_policy
from pp_decomp.loop.records import NOISE_STREAM
from pp_decomp.loop.setup import RunSetup, Steps
from pp_decomp.loop.state import LoopState

# Seconds to fetch a finished evaluation's result (a few values) before submitting
# it again: under load a worker killed after finishing left its result unfetchable
# and the run waiting for it with no worker busy (a CI run hung 15 min, session 83).
GATHER_TIMEOUT = 120.0
MAX_RESUBMITS = 3  # then the evaluation is a failure under the run's on_error
POLL = 5.0  # seconds between checks that the cluster still has a worker
NO_WORKER_LIMIT = 600.0  # seconds with no worker alive before the run stops, said
# Seconds with no worker before an embedded cluster whose nannies all closed gets new
# workers: a nanny can close for good instead of restarting (dask/distributed#7312)
REVIVE_AFTER = 30.0


def evaluate_task(
    problem, x, seed: int, key: int, on_error: str, retries: int, transform: str = "none"
):
    """One evaluation on a worker: ``(y, None)`` or ``(None, reason)``; the noise
    draws from the same stream as the sequential loop's."""
    seq = np.random.SeedSequence(seed, spawn_key=(key, NOISE_STREAM))
    rng = np.random.default_rng(seq)
    return evaluate_with_policy(problem, x, rng, on_error, retries, transform)


def run_workers(
    setup: RunSetup,
    state: LoopState,
    steps: Steps,
    n_iter: int,
    workers,
    scheduler,
    policy: ErrorPolicy,
    outcomes: Outcomes,
):
    """Keep up to ``min(workers, evaluations still needed)`` inputs in flight
    (:func:`~pp_decomp.loop.ask.in_flight`: fewer while the model is young) until
    ``n_iter`` evaluations succeeded (``workers=None`` on an existing cluster: as
    many as it has workers); ``outcomes`` (:class:`~pp_decomp.loop.evaluate.Outcomes`)
    tells the results as they arrive; ``steps.ask`` asks."""
    with dask_client(scheduler, workers) as client:
        workers = workers or max(1, len(client.scheduler_info()["workers"]))
        flying: dict = {}  # future -> (input, key)
        resubmits: dict[int, int] = {}

        def submit(x, key: int) -> None:
            # the problem travels with each task, not scattered once: scattered
            # data lives only on the workers, so losing them all would lose it
            fut = client.submit(
                evaluate_task,
                setup.problem,
                x,
                setup.settings.seed,
                key,
                policy.on_error,
                policy.retries,
                setup.settings.model.outcome_transform,
                pure=False,
            )
            flying[fut] = (x, key)

        def refill() -> None:
            need = in_flight(state, workers, n_iter)
            if need <= 0:
                return
            keys = {x.tobytes() for x, _ in flying.values()}
            for x in steps.ask(need):
                if x.tobytes() not in keys:
                    submit(x, state.pending.record(x)["key"])

        refill()
        alive = lambda: len(client.scheduler_info()["workers"])  # noqa: E731
        watch = WorkerWatch(alive, revive=_reviver(client.cluster, workers))
        while flying:
            for fut in watch.finished(flying):
                x, key = flying.pop(fut)
                result = gathered(fut, x, policy, resubmits.get(key, 0))
                if result is None:  # the same key draws the same noise: repeated, not changed
                    resubmits[key] = resubmits.get(key, 0) + 1
                    fut.cancel()
                    submit(x, key)
                    continue
                outcomes.tell(x, *result)
                refill()


# The states of a nanny that will not restart its worker again; a nanny restarting
# one stays "running" (distributed 2026.8)
CLOSED = frozenset({"closing", "closing_gracefully", "closed", "failed"})


def _reviver(cluster, workers: int):
    """Starts ``workers`` new workers on an embedded cluster whose nannies have all
    closed (``None`` on an existing cluster, which is the user's to mend): scaling to
    0 drops the closed nannies' specs, which scaling up alone would count as present.
    A nanny still open is restarting its worker, and one the cluster is still
    starting (in its spec, not yet among its workers) is on its way: both are left
    to it."""
    if cluster is None:
        return None

    def revive() -> bool:
        nannies = list(cluster.workers.values())  # a copy: the cluster's thread edits it
        if set(cluster.worker_spec) - set(cluster.workers):
            return False
        if not all(nanny.status.name in CLOSED for nanny in nannies):
            return False
        cluster.scale(0)
        cluster.scale(workers)
        return True

    return revive


class WorkerWatch:
    """Waits for evaluations to finish, and mends or stops a cluster left with no
    worker: after :data:`REVIVE_AFTER` seconds ``revive()`` (an embedded cluster's)
    starts new workers, warned; after :data:`NO_WORKER_LIMIT` seconds with none the
    run stops, saying why. The inputs in flight stay pending in the checkpoint, and
    a resumed run submits them again. ``alive()``: the workers alive now;
    ``revive()``: whether it started workers (not while a nanny is restarting one)."""

    def __init__(self, alive, revive=None):
        self.alive, self.revive, self.idle_since, self.revived = alive, revive, None, None

    def finished(self, flying: dict) -> list:
        """The futures of ``flying`` finished within :data:`POLL` seconds, by key."""
        from distributed import wait

        try:
            done = wait(list(flying), timeout=POLL, return_when="FIRST_COMPLETED").done
        except TimeoutError:
            self.check()
            return []
        self.idle_since = None
        return sorted(done, key=lambda f: flying[f][1])

    def check(self) -> None:
        """Revive, then raise, as the class says, when no worker is alive."""
        if self.alive():
            self.idle_since = self.revived = None
            return
        now = time.monotonic()
        self.idle_since = self.idle_since or now
        waited = now - (self.revived or self.idle_since)
        if self.revive is not None and waited > REVIVE_AFTER and self.revive():
            warn(
                f"the Dask cluster has had no worker for {waited:.0f} s and its nannies "
                "have closed: new workers are started"
            )
            self.revived = now
        if now - self.idle_since > NO_WORKER_LIMIT:
            raise RuntimeError(
                f"the Dask cluster has had no worker for {NO_WORKER_LIMIT:.0f} s, so the "
                "evaluations in flight cannot run; they are pending in the checkpoint: "
                "resume the run once workers are back"
            )


def gathered(fut, x, policy: ErrorPolicy, resubmitted: int) -> tuple | None:
    """A finished evaluation's ``(y, reason)``, or ``None`` (warned) when its result
    could not be fetched within :data:`GATHER_TIMEOUT` and it was submitted fewer
    than :data:`MAX_RESUBMITS` times (then it is a failure, raised under
    ``on_error="raise"``); a worker killed by it three times (``KilledWorker``) is a
    failure unless ``on_error="raise"``. An error the evaluation raised is raised."""
    from distributed import KilledWorker

    try:
        return fut.result(timeout=GATHER_TIMEOUT)
    except KilledWorker as err:
        if policy.on_error == "raise":
            raise
        return None, f"KilledWorker: {err}"
    except TimeoutError:
        if fut.status == "error":  # the evaluation's own TimeoutError, not the fetch's
            raise
        where = f"the result of the evaluation at {x.tolist()}"
        if resubmitted >= MAX_RESUBMITS:
            reason = f"{where} could not be fetched in {resubmitted + 1} submissions"
            if policy.on_error == "raise":
                raise RuntimeError(reason) from None
            return None, reason
        warn(f"{where} could not be fetched within {GATHER_TIMEOUT:.0f} s; submitted again")
        return None
