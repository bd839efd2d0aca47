import numpy as np
import pytest

from pp_decomp._threads import pin_threads

# Test plugins may load numpy before this file runs, so the environment variables
# alone come too late: pin_threads also limits the live BLAS pools.
pin_threads()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
