"""Pin BLAS/OpenMP thread pools to one thread before numpy loads.

numpy and scipy each ship an OpenBLAS pool; with default threading on a 2-core
machine they fight each other and with the samplers' own worker threads
(DESIGN.md §5 measured `pm.sample(cores=2)` 19x slower). Users who really want
threaded BLAS can set the variables themselves before importing pp_decomp.
"""

import os

_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pin_threads() -> None:
    """Set the BLAS thread variables to 1 unless the user already set them."""
    for name in _VARS:
        os.environ.setdefault(name, "1")
