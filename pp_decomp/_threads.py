"""Pin BLAS/OpenMP thread pools to one thread.

numpy and scipy each ship an OpenBLAS pool; with default threading on a 2-core
machine they fight each other and with the samplers' own worker threads
(`pm.sample(cores=2)` 19x slower; docs/design.md, "Stack facts"). Pinning also makes
results bit-for-bit reproducible across a process pool, Dask workers and the
parent. Users who really want threaded BLAS can set the variables themselves
before importing pp_decomp.
"""

import os
import sys

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
