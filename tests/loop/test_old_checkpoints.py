"""A checkpoint written before the step received its parts (commit a4fc0ac: the
optimiser passed whole to ask, the context and the checkpoint's state) resumes and
makes the choices an uninterrupted run makes today."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

import pp_decomp as ppd
from pp_decomp.models import get_problem

# Optimizer(synthetic seed 0, "d-gpucb", n_init=5, seed=0).run(8), then one ask()
STORED = Path(__file__).parent / "reference" / "synthetic-map-a4fc0ac.nc"


def test_a_checkpoint_of_the_earlier_layout_resumes_to_the_same_choices(tmp_path):
    path = tmp_path / "run.nc"
    shutil.copy(STORED, path)
    problem = get_problem("synthetic", seed=0)
    with ppd.Optimizer.resume(path, problem, strategy="d-gpucb", seed=0) as resumed:
        assert resumed.n == 8 and len(resumed.pending) == 1  # its asked input kept
        resumed.run(12)
    whole = ppd.Optimizer(problem, "d-gpucb", n_init=5, seed=0)
    whole.run(12)
    np.testing.assert_array_equal(resumed.X, whole.X)
    assert [r["phase"] for r in resumed.records] == [r["phase"] for r in whole.records]
