"""SciPy's Cython BLAS and LAPACK routines as functions numba-compiled code calls.

Each routine is bound to a symbol that numba links by name, so the compiled
functions that call it can be cached on disk (a ctypes pointer would be baked
in as the compiling process's address). Every argument is a pointer, passed as
an integer address (``array.ctypes.data``), as Fortran takes them.

Example
-------
>>> dpotrf = cython_routine("lapack", "dpotrf", 5)
>>> type(dpotrf).__name__
'ExternalFunction'
"""

from __future__ import annotations

import numba
from llvmlite import binding
from numba.extending import get_cython_function_address

LIBRARIES = ("blas", "lapack")


def cython_routine(library: str, name: str, n_args: int) -> numba.types.ExternalFunction:
    """``scipy.linalg.cython_<library>.<name>``, taking ``n_args`` pointers and
    returning nothing, as a numba external function named ``pp_decomp_<name>``."""
    if library not in LIBRARIES:
        raise ValueError(f"library must be one of {LIBRARIES}; got {library!r}")
    symbol = f"pp_decomp_{name}"
    address = get_cython_function_address(f"scipy.linalg.cython_{library}", name)
    binding.add_symbol(symbol, address)
    return numba.types.ExternalFunction(symbol, numba.types.void(*[numba.types.intp] * n_args))
