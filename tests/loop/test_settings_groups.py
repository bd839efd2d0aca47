"""RunSettings in groups: each argument lands in one group, is checked where its group
is built, and the stored (flat) form rebuilds the same settings."""

from __future__ import annotations

import pytest

from pp_decomp.loop.settings import (
    AcquisitionSettings,
    InferenceSettings,
    ModelSettings,
    RunSettings,
)
from pp_decomp.loop.settings.run import KEYWORDS
from pp_decomp.models import get_problem


@pytest.fixture(scope="module")
def problem():
    return get_problem("synthetic", seed=0, n_components=3, n_points=80)


def test_every_keyword_belongs_to_one_group():
    names = [n for group in KEYWORDS.values() for n in group]
    assert len(names) == len(set(names))
    assert set(RunSettings.keywords()) == set(names)


def test_the_groups_hold_what_was_asked(problem):
    s = RunSettings.build(
        problem, "d-gpucb-mc", inference="nuts", kernel="matern52", mc_samples=64, seed=3
    )
    assert isinstance(s.model, ModelSettings) and s.model.kernel == "matern52"
    assert isinstance(s.inference, InferenceSettings) and s.inference.method == "nuts"
    assert s.inference.fast  # the full-Bayes fast path is the default under NUTS
    assert isinstance(s.acquisition, AcquisitionSettings) and s.acquisition.mc_samples == 64
    assert s.seed == 3 and s.strategy == "d-gpucb-mc"


@pytest.mark.parametrize(
    "kw, error, match",
    [
        ({"fast_settings": {"draws": 10}}, TypeError, "fast_settings"),
        ({"refit_every": 0}, ValueError, "refit_every"),
        ({"acq_method": "newton"}, ValueError, "acq_method"),
        ({"beta": 2.0}, TypeError, "beta"),
        ({"correlated": "yes"}, TypeError, "correlated"),
        ({"additive_settings": {"n_cyc": 3}}, TypeError, "additive_settings"),
        ({"nuts_kwargs": {"drawz": 3}}, TypeError, "drawz"),
        ({"fast": True}, ValueError, "fast=True"),
    ],
)
def test_each_group_refuses_its_bad_arguments_by_name(problem, kw, error, match):
    with pytest.raises(error, match=match):
        RunSettings.build(problem, "d-gpucb", **kw)


def test_the_stored_form_rebuilds_the_same_settings(problem):
    s = RunSettings.build(
        problem, "d-gpucb-mc", inference="nuts", copula=False, max_draws=64, refit_every=2
    )
    stored = s.to_dict()
    again = RunSettings.build(problem, **RunSettings.kwargs_from_dict(stored))
    assert again.to_dict() == stored
    assert again.model == s.model and again.inference == s.inference
