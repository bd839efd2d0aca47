"""How the package behaves in its process: BLAS threads, progress, warnings, Dask.

* **Threads** (:func:`pin_threads`): BLAS/OpenMP pools pinned to one thread. numpy
  and scipy each ship an OpenBLAS pool; with default threading on a 2-core machine
  they fight each other and the samplers' own worker threads (docs/design.md,
  "Stack facts"). Pinning also makes results bit-for-bit reproducible across a
  process pool, Dask workers and the parent. Users who want threaded BLAS set the
  variables themselves before importing pp_decomp.
* **Progress** (:func:`status`, :func:`bar_context`): one-off phases (compiling a
  model, once per process) are logged on the ``pp_decomp`` logger, which prints
  INFO messages to stderr unless the application configured logging itself (as
  PyMC does); per-step phases (refitting a component by NUTS, learning a
  structure) show in the postfix of the progress bar of
  ``Optimizer.run(progress=True)`` and ``pp-decomp run``.
* **Warnings** (:func:`warn`, :func:`quiet_third_party`): third-party warnings the
  user cannot act on are silenced where pp_decomp triggers them (PyTensor's
  "could not link to a BLAS installation": its C code then calls numpy's own
  OpenBLAS, so nothing is lost that a user could recover, docs/performance.md),
  and pp_decomp's own point at the user's line.
* **Dask** (:func:`dask_client`): a client on an existing scheduler or on an
  embedded ``LocalCluster`` (Dask is imported only there), whose nannies are kept
  through slow worker restarts and which refuses a script its workers would run
  again (:mod:`pp_decomp._main_guard`).

Only the standard library is imported here: ``import pp_decomp`` and the command
line's ``--help`` load nothing else.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import warnings
from contextlib import contextmanager

from pp_decomp._main_guard import check_guarded_main

_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pin_threads() -> None:
    """Set the BLAS thread variables to 1 unless the user already set them.

    If numpy was imported before (by a notebook, a test plugin ...), its pools
    were sized already, so they are limited at run time with threadpoolctl.
    """
    user_set = all(name in os.environ for name in _VARS)
    for name in _VARS:
        os.environ.setdefault(name, "1")
    if not user_set and "numpy" in sys.modules:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform has
    one (``taskset``, a container's cpuset), else ``os.cpu_count()``."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


log = logging.getLogger("pp_decomp")
if not logging.getLogger().handlers and not log.handlers:
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("pp_decomp: %(message)s"))
    log.addHandler(_handler)
    log.setLevel(logging.INFO)
    log.propagate = False

_bar = None  # the active progress bar, if any


@contextlib.contextmanager
def one_off(what: str):
    """Log ``what`` (e.g. compiling a model) and how long it took."""
    log.info("%s ...", what)
    start = time.perf_counter()
    yield
    log.info("%s: done in %.1f s", what, time.perf_counter() - start)


@contextlib.contextmanager
def bar_context(bar):
    """Make ``bar`` the bar that :func:`status` writes to."""
    global _bar
    previous, _bar = _bar, bar
    try:
        yield bar
    finally:
        _bar = previous


def status(text: str) -> None:
    """Show ``text`` as the active progress bar's postfix (nothing without a bar)."""
    if _bar is not None:
        _bar.set_postfix_str(text, refresh=True)


_THIRD_PARTY = ((UserWarning, r"PyTensor could not link to a BLAS installation"),)
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@contextlib.contextmanager
def quiet_third_party():
    """Silence the third-party warnings listed above inside the ``with`` block."""
    with warnings.catch_warnings():
        for category, message in _THIRD_PARTY:
            warnings.filterwarnings("ignore", message=message, category=category)
        yield


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the first caller outside pp_decomp (the user's line)."""
    frame, level = sys._getframe(1), 2  # stacklevel 2 is warn()'s caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


CONNECT_TIMEOUT = "5s"  # an unreachable address fails fast, before any evaluation
# How long, at least, an embedded cluster keeps a nanny whose worker died and has not
# registered again. Dask's 15 s default closed nannies on a loaded machine, where a
# restart took 17-23 s: their workers never came back, and each one that registered
# just before its nanny closed took an evaluation with it, which Dask then failed as
# KilledWorker (session 97). The run's own WorkerWatch decides when a cluster has no
# worker.
LOST_WORKER_TIMEOUT = 3600.0


@contextmanager
def dask_client(scheduler: str | None, workers: int | None):
    """A ``dask.distributed.Client`` on ``scheduler`` (an address) or on a
    ``LocalCluster`` of ``workers`` one-thread processes, closed on exit
    (an embedded cluster with it, its nannies kept through slow restarts for
    :data:`LOST_WORKER_TIMEOUT` seconds or the user's Dask setting if longer; a
    script its workers would run again refused first:
    :func:`~pp_decomp._main_guard.check_guarded_main`)."""
    import dask
    from dask.distributed import Client, LocalCluster
    from dask.utils import parse_timedelta

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as err:
            raise ConnectionError(
                f"scheduler={scheduler!r}: no Dask scheduler answered there within "
                f"{CONNECT_TIMEOUT} ({type(err).__name__}: {err})"
            ) from err
        with client:
            yield client
        return
    check_guarded_main(workers, dask.config.get("distributed.worker.multiprocessing-method"))
    key = "distributed.deploy.lost-worker-timeout"
    patience = max(parse_timedelta(dask.config.get(key)), LOST_WORKER_TIMEOUT)
    with dask.config.set({key: patience}):
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
        with cluster, Client(cluster) as client:
            yield client
