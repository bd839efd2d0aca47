"""Data brought in one call: ``tell(X (n, d), Y (n, J))``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

import pp_decomp as ppd
from pp_decomp.loop import checkpoint as ckpt
from pp_decomp.models import get_problem


def _problem():
    return get_problem("synthetic", seed=5, n_components=2, n_points=120)


def _data(problem, n, seed=0):
    rng = np.random.default_rng(seed)
    X = problem.domain.sample(n, seed=rng)
    return X, problem.evaluate(X, seed=rng)


def test_one_call_is_the_same_run_as_one_tell_per_row_with_one_checkpoint_write(
    tmp_path, monkeypatch
):
    problem = _problem()
    X, Y = _data(problem, 12)
    one_by_one = ppd.Optimizer(problem, seed=3)
    for x, y in zip(X, Y, strict=True):
        one_by_one.tell(x, y)
    writes = []
    real = ckpt.write
    monkeypatch.setattr(ckpt, "write", lambda *a, **k: writes.append(1) or real(*a, **k))
    at_once = ppd.Optimizer(problem, seed=3, checkpoint=tmp_path / "run.nc")
    at_once.tell(X, Y)
    assert len(writes) == 1 and at_once.n == 12
    xr.testing.assert_identical(one_by_one.results().drop_attrs(), at_once.results().drop_attrs())
    np.testing.assert_array_equal(one_by_one.ask(), at_once.ask())  # the design is told
    assert xr.open_dataset(tmp_path / "run.nc").sizes["iteration"] == 12


def test_a_bad_row_is_named_and_nothing_of_the_call_is_recorded():
    problem = _problem()
    X, Y = _data(problem, 6)
    opt = ppd.Optimizer(problem, seed=0)
    opt.tell(X[:2], Y[:2])
    bad = X.copy()
    bad[4, 0] = 7.0  # outside the domain
    with pytest.raises(ValueError, match=r"x\[4\]=\[7\.0.*outside the problem's domain"):
        opt.tell(bad, Y)
    Y_nan = Y.copy()
    Y_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="y"):
        opt.tell(X, Y_nan)
    with pytest.raises(ValueError, match="y"):
        opt.tell(X, Y[:5])  # one row short
    assert opt.n == 2


def test_repeated_rows_in_the_data_warn_unless_replicates_are_meant():
    problem = _problem()
    X, Y = _data(problem, 3)
    opt = ppd.Optimizer(problem, seed=0)
    with pytest.warns(UserWarning, match=r"told before \(evaluation 1\)"):
        opt.tell(np.vstack([X, X[:1]]), np.vstack([Y, Y[:1]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.tell(X, Y, replicate=True)
    assert opt.n == 7
