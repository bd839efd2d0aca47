"""Which problem a checkpoint's run resumes on: a problem made in Python records no
instance seed, so only what both record is compared (issue: pp-decomp report of a
run made in Python)."""

from __future__ import annotations

import numpy as np
import pytest

import pp_decomp as ppd


def tiny(seed=None, dim: int = 1) -> ppd.Problem:
    """Two components on a box of ``dim`` inputs; ``seed`` recorded as the instance."""
    problem = ppd.Problem(
        ppd.Box([0.0] * dim, [1.0] * dim),
        lambda X: np.c_[np.sin(3 * X[:, 0]), X[:, 0] ** 2],
        2,
        g=lambda F: F[..., 0] + F[..., 1],
        name="tiny",
    )
    if seed is not None:
        problem.metadata["seed"] = seed
    return problem


def _design_run(path, problem) -> None:
    with ppd.Optimizer(problem, n_init=3, seed=0, checkpoint=path) as opt:
        opt.run(3)  # the initial design only: no fit


def test_a_python_made_run_resumes_on_the_same_problem_with_an_instance_seed(tmp_path):
    path = tmp_path / "run.nc"
    _design_run(path, tiny())  # made in Python: instance None
    with ppd.Optimizer.resume(path, tiny(seed=0)) as again:  # as get_problem builds it
        assert again.n == 3
    with pytest.raises(ValueError, match=r"another problem instance \(dim: file 1, given 2"):
        ppd.Optimizer.resume(path, tiny(seed=0, dim=2))


def test_two_recorded_instance_seeds_must_agree(tmp_path):
    path = tmp_path / "run.nc"
    _design_run(path, tiny(seed=1))
    with pytest.raises(ValueError, match=r"\(instance: file 1, given 2\)"):
        ppd.Optimizer.resume(path, tiny(seed=2))
    with ppd.Optimizer.resume(path, tiny()) as again:  # a problem with no seed: not compared
        assert again.n == 3
