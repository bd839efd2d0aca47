"""``Optimizer.run(save_every=s)``: fewer checkpoint writes, the same run, and a
killed run resumed from its last write makes the same choices."""

import shutil

import numpy as np
import pytest

from pp_decomp import Optimizer
from pp_decomp.loop import checkpoint as ckpt
from pp_decomp.models import get_problem

SETTINGS = dict(strategy="gp-ucb", inference="fixed", n_init=2, seed=5)


def _problem():
    return get_problem("independent-sites", seed=0, n_sites=40)


def _counting_writes(monkeypatch):
    writes = []
    real = ckpt.write

    def write(path, *args, **kwargs):
        writes.append(len(args[0]["iteration"]))  # the results' steps at each write
        return real(path, *args, **kwargs)

    monkeypatch.setattr(ckpt, "write", write)
    return writes


def test_a_run_saving_every_hour_writes_once_at_its_end_and_the_same_run(tmp_path, monkeypatch):
    reference = Optimizer(_problem(), **SETTINGS).run(12)
    writes = _counting_writes(monkeypatch)
    opt = Optimizer(_problem(), checkpoint=tmp_path / "run.nc", **SETTINGS)
    ds = opt.run(12, save_every=3600)
    assert writes == [12]
    np.testing.assert_array_equal(ds["x"].values, reference["x"].values)
    stored, _ = ckpt.read(tmp_path / "run.nc")
    np.testing.assert_array_equal(stored["x"].values, reference["x"].values)
    # asks and tells by hand are written at once again
    opt.tell(opt.ask(), _problem().components(opt.ask()[None])[0])
    assert writes == [12, 12, 13]


def test_a_run_killed_between_writes_resumes_with_the_same_choices(tmp_path):
    reference = Optimizer(_problem(), **SETTINGS).run(16)
    path, killed = tmp_path / "run.nc", tmp_path / "killed.nc"
    calls, at_kill = 0, []

    def clock():  # one second per question, and a copy of the file as a kill leaves it
        nonlocal calls
        calls += 1
        if calls == 18:
            shutil.copy(path, killed)
            at_kill.append(opt.state.n)
        return float(calls)

    opt = Optimizer(_problem(), checkpoint=path, **SETTINGS)
    opt._schedule = ckpt.SaveSchedule(clock)
    opt.run(16, save_every=5)
    stored, _ = ckpt.read(killed)
    assert 2 <= stored.sizes["iteration"] < at_kill[0]  # steps after the last write are lost
    again = Optimizer.resume(killed, _problem())
    assert again.state.n == stored.sizes["iteration"]
    np.testing.assert_array_equal(again.run(16)["x"].values, reference["x"].values)


def test_save_every_is_checked_before_any_step(tmp_path):
    opt = Optimizer(_problem(), checkpoint=tmp_path / "run.nc", **SETTINGS)
    with pytest.raises(ValueError, match="save_every must be >= 0; got -1"):
        opt.run(5, save_every=-1)
    assert opt.state.n == 0
