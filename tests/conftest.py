import numpy as np
import pytest

from pp_decomp._runtime import pin_threads

# Test plugins may load numpy before this file runs, so the environment variables
# alone come too late: pin_threads also limits the live BLAS pools.
pin_threads()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def pytest_collection_modifyitems(config, items):
    """The files holding slow-marked tests first, in their order, then the others: with
    one pytest worker per core (``make test``, a file per worker), the long files start
    at once and the short ones fill the end, instead of one long file running alone."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)
