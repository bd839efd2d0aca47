"""Every reference run makes the stored choices (``tests/loop/reference/``).

The stored choices were made by earlier code; a refactoring must leave them
unchanged. A change that is meant to alter choices regenerates them with
``python tests/loop/reference/runs.py KEY ...`` and says so in its commit message.

On a candidate set a choice is a candidate, compared exactly. On a box it is the
end of a local search, whose last digits follow the BLAS build's kernels: on
another CPU the same code moved the box runs' choices by up to 2e-5 of the
domain's width over nine steps, while a change of behaviour moves them by far
more than :data:`BOX_ATOL`.
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pp_decomp import Box

sys.path.insert(0, str(Path(__file__).parent / "reference"))
import runs  # noqa: E402

STORED = json.loads(runs.CHOICES.read_text())
BOX_ATOL = 1e-3  # of each coordinate's width


@pytest.mark.parametrize("key, name", [r[:2] for r in runs.RUNS], ids=[r[0] for r in runs.RUNS])
def test_reference_run_makes_the_stored_choices(key, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = np.asarray(runs.run(key))
    stored = np.asarray(STORED[key])
    domain = runs.problem(name).domain
    if isinstance(domain, Box):
        assert chosen.shape == stored.shape
        w = domain.widths
        np.testing.assert_allclose(chosen / w, stored / w, rtol=0, atol=BOX_ATOL)
    else:
        np.testing.assert_array_equal(chosen, stored)
